#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
// Row kernels that read and write float32, float16 or bfloat16 four values at a time (rows of a
// multiple of 4 values at offsets of a multiple of 4): a workgroup of 256 invocations takes 8
// rows side by side, 32 invocations a row. A row's 32 partial results meet in one subgroup
// (row_is_subgroup), or in shared memory after one barrier, where each invocation combines all
// 32 (rows padded to 33 entries against bank conflicts); the one-row-per-workgroup kernels
// (rows.glsl) spend 8 barriers per reduction and leave most invocations idle on short rows such
// as attention's.
#define ROWS_PER_GROUP 8u
#define ROW_LANES 32u
shared float part_a_[ROWS_PER_GROUP * (ROW_LANES + 1u)];
shared float part_b_[ROWS_PER_GROUP * (ROW_LANES + 1u)];

// This invocation's row slot (0..7) and lane in it (0..31).
uint row_slot() { return gl_LocalInvocationID.x / ROW_LANES; }
uint row_lane() { return gl_LocalInvocationID.x % ROW_LANES; }

// A row's 32 lanes are one subgroup where subgroups are 32 wide (NVIDIA, Apple): there the
// reductions below use subgroup arithmetic, with no barrier and no shared memory; elsewhere
// (lavapipe's 8 or 16, AMD's 64) the row's partial results meet in shared memory. The branch
// is uniform, so every invocation still reaches the barriers.
bool row_is_subgroup() { return gl_SubgroupSize == ROW_LANES; }

// The sum over the row's 32 lanes of v. Every invocation of the workgroup must call it.
float row_sum(float v) {
  if (row_is_subgroup()) return subgroupAdd(v);
  const uint base = row_slot() * (ROW_LANES + 1u);
  barrier();
  part_a_[base + row_lane()] = v;
  barrier();
  float s = 0.0;
  for (uint i = 0u; i < ROW_LANES; ++i) s += part_a_[base + i];
  return s;
}

// (M, log S) of the row from each lane's running (max m, sum s of exp(x - m)), as
// wg_max_logsum in rows.glsl. Every invocation of the workgroup must call it.
vec2 row_max_logsum(float m, float s) {
  if (row_is_subgroup()) {
    const float M = subgroupAny(isnan(m)) ? uintBitsToFloat(0x7FC00000u) : subgroupMax(m);
    return vec2(M, log(subgroupAdd(m == -1.0 / 0.0 ? 0.0 : s * exp(m - M))));
  }
  const uint base = row_slot() * (ROW_LANES + 1u);
  barrier();
  part_a_[base + row_lane()] = m;
  part_b_[base + row_lane()] = s;
  barrier();
  float M = -1.0 / 0.0;
  for (uint i = 0u; i < ROW_LANES; ++i) M = max_nan(M, part_a_[base + i]);
  float S = 0.0;
  for (uint i = 0u; i < ROW_LANES; ++i) {
    const float mi = part_a_[base + i];
    S += mi == -1.0 / 0.0 ? 0.0 : part_b_[base + i] * exp(mi - M);
  }
  return vec2(M, log(S));
}
