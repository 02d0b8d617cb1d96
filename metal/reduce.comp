#version 450
#extension GL_GOOGLE_include_directive : require
// float32 reduction of a contiguous (O, R, I) block along R into (O, I): one workgroup per output,
// its 256 invocations striding over R, then a tree in shared memory. op: 0 sum, 1 max, 2 min.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params { uint O, R, I, x_off, out_off, op; } p;

shared float partial[256];

float combine(float u, float v) {
  if (p.op == 0) return u + v;
  if (isnan(u) || isnan(v)) return u + v;  // NaN wins, as NumPy
  return p.op == 1 ? max(u, v) : min(u, v);
}

void main() {
  const float identity = p.op == 0 ? 0.0 : (p.op == 1 ? -1.0 / 0.0 : 1.0 / 0.0);
  const uint lid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < p.O * p.I; o += gl_NumWorkGroups.x) {
    const uint base = p.x_off + (o / p.I) * p.R * p.I + (o % p.I);
    float acc = identity;
    for (uint r = lid; r < p.R; r += 256) acc = combine(acc, x[base + r * p.I]);
    partial[lid] = acc;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
      if (lid < s) partial[lid] = combine(partial[lid], partial[lid + s]);
      barrier();
    }
    if (lid == 0) out_[p.out_off + o] = partial[0];
    barrier();
  }
}
