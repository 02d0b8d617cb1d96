#version 450
#extension GL_GOOGLE_include_directive : require
// Sums of squares of many float32 tensors (tensors.glsl, buffer a), one partial sum per chunk
// into out[chunk] (binding 2), each summed in a fixed order: clip_scale.comp then sums the
// partials in a fixed order, for clip_grad_norm's global norm.
layout(local_size_x = 256) in;
#include "tensors.glsl"
layout(std430, set = 0, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params { uint count, chunks; } p;

shared float partial[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint c = gl_WorkGroupID.x; c < p.chunks; c += gl_NumWorkGroups.x) {
    const Entry e = entries[entry_of(c, p.count)];
    Floats x = Floats(e.a);
    const uint end = min(e.n, (c - e.start + 1u) * CHUNK);
    float acc = 0.0;
    for (uint i = (c - e.start) * CHUNK + lid; i < end; i += 256u) acc += x.v[i] * x.v[i];
    partial[lid] = acc;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
      if (lid < h) partial[lid] += partial[lid + h];
      barrier();
    }
    if (lid == 0u) out_[c] = partial[0];
    barrier();
  }
}
