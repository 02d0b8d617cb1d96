#version 450
#extension GL_GOOGLE_include_directive : require
// float32 reduction of a contiguous (O, R, I) block along R, for small I: one workgroup per
// result, its 256 invocations striding over R, then a tree in shared memory. With chunks > 1 the
// rows are cut into chunks of `rows` and each chunk gives its own result, (O, chunks, I), which a
// second pass reduces (the host splits long reductions so that they fill the GPU).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint O, R, I, chunks, rows, x_off, out_off, op, cols; } p;  // cols: reduce_cols.comp's

#include "reduce_ops.glsl"

shared float partial[256];
shared uint partial_index[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint w = gl_WorkGroupID.x; w < p.O * p.chunks * p.I; w += gl_NumWorkGroups.x) {
    const uint o = w / (p.chunks * p.I), s = (w / p.I) % p.chunks, i = w % p.I;
    const uint base = p.x_off + o * p.R * p.I + i, r1 = min(p.R, (s + 1) * p.rows);
    float acc = identity_of_op();
    uint at = NO_INDEX;
    for (uint r = s * p.rows + lid; r < r1; r += 256) fold(acc, at, x[base + r * p.I], r);
    partial[lid] = acc;
    partial_index[lid] = at;
    barrier();
    for (uint h = 128; h > 0; h >>= 1) {
      if (lid < h) {
        float a = partial[lid];
        uint ai = partial_index[lid];
        fold(a, ai, partial[lid + h], partial_index[lid + h]);
        partial[lid] = a;
        partial_index[lid] = ai;
      }
      barrier();
    }
    if (lid == 0) { STORE_RESULT(w, partial[0], partial_index[0]) }
    barrier();
  }
}
