#version 450
#extension GL_GOOGLE_include_directive : require
// Casts between float32, int32 and bool (T_* codes) from a strided tensor into a contiguous one.
// Float to int truncates toward zero (as C and NumPy); anything nonzero is true. Each invocation
// converts four elements, so bool results fill whole words.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uint in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, in_off, out_off, src, dst;
  uint shape[MAX_DIMS];
  int strides[MAX_DIMS];
} p;

void main() {
  for (uint q = gl_GlobalInvocationID.x; q * 4 < p.n; q += GRID_STRIDE) {
    uint word = 0;
    for (uint j = 0; j < 4 && q * 4 + j < p.n; ++j) {
      const uint i = q * 4 + j;
      const uint k = uint(int(p.in_off) + strided_offset(i, p.ndim, p.shape, p.strides));
      float f;
      int v;
      if (p.src == T_F32) {
        f = uintBitsToFloat(in_[k]);
        v = int(f);
      } else {
        v = p.src == T_I32 ? int(in_[k]) : int(BYTE_OF(in_, k));
        f = float(v);
      }
      if (p.dst == T_BOOL) {
        if (p.src == T_F32 ? f != 0.0 : v != 0) word |= 1u << (8 * j);
      } else {
        out_[p.out_off + i] = p.dst == T_F32 ? floatBitsToUint(f) : uint(v);
      }
    }
    if (p.dst == T_BOOL) out_[p.out_off / 4 + q] = word;
  }
}
