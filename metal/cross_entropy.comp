#version 450
#extension GL_GOOGLE_include_directive : require
// Cross-entropy per row of C contiguous float32 logits, one workgroup per row:
// loss = logsumexp(x) - x[target] (0 where target == ignore), saving (max, log sum exp(x - max))
// per row for the backward.
#include "common.glsl"
#include "rows.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer T { int target[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Loss { float loss[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Lse { vec2 lse_[]; };
layout(push_constant) uniform Params { uint rows, C, x_off, loss_off; int ignore; } p;

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint xb = p.x_off + r * p.C;
    float m = -1.0 / 0.0, s = 0.0;
    for (uint c = lid; c < p.C; c += 256) online_add(m, s, x[xb + c]);
    const vec2 ml = wg_max_logsum(m, s);
    if (lid == 0) {
      const int t = target[r];
      loss[p.loss_off + r] = t == p.ignore ? 0.0 : ml.y - (x[xb + uint(t)] - ml.x);
      lse_[r] = ml;
    }
  }
}
