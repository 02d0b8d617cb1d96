#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Fused attention forward (see attention.glsl): o = softmax(scale q k^T, causal) v, and each
// row's log-sum-exp for the backward pass. A workgroup takes 64 query rows of one (batch, head);
// each block of 64 keys and values is staged in shared memory; the running max, sum and output
// are rescaled when a score exceeds the max (online softmax).
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 1) readonly buffer Q { uint q[]; };
layout(std430, set = 0, binding = 2) readonly buffer K { uint k[]; };
layout(std430, set = 0, binding = 3) readonly buffer V { uint v[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { uint o[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Lse { float lse[]; };
layout(std430, set = 0, binding = 6) readonly buffer Mask { uint mask[]; };
#include "attention.glsl"

shared float Ks[64][DMAX];
shared float Vs[64][DMAX];

void main() {
  const uint lid = gl_LocalInvocationID.x, blocks = (p.T + 63u) / 64u;
  for (uint w = gl_WorkGroupID.x; w < p.B * p.H * blocks; w += gl_NumWorkGroups.x) {
    const uint bh = w / blocks, qb = w % blocks, b = bh / p.H, h = bh % p.H, i = qb * 64u + lid;
    float qv[DMAX], acc[DMAX];
    const uint qrow = head_row(p.q_off, b, h, min(i, p.T - 1u));
    for (uint d = 0; d < DMAX; ++d) {
      qv[d] = d < p.D ? LOADX(q, p.in_type, qrow + d) * p.scale : 0.0;
      acc[d] = 0.0;
    }
    float m = -1.0 / 0.0, l = 0.0;
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
        float s = 0.0;
        [[unroll]] for (uint d = 0; d < DMAX; ++d) s += qv[d] * Ks[jj][d];
        if (s > m) {  // a new running max: rescale what was summed (rare after the first keys)
          const float corr = exp(m - s);
          l *= corr;
          [[unroll]] for (uint d = 0; d < DMAX; ++d) acc[d] *= corr;
          m = s;
        }
        const float pj = exp(s - m), pd = dropped(bh, i, k0 + jj, pj);
        l += pj;
        [[unroll]] for (uint d = 0; d < DMAX; ++d) acc[d] += pd * Vs[jj][d];
      }
      barrier();
    }
    if (i < p.T) {
      const float inv = 1.0 / l;
      for (uint d = 0; d < DMAX; ++d) acc[d] *= inv;
      STORE_ROW(o, p.out_type, p.g_off + out_row(b, h, i), acc)
      lse[bh * p.T + i] = m + log(l);
    }
  }
}
