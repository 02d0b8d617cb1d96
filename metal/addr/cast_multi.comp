#version 450
#extension GL_GOOGLE_include_directive : require
// astype over many tensors in one dispatch (tensors.glsl): entry a = source, b = destination,
// between float32, float16 and bfloat16 (push constants src, dst: T_F32, T_F16, T_BF16 of
// common.glsl). Two elements an invocation step, so a 16-bit tensor is whole words: the host
// lists only even lengths that start on a word. The rounding of cast.comp: the same bits.
layout(local_size_x = 256) in;
#include "../common.glsl"
#include "tensors.glsl"
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };
layout(push_constant) uniform Params { uint count, chunks, src, dst; } p;

uint bits_of(uint type, float f) { return type == T_BF16 ? bf16_bits(f) : f16_bits(f); }
float value_of(uint type, uint h) { return type == T_BF16 ? uintBitsToFloat(h << 16) : f16_value(h); }

void main() {
  for (uint c = gl_WorkGroupID.x; c < p.chunks; c += gl_NumWorkGroups.x) {
    const Entry e = entries[entry_of(c, p.count)];
    const uint end = min(e.n, (c - e.start + 1u) * CHUNK) / 2u;  // in pairs
    for (uint j = (c - e.start) * (CHUNK / 2u) + gl_LocalInvocationID.x; j < end; j += 256u) {
      vec2 v;
      if (p.src == T_F32) {
        Floats x = Floats(e.a);
        v = vec2(x.v[2u * j], x.v[2u * j + 1u]);
      } else {
        const uint w = Words(e.a).v[j];
        v = vec2(value_of(p.src, w & 0xFFFFu), value_of(p.src, w >> 16));
      }
      if (p.dst == T_F32) {
        Floats y = Floats(e.b);
        y.v[2u * j] = v.x;
        y.v[2u * j + 1u] = v.y;
      } else {
        Words(e.b).v[j] = bits_of(p.dst, v.x) | bits_of(p.dst, v.y) << 16;
      }
    }
  }
}
