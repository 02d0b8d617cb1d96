#version 450
#extension GL_GOOGLE_include_directive : require
// int32 unary math: out[out_off + i] = f(x[x_off + offset(i)]), wrapping as the CPU kernels do
// (-INT_MIN is INT_MIN); op codes follow pcp::UnaryOp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { int x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { int out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, x_off, out_off, op;
  uint shape[MAX_DIMS];
  int strides[MAX_DIMS];
} p;

int apply_int(uint op, int v) {
  switch (op) {
    case 0: return -v;              // neg
    case 1: return v < 0 ? -v : v;  // abs
    case 10: return max(v, 0);      // relu
    case 14: return v * v;          // square
    case 15: return sign(v);        // sign
    case 18: return ~v;             // bitwise_not
  }
  return v;  // floor, ceil, trunc, round: integers are whole
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
    out_[p.out_off + i] = apply_int(p.op, x[int(p.x_off) + strided_offset(i, p.ndim, p.shape, p.strides)]);
}
