// Batched matmul C[b] = A[b] @ B[b] in float32 arithmetic, shared by matmul.comp (64 x 64
// tiles) and matmul128.comp (128 x 128): define TM, TN (multiples of 16) and TK, with
// TM * TK == TN * TK == 1024, before including. A and B have arbitrary element strides (transposed operands need
// no copy); C is contiguous. A workgroup of 256 invocations (16 x 16) computes a TM x TN tile,
// staging TK-deep panels of A and B in shared memory. Invocation (tr, tc) owns rows
// 64 g + 4 tr + (0..3) and columns 64 g + 4 tc + (0..3): four neighbours, which the compiler reads
// from shared memory as one 128-bit load. (Measured on an H200: padding the panels or storing
// them as vec4s made this kernel 25% slower.)
// The operands' element types are specialization constants (T_F32, T_F16 or T_BF16 of
// common.glsl): float16 and bfloat16 operands are read, and a 16-bit C written (in pairs: even N
// and offset), where the GPU has no tensor-core kernels, with float32 arithmetic in between.
layout(constant_id = 0) const uint IN_TYPE = T_F32;   // A and B
layout(constant_id = 1) const uint OUT_TYPE = T_F32;  // C
layout(std430, set = 0, binding = 1) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { uint c[]; };
#include "matmul_params.glsl"

float half_value(uint h) { return IN_TYPE == T_BF16 ? uintBitsToFloat(h << 16) : f16_value(h); }
uint half_bits(float v) { return OUT_TYPE == T_BF16 ? bf16_bits(v) : f16_bits(v); }
#define LOAD_IN(buf, i) (IN_TYPE == T_F32 ? uintBitsToFloat((buf)[i]) : half_value(HALF_OF(buf, uint(i))))

const uint GM = TM / 64, GN = TN / 64;  // vec4 groups per invocation along M and N
shared float As[TK][TM];
shared float Bs[TK][TN];

// Panel element e of A is row R, column K of the tile, and so on for B.
#define STAGE_A(ROW_OF_E, K_OF_E)                                                         \
  for (uint e = lid; e < TM * TK; e += 256) {                                             \
    const uint r = (ROW_OF_E), k = (K_OF_E), gm = m0 + r, gk = k0 + k;                                \
    As[k][r] = (gm < p.M && gk < p.K) ? LOAD_IN(a, abase + int(gm) * p.rsa + int(gk) * p.csa) : 0.0; \
  }
#define STAGE_B(K_OF_E, COL_OF_E)                                                         \
  for (uint e = lid; e < TK * TN; e += 256) {                                             \
    const uint k = (K_OF_E), n = (COL_OF_E), gk = k0 + k, gn = n0 + n;                                \
    Bs[k][n] = (gk < p.K && gn < p.N) ? LOAD_IN(b, bbase + int(gk) * p.rsb + int(gn) * p.csb) : 0.0; \
  }

void main() {
  const uint lid = gl_LocalInvocationID.x, tr = lid / 16, tc = lid % 16;
  const uint tiles = ((p.M + TM - 1) / TM) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * TM, n0 = (tile % p.tiles_n) * TN;
    const int bo = int(bi / p.inner), bn = int(bi % p.inner);
    const int abase = int(p.a_off) + bo * p.a_outer + bn * p.a_batch;
    const int bbase = int(p.b_off) + bo * p.b_outer + bn * p.b_batch;
    float acc[GM * 4][GN * 4];
    for (uint i = 0; i < GM * 4; ++i)
      for (uint j = 0; j < GN * 4; ++j) acc[i][j] = 0.0;
    for (uint k0 = 0; k0 < p.K; k0 += TK) {
      // Stage A[m0:m0+TM, k0:k0+TK] and B[k0:k0+TK, n0:n0+TN]. Neighbouring invocations read
      // along each operand's unit-stride axis (coalesced loads), whether it is stored row-major
      // or transposed; the layout test is uniform and outside the loops.
      if (p.csa == 1) STAGE_A(e / TK, e % TK) else STAGE_A(e % TM, e / TM)
      if (p.csb == 1 || p.rsb != 1) STAGE_B(e / TN, e % TN) else STAGE_B(e % TK, e / TK)
      barrier();
      for (uint k = 0; k < TK; ++k) {
        float av[GM * 4], bv[GN * 4];
        for (uint i = 0; i < GM * 4; ++i) av[i] = As[k][64 * (i / 4) + 4 * tr + i % 4];
        for (uint j = 0; j < GN * 4; ++j) bv[j] = Bs[k][64 * (j / 4) + 4 * tc + j % 4];
        for (uint i = 0; i < GM * 4; ++i)
          for (uint j = 0; j < GN * 4; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
      }
      barrier();
    }
    const uint cbase = p.c_off + bi * p.M * p.N;
    for (uint i = 0; i < GM * 4; ++i)
      for (uint j = 0; j < GN * 4; ++j) acc[i][j] *= p.alpha;
    for (uint i = 0; i < GM * 4; ++i) {
      const uint gm = m0 + 64 * (i / 4) + 4 * tr + i % 4;
      if (gm >= p.M) continue;
      if (OUT_TYPE == T_F32) {
        for (uint j = 0; j < GN * 4; ++j) {
          const uint gn = n0 + 64 * (j / 4) + 4 * tc + j % 4;
          if (gn < p.N) c[cbase + gm * p.N + gn] = floatBitsToUint(acc[i][j]);
        }
      } else {
        for (uint j = 0; j < GN * 4; j += 2) {  // gn even, N even: gn + 1 < N too
          const uint gn = n0 + 64 * (j / 4) + 4 * tc + j % 4;
          if (gn < p.N) c[(cbase + gm * p.N + gn) >> 1] = half_bits(acc[i][j]) | half_bits(acc[i][j + 1]) << 16;
        }
      }
    }
  }
}
