#version 450
#extension GL_GOOGLE_include_directive : require
// First-order backward of softmax (gx = y (g - sum(g y))) or log-softmax
// (gx = g - exp(y) sum(g)) from the output y, one workgroup per row of n contiguous values.
// causal (softmax only): row r keeps columns 0..(r % T), as the forward did; the rest, constant
// zeros there, get zero gradients.
#include "common.glsl"
#include "rows.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { float g[]; };
layout(std430, set = 0, binding = 3) writeonly buffer GX { float gx[]; };
layout(push_constant) uniform Params { uint rows, n, y_off, g_off, gx_off, log_, causal, T; } p;

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint yb = p.y_off + r * p.n, gb = p.g_off + r * p.n, ob = p.gx_off + r * p.n;
    const uint keep = p.causal != 0u ? min(p.n, r % p.T + 1u) : p.n;
    float acc = 0.0;
    for (uint c = lid; c < keep; c += 256) acc += p.log_ != 0 ? g[gb + c] : g[gb + c] * y[yb + c];
    const float dot = wg_sum(acc);
    for (uint c = lid; c < p.n; c += 256) {
      if (c >= keep) {
        gx[ob + c] = 0.0;
        continue;
      }
      const float yv = y[yb + c], gv = g[gb + c];
      gx[ob + c] = p.log_ != 0 ? gv - exp(yv) * dot : yv * (gv - dot);
    }
  }
}
