#version 450
#extension GL_GOOGLE_include_directive : require
// layer_norm_backward.comp for short rows: 8 rows per workgroup, 32 invocations a row.
#include "common.glsl"
#include "rows.glsl"
#include "rows4.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer W { float w[]; };
layout(std430, set = 0, binding = 3) readonly buffer G { uint g[]; };  // g_type (typed.glsl)
layout(std430, set = 0, binding = 4) readonly buffer Mean { float mean_[]; };
layout(std430, set = 0, binding = 5) readonly buffer Rstd { float rstd_[]; };
layout(std430, set = 0, binding = 6) writeonly buffer GX { float gx[]; };
// With has_acc, gx + acc is written (a plan's add of another gradient folded in); unused otherwise.
layout(std430, set = 0, binding = 7) readonly buffer Acc { float acc_[]; };
// With has_low, gx is also written in low_type (typed.glsl, 16-bit: two elements a word; even n
// and low_off), a plan's cast of it folded in; unused otherwise.
layout(std430, set = 0, binding = 8) writeonly buffer Low { uint low[]; };
layout(push_constant) uniform Params {
  uint rows, n, x_off, w_off, g_off, gx_off, has_w, g_type, has_acc, acc_off, has_low, low_off, low_type;
} p;
#include "typed.glsl"

// gx at column c of row r (plus the accumulated gradient, with has_acc).
float gradient(uint r, uint c, float mu, float rstd, float ma, float mb) {
  const uint xb = p.x_off + r * p.n, gb = p.g_off + r * p.n;
  const float gh = p.has_w != 0 ? LOAD_TYPED(g, p.g_type, gb + c) * w[p.w_off + c] : LOAD_TYPED(g, p.g_type, gb + c);
  const float v = rstd * (gh - ma - (x[xb + c] - mu) * rstd * mb);
  return p.has_acc != 0 ? acc_[p.acc_off + r * p.n + c] + v : v;
}

void main() {
  const uint lane = row_lane();
  for (uint r0 = gl_WorkGroupID.x * ROWS_PER_GROUP; r0 < p.rows; r0 += gl_NumWorkGroups.x * ROWS_PER_GROUP) {
    const uint r = r0 + row_slot();
    const bool live = r < p.rows;
    const uint n = live ? p.n : 0u, xb = p.x_off + r * p.n, gb = p.g_off + r * p.n;
    const float mu = live ? mean_[r] : 0.0, rstd = live ? rstd_[r] : 0.0;
    float a = 0.0, bsum = 0.0;
    for (uint c = lane; c < n; c += ROW_LANES) {
      const float gh = p.has_w != 0 ? LOAD_TYPED(g, p.g_type, gb + c) * w[p.w_off + c] : LOAD_TYPED(g, p.g_type, gb + c);
      a += gh;
      bsum += gh * (x[xb + c] - mu) * rstd;
    }
    const float ma = row_sum(a) / float(p.n), mb = row_sum(bsum) / float(p.n);
    if (p.has_low == 0) {
      for (uint c = lane; c < n; c += ROW_LANES) gx[p.gx_off + r * p.n + c] = gradient(r, c, mu, rstd, ma, mb);
    } else {  // pairs of elements, for the 16-bit copy's words
      for (uint c = 2u * lane; c < n; c += 2u * ROW_LANES) {
        const float lo = gradient(r, c, mu, rstd, ma, mb), hi = gradient(r, c + 1u, mu, rstd, ma, mb);
        gx[p.gx_off + r * p.n + c] = lo;
        gx[p.gx_off + r * p.n + c + 1u] = hi;
        low[(p.low_off + r * p.n + c) / 2u] = half_pair(p.low_type, lo, hi);
      }
    }
  }
}
