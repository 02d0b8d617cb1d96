// Batched float16/bfloat16 matmul on tensor cores (VK_KHR_cooperative_matrix) with float32
// accumulation: C[b] = A[b] @ B[b], rounded once to ELEM. Included by matmul_coop_*.comp, which
// define ELEM and ROUND (float32 to ELEM bits), enable ELEM's extension and may pick the tiling
// below (TILE_M256); OUT_F32 writes C in float32 instead. Same push constants as
// matmul_tiled.glsl; C must be contiguous, and, in ELEM, have an even N and c_off (two results
// per 32-bit word).
//
// Tiling: SG_M x SG_N subgroups of 32; each owns FM x FN accumulators of 16 x 16, so a workgroup
// computes a BM x BN tile of C (BM = 16 FM SG_M). K advances BK at a time through STAGES
// shared-memory panels per operand: with 2, loads of the next panel overlap the math on this
// one; with 1, the next panel waits in registers (half the shared memory, one more barrier).
// Panels are staged in 8-element chunks (one 128-bit load) along each operand's unit-stride axis,
// so transposed operands need no copy; other layouts, ragged edges and unaligned offsets take 8
// checked 16-bit loads per chunk instead. Each chunk goes to shared memory as one 128-bit store,
// and the fragments are read from there in 128-bit units (offsets and strides / 8).
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
layout(std430, set = 0, binding = 3) writeonly buffer C4 { uvec4 c4[]; };
#include "../matmul_params.glsl"
// Layouts, set per product by the host (gpu/linalg.cpp) as specialization constants, so the loop
// holds only the paths this product takes: which axis of each operand is staged in chunks (K, or
// M for A and N for B), whether every chunk is one aligned 128-bit load (all offsets and strides
// multiples of 8), and whether C's rows and offset are whole 128-bit words (write8). The
// defaults, the checked loads along K and word stores, are right for any layout.
layout(constant_id = 0) const bool A_KMAJ = true;
layout(constant_id = 1) const bool A_FAST = false;
layout(constant_id = 2) const bool B_KMAJ = true;
layout(constant_id = 3) const bool B_FAST = false;
layout(constant_id = 4) const bool C_VEC = false;

// Two tilings, the best of sweeps on an H100 (bfloat16, 4096^3 and a GPT step's products).
// The default: 8 subgroups, each 32 x 64, a 128 x 128 tile, BK 64 in one stage. TILE_M256: 16
// subgroups of 32 x 64, a 256 x 128 tile, BK 32 (4096^3: 263 against 211 TFLOP/s): with 512
// invocations a workgroup, the compiler keeps to 128 registers each, so an SM holds 16
// subgroups where the default's 255 registers leave it 8. Where there are few tiles, SMs wait
// idle on the last wave (16384 x 1536 @ 1536 x 384: 175 against 204), so the host picks the
// tiling per product (gpu/linalg.cpp). Slower in those sweeps:
// 4 x 4 accumulators a subgroup (255 registers, spilled), 64 x 64 or 64 x 128 tiles, BK 32
// with two stages, and fragments loaded straight from global memory.
#if defined(TILE_M256)
#define SG_M 8
#define SG_N 2
#define FM 2
#define FN 4
#define BK 32
#define STAGES 1
#else
#define SG_M 4
#define SG_N 2
#define FM 2
#define FN 4
#define BK 64
#define STAGES 1
#endif
#define BM (16 * FM * SG_M)
#define BN (16 * FN * SG_N)
#define THREADS (32 * SG_M * SG_N)
layout(local_size_x = THREADS) in;
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
// Panel rows in elements, padded by 8 against bank conflicts: BM rows of BK (K-major) or BK rows
// of BM; STAGES panels per operand in one flat array of 8-element chunks.
#define MAX(x, y) ((x) > (y) ? (x) : (y))
#define PANEL_A MAX(BM * (BK + 8), BK * (BM + 8))
#define PANEL_B MAX(BN * (BK + 8), BK * (BN + 8))
const uint ROW_K = BK + 8, ROW_M = BM + 8, ROW_N = BN + 8;
const uint A_CHUNKS = BM * BK / 8 / THREADS, B_CHUNKS = BN * BK / 8 / THREADS;  // per invocation
shared uvec4 As[STAGES * PANEL_A / 8];
shared uvec4 Bs[STAGES * PANEL_B / 8];
// The epilogue of a ragged tile passes each accumulator through As (a 16 x 16 float32 block, 64
// chunks, per subgroup).
#if SG_M * SG_N * 512 > STAGES * BM * (BK + 8)
#error "matmul_coop.glsl: the epilogue's scratch does not fit in As"
#endif

// 8 elements starting at element e, stepping `step`, the first `valid` of them real (0 after).
uvec4 gather8(bool is_a, int e, int step, uint valid) {
  uint h[8];
  [[unroll]] for (uint j = 0; j < 8; ++j) {
    const uint k = uint(e + int(j) * step);
    h[j] = j < valid ? (is_a ? HALF_OF(a, k) : HALF_OF(b, k)) : 0u;
  }
  return uvec4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16, h[6] | h[7] << 16);
}

// A subgroup's accumulators are named variables acc<i><j>, not an array: the NVIDIA driver keeps
// arrays of cooperative matrices in local memory, and every product then went through it
// (35 TFLOP/s on an H200). FOR_ACC(X) applies X to each (i, j), FOR_A and FOR_B to each i, j.
#if FM == 1
#define FOR_A(X) X(0)
#elif FM == 2
#define FOR_A(X) X(0) X(1)
#else
#define FOR_A(X) X(0) X(1) X(2) X(3)
#endif
#if FN == 1
#define FOR_B(X) X(0)
#define ACC_ROW(X, i) X(i, 0)
#elif FN == 2
#define FOR_B(X) X(0) X(1)
#define ACC_ROW(X, i) X(i, 0) X(i, 1)
#else
#define FOR_B(X) X(0) X(1) X(2) X(3)
#define ACC_ROW(X, i) X(i, 0) X(i, 1) X(i, 2) X(i, 3)
#endif
#if FM == 1
#define FOR_ACC(X) ACC_ROW(X, 0)
#elif FM == 2
#define FOR_ACC(X) ACC_ROW(X, 0) ACC_ROW(X, 1)
#else
#define FOR_ACC(X) ACC_ROW(X, 0) ACC_ROW(X, 1) ACC_ROW(X, 2) ACC_ROW(X, 3)
#endif
#define DECLARE_ACC(i, j) ACC acc##i##j = ACC(0.0);
#define MMA(i, j) acc##i##j = coopMatMulAdd(fa##i, fb##j, acc##i##j);
// Fragment i of A (rows wm + 16 i ..) and j of B (columns wn + 16 j ..) at depth ks of panel cur.
#define LOAD_A(i)                                                                                  \
  if (a_kmaj) coopMatLoad(fa##i, As, (cur_a + (wm + 16 * i) * ROW_K + ks) / 8, ROW_K / 8, gl_CooperativeMatrixLayoutRowMajor); \
  else coopMatLoad(fa##i, As, (cur_a + ks * ROW_M + wm + 16 * i) / 8, ROW_M / 8, gl_CooperativeMatrixLayoutColumnMajor);
#define LOAD_B(j)                                                                                  \
  if (b_kmaj) coopMatLoad(fb##j, Bs, (cur_b + (wn + 16 * j) * ROW_K + ks) / 8, ROW_K / 8, gl_CooperativeMatrixLayoutColumnMajor); \
  else coopMatLoad(fb##j, Bs, (cur_b + ks * ROW_N + wn + 16 * j) / 8, ROW_N / 8, gl_CooperativeMatrixLayoutRowMajor);
// Accumulator (i, j) out to C, through this subgroup's 16 x 16 float32 block of As: each
// invocation takes 8 consecutive results of one row, rounds them to ELEM (or, with OUT_F32, keeps
// float32: split-K partial sums, rounded after the sum) and writes them in one 128-bit store (two
// in float32) where C's rows and offset allow (C_VEC), else word by word; results outside C are
// dropped. Stored straight from the matrix, bfloat16 results were truncated (NVIDIA's conversion)
// and the stores were slower.
#define WRITE_ACC(i, j)                                                                            \
  {                                                                                                \
    coopMatStore(acc##i##j, As, w * 64, 4, gl_CooperativeMatrixLayoutRowMajor);                    \
    subgroupMemoryBarrierShared();                                                                 \
    subgroupBarrier();                                                                             \
    const uint row = lane / 2, gm = m0 + wm + 16 * i + row, gn = n0 + wn + 16 * j + 8 * (lane % 2); \
    if (gm < p.M && gn < p.N)                                                                      \
      write8(cbase + gm * p.N + gn, p.N - gn, As[w * 64 + lane * 2], As[w * 64 + lane * 2 + 1]);   \
    subgroupBarrier();                                                                             \
  }
// Chunk s of this invocation's share of A's (B's) panel at depth k0, into register ra[s] (rb[s]).
#define LOAD_A_CHUNK(k0, s)                                                                         \
  {                                                                                                 \
    const uint q = lid + THREADS * s;                                                               \
    /* 8 along k of row r (k-major), or 8 along m of column k */                                    \
    const uint r = a_kmaj ? q / (BK / 8) : (q % (BM / 8)) * 8, ka = a_kmaj ? (q % (BK / 8)) * 8 : q / (BM / 8); \
    const uint gm = m0 + r, gk = k0 + ka;                                                           \
    const int ea = abase + int(gm) * p.rsa + int(gk) * p.csa;                                       \
    const uint va = (gm < p.M && gk < p.K) ? (a_kmaj ? min(p.K - gk, 8u) : min(p.M - gm, 8u)) : 0u; \
    ra[s] = a_fast ? (va > 0u ? a4[ea / 8] : uvec4(0)) : gather8(true, ea, a_kmaj ? p.csa : p.rsa, va); \
  }
#define LOAD_B_CHUNK(k0, s)                                                                         \
  {                                                                                                 \
    const uint q = lid + THREADS * s;                                                               \
    /* 8 along n of row k (n-major), or 8 along k of column n */                                    \
    const uint kb = b_kmaj ? (q % (BK / 8)) * 8 : q / (BN / 8), cn = b_kmaj ? q / (BK / 8) : (q % (BN / 8)) * 8; \
    const uint gk = k0 + kb, gn = n0 + cn;                                                          \
    const int eb = bbase + int(gk) * p.rsb + int(gn) * p.csb;                                       \
    const uint vb = (gk < p.K && gn < p.N) ? (b_kmaj ? min(p.K - gk, 8u) : min(p.N - gn, 8u)) : 0u; \
    rb[s] = b_fast ? (vb > 0u ? b4[eb / 8] : uvec4(0)) : gather8(false, eb, b_kmaj ? p.rsb : p.csb, vb); \
  }
#define LOAD_PANEL(k0)                                                    \
  [[unroll]] for (uint s = 0; s < A_CHUNKS; ++s) LOAD_A_CHUNK(k0, s)      \
  [[unroll]] for (uint s = 0; s < B_CHUNKS; ++s) LOAD_B_CHUNK(k0, s)
// The registers into shared-memory panel buf.
#define STORE_PANEL(buf)                                                                                       \
  [[unroll]] for (uint s = 0; s < A_CHUNKS; ++s) {                                                             \
    const uint q = lid + THREADS * s;                                                                          \
    As[((buf) * PANEL_A + (a_kmaj ? (q / (BK / 8)) * ROW_K + (q % (BK / 8)) * 8 : (q / (BM / 8)) * ROW_M + (q % (BM / 8)) * 8)) / 8] = ra[s]; \
  }                                                                                                            \
  [[unroll]] for (uint s = 0; s < B_CHUNKS; ++s) {                                                             \
    const uint q = lid + THREADS * s;                                                                          \
    Bs[((buf) * PANEL_B + (b_kmaj ? (q / (BK / 8)) * ROW_K + (q % (BK / 8)) * 8 : (q / (BN / 8)) * ROW_N + (q % (BN / 8)) * 8)) / 8] = rb[s]; \
  }

// 8 float32 results (the bits of lo, hi) to C at element e, of which the first `valid` are inside.
void write8(uint e, uint valid, uvec4 lo, uvec4 hi) {
  lo = floatBitsToUint(uintBitsToFloat(lo) * p.alpha);
  hi = floatBitsToUint(uintBitsToFloat(hi) * p.alpha);
#ifdef OUT_F32
  if (C_VEC) {
    c4[e / 4] = lo;
    c4[e / 4 + 1] = hi;
    return;
  }
  const uint v[8] = uint[8](lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w);
  for (uint k = 0; k < min(valid, 8u); ++k) c[e + k] = v[k];
#else
  const vec4 l = uintBitsToFloat(lo), h = uintBitsToFloat(hi);
  const uvec4 r = uvec4(ROUND(l.x) | ROUND(l.y) << 16, ROUND(l.z) | ROUND(l.w) << 16, ROUND(h.x) | ROUND(h.y) << 16,
                        ROUND(h.z) | ROUND(h.w) << 16);
  if (C_VEC) {
    c4[e / 8] = r;
    return;
  }
  for (uint k = 0; 2 * k < valid && k < 4; ++k) c[e / 2 + k] = r[k];  // whole words: N and c_off are even
#endif
}

void main() {
  const uint lid = gl_LocalInvocationID.x, w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint wm = (w / SG_N) * 16 * FM, wn = (w % SG_N) * 16 * FN;
  const bool a_kmaj = A_KMAJ, b_kmaj = B_KMAJ, a_fast = A_FAST, b_fast = B_FAST;
  const uint tiles = ((p.M + BM - 1) / BM) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * BM, n0 = (tile % p.tiles_n) * BN;
    const int abase = int(p.a_off) + int(bi / p.inner) * p.a_outer + int(bi % p.inner) * p.a_batch;
    const int bbase = int(p.b_off) + int(bi / p.inner) * p.b_outer + int(bi % p.inner) * p.b_batch;
    FOR_ACC(DECLARE_ACC)
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> fa0, fa1, fa2, fa3;
    coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> fb0, fb1, fb2, fb3;
    uvec4 ra[A_CHUNKS], rb[B_CHUNKS];  // this invocation's chunks of the next panel
    LOAD_PANEL(0)
    STORE_PANEL(0)
    barrier();
    const uint panels = (p.K + BK - 1) / BK;
    for (uint kt = 0; kt < panels; ++kt) {
      const uint cur_a = (kt % STAGES) * PANEL_A, cur_b = (kt % STAGES) * PANEL_B;
      if (kt + 1 < panels) LOAD_PANEL((kt + 1) * BK)
      [[unroll]] for (uint ks = 0; ks < BK; ks += 16) {
        FOR_A(LOAD_A)
        FOR_B(LOAD_B)
        FOR_ACC(MMA)
      }
#if STAGES == 1
      barrier();  // everyone is done with the one panel before it is overwritten
#endif
      if (kt + 1 < panels) STORE_PANEL((kt + 1) % STAGES)
      barrier();
    }
    const uint cbase = p.c_off + bi * p.M * p.N;
    FOR_ACC(WRITE_ACC)
    barrier();  // As is the epilogue's scratch: free before the next tile's first panel
  }
}
