#version 450
#extension GL_GOOGLE_include_directive : require
// One Adam / AdamW step in place over contiguous float32 parameters, as the CPU's adam_update.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) buffer P { float param[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { float grad[]; };
layout(std430, set = 0, binding = 3) buffer M { float m[]; };
layout(std430, set = 0, binding = 4) buffer V { float v[]; };
layout(push_constant) uniform Params {
  uint n, p_off, g_off, m_off, v_off, decoupled;
  float lr, b1, b2, omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    float w = param[p.p_off + i], g = grad[p.g_off + i];
    if (p.decoupled == 0 && p.wd != 0.0) g += p.wd * w;  // no 0 * inf for an infinite weight
    const float mi = p.b1 * m[p.m_off + i] + p.omb1 * g;
    const float vi = p.b2 * v[p.v_off + i] + p.omb2 * g * g;
    m[p.m_off + i] = mi;
    v[p.v_off + i] = vi;
    const float denom = sqrt(vi) * p.inv_sqrt_bc2 + p.eps;
    if (p.decoupled != 0) w *= 1.0 - p.lr * p.wd;
    param[p.p_off + i] = w - p.lr * (mi * p.inv_bc1) / denom;
  }
}
