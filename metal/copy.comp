#version 450
#extension GL_GOOGLE_include_directive : require
// Strided copy of 32-bit elements: out[out_off + out_offset(i)] = in[in_off + in_offset(i)], for
// contiguous results, slice scatters and concatenation alike.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uint in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, in_off, out_off;
  uint shape[MAX_DIMS];
  int in_strides[MAX_DIMS];
  int out_strides[MAX_DIMS];
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
    out_[int(p.out_off) + strided_offset(i, p.ndim, p.shape, p.out_strides)] =
        in_[int(p.in_off) + strided_offset(i, p.ndim, p.shape, p.in_strides)];
}
