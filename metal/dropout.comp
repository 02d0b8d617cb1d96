#version 450
#extension GL_GOOGLE_include_directive : require
// Inverted dropout with the CPU's counter-based generator: element i draws Philox4x32-10 word
// i % 4 of counter (start + i / 4) under key seed, u = (word >> 8) 2^-24 (as pcp.rand in float32),
// and keeps x[i] * scale when u >= prob. Same seed and offset, same mask as the CPU.
#include "common.glsl"
#include "philox.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params { uint n, x_off, out_off, key_lo, key_hi, start_lo, start_hi; float prob, scale; } p;

void main() {
  for (uint q = gl_GlobalInvocationID.x; q * 4 < p.n; q += GRID_STRIDE) {
    const uint lo = p.start_lo + q;
    const uvec4 w = philox(uvec2(p.key_lo, p.key_hi), uvec4(lo, p.start_hi + (lo < q ? 1u : 0u), 0u, 0u));
    for (uint j = 0; j < 4 && q * 4 + j < p.n; ++j) {
      const float u = float(w[j] >> 8) * (1.0 / 16777216.0);
      out_[p.out_off + q * 4 + j] = u >= p.prob ? x[p.x_off + q * 4 + j] * p.scale : 0.0;
    }
  }
}
