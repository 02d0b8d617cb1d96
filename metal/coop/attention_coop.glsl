// Flash attention on tensor cores (VK_KHR_cooperative_matrix): the forward pass (FWD), and the
// backward pass's two kernels, dq with delta (DQ) and dk, dv (DKV). Included by
// attention*_coop*.comp, which define ELEM (float16_t or bfloat16_t), ROUND (float32 to ELEM bits)
// Same push constants, buffers and results as the scalar kernels (attention.glsl);
// heads at most 64 wide, 16-bit, at even element offsets and strides.
//
// A workgroup of 4 subgroups of 32 takes 64 rows of one (batch, head): query rows (FWD, DQ) or
// key rows (DKV), 16 a subgroup, whose operand fragments stay in registers; it walks the other
// side's rows in blocks of 64 staged in shared memory, skipping the blocks a causal mask hides.
// Products go through cooperative matrices with float32 accumulation. The row-wise steps (max,
// exp, sums) need to know which row an element is in, which cooperative matrices do not say:
// each 16 x 64 score tile goes through this subgroup's shared scratch as float32, two lanes take
// a row (32 columns each, combined by a shuffle), and the probabilities come back as 16-bit
// fragments. The forward pass rescales its output accumulators by exp(m_old - m_new) through a
// row-broadcast matrix, only when some row's running max moved.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_EXT_control_flow_attributes : require
#include "../common.glsl"
// Each buffer is bound twice: 32-bit words, and 128-bit chunks for the staging loads.
#define BUF(i, name, name4) \
  layout(std430, set = 0, binding = i) readonly buffer B##i { uint name[]; }; \
  layout(std430, set = 0, binding = i) readonly buffer B##i##v { uvec4 name4[]; };
BUF(1, q, q4)
BUF(2, k, k4)
BUF(3, v, v4)
#if defined(FWD)
layout(std430, set = 0, binding = 4) writeonly buffer O { uint o[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 6) readonly buffer Mask { uint mask[]; };
#elif defined(DQ)
BUF(4, o, o4)
BUF(5, do_, do4)
layout(std430, set = 0, binding = 6) readonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 7) writeonly buffer Delta { float delta[]; };
layout(std430, set = 0, binding = 8) writeonly buffer DQ_ { uint dq[]; };
layout(std430, set = 0, binding = 9) readonly buffer Mask { uint mask[]; };
#else
BUF(4, do_, do4)
layout(std430, set = 0, binding = 5) readonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 6) readonly buffer Delta { float delta[]; };
layout(std430, set = 0, binding = 7) writeonly buffer DK { uint dk[]; };
layout(std430, set = 0, binding = 8) writeonly buffer DV { uint dv[]; };
layout(std430, set = 0, binding = 9) readonly buffer Mask { uint mask[]; };
#endif
#include "../attention.glsl"
layout(local_size_x = 128) in;

#define BLK 64      // rows a workgroup owns, and rows per staged block of the other side
#define ROW 72      // staged rows in 16-bit elements: DMAX padded by 8 against bank conflicts
#define TS 68u      // float32 tile rows in words: 64 padded by 4, so lanes' 128-bit reads meet no bank twice
#define SCR 1344u   // 32-bit words of shared scratch per subgroup
#define P2 576u     // word of the scratch's second 16-bit tile (DKV)
#define BCAST 1088u // word of the scratch's 16 x 16 row-broadcast block (FWD)
#define LOG2E 1.4426950408889634
#define NEG_INF (-1.0 / 0.0)
#define ACC coopmat<float, gl_ScopeSubgroup, FR, FR, gl_MatrixUseAccumulator>
#define MAT_A coopmat<ELEM, gl_ScopeSubgroup, FR, FR, gl_MatrixUseA>
#define MAT_B coopmat<ELEM, gl_ScopeSubgroup, FR, FR, gl_MatrixUseB>

// Fragments are named variables, not arrays (the NVIDIA driver keeps arrays of cooperative
// matrices in local memory): a subgroup's 16 rows are one row fragment r = 0 of FR = 16 rows
// (kept as an index so the macros read as the products they do), a head's 64 columns four
// column fragments c. FOR_C(X, r, u, w) applies X(r, c, u, w) to each c, FOR_R(X, c, u, w)
// X(r, c, u, w) to each r, FOR_RC to each pair.
#define FR 16
#define FOR_C(X, r, u, w) X(r, 0, u, w) X(r, 1, u, w) X(r, 2, u, w) X(r, 3, u, w)
#define FOR_R(X, c, u, w) X(0, c, u, w)
#define FOR_RC(X, u, w) FOR_C(X, 0, u, w)

// Two staged blocks of 64 rows of 16-bit elements (K and V, or Q and do) and each subgroup's
// scratch: a 16 x 64 float32 tile (rows of TS words) at word 0; 16-bit tiles of 16 rows of ROW at word 0 and P2,
// written once the float32 tile is read; the row-broadcast block at BCAST.
shared uvec4 Xs[BLK * ROW / 8];
shared uvec4 Ys[BLK * ROW / 8];
shared uvec4 Scr[4u * SCR / 4u];
shared float Row0[BLK], Row1[BLK];  // DKV: lse (times log2 e) and delta of the staged query rows

void scr_store(uint word, uint value) { Scr[word >> 2][word & 3u] = value; }
float scr_float(uint word) { return uintBitsToFloat(Scr[word >> 2][word & 3u]); }
void scr_sync() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

// Rows r0 .. r0 + 63 of a head (at element offset `off`, or in out_row's layout when `merged`)
// into Xs or Ys; rows past T and columns past D are zeros. With `wide` (heads 64 wide, every
// offset and stride a multiple of 8) in 128-bit chunks, else a 16-bit pair a word.
#define STAGE(dst, buf, buf4, off, merged, r0)                                            \
  if (wide) {                                                                             \
    for (uint s = lid; s < BLK * DMAX / 8; s += 128u) {                                  \
      const uint rr = s / (DMAX / 8), ch = s % (DMAX / 8), t = (r0) + rr;                \
      dst[rr * (ROW / 8) + ch] =                                                          \
          t < p.T ? buf4[((merged) ? out_row(b, h, t) : head_row(off, b, h, t)) / 8u + ch] : uvec4(0); \
    }                                                                                     \
  } else {                                                                                \
    for (uint s = lid; s < BLK * DMAX / 2; s += 128u) {                                  \
      const uint rr = s / (DMAX / 2), wd = s % (DMAX / 2), t = (r0) + rr;                \
      uint val = 0u;                                                                      \
      if (t < p.T && 2u * wd < p.D)                                                       \
        val = buf[((merged) ? out_row(b, h, t) : head_row(off, b, h, t)) / 2u + wd];      \
      const uint word = rr * (ROW / 2) + wd;                                              \
      dst[word >> 2][word & 3u] = val;                                                    \
    }                                                                                     \
  }

#define DECL_A(r, c, name, w) MAT_A name##r##c;
#define DECL_B(r, c, name, w) MAT_B name##c;
#define ZERO_ACC(r, c, name, w) ACC name##r##c = ACC(0.0);
// Fragment (r, c) of this subgroup's 16 rows of a staged block, as an A operand.
#define LOAD_A(r, c, name, buf) \
  coopMatLoad(name##r##c, buf, ((sg * 16u + r * FR) * ROW + c * FR) / 8u, ROW / 8u, gl_CooperativeMatrixLayoutRowMajor);

// The 16 x 64 float32 tile of this subgroup's 16 rows (A fragments `name`, over the head's
// columns) against the staged block's 64 rows (as columns: B = block^T).
#define LOAD_BT(r, c, buf, w) \
  coopMatLoad(bt##c, buf, ((j * FR) * ROW + c * FR) / 8u, ROW / 8u, gl_CooperativeMatrixLayoutColumnMajor);
#define SCORE_MMA(r, c, name, w) s = coopMatMulAdd(name##r##c, bt##c, s);
#define SCORE_ROW(r, c, name, w)                                                                   \
  {                                                                                                \
    ACC s = ACC(0.0);                                                                              \
    FOR_C(SCORE_MMA, r, name, _)                                                                   \
    coopMatStore(s, Scr, (base + (r * FR) * TS + j * FR) / 4u, TS / 4u, gl_CooperativeMatrixLayoutRowMajor); \
  }
#define SCORES(name, buf)                            \
  for (uint j = 0; j < BLK / FR; ++j) {             \
    FOR_C(LOAD_BT, 0, buf, _)                       \
    FOR_R(SCORE_ROW, 0, name, _)                    \
  }                                                 \
  scr_sync();

// Accumulators `accs` += (the 16-bit tile at scratch word `tile`) @ (the staged block's rows).
#define LOAD_PT(r, c, tile, w) \
  MAT_A pt##r; coopMatLoad(pt##r, Scr, (base + (tile)) / 4u + ((r * FR) * ROW + kk * FR) / 8u, ROW / 8u, gl_CooperativeMatrixLayoutRowMajor);
#define PV_MMA(r, c, accs, w) accs##r##c = coopMatMulAdd(pt##r, vb, accs##r##c);
#define PV_COL(r, c, buf, accs)                                                                     \
  {                                                                                                 \
    MAT_B vb;                                                                                       \
    coopMatLoad(vb, buf, ((kk * FR) * ROW + c * FR) / 8u, ROW / 8u, gl_CooperativeMatrixLayoutRowMajor); \
    FOR_R(PV_MMA, c, accs, _)                                                                       \
  }
#define TILE_PRODUCT(accs, tile, buf)                \
  for (uint kk = 0; kk < BLK / FR; ++kk) {          \
    FOR_R(LOAD_PT, 0, tile, _)                      \
    FOR_C(PV_COL, 0, buf, accs)                     \
  }

// Accumulators `accs` into the float32 tile (16 x 64, the head's columns), for write_half_row.
#define TILE_OUT(r, c, accs, w) \
  coopMatStore(accs##r##c, Scr, (base + (r * FR) * TS + c * FR) / 4u, TS / 4u, gl_CooperativeMatrixLayoutRowMajor);

// Two lanes take a row of a 16 x 64 tile: lane_row(), 32 columns each, lane_col(c) for c < 32:
// columns 0-15 and 32-47 for the even lane, 16-31 and 48-63 for the odd one, so that the
// eight lanes of a 128-bit read phase (four rows, both halves) hit distinct banks.
uint lane_row() { return gl_SubgroupInvocationID >> 1; }
uint lane_col(uint c) { return (c & 16u) * 2u + (gl_SubgroupInvocationID & 1u) * 16u + (c & 15u); }

// The lane's 32 values of this subgroup's float32 tile, in 128-bit reads.
void read_tile(uint base, out float vals[32]) {
  [[unroll]] for (uint c = 0; c < 32u; c += 4u) {
    const vec4 x = uintBitsToFloat(Scr[(base + lane_row() * TS + lane_col(c)) / 4u]);
    vals[c] = x.x, vals[c + 1u] = x.y, vals[c + 2u] = x.z, vals[c + 3u] = x.w;
  }
}
// 32 values rounded to ELEM into the lane's part of the 16-bit tile at word `tile`.
void write_tile16(uint base, uint tile, float vals[32]) {
  [[unroll]] for (uint c = 0; c < 32u; c += 2u)
    scr_store(base + tile + lane_row() * (ROW / 2) + lane_col(c) / 2u, ROUND(vals[c]) | ROUND(vals[c + 1u]) << 16);
}

// The lane's values of the float32 tile times `mul`, rounded to ELEM, as words to write at the
// head row starting at element e (even); columns past D are not written.
#define WRITE_ROW(buf, base, mul, e)                                                        \
  for (uint c = 0; c < 32u; c += 2u) {                                                      \
    const uint col = lane_col(c), word = (base) + lane_row() * TS + col;                    \
    if (col < p.D)                                                                          \
      buf[(e) / 2u + col / 2u] = ROUND(scr_float(word) * (mul)) | ROUND(scr_float(word + 1u) * (mul)) << 16; \
  }

#define BCAST_LOAD(r, c, name, w) \
  ACC name##r; coopMatLoad(name##r, Scr, (base + BCAST + (r * FR) * 16u) / 4u, 4u, gl_CooperativeMatrixLayoutRowMajor);
#define RESCALE(r, c, accs, w) for (int e = 0; e < accs##r##c.length(); ++e) accs##r##c[e] *= f##r[e];

// Two 16-bit values of word `wd` of a buffer, as floats.
vec2 pair_of(uint wd, bool bf) {
  return bf ? uintBitsToFloat(uvec2(wd << 16, wd & 0xFFFF0000u)) : vec2(f16_value(wd & 0xFFFFu), f16_value(wd >> 16));
}

void main() {
  const uint lid = gl_LocalInvocationID.x, sg = gl_SubgroupID, base = sg * SCR;
  const uint lr = lane_row(), odd = gl_SubgroupInvocationID & 1u, blocks = (p.T + BLK - 1) / BLK;
  const float sl2 = p.scale * LOG2E;
  const bool wide = p.D == DMAX && ((p.q_off | p.k_off | p.v_off | uint(p.sb | p.sh | p.st)) & 7u) == 0u;
  for (uint w = gl_WorkGroupID.x; w < p.B * p.H * blocks; w += gl_NumWorkGroups.x) {
    const uint bh = w / blocks, b = bh / p.H, h = bh % p.H;
#if defined(FWD) || defined(DQ)
    // Query blocks in reverse: under a causal mask the last ones have the most keys to walk.
    const uint q0 = (blocks - 1u - w % blocks) * BLK, i = q0 + sg * 16u + lr, kend = key_end(q0 / BLK);
    STAGE(Xs, q, q4, p.q_off, false, q0)
#if defined(DQ)
    STAGE(Ys, do_, do4, 0u, true, q0)
#endif
    barrier();
    FOR_RC(DECL_A, a, _)
    FOR_RC(LOAD_A, a, Xs)
    FOR_RC(ZERO_ACC, acc, _)
    FOR_C(DECL_B, 0, bt, _)
#if defined(FWD)
    float m = NEG_INF, l = 0.0;
#else
    FOR_RC(DECL_A, g, _)
    FOR_RC(LOAD_A, g, Ys)
    // delta_i = do_i . o_i, for this kernel and DKV; lse in log2 units.
    float di = 0.0;
    if (i < p.T)
      for (uint c = 0; c < 32u; c += 2u)
        if (lane_col(c) < p.D) {
          const uint wd = (out_row(b, h, i) + lane_col(c)) / 2u;
          const vec2 x = pair_of(do_[wd], p.in_type == T_BF16), y = pair_of(o[wd], p.in_type == T_BF16);
          di += x.x * y.x + x.y * y.y;
        }
    di += subgroupShuffleXor(di, 1u);
    if (i < p.T && odd == 0u) delta[bh * p.T + i] = di;
    const float li = i < p.T ? lse[bh * p.T + i] * LOG2E : 0.0;
#endif
    barrier();  // Xs (and Ys) take keys and values next
    for (uint k0 = 0; k0 < kend; k0 += BLK) {
      STAGE(Xs, k, k4, p.k_off, false, k0)
      STAGE(Ys, v, v4, p.v_off, false, k0)
      barrier();
      float sv[32];
#if defined(FWD)
      SCORES(a, Xs)
      read_tile(base, sv);
      float bmax = NEG_INF;
      [[unroll]] for (uint c = 0; c < 32u; ++c) {
        sv[c] = attends(i, k0 + lane_col(c)) ? sv[c] * sl2 : NEG_INF;
        bmax = max(bmax, sv[c]);
      }
      const float mn = max(m, max(bmax, subgroupShuffleXor(bmax, 1u)));
      const float alpha = mn == NEG_INF ? 1.0 : exp2(m - mn);
      float sum = 0.0;
      [[unroll]] for (uint c = 0; c < 32u; ++c) {
        sv[c] = mn == NEG_INF ? 0.0 : exp2(sv[c] - mn);
        sum += sv[c];
      }
      l = l * alpha + sum + subgroupShuffleXor(sum, 1u);
      m = mn;
      if (p.drop != 0.0)  // the sums above are of the weights before dropout
        [[unroll]] for (uint c = 0; c < 32u; ++c) sv[c] = dropped(bh, i, k0 + lane_col(c), sv[c]);
      subgroupBarrier();  // the tile is read before the probabilities overwrite it
      write_tile16(base, 0u, sv);
      for (uint c = 0; c < 8u; ++c) scr_store(base + BCAST + lr * 16u + odd * 8u + c, floatBitsToUint(alpha));
      scr_sync();
      if (subgroupAny(alpha != 1.0)) {  // a running max moved: o *= exp(m_old - m_new), row by row
        FOR_R(BCAST_LOAD, 0, f, _)
        FOR_RC(RESCALE, acc, _)
      }
      TILE_PRODUCT(acc, 0u, Ys)
#else
      // dp = do v^T, then s = q k^T; ds = p (dp - delta) with p = exp(s scale - lse).
      SCORES(g, Ys)
      float dpv[32];
      read_tile(base, dpv);
      subgroupBarrier();
      SCORES(a, Xs)
      read_tile(base, sv);
      [[unroll]] for (uint c = 0; c < 32u; ++c)
        dpv[c] = attends(i, k0 + lane_col(c)) ? exp2(sv[c] * sl2 - li) * (dropped(bh, i, k0 + lane_col(c), dpv[c]) - di) : 0.0;
      subgroupBarrier();
      write_tile16(base, 0u, dpv);
      scr_sync();
      TILE_PRODUCT(acc, 0u, Xs)  // dq += ds k
#endif
      barrier();  // the blocks and the scratch are free for the next keys
    }
    FOR_RC(TILE_OUT, acc, _)
    scr_sync();
#if defined(FWD)
    if (i < p.T) {
      WRITE_ROW(o, base, 1.0 / l, p.g_off + out_row(b, h, i))
      if (odd == 0u) lse[bh * p.T + i] = (m + log2(l)) / LOG2E;
    }
#else
    if (i < p.T) WRITE_ROW(dq, base, p.scale, head_row(p.g_off, b, h, i))
#endif
#else  // DKV: this workgroup's 64 keys against every query block that attends to them.
    const uint j0 = (w % blocks) * BLK, key = j0 + sg * 16u + lr;
    STAGE(Xs, k, k4, p.k_off, false, j0)
    STAGE(Ys, v, v4, p.v_off, false, j0)
    barrier();
    FOR_RC(DECL_A, a, _)
    FOR_RC(LOAD_A, a, Xs)
    FOR_RC(DECL_A, g, _)
    FOR_RC(LOAD_A, g, Ys)
    FOR_RC(ZERO_ACC, acc, _)   // dk
    FOR_RC(ZERO_ACC, dacc, _)  // dv
    FOR_C(DECL_B, 0, bt, _)
    barrier();
    for (uint q0 = p.causal != 0u ? j0 : 0u; q0 < p.T; q0 += BLK) {
      STAGE(Xs, q, q4, p.q_off, false, q0)
      STAGE(Ys, do_, do4, 0u, true, q0)
      for (uint s = lid; s < BLK; s += 128u) {
        Row0[s] = q0 + s < p.T ? lse[bh * p.T + q0 + s] * LOG2E : 0.0;
        Row1[s] = q0 + s < p.T ? delta[bh * p.T + q0 + s] : 0.0;
      }
      barrier();
      // dp^T = v do^T, then s^T = k q^T; ds^T = p^T (dp^T - delta) with p^T = exp(s^T scale - lse).
      float sv[32], dpv[32];
      SCORES(g, Ys)
      read_tile(base, dpv);
      subgroupBarrier();
      SCORES(a, Xs)
      read_tile(base, sv);
      [[unroll]] for (uint c = 0; c < 32u; ++c) {
        const uint qi = q0 + lane_col(c);
        const float pr = attends(qi, key) ? exp2(sv[c] * sl2 - Row0[lane_col(c)]) : 0.0;
        dpv[c] = pr * (dropped(bh, qi, key, dpv[c]) - Row1[lane_col(c)]);
        sv[c] = dropped(bh, qi, key, pr);
      }
      subgroupBarrier();
      write_tile16(base, 0u, sv);
      write_tile16(base, P2, dpv);
      scr_sync();
      TILE_PRODUCT(dacc, 0u, Ys)  // dv += p^T do
      TILE_PRODUCT(acc, P2, Xs)   // dk += ds^T q
      barrier();
    }
    FOR_RC(TILE_OUT, acc, _)
    scr_sync();
    if (key < p.T) WRITE_ROW(dk, base, p.scale, head_row(p.g_off, b, h, key))
    subgroupBarrier();
    FOR_RC(TILE_OUT, dacc, _)
    scr_sync();
    if (key < p.T) WRITE_ROW(dv, base, 1.0, head_row(p.g2_off, b, h, key))
#endif
    barrier();  // the scratch is free for the next rows
  }
}
