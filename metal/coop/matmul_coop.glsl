// Batched float16/bfloat16 matmul on tensor cores (VK_KHR_cooperative_matrix) with float32
// accumulation: C[b] = A[b] @ B[b], rounded once to ELEM. Included by matmul_coop_f16.comp and
// matmul_coop_bf16.comp, which define ELEM and ROUND (float32 to ELEM bits) and enable ELEM's
// extension, and by their _f32 twins, which define OUT_F32 and write C in float32. Same push
// constants as matmul_tiled.glsl; C must be contiguous, and, in ELEM, have an even N and c_off (two
// results per 32-bit word).
//
// A workgroup of 8 subgroups of 32 computes a 128 x 128 tile of C; subgroup w owns rows
// 64 (w / 4) .. +64 and columns 32 (w % 4) .. +32: 4 x 2 accumulators of 16 x 16. K advances 32 at
// a time through two shared-memory buffers (loads of the next panel overlap the math on this
// one). Panels are staged in 8-element chunks (one 128-bit load) along each operand's unit-stride
// axis, so transposed operands need no copy; other layouts, ragged edges and unaligned offsets
// take 8 checked 16-bit loads per chunk instead. Each chunk goes to shared memory as one 128-bit
// store, and the fragments are read from there in 128-bit units (offsets and strides / 8).
// On an H200 (4096^3, float16): 131 TFLOP/s, 1/5 of cuBLAS; without the global -> shared staging
// the same loop reaches 271, and the products alone 474.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require
#include "../common.glsl"
layout(std430, set = 0, binding = 1) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 1) readonly buffer A4 { uvec4 a4[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 2) readonly buffer B4 { uvec4 b4[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { uint c[]; };
#include "../matmul_params.glsl"

#define BM 128
#define BN 128
#define BK 32
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
// Panel rows in elements, padded by 8 against bank conflicts; two panels per operand in one flat
// array of 8-element chunks (coopMatLoad reads at an offset).
const uint ROW_K = BK + 8, ROW_MN = BM + 8, PANEL = BM * ROW_K;
shared uvec4 As[2 * PANEL / 8];
shared uvec4 Bs[2 * PANEL / 8];

shared float scratch[8 * 256];  // a 16 x 16 accumulator per subgroup

// 8 elements starting at element e, stepping `step`, the first `valid` of them real (0 after).
uvec4 gather8(bool is_a, int e, int step, uint valid) {
  uint h[8];
  [[unroll]] for (uint j = 0; j < 8; ++j) {
    const uint k = uint(e + int(j) * step);
    h[j] = j < valid ? (is_a ? HALF_OF(a, k) : HALF_OF(b, k)) : 0u;
  }
  return uvec4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
}

// The 4 x 2 accumulators of a subgroup are named variables acc<i><j>, not an array: the NVIDIA
// driver keeps arrays of cooperative matrices in local memory, and every product then went
// through it (35 TFLOP/s on an H200). FOR_ACC(X) applies X to each (i, j).
#define FOR_ACC(X) X(0, 0) X(0, 1) X(1, 0) X(1, 1) X(2, 0) X(2, 1) X(3, 0) X(3, 1)
#define DECLARE_ACC(i, j) ACC acc##i##j = ACC(0.0);
#define MMA(i, j) acc##i##j = coopMatMulAdd(fa##i, fb##j, acc##i##j);
// Fragment i of A (rows wm + 16 i ..) and j of B (columns wn + 16 j ..) at depth ks of panel cur.
#define LOAD_A(i)                                                                                  \
  if (a_kmaj) coopMatLoad(fa##i, As, (cur + (wm + 16 * i) * ROW_K + ks) / 8, ROW_K / 8, gl_CooperativeMatrixLayoutRowMajor); \
  else coopMatLoad(fa##i, As, (cur + ks * ROW_MN + wm + 16 * i) / 8, ROW_MN / 8, gl_CooperativeMatrixLayoutColumnMajor);
#define LOAD_B(j)                                                                                  \
  if (b_kmaj) coopMatLoad(fb##j, Bs, (cur + (wn + 16 * j) * ROW_K + ks) / 8, ROW_K / 8, gl_CooperativeMatrixLayoutColumnMajor); \
  else coopMatLoad(fb##j, Bs, (cur + ks * ROW_MN + wn + 16 * j) / 8, ROW_MN / 8, gl_CooperativeMatrixLayoutRowMajor);
// Accumulator (i, j) through this subgroup's scratch, then out as pairs of rounded results (one
// 32-bit word each), or, with OUT_F32, as float32 (split-K partial sums, rounded after the sum).
#ifdef OUT_F32
#define STORE_PAIR(gm, gn, x, y)                                    \
  c[cbase + gm * p.N + gn] = floatBitsToUint(x);                    \
  if (gn + 1 < p.N) c[cbase + gm * p.N + gn + 1] = floatBitsToUint(y);
#else
#define STORE_PAIR(gm, gn, x, y) c[(cbase + gm * p.N + gn) / 2] = ROUND(x) | ROUND(y) << 16;
#endif
#define WRITE_ACC(i, j)                                                                  \
  coopMatStore(acc##i##j, scratch, w * 256, 16, gl_CooperativeMatrixLayoutRowMajor);    \
  subgroupMemoryBarrierShared();                                                          \
  subgroupBarrier();                                                                      \
  for (uint q = lane; q < 128; q += gl_SubgroupSize) {                                    \
    const uint gm = m0 + wm + 16 * i + q / 8, gn = n0 + wn + 16 * j + 2 * (q % 8);       \
    if (gm < p.M && gn < p.N) {                                                           \
      const float x = scratch[w * 256 + 2 * q], y = scratch[w * 256 + 2 * q + 1];         \
      STORE_PAIR(gm, gn, x, y)                                                            \
    }                                                                                     \
  }                                                                                       \
  subgroupBarrier();
// Chunk s (0, 1) of this invocation's share of the panel at depth k0: into registers ra, rb,
// then into shared-memory panel buf.
#define LOAD_CHUNK(k0, s, ra, rb)                                                                     \
  {                                                                                                   \
    const uint q = lid + 256 * s;                                                                     \
    /* A chunk: 8 along k of row r (k-major), or 8 along m of column k */                             \
    const uint r = a_kmaj ? q / 4 : (q % 16) * 8, ka = a_kmaj ? (q % 4) * 8 : q / 16;                 \
    const uint gm = m0 + r, gk = k0 + ka;                                                             \
    const int ea = abase + int(gm) * p.rsa + int(gk) * p.csa;                                         \
    const uint va = (gm < p.M && gk < p.K) ? (a_kmaj ? min(p.K - gk, 8u) : min(p.M - gm, 8u)) : 0u;   \
    ra = a_fast ? (va > 0u ? a4[ea / 8] : uvec4(0)) : gather8(true, ea, a_kmaj ? p.csa : p.rsa, va);  \
    /* B chunk: 8 along n of row k (n-major), or 8 along k of column n */                             \
    const uint kb = b_kmaj ? (q % 4) * 8 : q / 16, cn = b_kmaj ? q / 4 : (q % 16) * 8;                \
    const uint gk2 = k0 + kb, gn = n0 + cn;                                                           \
    const int eb = bbase + int(gk2) * p.rsb + int(gn) * p.csb;                                        \
    const uint vb = (gk2 < p.K && gn < p.N) ? (b_kmaj ? min(p.K - gk2, 8u) : min(p.N - gn, 8u)) : 0u; \
    rb = b_fast ? (vb > 0u ? b4[eb / 8] : uvec4(0)) : gather8(false, eb, b_kmaj ? p.rsb : p.csb, vb); \
  }
#define STORE_CHUNK(buf, s, ra, rb)                                                                   \
  {                                                                                                   \
    const uint q = lid + 256 * s;                                                                     \
    As[((buf) * PANEL + (a_kmaj ? (q / 4) * ROW_K + (q % 4) * 8 : (q / 16) * ROW_MN + (q % 16) * 8)) / 8] = ra; \
    Bs[((buf) * PANEL + (b_kmaj ? (q / 4) * ROW_K + (q % 4) * 8 : (q / 16) * ROW_MN + (q % 16) * 8)) / 8] = rb; \
  }
#define LOAD_PANEL(k0) LOAD_CHUNK(k0, 0, ra0, rb0) LOAD_CHUNK(k0, 1, ra1, rb1)
#define STORE_PANEL(buf) STORE_CHUNK(buf, 0, ra0, rb0) STORE_CHUNK(buf, 1, ra1, rb1)

void main() {
  const uint lid = gl_LocalInvocationID.x, w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint wm = (w / 4) * 64, wn = (w % 4) * 32;
  // Layouts, uniform across the dispatch: which axis of each operand is staged in chunks, and
  // whether every chunk is one aligned 128-bit load (all offsets and strides multiples of 8).
  const bool a_kmaj = p.csa == 1 || p.rsa != 1, b_kmaj = p.rsb == 1 && p.csb != 1;
  const bool a_fast = (a_kmaj ? p.csa == 1 && p.rsa % 8 == 0 && p.K % 8 == 0 : p.csa % 8 == 0 && p.M % 8 == 0) &&
                      p.a_off % 8 == 0 && p.a_batch % 8 == 0 && p.a_outer % 8 == 0;
  const bool b_fast = (b_kmaj ? p.csb % 8 == 0 && p.K % 8 == 0 : p.csb == 1 && p.rsb % 8 == 0 && p.N % 8 == 0) &&
                      p.b_off % 8 == 0 && p.b_batch % 8 == 0 && p.b_outer % 8 == 0;
  const uint tiles = ((p.M + BM - 1) / BM) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * BM, n0 = (tile % p.tiles_n) * BN;
    const int abase = int(p.a_off) + int(bi / p.inner) * p.a_outer + int(bi % p.inner) * p.a_batch;
    const int bbase = int(p.b_off) + int(bi / p.inner) * p.b_outer + int(bi % p.inner) * p.b_batch;
    FOR_ACC(DECLARE_ACC)
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> fa0, fa1, fa2, fa3;
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> fb0, fb1;
    uvec4 ra0, ra1, rb0, rb1;  // this invocation's 2 chunks of A and 2 of B (512 of each per panel)
    LOAD_PANEL(0)
    STORE_PANEL(0)
    barrier();
    const uint panels = (p.K + BK - 1) / BK;
    for (uint kt = 0; kt < panels; ++kt) {
      const uint cur = (kt & 1) * PANEL;
      if (kt + 1 < panels) LOAD_PANEL((kt + 1) * BK)
      [[unroll]] for (uint ks = 0; ks < BK; ks += 16) {
        LOAD_A(0) LOAD_A(1) LOAD_A(2) LOAD_A(3)
        LOAD_B(0) LOAD_B(1)
        FOR_ACC(MMA)
      }
      if (kt + 1 < panels) STORE_PANEL((kt + 1) & 1)
      barrier();
    }
    const uint cbase = p.c_off + bi * p.M * p.N;
    FOR_ACC(WRITE_ACC)
  }
}
