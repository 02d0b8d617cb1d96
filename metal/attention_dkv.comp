#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Fused attention backward, part 2 (see attention.glsl and attention_dq.comp): dk and dv, one
// invocation per key row j, the query rows that attend to it staged 32 at a time with their do,
// lse and delta: dv_j += p do_i, dk_j += scale ds q_i.
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 1) readonly buffer Q { uint q[]; };
layout(std430, set = 0, binding = 2) readonly buffer K { uint k[]; };
layout(std430, set = 0, binding = 3) readonly buffer V { uint v[]; };
layout(std430, set = 0, binding = 4) readonly buffer DO { uint do_[]; };
layout(std430, set = 0, binding = 5) readonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 6) readonly buffer Delta { float delta[]; };
layout(std430, set = 0, binding = 7) writeonly buffer DK { uint dk[]; };
layout(std430, set = 0, binding = 8) writeonly buffer DV { uint dv[]; };
layout(std430, set = 0, binding = 9) readonly buffer Mask { uint mask[]; };
#include "attention.glsl"

shared float Qs[32][DMAX];
shared float DOs[32][DMAX];
shared float Vown[64][DMAX + 1];  // each invocation's own v row (padded: no bank conflicts)
shared float Ls[32], Ds[32];

void main() {
  const uint lid = gl_LocalInvocationID.x, blocks = (p.T + 63u) / 64u;
  for (uint w = gl_WorkGroupID.x; w < p.B * p.H * blocks; w += gl_NumWorkGroups.x) {
    const uint bh = w / blocks, kb = w % blocks, b = bh / p.H, h = bh % p.H, j = kb * 64u + lid;
    const uint jc = min(j, p.T - 1u), krow = head_row(p.k_off, b, h, jc), vrow = head_row(p.v_off, b, h, jc);
    float kv[DMAX], dkacc[DMAX], dvacc[DMAX];
    for (uint d = 0; d < DMAX; ++d) {
      kv[d] = d < p.D ? LOADX(k, p.in_type, krow + d) * p.scale : 0.0;
      Vown[lid][d] = d < p.D ? LOADX(v, p.in_type, vrow + d) : 0.0;
      dkacc[d] = 0.0;
      dvacc[d] = 0.0;
    }
    // Queries before this key block never attend to it when causal.
    for (uint q0 = p.causal != 0u ? kb * 64u : 0u; q0 < p.T; q0 += 32u) {
      barrier();  // the previous block's rows are no longer read (and Vown is written)
      const uint r = lid % 32u, i = q0 + r, ic = min(i, p.T - 1u), half_ = lid / 32u;
      const uint qrow = head_row(p.q_off, b, h, ic), orow = out_row(b, h, ic);
      for (uint d = 0; d < DMAX / 2u; ++d) {
        const uint dd = half_ * (DMAX / 2u) + d;
        Qs[r][dd] = dd < p.D && i < p.T ? LOADX(q, p.in_type, qrow + dd) : 0.0;
        DOs[r][dd] = dd < p.D && i < p.T ? LOADX(do_, p.in_type, orow + dd) : 0.0;
      }
      if (half_ == 0u) {
        Ls[r] = lse[bh * p.T + ic];
        Ds[r] = delta[bh * p.T + ic];
      }
      barrier();
      for (uint ii = 0; ii < 32u; ++ii) {
        if (!attends(q0 + ii, j)) continue;
        float s = 0.0, dp = 0.0;
        [[unroll]] for (uint d = 0; d < DMAX; ++d) {
          s += kv[d] * Qs[ii][d];
          dp += DOs[ii][d] * Vown[lid][d];
        }
        const float pij = exp(s - Ls[ii]), ds = pij * (dropped(bh, q0 + ii, j, dp) - Ds[ii]);
        const float pd = dropped(bh, q0 + ii, j, pij);
        [[unroll]] for (uint d = 0; d < DMAX; ++d) {
          dvacc[d] += pd * DOs[ii][d];
          dkacc[d] += ds * Qs[ii][d];
        }
      }
    }
    barrier();
    if (j < p.T) {
      for (uint d = 0; d < DMAX; ++d) dkacc[d] *= p.scale;
      STORE_ROW(dk, p.out_type, head_row(p.g_off, b, h, j), dkacc)
      STORE_ROW(dv, p.out_type, head_row(p.g2_off, b, h, j), dvacc)
    }
  }
}
