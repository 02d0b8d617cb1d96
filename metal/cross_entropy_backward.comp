#version 450
#extension GL_GOOGLE_include_directive : require
// Gradient of the per-row cross-entropy: gx = (softmax(x) - onehot(target)) g[row], zero for
// ignored rows; softmax comes from the forward pass's (max, log sum). Elementwise over rows x C.
// Out-of-range targets were recorded by the forward; here they only miss the one-hot. g_step 0:
// one g for every row (a mean's gradient, broadcast), read as it is.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { uint x[]; };   // x_type (typed.glsl)
layout(std430, set = 0, binding = 2) readonly buffer T { int target[]; };
layout(std430, set = 0, binding = 3) readonly buffer Lse { vec2 lse_[]; };
layout(std430, set = 0, binding = 4) readonly buffer G { float g[]; };
layout(std430, set = 0, binding = 5) writeonly buffer GX { uint gx[]; };  // gx_type (typed.glsl)
layout(push_constant) uniform Params { uint n, C, x_off, g_off, gx_off, t_off; int ignore; uint x_type, gx_type, g_step; } p;
#include "typed.glsl"

float gradient(uint i) {
  const uint r = i / p.C, c = i - r * p.C;
  const int t = target[p.t_off + r];
  if (t == p.ignore) return 0.0;
  const float xi = LOAD_TYPED(x, p.x_type, p.x_off + i);
  return (exp((xi - lse_[r].x) - lse_[r].y) - (int(c) == t ? 1.0 : 0.0)) * g[p.g_off + r * p.g_step];
}

void main() {
  if (p.gx_type == T_F32) {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) gx[p.gx_off + i] = floatBitsToUint(gradient(i));
    return;
  }
  for (uint w = gl_GlobalInvocationID.x; 2u * w < p.n; w += GRID_STRIDE)  // 16-bit: even n and gx_off
    gx[p.gx_off / 2u + w] = half_pair(p.gx_type, gradient(2u * w), gradient(2u * w + 1u));
}
