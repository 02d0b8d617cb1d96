#version 450
#extension GL_GOOGLE_include_directive : require
// Layer norm over rows of n contiguous float32 values, one workgroup per row:
// y = (x - mean) * rstd * w + b, saving mean and rstd per row for the backward pass.
#include "common.glsl"
#include "rows.glsl"
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
layout(std430, set = 0, binding = 8) writeonly buffer S { float s_[]; };
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

// Element c of a row's result.
float normalized(uint row, uint c, float mu, float rstd) {
  float v = (input_at(row, c) - mu) * rstd;
  if (p.has_w != 0) v *= w[p.w_off + c];
  if (p.has_b != 0) v += b[p.b_off + c];
  return v;
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    const uint row = r * p.n, yb = p.y_off + row;
    float acc = 0.0;
    for (uint c = lid; c < p.n; c += 256) {
      const float v = input_at(row, c);
      if (p.has_r != 0) s_[p.s_off + row + c] = v;
      acc += v;
    }
    const float mu = wg_sum(acc) / float(p.n);
    acc = 0.0;
    for (uint c = lid; c < p.n; c += 256) {
      const float d = input_at(row, c) - mu;
      acc += d * d;
    }
    const float rstd = inversesqrt(wg_sum(acc) / float(p.n) + p.eps);
    if (p.y_type == T_F32) {
      for (uint c = lid; c < p.n; c += 256) y[yb + c] = floatBitsToUint(normalized(row, c, mu, rstd));
    } else {  // 16-bit: two elements a word (even n and y_off)
      for (uint c = 2u * lid; c < p.n; c += 512u)
        y[(yb + c) / 2u] = half_pair(p.y_type, normalized(row, c, mu, rstd), normalized(row, c + 1u, mu, rstd));
    }
    if (lid == 0) {
      mean_[r] = mu;
      rstd_[r] = rstd;
    }
  }
}
