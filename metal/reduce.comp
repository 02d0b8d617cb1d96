#version 450
#extension GL_GOOGLE_include_directive : require
// float32 reduction of a contiguous (O, R, I) block along R into (O, I): one workgroup per output,
// its 256 invocations striding over R, then a tree in shared memory. op: 0 sum, 1 max, 2 min,
// 3 argmax, 4 argmin (int64 results: the index in the low word, 0 in the high one; the first
// occurrence wins, and NaN beats any number, as NumPy).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint O, R, I, x_off, out_off, op; } p;

shared float partial[256];
shared uint partial_index[256];

float combine(float u, float v) {
  if (p.op == 0) return u + v;
  if (isnan(u) || isnan(v)) return u + v;  // NaN wins, as NumPy
  return p.op == 1 ? max(u, v) : min(u, v);
}

// Whether (v, j) beats (u, i) for argmax / argmin.
bool better(float v, uint j, float u, uint i) {
  if (isnan(u) || isnan(v)) return isnan(v) && (!isnan(u) || j < i);
  if (v == u) return j < i;
  return p.op == 3 ? v > u : v < u;
}

void main() {
  const bool arg = p.op >= 3;
  const float identity = p.op == 0 ? 0.0 : (p.op == 1 || p.op == 3 ? -1.0 / 0.0 : 1.0 / 0.0);
  const uint lid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < p.O * p.I; o += gl_NumWorkGroups.x) {
    const uint base = p.x_off + (o / p.I) * p.R * p.I + (o % p.I);
    float acc = identity;
    uint at = 0xFFFFFFFFu;
    for (uint r = lid; r < p.R; r += 256) {
      const float v = x[base + r * p.I];
      if (!arg) acc = combine(acc, v);
      else if (at == 0xFFFFFFFFu || better(v, r, acc, at)) acc = v, at = r;
    }
    partial[lid] = acc;
    partial_index[lid] = at;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
      if (lid < s) {
        if (!arg) {
          partial[lid] = combine(partial[lid], partial[lid + s]);
        } else if (partial_index[lid + s] != 0xFFFFFFFFu &&
                   (partial_index[lid] == 0xFFFFFFFFu ||
                    better(partial[lid + s], partial_index[lid + s], partial[lid], partial_index[lid]))) {
          partial[lid] = partial[lid + s];
          partial_index[lid] = partial_index[lid + s];
        }
      }
      barrier();
    }
    if (lid == 0) {
      if (arg) {
        out_[p.out_off + 2 * o] = partial_index[0];
        out_[p.out_off + 2 * o + 1] = 0u;
      } else {
        out_[p.out_off + o] = floatBitsToUint(partial[0]);
      }
    }
    barrier();
  }
}
