#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// float64 binary arithmetic with broadcasting: out[out_off + i] = f(a[...], b[...]); op codes
// follow pcp::BinaryOp, push constants as binary_int.comp's.
#include "../common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { double a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { double b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { double out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, a_off, b_off, out_off, op;
  uint shape[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
} p;

#include "math64.glsl"
#include "unary_ops64.glsl"
#include "binary_ops64.glsl"

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const double x = a[int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides)];
    const double y = b[int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides)];
    out_[p.out_off + i] = apply64(p.op, x, y);
  }
}
