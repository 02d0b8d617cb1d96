#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax / log-softmax over rows of n contiguous float32 values, one workgroup per row.
// causal: row r keeps columns 0..(r % T) (an attention score block of T query rows); the rest
// become 0 (softmax) or -inf (log-softmax).
#include "common.glsl"
#include "rows.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params { uint rows, n, x_off, y_off, log_, causal, T; } p;

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint xb = p.x_off + r * p.n, yb = p.y_off + r * p.n;
    const uint keep = p.causal != 0 ? min(p.n, r % p.T + 1) : p.n;
    float m = -1.0 / 0.0, s = 0.0;
    for (uint c = lid; c < keep; c += 256) online_add(m, s, x[xb + c]);
    const vec2 ml = wg_max_logsum(m, s);
    for (uint c = lid; c < p.n; c += 256) {
      const float v = c < keep ? (x[xb + c] - ml.x) - ml.y : -1.0 / 0.0;
      y[yb + c] = p.log_ != 0 ? v : exp(v);
    }
  }
}
