#version 450
#extension GL_GOOGLE_include_directive : require
// Cross-entropy per row of C contiguous float32 logits, one workgroup per row:
// loss = logsumexp(x) - x[target] (0 where target == ignore), saving (max, log sum exp(x - max))
// per row for the backward. A target outside [0, C) that is not `ignore` gives a NaN loss and a
// fault record (the host raises it at the next sync).
#include "common.glsl"
#include "rows.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { uint x[]; };  // x_type (typed.glsl)
layout(std430, set = 0, binding = 2) readonly buffer T { int target[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Loss { float loss[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Lse { vec2 lse_[]; };
layout(std430, set = 0, binding = 5) buffer Fault { int fault[]; };
layout(push_constant) uniform Params { uint rows, C, x_off, loss_off, t_off; int ignore; uint x_type; } p;
#include "typed.glsl"

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint xb = p.x_off + r * p.C;
    float m = -1.0 / 0.0, s = 0.0;
    for (uint c = lid; c < p.C; c += 256) online_add(m, s, LOAD_TYPED(x, p.x_type, xb + c));
    const vec2 ml = wg_max_logsum(m, s);
    if (lid == 0) {
      const int t = target[p.t_off + r];
      float l = 0.0;
      if (t != p.ignore && (t < 0 || t >= int(p.C))) {
        RECORD_FAULT(fault, FAULT_CROSS_ENTROPY_TARGET, t, int(p.C), p.ignore)
        l = uintBitsToFloat(0x7FC00000u);
      } else if (t != p.ignore) {
        l = ml.y - (LOAD_TYPED(x, p.x_type, xb + uint(t)) - ml.x);
      }
      loss[p.loss_off + r] = l;
      lse_[r] = ml;
    }
  }
}
