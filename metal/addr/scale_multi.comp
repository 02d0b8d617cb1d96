#version 450
#extension GL_GOOGLE_include_directive : require
// Many float32 tensors (tensors.glsl, buffer a) multiplied in place by one factor read from the
// device (binding 2, element `factor_off`): clip_grad_norm's last pass, with no wait for the norm.
layout(local_size_x = 256) in;
#include "tensors.glsl"
layout(std430, set = 0, binding = 2) readonly buffer Factor { float factor[]; };
layout(push_constant) uniform Params { uint count, chunks, factor_off; } p;

void main() {
  const float f = factor[p.factor_off];
  for (uint c = gl_WorkGroupID.x; c < p.chunks; c += gl_NumWorkGroups.x) {
    const Entry e = entries[entry_of(c, p.count)];
    Floats x = Floats(e.a);
    const uint end = min(e.n, (c - e.start + 1u) * CHUNK);
    for (uint i = (c - e.start) * CHUNK + gl_LocalInvocationID.x; i < end; i += 256u) x.v[i] *= f;
  }
}
