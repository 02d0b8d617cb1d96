#version 450
#extension GL_GOOGLE_include_directive : require
// out[i] = cond[...] ? a[...] : b[...] with broadcasting; cond is bool, a and b 32-bit values.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer C { uint cond[]; };
layout(std430, set = 0, binding = 2) readonly buffer A { uint a[]; };
layout(std430, set = 0, binding = 3) readonly buffer B { uint b[]; };
layout(std430, set = 0, binding = 4) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, c_off, a_off, b_off, out_off;
  uint shape[MAX_DIMS];
  int c_strides[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const uint ic = uint(int(p.c_off) + strided_offset(i, p.ndim, p.shape, p.c_strides));
    out_[p.out_off + i] = BYTE_OF(cond, ic) != 0u ? a[int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides)]
                                                  : b[int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides)];
  }
}
