#version 450
#extension GL_GOOGLE_include_directive : require
// sgd.comp over many tensors in one dispatch (tensors.glsl): entry buffers a = parameter,
// b = gradient, c = momentum buffer (unused without momentum); the same arithmetic, so the same
// bits, as one dispatch per tensor.
layout(local_size_x = 256) in;
#include "tensors.glsl"
layout(push_constant) uniform Params {
  uint count, chunks, has_momentum, nesterov, first_step;
  float lr, momentum, dampening, wd;
} p;

void main() {
  for (uint c = gl_WorkGroupID.x; c < p.chunks; c += gl_NumWorkGroups.x) {
    const Entry e = entries[entry_of(c, p.count)];
    Floats param = Floats(e.a), grad = Floats(e.b), buf = Floats(e.c);
    const uint end = min(e.n, (c - e.start + 1u) * CHUNK);
    for (uint i = (c - e.start) * CHUNK + gl_LocalInvocationID.x; i < end; i += 256u) {
      const float w = param.v[i], g = grad.v[i] + (p.wd != 0.0 ? p.wd * w : 0.0);
      float step = g;
      if (p.has_momentum != 0) {
        const float b = p.first_step != 0 ? g : p.momentum * buf.v[i] + (1.0 - p.dampening) * g;
        buf.v[i] = b;
        step = p.nesterov != 0 ? g + p.momentum * b : b;
      }
      param.v[i] = w - p.lr * step;
    }
  }
}
