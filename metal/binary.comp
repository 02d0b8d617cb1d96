#version 450
#extension GL_GOOGLE_include_directive : require
// Binary arithmetic with broadcasting (stride 0) on strided operands of float32, float16 or
// bfloat16 (T_* codes, each its own), computed in float32: out[out_off + i] = f(a[...], b[...]).
// out is contiguous; a 16-bit out (even offset and length) is written two elements per word.
// Op codes follow pcp::BinaryOp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, a_off, b_off, out_off, op;
  uint shape[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
  uint a_type, b_type, out_type;
} p;

#include "binary_ops.glsl"
#include "typed.glsl"

float result(uint i) {
  const float x = LOAD_TYPED(a, p.a_type, uint(int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides)));
  const float y = LOAD_TYPED(b, p.b_type, uint(int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides)));
  return apply(p.op, x, y);
}

void main() {
  if (p.out_type == T_F32) {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) out_[p.out_off + i] = floatBitsToUint(result(i));
    return;
  }
  for (uint w = gl_GlobalInvocationID.x; 2u * w < p.n; w += GRID_STRIDE) {
    const float lo = result(2u * w), hi = result(2u * w + 1u);
    out_[p.out_off / 2u + w] = half_pair(p.out_type, lo, hi);
  }
}
