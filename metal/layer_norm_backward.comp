#version 450
#extension GL_GOOGLE_include_directive : require
// Input gradient of layer norm, one workgroup per row: with xhat = (x - mean) rstd and
// gh = g w, gx = rstd (gh - mean(gh) - xhat mean(gh xhat)).
#include "common.glsl"
#include "rows.glsl"
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
  const uint lid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint xb = p.x_off + r * p.n, gb = p.g_off + r * p.n;
    const float mu = mean_[r], rstd = rstd_[r];
    float a = 0.0, bsum = 0.0;
    for (uint c = lid; c < p.n; c += 256) {
      const float gh = p.has_w != 0 ? LOAD_TYPED(g, p.g_type, gb + c) * w[p.w_off + c] : LOAD_TYPED(g, p.g_type, gb + c);
      a += gh;
      bsum += gh * (x[xb + c] - mu) * rstd;
    }
    const float ma = wg_sum(a) / float(p.n), mb = wg_sum(bsum) / float(p.n);
    for (uint c = lid; c < p.n; c += 256) {
      const float gh = p.has_w != 0 ? LOAD_TYPED(g, p.g_type, gb + c) * w[p.w_off + c] : LOAD_TYPED(g, p.g_type, gb + c);
      gx[p.gx_off + r * p.n + c] = rstd * (gh - ma - (x[xb + c] - mu) * rstd * mb);
    }
  }
}
