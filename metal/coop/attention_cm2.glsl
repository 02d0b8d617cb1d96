// Flash attention on tensor cores through VK_NV_cooperative_matrix2 (NVIDIA): the forward pass
// (FWD), and the backward pass's two kernels, dq with delta (DQ) and dk, dv (DKV). Included by
// attention*_cm2_*.comp, which define ELEM (float16_t or bfloat16_t) and ROUNDED (a float32
// rounded to the nearest ELEM, as a float32). Same push constants, buffers and results as the
// scalar kernels (attention.glsl); heads at most 64 wide.
//
// Workgroup-scope 64 x 64 cooperative matrices do everything attention_coop.glsl does through
// shared memory by hand: tensor layouts load the heads (clamped at T and D, transposed where a
// product needs it) and, with a stride of 0, lse and delta as whole matrices; row reductions give
// the running max and delta, products with ones the row sums; per-element functions mask,
// exponentiate, apply dropout and write lse and delta; the probabilities convert from
// accumulators to operands in registers. A workgroup takes 64 rows of one (batch, head): query
// rows (FWD, DQ) or key rows (DKV), and walks the other side in blocks of 64, skipping the
// blocks a causal mask hides. Values are rounded to ELEM (to nearest) before each conversion, as
// NVIDIA's bfloat16 conversion truncates.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#include "../common.glsl"
layout(std430, set = 0, binding = 1) readonly buffer Q { ELEM q_h[]; };
layout(std430, set = 0, binding = 2) readonly buffer K { ELEM k_h[]; };
layout(std430, set = 0, binding = 3) readonly buffer V { ELEM v_h[]; };
#if defined(FWD)
layout(std430, set = 0, binding = 4) writeonly buffer O { ELEM o_h[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 6) readonly buffer Mask { uint mask[]; };
#elif defined(DQ)
layout(std430, set = 0, binding = 4) readonly buffer O { ELEM o_h[]; };
layout(std430, set = 0, binding = 5) readonly buffer DO { ELEM do_h[]; };
layout(std430, set = 0, binding = 6) readonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 7) writeonly buffer Delta { float delta[]; };
layout(std430, set = 0, binding = 8) writeonly buffer DQ_ { ELEM dq_h[]; };
layout(std430, set = 0, binding = 9) readonly buffer Mask { uint mask[]; };
#else
layout(std430, set = 0, binding = 4) readonly buffer DO { ELEM do_h[]; };
layout(std430, set = 0, binding = 5) readonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 6) readonly buffer Delta { float delta[]; };
layout(std430, set = 0, binding = 7) writeonly buffer DK { ELEM dk_h[]; };
layout(std430, set = 0, binding = 8) writeonly buffer DV { ELEM dv_h[]; };
layout(std430, set = 0, binding = 9) readonly buffer Mask { uint mask[]; };
#endif
#include "../attention.glsl"
// 256 invocations: with 128, a 64 x 64 float32 matrix took 32 registers an invocation and the
// backward kernels ran out of them (255, spilled).
layout(local_size_x = 256) in;

#define BR 64  // rows a workgroup owns, rows per block of the other side, and DMAX
#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define SQ coopmat<float, gl_ScopeWorkgroup, BR, BR, gl_MatrixUseAccumulator>
#define SQ16 coopmat<ELEM, gl_ScopeWorkgroup, BR, BR, gl_MatrixUseAccumulator>
#define MA coopmat<ELEM, gl_ScopeWorkgroup, BR, BR, gl_MatrixUseA>
#define MB coopmat<ELEM, gl_ScopeWorkgroup, BR, BR, gl_MatrixUseB>
#define ROWS gl_CooperativeMatrixReduceRowNV
#define LOG2E 1.4426950408889634
// Masked scores: -FLT_MAX / 2, finite, so that a row's max minus itself is 0, not NaN.
const float MASKED = -1.7014117e38;

float max_of(const in float a, const in float b) { return max(a, b); }
float sum_of(const in float a, const in float b) { return a + b; }
float max2(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }
float exp2_of(const in uint r, const in uint c, const in float x) { return exp2(x); }
float exp2_rounded(const in uint r, const in uint c, const in float x) { return ROUNDED(exp2(x)); }
float rounded(const in uint r, const in uint c, const in float x) { return ROUNDED(x); }
float scaled_rounded(const in uint r, const in uint c, const in float x, const in float mul) { return ROUNDED(x * mul); }
// Scores in log2 units; masked where query q0 + r does not attend key k0 + c (qk), or, in the
// transposed block of DKV, where query q0 + c does not attend key k0 + r (kq).
float scores_qk(const in uint r, const in uint c, const in float s, const in float mul, const in uint q0, const in uint k0) {
  return attends(q0 + r, k0 + c) ? s * mul : MASKED;
}
float scores_kq(const in uint r, const in uint c, const in float s, const in float mul, const in uint q0, const in uint k0) {
  return attends(q0 + c, k0 + r) ? s * mul : MASKED;
}
// Dropout (attention.glsl's dropped()) on element (r, c) of the block at (q0, k0), rows queries
// (qk) or keys (kq), rounded to ELEM where the result is an operand.
float dropped_qk(const in uint r, const in uint c, const in float x, const in uint bh, const in uint q0, const in uint k0) {
  return dropped(bh, q0 + r, k0 + c, x);
}
float dropped_kq(const in uint r, const in uint c, const in float x, const in uint bh, const in uint q0, const in uint k0) {
  return dropped(bh, q0 + c, k0 + r, x);
}
float dropped_qk_rounded(const in uint r, const in uint c, const in float x, const in uint bh, const in uint q0, const in uint k0) {
  return ROUNDED(dropped(bh, q0 + r, k0 + c, x));
}
// Whether every query of the block at q0 attends every key of the block at k0 (no mask to apply).
bool whole_block(uint q0, uint k0) { return (p.causal == 0u || k0 + BR <= q0) && k0 + BR <= p.T && q0 + BR <= p.T; }
#if defined(FWD)
// Writes row q0 + r's log-sum-exp (natural units) from its sum l and max m (log2 units).
float store_lse(const in uint r, const in uint c, const in float l, const in float m, const in uint bh, const in uint q0) {
  if (c == 0u && q0 + r < p.T) lse[bh * p.T + q0 + r] = (m + log2(l)) / LOG2E;
  return l;
}
float divided_rounded(const in uint r, const in uint c, const in float x, const in float l) { return ROUNDED(x / l); }
#elif defined(DQ)
float store_delta(const in uint r, const in uint c, const in float d, const in uint bh, const in uint q0) {
  if (c == 0u && q0 + r < p.T) delta[bh * p.T + q0 + r] = d;
  return d;
}
#endif

void main() {
  const uint blocks = (p.T + BR - 1) / BR;
  const float sl2 = p.scale * LOG2E;
  // The heads of q, k, v (and dq, dk, dv): T rows of D at stride st; o and do: T rows of D at
  // stride H D (out_row's layout). Reads past T or D give zeros; writes there are dropped.
  tensorLayoutNV<2, CLAMP> heads = createTensorLayoutNV(2, CLAMP), merged = createTensorLayoutNV(2, CLAMP);
  heads = setTensorLayoutDimensionNV(heads, p.T, p.D);
  heads = setTensorLayoutStrideNV(heads, uint(p.st), 1);
  merged = setTensorLayoutDimensionNV(merged, p.T, p.D);
  merged = setTensorLayoutStrideNV(merged, p.H * p.D, 1);
  tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
#if !defined(FWD)
  // One (batch, head)'s lse or delta (T values) as a matrix whose rows (along_rows: (BR, T),
  // row stride 0) or columns (along_cols: (T, BR), column stride 0) all hold them.
  tensorLayoutNV<2, CLAMP> along_rows = createTensorLayoutNV(2, CLAMP), along_cols = createTensorLayoutNV(2, CLAMP);
  along_rows = setTensorLayoutDimensionNV(along_rows, BR, p.T);
  along_rows = setTensorLayoutStrideNV(along_rows, 0, 1);
  along_cols = setTensorLayoutDimensionNV(along_cols, p.T, BR);
  along_cols = setTensorLayoutStrideNV(along_cols, 1, 0);
#endif
  for (uint w = gl_WorkGroupID.x; w < p.B * p.H * blocks; w += gl_NumWorkGroups.x) {
    const uint bh = w / blocks, b = bh / p.H, h = bh % p.H;
    const uint qbase = head_row(p.q_off, b, h, 0), kbase = head_row(p.k_off, b, h, 0), vbase = head_row(p.v_off, b, h, 0);
#if defined(FWD) || defined(DQ)
    // Query blocks in reverse: under a causal mask the last ones have the most keys to walk.
    const uint q0 = (blocks - 1u - w % blocks) * BR, kend = key_end(q0 / BR);
    MA qa;
    coopMatLoadTensorNV(qa, q_h, qbase, sliceTensorLayoutNV(heads, q0, BR, 0, BR));
#if defined(FWD)
    SQ o = SQ(0.0), l = SQ(0.0), m = SQ(MASKED);
    for (uint k0 = 0; k0 < kend; k0 += BR) {
      MB kt, vb;
      coopMatLoadTensorNV(kt, k_h, kbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR), transposed);
      SQ s = coopMatMulAdd(qa, kt, SQ(0.0));
      if (whole_block(q0, k0)) s *= sl2;
      else coopMatPerElementNV(s, s, scores_qk, sl2, q0, k0);
      SQ rowmax, mold = m, pr, em;
      coopMatReduceNV(rowmax, s, ROWS, max_of);
      coopMatPerElementNV(m, rowmax, max2, mold);
      coopMatPerElementNV(pr, s - m, exp2_rounded);
      coopMatPerElementNV(em, mold - m, exp2_of);
      // The row sums by a product with ones: no reduction, and in the probabilities as rounded.
      MA pa = MA(pr);
      l = coopMatMulAdd(pa, MB(1.0), em * l);
      coopMatLoadTensorNV(vb, v_h, vbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR));
      if (p.drop != 0.0) {  // the sums above are of the weights before dropout
        coopMatPerElementNV(pr, pr, dropped_qk_rounded, bh, q0, k0);
        pa = MA(pr);
      }
      o = coopMatMulAdd(pa, vb, o * em);
    }
    coopMatPerElementNV(l, l, store_lse, m, bh, q0);
    coopMatPerElementNV(o, o, divided_rounded, l);
    coopMatStoreTensorNV(SQ16(o), o_h, p.g_off + out_row(b, h, 0), sliceTensorLayoutNV(merged, q0, BR, 0, BR));
#else
    // delta = rowsum(do * o), for the dk, dv kernel too; lse in log2 units.
    MA da;
    coopMatLoadTensorNV(da, do_h, out_row(b, h, 0), sliceTensorLayoutNV(merged, q0, BR, 0, BR));
    SQ16 do16, o16;
    coopMatLoadTensorNV(do16, do_h, out_row(b, h, 0), sliceTensorLayoutNV(merged, q0, BR, 0, BR));
    coopMatLoadTensorNV(o16, o_h, out_row(b, h, 0), sliceTensorLayoutNV(merged, q0, BR, 0, BR));
    SQ dl, ls, dq = SQ(0.0);
    coopMatReduceNV(dl, SQ(do16) * SQ(o16), ROWS, sum_of);
    coopMatPerElementNV(dl, dl, store_delta, bh, q0);
    coopMatLoadTensorNV(ls, lse, bh * p.T, sliceTensorLayoutNV(along_cols, q0, BR, 0, BR));
    ls *= float(LOG2E);
    for (uint k0 = 0; k0 < kend; k0 += BR) {
      MB kt, vt, kb;
      coopMatLoadTensorNV(kt, k_h, kbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR), transposed);
      SQ s = coopMatMulAdd(qa, kt, SQ(0.0));
      if (whole_block(q0, k0)) s *= sl2;
      else coopMatPerElementNV(s, s, scores_qk, sl2, q0, k0);
      SQ pr;
      coopMatPerElementNV(pr, s - ls, exp2_of);
      coopMatLoadTensorNV(vt, v_h, vbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR), transposed);
      SQ dp = coopMatMulAdd(da, vt, SQ(0.0));  // do v^T, through the dropout mask
      if (p.drop != 0.0) coopMatPerElementNV(dp, dp, dropped_qk, bh, q0, k0);
      SQ ds = pr * (dp - dl);
      coopMatPerElementNV(ds, ds, rounded);
      coopMatLoadTensorNV(kb, k_h, kbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR));
      dq = coopMatMulAdd(MA(ds), kb, dq);
    }
    coopMatPerElementNV(dq, dq, scaled_rounded, p.scale);
    coopMatStoreTensorNV(SQ16(dq), dq_h, head_row(p.g_off, b, h, 0), sliceTensorLayoutNV(heads, q0, BR, 0, BR));
#endif
#else  // DKV: this workgroup's 64 keys against every query block that attends to them.
    const uint k0 = (w % blocks) * BR;
    MA ka, va;
    coopMatLoadTensorNV(ka, k_h, kbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR));
    coopMatLoadTensorNV(va, v_h, vbase, sliceTensorLayoutNV(heads, k0, BR, 0, BR));
    SQ dk = SQ(0.0), dv = SQ(0.0);
    for (uint q0 = p.causal != 0u ? k0 : 0u; q0 < p.T; q0 += BR) {
      MB qt, dt, qb, db;
      // s^T = k q^T, p^T = exp(s^T scale - lse), dp^T = v do^T, ds^T = p^T (dp^T - delta).
      coopMatLoadTensorNV(qt, q_h, qbase, sliceTensorLayoutNV(heads, q0, BR, 0, BR), transposed);
      SQ st = coopMatMulAdd(ka, qt, SQ(0.0));
      if (whole_block(q0, k0)) st *= sl2;
      else coopMatPerElementNV(st, st, scores_kq, sl2, q0, k0);
      SQ ls, dl, pt;  // lse (log2 units) and delta of the block's queries, down the columns
      coopMatLoadTensorNV(ls, lse, bh * p.T, sliceTensorLayoutNV(along_rows, 0, BR, q0, BR));
      coopMatLoadTensorNV(dl, delta, bh * p.T, sliceTensorLayoutNV(along_rows, 0, BR, q0, BR));
      ls *= float(LOG2E);
      coopMatPerElementNV(pt, st - ls, exp2_of);
      coopMatLoadTensorNV(dt, do_h, out_row(b, h, 0), sliceTensorLayoutNV(merged, q0, BR, 0, BR), transposed);
      SQ dp = coopMatMulAdd(va, dt, SQ(0.0));
      if (p.drop != 0.0) coopMatPerElementNV(dp, dp, dropped_kq, bh, q0, k0);
      SQ ds = pt * (dp - dl);
      if (p.drop != 0.0) coopMatPerElementNV(pt, pt, dropped_kq, bh, q0, k0);
      coopMatPerElementNV(pt, pt, rounded);
      coopMatPerElementNV(ds, ds, rounded);
      coopMatLoadTensorNV(db, do_h, out_row(b, h, 0), sliceTensorLayoutNV(merged, q0, BR, 0, BR));
      dv = coopMatMulAdd(MA(pt), db, dv);  // dv += p^T do
      coopMatLoadTensorNV(qb, q_h, qbase, sliceTensorLayoutNV(heads, q0, BR, 0, BR));
      dk = coopMatMulAdd(MA(ds), qb, dk);  // dk += ds^T q
    }
    coopMatPerElementNV(dk, dk, scaled_rounded, p.scale);
    coopMatPerElementNV(dv, dv, rounded);
    coopMatStoreTensorNV(SQ16(dk), dk_h, head_row(p.g_off, b, h, 0), sliceTensorLayoutNV(heads, k0, BR, 0, BR));
    coopMatStoreTensorNV(SQ16(dv), dv_h, head_row(p.g2_off, b, h, 0), sliceTensorLayoutNV(heads, k0, BR, 0, BR));
#endif
  }
}
