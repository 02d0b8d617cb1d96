#version 450
#extension GL_GOOGLE_include_directive : require
// dropout.comp for float32, float16 or bfloat16 in and out, four elements (one Philox counter)
// per invocation: the host passes contiguous tensors of a multiple of 4 elements at offsets of a
// multiple of 4. Same draws, same mask as dropout.comp and the CPU.
#include "common.glsl"
#include "philox.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { uvec2 x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Params {
  uint n4, x_off4, out_off4, key_lo, key_hi, start_lo, start_hi, x_type, out_type;
  float prob, scale;
} p;

void main() {
  for (uint q = gl_GlobalInvocationID.x; q < p.n4; q += GRID_STRIDE) {
    const uint lo = p.start_lo + q;
    const uvec4 w = philox(uvec2(p.key_lo, p.key_hi), uvec4(lo, p.start_hi + (lo < q ? 1u : 0u), 0u, 0u));
    const vec4 v = LOAD4(x, p.x_type, p.x_off4 + q);
    vec4 o;
    for (uint j = 0u; j < 4u; ++j) o[j] = float(w[j] >> 8) * (1.0 / 16777216.0) >= p.prob ? v[j] * p.scale : 0.0;
    STORE4(out_, p.out_type, p.out_off4 + q, o)
  }
}
