#version 450
#extension GL_GOOGLE_include_directive : require
// One SGD step (momentum, dampening, Nesterov, weight decay) in place, as the CPU's sgd_update.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) buffer P { float param[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { float grad[]; };
layout(std430, set = 0, binding = 3) buffer Buf { float buf[]; };  // unused without momentum
layout(push_constant) uniform Params {
  uint n, p_off, g_off, b_off, has_momentum, nesterov, first_step;
  float lr, momentum, dampening, wd;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const float w = param[p.p_off + i], g = grad[p.g_off + i] + (p.wd != 0.0 ? p.wd * w : 0.0);
    float step = g;
    if (p.has_momentum != 0) {
      const float b = p.first_step != 0 ? g : p.momentum * buf[p.b_off + i] + (1.0 - p.dampening) * g;
      buf[p.b_off + i] = b;
      step = p.nesterov != 0 ? g + p.momentum * b : b;
    }
    param[p.p_off + i] = w - p.lr * step;
  }
}
