#version 450
#extension GL_GOOGLE_include_directive : require
// float32 binary arithmetic with broadcasting (stride 0): out[out_off + i] = f(a[...], b[...]).
// Op codes follow pcp::BinaryOp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, a_off, b_off, out_off, op;
  uint shape[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
} p;

#include "binary_ops.glsl"

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    float x = a[int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides)];
    float y = b[int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides)];
    out_[p.out_off + i] = apply(p.op, x, y);
  }
}
