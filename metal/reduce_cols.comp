#version 450
#extension GL_GOOGLE_include_directive : require
// reduce.comp for wide I (a reduction over a leading axis, like a bias gradient): a workgroup
// takes p.cols neighbouring columns (64 down to 4), so its loads are coalesced, and
// 256 / p.cols lanes of rows per column, combined in shared memory in lane order. Fewer columns
// a workgroup make more workgroups and shorter loops for a matrix of few columns and many rows
// (layer norm's per-workgroup partial sums). Chunks as in reduce.comp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint O, R, I, chunks, rows, x_off, out_off, op, cols; } p;

#include "reduce_ops.glsl"

shared float partial[256];
shared uint partial_index[256];

void main() {
  const uint cols = p.cols, lanes = 256u / cols;
  const uint c = gl_LocalInvocationID.x % cols, lane = gl_LocalInvocationID.x / cols;
  const uint blocks = (p.I + cols - 1) / cols;
  for (uint w = gl_WorkGroupID.x; w < p.O * p.chunks * blocks; w += gl_NumWorkGroups.x) {
    const uint o = w / (p.chunks * blocks), s = (w / blocks) % p.chunks, i = (w % blocks) * cols + c;
    float acc = identity_of_op();
    uint at = NO_INDEX;
    if (i < p.I) {
      const uint base = p.x_off + o * p.R * p.I + i, r1 = min(p.R, (s + 1) * p.rows);
      for (uint r = s * p.rows + lane; r < r1; r += lanes) fold(acc, at, x[base + r * p.I], r);
    }
    partial[gl_LocalInvocationID.x] = acc;
    partial_index[gl_LocalInvocationID.x] = at;
    barrier();
    if (lane == 0 && i < p.I) {
      for (uint l = 1; l < lanes; ++l) fold(acc, at, partial[l * cols + c], partial_index[l * cols + c]);
      STORE_RESULT((o * p.chunks + s) * p.I + i, acc, at)
    }
    barrier();
  }
}
