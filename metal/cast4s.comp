#version 450
#extension GL_GOOGLE_include_directive : require
// Casts and copies between float32, float16 and bfloat16 of strided tensors whose innermost
// dimension is contiguous in both, four elements at a time: a transposed copy of attention heads,
// a gradient written into its slice of a concatenation. The host passes the layout in units of
// 4 elements (the innermost size a multiple of 4, every other stride and both offsets too).
// The same type in and out copies the bits as they are.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uvec2 in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Params {
  uint n4, ndim, in_off4, out_off4, src, dst;
  uint shape[MAX_DIMS];
  int in_strides[MAX_DIMS];
  int out_strides[MAX_DIMS];
} p;

void main() {
  for (uint q = gl_GlobalInvocationID.x; q < p.n4; q += GRID_STRIDE) {
    const uint ki = uint(int(p.in_off4) + strided_offset(q, p.ndim, p.shape, p.in_strides));
    const uint ko = uint(int(p.out_off4) + strided_offset(q, p.ndim, p.shape, p.out_strides));
    if (p.src == p.dst && p.src != T_F32) {
      out_[ko] = in_[ki];
    } else if (p.src == p.dst) {
      out_[2u * ko] = in_[2u * ki];
      out_[2u * ko + 1u] = in_[2u * ki + 1u];
    } else {
      STORE4(out_, p.dst, ko, LOAD4(in_, p.src, ki))
    }
  }
}
