// Batched float16/bfloat16 matmul with VK_NV_cooperative_matrix2: workgroup-scope cooperative
// matrices loaded through tensor layouts, so the driver stages the tiles into shared memory
// (what matmul_coop.glsl does by hand) and clamps the ragged edges. C[b] = A[b] @ B[b] with float32
// accumulation, rounded once to ELEM (or kept in float32 with OUT_F32). Included by
// matmul_cm2_*.comp, which define ELEM and enable its extension. Same push constants as the
// other matmuls; each operand must have a unit stride on one of its two axes (the host checks).
//
// A workgroup computes a BM x BN tile of C, K advancing BK at a time; an operand whose unit stride
// is on the other axis (a transposed view) is read through a transposing tensor view.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require
layout(std430, set = 0, binding = 1) readonly buffer A { ELEM a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { ELEM b[]; };
#ifdef OUT_F32
layout(std430, set = 0, binding = 3) writeonly buffer C { float c[]; };
#else
layout(std430, set = 0, binding = 3) writeonly buffer C { ELEM c[]; };
#endif
#include "../matmul_params.glsl"

#define BM 128
#define BN 128
#define BK 32
#define CLAMP gl_CooperativeMatrixClampModeConstantNV

void main() {
  // Row-major (unit stride along K for A, along N for B) or transposed, uniform per dispatch.
  const bool a_rows = p.csa == 1, b_rows = p.csb == 1;
  tensorLayoutNV<2, CLAMP> la = createTensorLayoutNV(2, CLAMP), lb = createTensorLayoutNV(2, CLAMP);
  tensorLayoutNV<2, CLAMP> lc = createTensorLayoutNV(2, CLAMP);
  la = a_rows ? setTensorLayoutDimensionNV(la, p.M, p.K) : setTensorLayoutDimensionNV(la, p.K, p.M);
  la = setTensorLayoutStrideNV(la, a_rows ? p.rsa : p.csa, 1);
  lb = b_rows ? setTensorLayoutDimensionNV(lb, p.K, p.N) : setTensorLayoutDimensionNV(lb, p.N, p.K);
  lb = setTensorLayoutStrideNV(lb, b_rows ? p.rsb : p.csb, 1);
  lc = setTensorLayoutDimensionNV(lc, p.M, p.N);
  tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
  const uint tiles = ((p.M + BM - 1) / BM) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * BM, n0 = (tile % p.tiles_n) * BN;
    const uint abase = uint(int(p.a_off) + int(bi / p.inner) * p.a_outer + int(bi % p.inner) * p.a_batch);
    const uint bbase = uint(int(p.b_off) + int(bi / p.inner) * p.b_outer + int(bi % p.inner) * p.b_batch);
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
    coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
    for (uint k = 0; k < p.K; k += BK) {
      if (a_rows) coopMatLoadTensorNV(ma, a, abase, sliceTensorLayoutNV(la, m0, BM, k, BK));
      else coopMatLoadTensorNV(ma, a, abase, sliceTensorLayoutNV(la, k, BK, m0, BM), transposed);
      if (b_rows) coopMatLoadTensorNV(mb, b, bbase, sliceTensorLayoutNV(lb, k, BK, n0, BN));
      else coopMatLoadTensorNV(mb, b, bbase, sliceTensorLayoutNV(lb, n0, BN, k, BK), transposed);
      acc = coopMatMulAdd(ma, mb, acc);
    }
    const uint cbase = p.c_off + bi * p.M * p.N;
#ifdef OUT_F32
    coopMatStoreTensorNV(acc, c, cbase, sliceTensorLayoutNV(lc, m0, BM, n0, BN));
#else
    coopmat<ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> rounded =
        coopmat<ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
    coopMatStoreTensorNV(rounded, c, cbase, sliceTensorLayoutNV(lc, m0, BM, n0, BN));
#endif
  }
}
