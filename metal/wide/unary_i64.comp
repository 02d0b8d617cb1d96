#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// int64 unary math (unary_int.comp's ops, wrapping as the CPU kernels do).
#include "../common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { int64_t x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { int64_t out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, x_off, out_off, op;
  uint shape[MAX_DIMS];
  int strides[MAX_DIMS];
} p;

int64_t apply_i64(uint op, int64_t v) {
  switch (op) {
    case 0: return -v;                                      // neg
    case 1: return v < 0l ? -v : v;                         // abs
    case 10: return v > 0l ? v : 0l;                        // relu
    case 14: return v * v;                                  // square
    case 15: return v > 0l ? 1l : (v < 0l ? -1l : 0l);      // sign
    case 18: return ~v;                                     // bitwise_not
  }
  return v;  // floor, ceil, trunc, round: integers are whole
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
    out_[p.out_off + i] = apply_i64(p.op, x[int(p.x_off) + strided_offset(i, p.ndim, p.shape, p.strides)]);
}
