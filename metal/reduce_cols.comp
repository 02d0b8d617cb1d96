#version 450
#extension GL_GOOGLE_include_directive : require
// reduce.comp for wide I (a reduction over a leading axis, like a bias gradient): a workgroup
// takes 64 neighbouring columns, so its loads are coalesced, and 4 lanes of rows per column,
// combined in shared memory. Chunks as in reduce.comp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params { uint O, R, I, chunks, rows, x_off, out_off, op; } p;

#include "reduce_ops.glsl"

const uint COLS = 64, LANES = 4;
shared float partial[LANES][COLS];
shared uint partial_index[LANES][COLS];

void main() {
  const uint c = gl_LocalInvocationID.x % COLS, lane = gl_LocalInvocationID.x / COLS;
  const uint blocks = (p.I + COLS - 1) / COLS;
  for (uint w = gl_WorkGroupID.x; w < p.O * p.chunks * blocks; w += gl_NumWorkGroups.x) {
    const uint o = w / (p.chunks * blocks), s = (w / blocks) % p.chunks, i = (w % blocks) * COLS + c;
    float acc = identity_of_op();
    uint at = NO_INDEX;
    if (i < p.I) {
      const uint base = p.x_off + o * p.R * p.I + i, r1 = min(p.R, (s + 1) * p.rows);
      for (uint r = s * p.rows + lane; r < r1; r += LANES) fold(acc, at, x[base + r * p.I], r);
    }
    partial[lane][c] = acc;
    partial_index[lane][c] = at;
    barrier();
    if (lane == 0 && i < p.I) {
      for (uint l = 1; l < LANES; ++l) fold(acc, at, partial[l][c], partial_index[l][c]);
      STORE_RESULT((o * p.chunks + s) * p.I + i, acc, at)
    }
    barrier();
  }
}
