#version 450
#extension GL_GOOGLE_include_directive : require
// out (O, P, I) [o, p, i] = x (O, N, I) [o, idx[p], i] for 32-bit elements; indices are checked
// on the host.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { uint x[]; };
layout(std430, set = 0, binding = 2) readonly buffer Idx { int idx[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint n, N, P, I, x_off, out_off; } p;

void main() {
  for (uint t = gl_GlobalInvocationID.x; t < p.n; t += GRID_STRIDE) {
    const uint i = t % p.I, op = t / p.I, j = op % p.P, o = op / p.P;
    out_[p.out_off + t] = x[p.x_off + (o * p.N + uint(idx[j])) * p.I + i];
  }
}
