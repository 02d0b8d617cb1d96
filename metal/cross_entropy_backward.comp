#version 450
#extension GL_GOOGLE_include_directive : require
// Gradient of the per-row cross-entropy: gx = (softmax(x) - onehot(target)) g[row], zero for
// ignored rows; softmax comes from the forward pass's (max, log sum). Elementwise over rows x C.
// Out-of-range targets were recorded by the forward; here they only miss the one-hot.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer T { int target[]; };
layout(std430, set = 0, binding = 3) readonly buffer Lse { vec2 lse_[]; };
layout(std430, set = 0, binding = 4) readonly buffer G { float g[]; };
layout(std430, set = 0, binding = 5) writeonly buffer GX { float gx[]; };
layout(push_constant) uniform Params { uint n, C, x_off, g_off, gx_off, t_off; int ignore; } p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const uint r = i / p.C, c = i - r * p.C;
    const int t = target[p.t_off + r];
    float v = 0.0;
    if (t != p.ignore) v = (exp((x[p.x_off + i] - lse_[r].x) - lse_[r].y) - (int(c) == t ? 1.0 : 0.0)) * g[p.g_off + r];
    gx[p.gx_off + i] = v;
  }
}
