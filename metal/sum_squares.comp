#version 450
#extension GL_GOOGLE_include_directive : require
// Partial sums of squares of one contiguous float32 tensor (a gradient, for clip_grad_norm): the
// tensor's n values split into `parts` equal ranges, workgroup w writing the sum over range w to
// out[out_off + w]. clip_scale.comp then sums the partials of every tensor in a fixed order.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params { uint n, x_off, out_off, parts; } p;

shared float partial[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint w = gl_WorkGroupID.x; w < p.parts; w += gl_NumWorkGroups.x) {
    const uint chunk = (p.n + p.parts - 1u) / p.parts, r0 = w * chunk, r1 = min(p.n, r0 + chunk);
    float acc = 0.0;
    for (uint r = r0 + lid; r < r1; r += 256u) acc += x[p.x_off + r] * x[p.x_off + r];
    partial[lid] = acc;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
      if (lid < h) partial[lid] += partial[lid + h];
      barrier();
    }
    if (lid == 0u) out_[p.out_off + w] = partial[0];
    barrier();
  }
}
