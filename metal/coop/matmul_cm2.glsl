// Batched float16/bfloat16 matmul with VK_NV_cooperative_matrix2: workgroup-scope cooperative
// matrices loaded through tensor layouts, so the driver stages the tiles into shared memory
// (what matmul_coop.glsl does by hand) and clamps the ragged edges. C[b] = A[b] @ B[b] with float32
// accumulation, rounded once to ELEM, to nearest (or kept in float32 with OUT_F32). Included by
// matmul_cm2_*.comp, which define ELEM and ROUNDED (see attention_cm2_*.comp) and enable ELEM's
// extension. Same push constants as the
// other matmuls; each operand must have a unit stride on one of its two axes (the host checks).
//
// A workgroup of THREADS computes a BM x BN tile of C, K advancing BK at a time (UNROLL steps per
// loop iteration, so the driver can overlap the loads of one step with the products of the
// last); an operand whose unit stride is on the other axis (a transposed view) is read through a
// transposing tensor view. Tiles wholly inside A and B, with K a multiple of BK and 16-byte
// aligned rows, load through unclamped layouts (no bounds checks per element).
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
#include "../common.glsl"
layout(std430, set = 0, binding = 1) readonly buffer A { ELEM a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { ELEM b[]; };
#ifdef OUT_F32
layout(std430, set = 0, binding = 3) writeonly buffer C { float c[]; };
#else
layout(std430, set = 0, binding = 3) writeonly buffer C { ELEM c[]; };
#endif
#include "../matmul_params.glsl"
// Layouts, set per product by the host (gpu/linalg.cpp) as specialization constants: whether each
// operand's unit stride is along its rows (else it is read through a transposing view), and
// whether every operand has 16-byte aligned rows and offsets and K is a multiple of BK (then
// whole tiles load through unclamped layouts).
layout(constant_id = 0) const bool A_ROWS = true;
layout(constant_id = 1) const bool B_ROWS = true;
layout(constant_id = 2) const bool ALIGNED = false;

#ifndef BM
#define BM 128
#define BN 128
#define BK 32
#define UNROLL 4
#define THREADS 256
#endif
layout(local_size_x = THREADS) in;
#ifndef OUT_F32
// A result rounded to the nearest ELEM, as a float32: its conversion to ELEM is then exact
// (NVIDIA's float32 to bfloat16 conversion truncates: 4e-3 relative error on GPT's products).
float rounded(const in uint r, const in uint c, const in float x) { return ROUNDED(x); }
#endif
#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define MAT_A coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
// One step of K at k through layouts la, lb (clamped or not).
#define STEP(la, lb, k)                                                                                      \
  {                                                                                                          \
    MAT_A ma;                                                                                                \
    MAT_B mb;                                                                                                \
    if (a_rows) coopMatLoadTensorNV(ma, a, abase, sliceTensorLayoutNV(la, m0, BM, k, BK));                   \
    else coopMatLoadTensorNV(ma, a, abase, sliceTensorLayoutNV(la, k, BK, m0, BM), transposed);              \
    if (b_rows) coopMatLoadTensorNV(mb, b, bbase, sliceTensorLayoutNV(lb, k, BK, n0, BN));                   \
    else coopMatLoadTensorNV(mb, b, bbase, sliceTensorLayoutNV(lb, n0, BN, k, BK), transposed);              \
    acc = coopMatMulAdd(ma, mb, acc);                                                                        \
  }

void main() {
  // Row-major (unit stride along K for A, along N for B) or transposed, uniform per dispatch.
  const bool a_rows = A_ROWS, b_rows = B_ROWS;
  const uint sa = a_rows ? p.rsa : p.csa, sb = b_rows ? p.rsb : p.csb;
  tensorLayoutNV<2, CLAMP> la = createTensorLayoutNV(2, CLAMP), lb = createTensorLayoutNV(2, CLAMP);
  tensorLayoutNV<2, CLAMP> lc = createTensorLayoutNV(2, CLAMP);
  la = a_rows ? setTensorLayoutDimensionNV(la, p.M, p.K) : setTensorLayoutDimensionNV(la, p.K, p.M);
  la = setTensorLayoutStrideNV(la, sa, 1);
  lb = b_rows ? setTensorLayoutDimensionNV(lb, p.K, p.N) : setTensorLayoutDimensionNV(lb, p.N, p.K);
  lb = setTensorLayoutStrideNV(lb, sb, 1);
  lc = setTensorLayoutDimensionNV(lc, p.M, p.N);
  // The unclamped layouts; strides rounded down to a multiple of 8 tell the compiler they are
  // (the fast path is taken only when they already are).
  tensorLayoutNV<2> fa = createTensorLayoutNV(2), fb = createTensorLayoutNV(2);
  fa = a_rows ? setTensorLayoutDimensionNV(fa, p.M, p.K) : setTensorLayoutDimensionNV(fa, p.K, p.M);
  fa = setTensorLayoutStrideNV(fa, sa & ~7u, 1);
  fb = b_rows ? setTensorLayoutDimensionNV(fb, p.K, p.N) : setTensorLayoutDimensionNV(fb, p.N, p.K);
  fb = setTensorLayoutStrideNV(fb, sb & ~7u, 1);
  const bool aligned = ALIGNED;
  tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
  const uint tiles = ((p.M + BM - 1) / BM) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * BM, n0 = (tile % p.tiles_n) * BN;
    const uint abase = uint(int(p.a_off) + int(bi / p.inner) * p.a_outer + int(bi % p.inner) * p.a_batch);
    const uint bbase = uint(int(p.b_off) + int(bi / p.inner) * p.b_outer + int(bi % p.inner) * p.b_batch);
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    uint k = 0;
    if (aligned && m0 + BM <= p.M && n0 + BN <= p.N) {
      for (; k + UNROLL * BK <= p.K; k += UNROLL * BK)
        [[unroll]] for (uint u = 0; u < UNROLL; ++u) STEP(fa, fb, k + u * BK)
      for (; k < p.K; k += BK) STEP(fa, fb, k)
    } else {
      for (; k < p.K; k += BK) STEP(la, lb, k)
    }
    const uint cbase = p.c_off + bi * p.M * p.N;
    acc = acc * p.alpha;
#ifdef OUT_F32
    coopMatStoreTensorNV(acc, c, cbase, sliceTensorLayoutNV(lc, m0, BM, n0, BN));
#else
    coopMatPerElementNV(acc, acc, rounded);
    coopMatStoreTensorNV(coopmat<ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc), c, cbase,
                         sliceTensorLayoutNV(lc, m0, BM, n0, BN));
#endif
  }
}
