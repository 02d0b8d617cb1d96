#version 450
// The tensor-core ceiling a Vulkan kernel can reach (bench/mma_peak.c runs it): each subgroup
// holds FM x FN accumulators of 16 x 16 float32 (a 16 FM x 16 FN tile of C, default 2 x 4 as in
// matmul_coop.glsl) and multiplies-adds 16-bit fragments into them ITERS times, with no global
// memory in the loop. With SMEM, each step first loads its FM + FN fragments from shared
// memory, as a GEMM's inner loop does; a store that never happens (the compiler cannot know)
// keeps those loads in the loop. So the two modes bound a GEMM of that subgroup tile from above:
// the MMA rate alone, and with the fragment loads. ELEM is float16_t or bfloat16_t (-DBF16).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#ifdef BF16
#extension GL_EXT_bfloat16 : require
#define ELEM bfloat16_t
#else
#define ELEM float16_t
#endif
#ifndef FM
#define FM 2
#define FN 4
#endif
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ITERS = 4096;
layout(constant_id = 1) const bool SMEM = false;
layout(std430, binding = 0) readonly buffer In { uvec4 x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };
// Per subgroup: FM + FN fragments of 16 x 16 16-bit values (32 uvec4 each), and room to shift.
shared uvec4 tiles[8][(FM + FN) * 32 + 8];

#define FA coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FB coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#if FM == 2
#define FOR_A(X) X(0) X(1)
#else
#define FOR_A(X) X(0) X(1) X(2) X(3)
#endif
#define FOR_B(X) X(0) X(1) X(2) X(3)
#define ROW(i) ROW_(i)
#define ROW_(i) X_ACC(i, 0) X_ACC(i, 1) X_ACC(i, 2) X_ACC(i, 3)
#define LOAD_A(i) coopMatLoad(a##i, tiles[w], 32 * i + o, 2, gl_CooperativeMatrixLayoutRowMajor);
#define LOAD_B(j) coopMatLoad(b##j, tiles[w], 32 * (FM + j) + o, 2, gl_CooperativeMatrixLayoutColumnMajor);
#define DECLARE_A(i) FA a##i;
#define DECLARE_B(j) FB b##j;

void main() {
  const uint w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  for (uint i = lane; i < (FM + FN) * 32 + 8; i += 32) tiles[w][i] = x[i];
  barrier();
  FOR_A(DECLARE_A)
  FOR_B(DECLARE_B)
  uint o = 0;
  FOR_A(LOAD_A)
  FOR_B(LOAD_B)
#define X_ACC(i, j) ACC c##i##j = ACC(0.0);
  FOR_A(ROW)
#undef X_ACC
  const uint never = x[0].y;  // 0xFFFFFFFF: no step stores
  for (uint it = 0; it < ITERS; ++it) {
    if (SMEM) {
      if (it == never) tiles[w][lane] = uvec4(it);
      o = it & 1u;
      FOR_A(LOAD_A)
      FOR_B(LOAD_B)
    }
#define X_ACC(i, j) c##i##j = coopMatMulAdd(a##i, b##j, c##i##j);
    FOR_A(ROW)
#undef X_ACC
  }
  ACC s = ACC(0.0);
#define X_ACC(i, j) s += c##i##j;
  FOR_A(ROW)
#undef X_ACC
  coopMatStore(s, y, (gl_WorkGroupID.x * 8 + w) * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
