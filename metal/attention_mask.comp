#version 450
#extension GL_GOOGLE_include_directive : require
// The dropout mask of fused attention's weights as bits: bit e of the mask is set when element e
// of the (B, H, T, T) weights is kept, by dropout.comp's rule (uniform e of the generator's draws
// at counter start, word e % 4 of counter start + e / 4, kept when >= prob). One 32-bit word an
// invocation (8 Philox blocks); the attention kernels then test a bit per weight.
#include "common.glsl"
#include "philox.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) writeonly buffer Mask { uint mask[]; };
layout(push_constant) uniform Params { uint n, key_lo, key_hi, start_lo, start_hi; float prob; } p;

void main() {
  for (uint w = gl_GlobalInvocationID.x; w * 32u < p.n; w += GRID_STRIDE) {
    uint bits = 0u;
    for (uint q = 0; q < 8u; ++q) {
      const uint c = w * 8u + q, lo = p.start_lo + c;
      const uvec4 u = philox(uvec2(p.key_lo, p.key_hi), uvec4(lo, p.start_hi + (lo < c ? 1u : 0u), 0u, 0u));
      for (uint j = 0; j < 4u; ++j)
        if (float(u[j] >> 8) * (1.0 / 16777216.0) >= p.prob) bits |= 1u << (q * 4u + j);
    }
    mask[w] = bits;  // bits past n are never read
  }
}
