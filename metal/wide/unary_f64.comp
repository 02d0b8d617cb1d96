#version 450
#extension GL_GOOGLE_include_directive : require
// float64 unary math: out[out_off + i] = f(x[x_off + offset(i)]); op codes follow pcp::UnaryOp.
// unary.comp's layout and push constants, on doubles.
#include "../common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { double x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { double out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, x_off, out_off, op;
  uint shape[MAX_DIMS];
  int strides[MAX_DIMS];
} p;

#include "math64.glsl"
#include "unary_ops64.glsl"

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
    out_[p.out_off + i] = apply64(p.op, x[int(p.x_off) + strided_offset(i, p.ndim, p.shape, p.strides)]);
}
