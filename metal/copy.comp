#version 450
#extension GL_GOOGLE_include_directive : require
// Gathers a strided 32-bit tensor into contiguous memory: out[out_off + i] = in[in_off + offset(i)].
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uint in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, in_off, out_off;
  uint shape[MAX_DIMS];
  int strides[MAX_DIMS];
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
    out_[p.out_off + i] = in_[int(p.in_off) + strided_offset(i, p.ndim, p.shape, p.strides)];
}
