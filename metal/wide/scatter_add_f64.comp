#version 450
#extension GL_GOOGLE_include_directive : require
// scatter_add.comp on float64: out (O, N, I) [o, v, i] = the sum of src (O, P, I) [o, p, i] over
// the p with idx[p] == v, in ascending p (the host's counting-sort plan), as the CPU adds them.
#include "../common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer Src { double src[]; };
layout(std430, set = 0, binding = 2) readonly buffer Plan { int plan[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { double out_[]; };
layout(push_constant) uniform Params { uint n, N, P, I, src_off, out_off; } p;

void main() {
  for (uint t = gl_GlobalInvocationID.x; t < p.n; t += GRID_STRIDE) {
    const uint i = t % p.I, ov = t / p.I, v = ov % p.N, o = ov / p.N;
    const uint base = p.src_off + o * p.P * p.I + i;
    double acc = 0.0LF;
    for (int k = plan[v]; k < plan[v + 1]; ++k) acc += src[base + uint(plan[p.N + 1 + k]) * p.I];
    out_[p.out_off + t] = acc;
  }
}
