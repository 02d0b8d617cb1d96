#version 450
#extension GL_GOOGLE_include_directive : require
// unary.comp's ops four floats at a time (128-bit loads and stores), for contiguous operands
// that start on a 16-byte boundary.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { vec4 out_[]; };
layout(push_constant) uniform Params { uint n4, op, x_off4, out_off4; } p;

#include "unary_ops.glsl"

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.n4; j += GRID_STRIDE) {
    vec4 v = x[p.x_off4 + j];
    out_[p.out_off4 + j] = vec4(apply(p.op, v.x), apply(p.op, v.y), apply(p.op, v.z), apply(p.op, v.w));
  }
}
