#version 450
#extension GL_GOOGLE_include_directive : require
// The gradient of gather: out (O, N, I) [o, v, i] = sum of src (O, P, I) [o, p, i] over the p with
// idx[p] == v. The host sorts the indices stably: plan = [segment starts (N + 1) | positions p
// grouped by v, ascending]. Each output adds its terms in ascending p, as the CPU does, so the
// result is deterministic and matches the CPU's bit for bit.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer Src { float src[]; };
layout(std430, set = 0, binding = 2) readonly buffer Plan { int plan[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params { uint n, N, P, I, src_off, out_off; } p;

void main() {
  for (uint t = gl_GlobalInvocationID.x; t < p.n; t += GRID_STRIDE) {
    const uint i = t % p.I, ov = t / p.I, v = ov % p.N, o = ov / p.N;
    float acc = 0.0;
    for (int k = plan[v]; k < plan[v + 1]; ++k) acc += src[p.src_off + (o * p.P + uint(plan[p.N + 1 + k])) * p.I + i];
    out_[p.out_off + t] = acc;
  }
}
