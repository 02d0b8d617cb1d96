// Batched matmul on 64-bit values (matmul_f64.comp, matmul_i64.comp: define VAL first), with
// matmul_tiled.glsl's push constants: 16 x 16 tiles of C, one result per invocation, 16-deep
// panels of A and B staged in shared memory; any operand strides, C contiguous.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { VAL a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { VAL b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer C { VAL c[]; };
#include "../matmul_params.glsl"

shared VAL As[16][17];
shared VAL Bs[16][17];

void main() {
  const uint lid = gl_LocalInvocationID.x, tr = lid / 16, tc = lid % 16;
  const uint tiles = ((p.M + 15) / 16) * p.tiles_n;
  for (uint t = gl_WorkGroupID.x; t < tiles * p.batch; t += gl_NumWorkGroups.x) {
    const uint bi = t / tiles, tile = t % tiles;
    const uint m0 = (tile / p.tiles_n) * 16, n0 = (tile % p.tiles_n) * 16;
    const int bo = int(bi / p.inner), bn = int(bi % p.inner);
    const int abase = int(p.a_off) + bo * p.a_outer + bn * p.a_batch;
    const int bbase = int(p.b_off) + bo * p.b_outer + bn * p.b_batch;
    VAL acc = VAL(0);
    for (uint k0 = 0; k0 < p.K; k0 += 16) {
      const uint gm = m0 + tr, gk = k0 + tc;
      As[tr][tc] = gm < p.M && gk < p.K ? a[abase + int(gm) * p.rsa + int(gk) * p.csa] : VAL(0);
      const uint bk = k0 + tr, gn = n0 + tc;
      Bs[tr][tc] = bk < p.K && gn < p.N ? b[bbase + int(bk) * p.rsb + int(gn) * p.csb] : VAL(0);
      barrier();
      for (uint k = 0; k < 16; ++k) acc += As[tr][k] * Bs[k][tc];
      barrier();
    }
    const uint gm = m0 + tr, gn = n0 + tc;
    if (gm < p.M && gn < p.N) c[p.c_off + bi * p.M * p.N + gm * p.N + gn] = SCALED(acc);
  }
}
