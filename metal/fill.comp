#version 450
#extension GL_GOOGLE_include_directive : require
// out[offset + i] = value for i < n, on 32-bit words (any 32-bit dtype: the host passes its bits).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint n; uint offset; uint value; } p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) out_[p.offset + i] = p.value;
}
