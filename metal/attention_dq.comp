#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Fused attention backward, part 1 (see attention.glsl): dq, and delta = rowsum(do * o) for part
// 2. For query row i and key j: p = exp(scale q.k - lse_i), dp = do_i . v_j (through the
// dropout mask when there is one), ds = p (dp - delta_i), dq_i += scale ds k_j.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 1) readonly buffer Q { uint q[]; };
layout(std430, set = 0, binding = 2) readonly buffer K { uint k[]; };
layout(std430, set = 0, binding = 3) readonly buffer V { uint v[]; };
layout(std430, set = 0, binding = 4) readonly buffer O { uint o[]; };
layout(std430, set = 0, binding = 5) readonly buffer DO { uint do_[]; };
layout(std430, set = 0, binding = 6) readonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 7) writeonly buffer Delta { float delta[]; };
layout(std430, set = 0, binding = 8) writeonly buffer DQ { uint dq[]; };
layout(std430, set = 0, binding = 9) readonly buffer Mask { uint mask[]; };
#include "attention.glsl"

shared float Ks[64][DMAX];
shared float Vs[64][DMAX];

void main() {
  const uint lid = gl_LocalInvocationID.x, blocks = (p.T + 63u) / 64u;
  for (uint w = gl_WorkGroupID.x; w < p.B * p.H * blocks; w += gl_NumWorkGroups.x) {
    const uint bh = w / blocks, qb = w % blocks, b = bh / p.H, h = bh % p.H, i = qb * 64u + lid;
    const uint ic = min(i, p.T - 1u), qrow = head_row(p.q_off, b, h, ic), orow = out_row(b, h, ic);
    float qv[DMAX], dov[DMAX], acc[DMAX];
    float di = 0.0;
    for (uint d = 0; d < DMAX; ++d) {
      qv[d] = d < p.D ? LOADX(q, p.in_type, qrow + d) * p.scale : 0.0;
      dov[d] = d < p.D ? LOADX(do_, p.in_type, orow + d) : 0.0;
      di += d < p.D ? dov[d] * LOADX(o, p.in_type, orow + d) : 0.0;
      acc[d] = 0.0;
    }
    const float li = lse[bh * p.T + ic];
    if (i < p.T) delta[bh * p.T + i] = di;
    const uint kend = key_end(qb);
    for (uint k0 = 0; k0 < kend; k0 += 64u) {
      const uint j = k0 + lid, krow = head_row(p.k_off, b, h, min(j, p.T - 1u)),
                 vrow = head_row(p.v_off, b, h, min(j, p.T - 1u));
      for (uint d = 0; d < DMAX; ++d) {
        Ks[lid][d] = d < p.D && j < p.T ? LOADX(k, p.in_type, krow + d) : 0.0;
        Vs[lid][d] = d < p.D && j < p.T ? LOADX(v, p.in_type, vrow + d) : 0.0;
      }
      barrier();
      for (uint jj = 0; jj < 64u; ++jj) {
        if (!attends(i, k0 + jj)) continue;
        float s = 0.0, dp = 0.0;
        [[unroll]] for (uint d = 0; d < DMAX; ++d) {
          s += qv[d] * Ks[jj][d];
          dp += dov[d] * Vs[jj][d];
        }
        const float ds = exp(s - li) * (dropped(bh, i, k0 + jj, dp) - di);
        [[unroll]] for (uint d = 0; d < DMAX; ++d) acc[d] += ds * Ks[jj][d];
      }
      barrier();
    }
    if (i < p.T) {
      for (uint d = 0; d < DMAX; ++d) acc[d] *= p.scale;
      STORE_ROW(dq, p.out_type, head_row(p.g_off, b, h, i), acc)
    }
  }
}
