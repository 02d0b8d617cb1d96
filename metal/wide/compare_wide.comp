#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// compare.comp for float64 or int64 operands (type T_F64 or T_I64): bools, four a word.
#include "../common.glsl"
#include "wide.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, a_off, b_off, out_word, op, type;
  uint shape[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
} p;

bool compare_f64(double x, double y) {
  switch (p.op) {
    case 9: return x == y;
    case 10: return x != y;
    case 11: return x < y;
    case 12: return x <= y;
    case 13: return x > y;
    case 14: return x >= y;
  }
  return false;
}

bool compare_i64(int64_t x, int64_t y) {
  switch (p.op) {
    case 9: return x == y;
    case 10: return x != y;
    case 11: return x < y;
    case 12: return x <= y;
    case 13: return x > y;
    case 14: return x >= y;
  }
  return false;
}

void main() {
  for (uint q = gl_GlobalInvocationID.x; q * 4 < p.n; q += GRID_STRIDE) {
    uint word = 0;
    for (uint j = 0; j < 4 && q * 4 + j < p.n; ++j) {
      const uint i = q * 4 + j;
      const uint ia = uint(int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides));
      const uint ib = uint(int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides));
      const bool r = p.type == T_F64 ? compare_f64(F64_AT(a, ia), F64_AT(b, ib)) : compare_i64(I64_AT(a, ia), I64_AT(b, ib));
      if (r) word |= 1u << (8 * j);
    }
    out_[p.out_word + q] = word;
  }
}
