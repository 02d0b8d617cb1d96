#version 450
#extension GL_GOOGLE_include_directive : require
// The sum of S float32 slices of n4 * 4 elements each, slice 0 first (a split-K matmul's
// partial products, gpu/linalg.cpp), rounded once into a float32, float16 or bfloat16 result
// that starts on a 4-element boundary: four columns per invocation, 128-bit loads.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uvec2 in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Params { uint n4, slices, out_off4, dst; } p;

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.n4; j += GRID_STRIDE) {
    vec4 acc = LOAD4(in_, T_F32, j);
    for (uint s = 1; s < p.slices; ++s) acc += LOAD4(in_, T_F32, s * p.n4 + j);
    STORE4(out_, p.dst, p.out_off4 + j, acc)
  }
}
