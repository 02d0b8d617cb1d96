#version 450
#extension GL_GOOGLE_include_directive : require
// First-order backward of softmax (gx = y (g - sum(g y))) or log-softmax
// (gx = g - exp(y) sum(g)) from the output y, over rows of n values (n a multiple of 4), each of
// y, g and gx float32, float16 or bfloat16 (computed in float32), 8 rows per workgroup. causal
// (softmax only): row r keeps columns 0..(r % T), as the forward did; the rest, constant zeros
// there, get zero gradients without being read.
#include "common.glsl"
#include "rows.glsl"
#include "rows4.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer Y { uvec2 y[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { uvec2 g[]; };
layout(std430, set = 0, binding = 3) writeonly buffer GX { uvec2 gx[]; };
layout(push_constant) uniform Params { uint rows, n4, y_off4, g_off4, gx_off4, log_, causal, T, y_type, g_type, gx_type; } p;

void main() {
  const uint lane = row_lane();
  for (uint r0 = gl_WorkGroupID.x * ROWS_PER_GROUP; r0 < p.rows; r0 += gl_NumWorkGroups.x * ROWS_PER_GROUP) {
    const uint r = r0 + row_slot();
    const bool live = r < p.rows;
    const uint yb = p.y_off4 + r * p.n4, gb = p.g_off4 + r * p.n4, ob = p.gx_off4 + r * p.n4;
    const uint keep = p.causal != 0u ? min(4u * p.n4, r % p.T + 1u) : 4u * p.n4;
    float acc = 0.0;
    for (uint q = lane; live && 4u * q < keep; q += ROW_LANES) {
      vec4 gv = LOAD4(g, p.g_type, gb + q);
      for (uint j = 1u; j < 4u; ++j)
        if (4u * q + j >= keep) gv[j] = 0.0;
      acc += p.log_ != 0u ? dot(gv, vec4(1.0)) : dot(gv, LOAD4(y, p.y_type, yb + q));
    }
    const float total = row_sum(acc);
    for (uint q = lane; live && q < p.n4; q += ROW_LANES) {
      vec4 o = vec4(0.0);
      if (4u * q < keep) {
        const vec4 yv = LOAD4(y, p.y_type, yb + q), gv = LOAD4(g, p.g_type, gb + q);
        o = p.log_ != 0u ? gv - exp(yv) * total : yv * (gv - total);
        for (uint j = 1u; j < 4u; ++j)
          if (4u * q + j >= keep) o[j] = 0.0;
      }
      STORE4(gx, p.gx_type, ob + q, o)
    }
  }
}
