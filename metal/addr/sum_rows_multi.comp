#version 450
#extension GL_GOOGLE_include_directive : require
// Column sums of many float32 matrices in one dispatch (a plan's batched layer norm weight sums):
// entry a = a contiguous R x I matrix (e.n = R I elements; e.pad0 = R | width << 24), b = its I
// sums. An entry's work is numbered in blocks of `width` columns (its first block is e.start); a
// workgroup takes one block, 256 / width lanes of rows per column, combined in lane order: the
// order of reduce_cols.comp with that width, so the same sums as reduce() makes.
layout(local_size_x = 256) in;
#include "tensors.glsl"
layout(push_constant) uniform Params { uint count, blocks; } p;

shared float partial[256];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint blk = gl_WorkGroupID.x; blk < p.blocks; blk += gl_NumWorkGroups.x) {
    const Entry e = entries[entry_of(blk, p.count)];
    const uint R = e.pad0 & 0xFFFFFFu, width = e.pad0 >> 24, lanes = 256u / width, I = e.n / R;
    const uint col = lid % width, lane = lid / width, i = (blk - e.start) * width + col;
    float acc = 0.0;
    if (i < I) {
      Floats x = Floats(e.a);
      for (uint r = lane; r < R; r += lanes) acc += x.v[r * I + i];
    }
    partial[lid] = acc;
    barrier();
    if (lane == 0u && i < I) {
      for (uint l = 1u; l < lanes; ++l) acc += partial[l * width + col];
      Floats(e.b).v[i] = acc;
    }
    barrier();
  }
}
