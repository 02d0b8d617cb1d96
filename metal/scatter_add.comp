#version 450
#extension GL_GOOGLE_include_directive : require
// The gradient of gather: out (O, N, I) [o, v, i] = sum of src (O, P, I) [o, p, i] over the p with
// idx[p] == v. The host sorts the indices stably: plan = [segment starts (N + 1) | positions p
// grouped by v, ascending]. Each output adds its terms in ascending p, as the CPU does, so the
// result is deterministic and matches the CPU's bit for bit.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer Src { float src[]; };
layout(std430, set = 0, binding = 2) readonly buffer Plan { int plan[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params { uint n, N, P, I, src_off, out_off; } p;

void main() {
  for (uint t = gl_GlobalInvocationID.x; t < p.n; t += GRID_STRIDE) {
    const uint i = t % p.I, ov = t / p.I, v = ov % p.N, o = ov / p.N;
    const uint base = p.src_off + o * p.P * p.I + i;
    const int end = plan[v + 1];
    float acc = 0.0;
    int k = plan[v];
    // 8 loads in flight, then their sum in order: few outputs over many terms (a small
    // vocabulary's embedding gradient) are bound by the latency of each thread's loads.
    for (; k + 8 <= end; k += 8) {
      float x[8];
      [[unroll]] for (int j = 0; j < 8; ++j) x[j] = src[base + uint(plan[p.N + 1 + k + j]) * p.I];
      [[unroll]] for (int j = 0; j < 8; ++j) acc += x[j];
    }
    for (; k < end; ++k) acc += src[base + uint(plan[p.N + 1 + k]) * p.I];
    out_[p.out_off + t] = acc;
  }
}
