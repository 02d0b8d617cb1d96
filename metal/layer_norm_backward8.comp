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
layout(push_constant) uniform Params { uint rows, n, x_off, w_off, g_off, gx_off, has_w, g_type; } p;
#include "typed.glsl"

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
    for (uint c = lane; c < n; c += ROW_LANES) {
      const float gh = p.has_w != 0 ? LOAD_TYPED(g, p.g_type, gb + c) * w[p.w_off + c] : LOAD_TYPED(g, p.g_type, gb + c);
      gx[p.gx_off + r * p.n + c] = rstd * (gh - ma - (x[xb + c] - mu) * rstd * mb);
    }
  }
}
