// Batched float32 matmul C[b] = A[b] @ B[b], shared by matmul.comp (64 x 64 tiles) and
// matmul128.comp (128 x 128): define TM, TN (multiples of 16) and TK, with TM * TK == TN * TK
// == 1024, before including. A and B have arbitrary element strides (transposed operands need
// no copy); C is contiguous. A workgroup of 256 invocations (16 x 16) computes a TM x TN tile,
// staging TK-deep panels of A and B in shared memory; invocation (tr, tc) owns rows tr + 16 i
// and columns tc + 16 j, so its shared-memory reads are conflict-free and its stores coalesced.
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { float c[]; };
layout(push_constant) uniform Params {
  uint M, N, K, batch;
  uint a_off, b_off, c_off, tiles_n;
  int rsa, csa, rsb, csb;
  // Batch entry bi = bo * inner + bn: its A starts bo * a_outer + bn * a_batch elements after
  // a_off (strides 0: broadcast), so two batch dimensions, like attention's (batch, head), need
  // no copy even when they do not merge into one stride.
  int a_batch, b_batch;
  uint inner;
  int a_outer, b_outer;
} p;

const uint RM = TM / 16, RN = TN / 16;  // results per invocation along M and N
shared float As[TK][TM + 1];  // + 1: a column of the panel, written by neighbours, spans banks
shared float Bs[TK][TN + 1];

void main() {
  const uint lid = gl_LocalInvocationID.x, tr = lid / 16, tc = lid % 16;
  const uint tiles = ((p.M + TM - 1) / TM) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * TM, n0 = (tile % p.tiles_n) * TN;
    const int bo = int(bi / p.inner), bn = int(bi % p.inner);
    const int abase = int(p.a_off) + bo * p.a_outer + bn * p.a_batch;
    const int bbase = int(p.b_off) + bo * p.b_outer + bn * p.b_batch;
    float acc[RM][RN];
    for (uint i = 0; i < RM; ++i)
      for (uint j = 0; j < RN; ++j) acc[i][j] = 0.0;
    for (uint k0 = 0; k0 < p.K; k0 += TK) {
      // Stage A[m0:m0+TM, k0:k0+TK] and B[k0:k0+TK, n0:n0+TN].
      // Neighbouring invocations read along each operand's unit-stride axis (coalesced loads),
      // whether it is stored row-major or transposed.
      for (uint e = lid; e < TM * TK; e += 256) {
        const bool a_cols = p.csa == 1;  // A's rows are contiguous: walk along k
        uint r = a_cols ? e / TK : e % TM, k = a_cols ? e % TK : e / TM;
        uint gm = m0 + r, gk = k0 + k;
        As[k][r] = (gm < p.M && gk < p.K) ? a[abase + int(gm) * p.rsa + int(gk) * p.csa] : 0.0;
        const bool b_rows = p.csb == 1 || p.rsb != 1;  // B row-major: walk along n
        uint kb = b_rows ? e / TN : e % TK, col = b_rows ? e % TN : e / TK;
        uint gn = n0 + col, gkb = k0 + kb;
        Bs[kb][col] = (gkb < p.K && gn < p.N) ? b[bbase + int(gkb) * p.rsb + int(gn) * p.csb] : 0.0;
      }
      barrier();
      for (uint k = 0; k < TK; ++k) {
        float av[RM], bv[RN];
        for (uint i = 0; i < RM; ++i) av[i] = As[k][tr + 16 * i];
        for (uint j = 0; j < RN; ++j) bv[j] = Bs[k][tc + 16 * j];
        for (uint i = 0; i < RM; ++i)
          for (uint j = 0; j < RN; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
      }
      barrier();
    }
    const uint cbase = p.c_off + bi * p.M * p.N;
    for (uint i = 0; i < RM; ++i) {
      uint gm = m0 + tr + 16 * i;
      if (gm >= p.M) continue;
      for (uint j = 0; j < RN; ++j) {
        uint gn = n0 + tc + 16 * j;
        if (gn < p.N) c[cbase + gm * p.N + gn] = acc[i][j];
      }
    }
  }
}
