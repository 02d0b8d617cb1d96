#version 450
#extension GL_GOOGLE_include_directive : require
// cast.comp between float32, float16 and bfloat16 for contiguous operands that start on a
// 4-element boundary: four elements per invocation (64-bit loads and stores).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uvec2 in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Params { uint n4, in_off4, out_off4, src, dst; } p;

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.n4; j += GRID_STRIDE) {
    const vec4 v = LOAD4(in_, p.src, p.in_off4 + j);
    STORE4(out_, p.dst, p.out_off4 + j, v)
  }
}
