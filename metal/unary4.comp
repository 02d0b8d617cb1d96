#version 450
#extension GL_GOOGLE_include_directive : require
// unary.comp's ops four elements at a time, for contiguous operands that start on a 4-element
// boundary: float32, float16 or bfloat16 (64-bit loads and stores), computed in float32 and rounded
// once.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { uvec2 x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Params { uint n4, op, x_off4, out_off4, x_type, out_type; } p;

#include "unary_ops.glsl"

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.n4; j += GRID_STRIDE) {
    const vec4 v = LOAD4(x, p.x_type, p.x_off4 + j);
    const vec4 r = vec4(apply(p.op, v.x), apply(p.op, v.y), apply(p.op, v.z), apply(p.op, v.w));
    STORE4(out_, p.out_type, p.out_off4 + j, r)
  }
}
