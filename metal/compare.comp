#version 450
#extension GL_GOOGLE_include_directive : require
// Comparisons with broadcasting into a contiguous bool tensor: out[i] = a[...] <op> b[...].
// Operands are float32, int32 or bool (type); ops follow pcp::BinaryOp (Maximum / Minimum on
// bools are logical or / and). Each invocation writes four results, one 32-bit word.
#include "common.glsl"
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

bool compare(float x, float y) {
  switch (p.op) {
    case 5: return x != 0.0 || y != 0.0;  // maximum of bools
    case 6: return x != 0.0 && y != 0.0;  // minimum of bools
    case 9: return x == y;
    case 10: return x != y;
    case 11: return x < y;
    case 12: return x <= y;
    case 13: return x > y;
    case 14: return x >= y;
  }
  return false;
}

bool compare_int(int x, int y) {
  switch (p.op) {
    case 5: return x != 0 || y != 0;
    case 6: return x != 0 && y != 0;
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
      bool r;
      if (p.type == T_F32) r = compare(uintBitsToFloat(a[ia]), uintBitsToFloat(b[ib]));
      else if (p.type == T_I32) r = compare_int(int(a[ia]), int(b[ib]));
      else r = compare_int(int(BYTE_OF(a, ia)), int(BYTE_OF(b, ib)));
      if (r) word |= 1u << (8 * j);
    }
    out_[p.out_word + q] = word;
  }
}
