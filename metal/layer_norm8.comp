#version 450
#extension GL_GOOGLE_include_directive : require
// layer_norm.comp for short rows (the host's choice): 8 rows per workgroup, 32 invocations a
// row (rows4.glsl), so a row of a few hundred values does not leave most of 256 idle.
#include "common.glsl"
#include "rows.glsl"
#include "rows4.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer W { float w[]; };  // unused without has_w
layout(std430, set = 0, binding = 3) readonly buffer B { float b[]; };  // unused without has_b
layout(std430, set = 0, binding = 4) writeonly buffer Y { uint y[]; };  // y_type (typed.glsl)
layout(std430, set = 0, binding = 5) writeonly buffer Mean { float mean_[]; };
layout(std430, set = 0, binding = 6) writeonly buffer Rstd { float rstd_[]; };
// With has_r, x + res is normalized (a plan's residual add folded in: res of r_type,
// typed.glsl) and written to s; unused otherwise.
layout(std430, set = 0, binding = 7) readonly buffer R { uint res[]; };
layout(std430, set = 0, binding = 8) buffer S { float s_[]; };
layout(push_constant) uniform Params {
  uint rows, n, x_off, w_off, b_off, y_off, has_w, has_b;
  float eps;
  uint y_type, has_r, r_off, r_type, s_off;
} p;
#include "typed.glsl"

// Element c of the row starting at element `row` of x (and of r): x, or x + r.
float input_at(uint row, uint c) {
  const float v = x[p.x_off + row + c];
  return p.has_r != 0 ? v + LOAD_TYPED(res, p.r_type, p.r_off + row + c) : v;
}

// input_at once the first pass has run: with has_r the sum it wrote to s (this invocation's own
// writes), one float32 load where x + r takes two.
float stored_at(uint row, uint c) { return p.has_r != 0 ? s_[p.s_off + row + c] : x[p.x_off + row + c]; }

// Element c of a row's result.
float normalized(uint row, uint c, float mu, float rstd) {
  float v = (stored_at(row, c) - mu) * rstd;
  if (p.has_w != 0) v *= w[p.w_off + c];
  if (p.has_b != 0) v += b[p.b_off + c];
  return v;
}

void main() {
  const uint lane = row_lane();
  for (uint r0 = gl_WorkGroupID.x * ROWS_PER_GROUP; r0 < p.rows; r0 += gl_NumWorkGroups.x * ROWS_PER_GROUP) {
    const uint r = r0 + row_slot();
    const uint n = r < p.rows ? p.n : 0u;  // every invocation reaches the barriers; dead rows do no I/O
    const uint row = r * p.n, yb = p.y_off + row;
    float acc = 0.0;
    for (uint c = lane; c < n; c += ROW_LANES) {
      const float v = input_at(row, c);
      if (p.has_r != 0) s_[p.s_off + row + c] = v;
      acc += v;
    }
    const float mu = row_sum(acc) / float(p.n);
    acc = 0.0;
    for (uint c = lane; c < n; c += ROW_LANES) {
      const float d = stored_at(row, c) - mu;
      acc += d * d;
    }
    const float rstd = inversesqrt(row_sum(acc) / float(p.n) + p.eps);
    if (p.y_type == T_F32) {
      for (uint c = lane; c < n; c += ROW_LANES) y[yb + c] = floatBitsToUint(normalized(row, c, mu, rstd));
    } else {  // 16-bit: two elements a word (even n and y_off)
      for (uint c = 2u * lane; c < n; c += 2u * ROW_LANES)
        y[(yb + c) / 2u] = half_pair(p.y_type, normalized(row, c, mu, rstd), normalized(row, c + 1u, mu, rstd));
    }
    if (lane == 0 && n > 0u) {
      mean_[r] = mu;
      rstd_[r] = rstd;
    }
  }
}
