#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax / log-softmax over rows of n values (n a multiple of 4), float32, float16 or bfloat16
// in and out (computed in float32), 8 rows per workgroup (rows4.glsl). causal: row r keeps
// columns 0..(r % T) (an attention score block of T query rows); the rest become 0 (softmax) or
// -inf (log-softmax).
#include "common.glsl"
#include "rows.glsl"
#include "rows4.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { uvec2 x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { uvec2 y[]; };
layout(push_constant) uniform Params { uint rows, n4, x_off4, y_off4, log_, causal, T, x_type, y_type; } p;

void main() {
  const uint lane = row_lane(), n = 4u * p.n4;
  for (uint r0 = gl_WorkGroupID.x * ROWS_PER_GROUP; r0 < p.rows; r0 += gl_NumWorkGroups.x * ROWS_PER_GROUP) {
    const uint r = r0 + row_slot();
    const bool live = r < p.rows;  // every invocation reaches the barriers; dead rows do no I/O
    const uint xb = p.x_off4 + r * p.n4, yb = p.y_off4 + r * p.n4;
    const uint keep = p.causal != 0u ? min(n, r % p.T + 1u) : n;
    float m = -1.0 / 0.0, s = 0.0;
    for (uint q = lane; live && 4u * q < keep; q += ROW_LANES) {
      const vec4 v = LOAD4(x, p.x_type, xb + q);
      for (uint j = 0u; j < 4u; ++j)
        if (4u * q + j < keep) online_add(m, s, v[j]);
    }
    const vec2 ml = row_max_logsum(m, s);
    for (uint q = lane; live && q < p.n4; q += ROW_LANES) {
      vec4 o = vec4(p.log_ != 0u ? -1.0 / 0.0 : 0.0);  // masked columns are not read
      if (4u * q < keep) {
        const vec4 v = LOAD4(x, p.x_type, xb + q);
        for (uint j = 0u; j < 4u; ++j) {
          const float t = 4u * q + j < keep ? (v[j] - ml.x) - ml.y : -1.0 / 0.0;
          o[j] = p.log_ != 0u ? t : exp(t);
        }
      }
      STORE4(y, p.y_type, yb + q, o)
    }
  }
}
