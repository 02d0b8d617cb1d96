#version 450
#extension GL_GOOGLE_include_directive : require
// adam.comp over many tensors in one dispatch (tensors.glsl): entry buffers a = parameter,
// b = gradient, c = m, d = v; the same arithmetic, so the same bits, as one dispatch per tensor.
layout(local_size_x = 256) in;
#include "tensors.glsl"
layout(push_constant) uniform Params {
  uint count, chunks, decoupled;
  float lr, b1, b2, omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2;
} p;

void main() {
  for (uint c = gl_WorkGroupID.x; c < p.chunks; c += gl_NumWorkGroups.x) {
    const Entry e = entries[entry_of(c, p.count)];
    Floats param = Floats(e.a), grad = Floats(e.b), m = Floats(e.c), v = Floats(e.d);
    const uint end = min(e.n, (c - e.start + 1u) * CHUNK);
    for (uint i = (c - e.start) * CHUNK + gl_LocalInvocationID.x; i < end; i += 256u) {
      float w = param.v[i], g = grad.v[i];
      if (p.decoupled == 0 && p.wd != 0.0) g += p.wd * w;  // no 0 * inf for an infinite weight
      const float mi = p.b1 * m.v[i] + p.omb1 * g;
      const float vi = p.b2 * v.v[i] + p.omb2 * g * g;
      m.v[i] = mi;
      v.v[i] = vi;
      const float denom = sqrt(vi) * p.inv_sqrt_bc2 + p.eps;
      if (p.decoupled != 0) w *= 1.0 - p.lr * p.wd;
      param.v[i] = w - p.lr * (mi * p.inv_bc1) / denom;
    }
  }
}
