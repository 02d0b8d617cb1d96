#version 450
#extension GL_GOOGLE_include_directive : require
// layer_norm_backward.comp for short rows (up to MAX_COLS): 8 rows per workgroup, 32 invocations
// a row, and in the same pass the weight and bias gradients' partial sums over the workgroup's
// rows (partial[group][0][c] = sum of g xhat, partial[group][1][c] = sum of g; a sum over the
// groups follows): two passes over x and g in all, where a separate kernel made it three.
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
layout(std430, set = 0, binding = 9) writeonly buffer Partial { float partial[]; };
layout(push_constant) uniform Params {
  uint rows, n, x_off, w_off, g_off, gx_off, has_w, g_type, has_acc, acc_off, has_low, low_off, low_type;
} p;
#include "typed.glsl"

// Columns are taken 256 at a time: each row slot leaves its row's g xhat and g there, and
// invocation i adds column i's 8 values to its running sums (one register pair per block).
#define BLOCK 256u
#define MAX_BLOCKS 8u  // MAX_COLS = 2048 (kShortRow in backend/gpu/nn.cpp)
shared float block_dw_[ROWS_PER_GROUP * BLOCK];
shared float block_db_[ROWS_PER_GROUP * BLOCK];

// gx at column c of row r from g's and x's values there (plus the accumulated gradient, with
// has_acc); dw, db: this element's g xhat and g.
float gradient(uint r, uint c, float gv, float xv, float mu, float rstd, float ma, float mb, out float dw) {
  const float gh = p.has_w != 0 ? gv * w[p.w_off + c] : gv;
  const float xhat = (xv - mu) * rstd;
  dw = gv * xhat;
  const float v = rstd * (gh - ma - xhat * mb);
  return p.has_acc != 0 ? acc_[p.acc_off + r * p.n + c] + v : v;
}

void main() {
  const uint lane = row_lane(), slot = row_slot(), lid = gl_LocalInvocationID.x;
  const uint blocks = (p.n + BLOCK - 1u) / BLOCK;
  float sum_dw[MAX_BLOCKS], sum_db[MAX_BLOCKS];
  for (uint k = 0u; k < MAX_BLOCKS; ++k) {
    sum_dw[k] = 0.0;
    sum_db[k] = 0.0;
  }
  for (uint r0 = gl_WorkGroupID.x * ROWS_PER_GROUP; r0 < p.rows; r0 += gl_NumWorkGroups.x * ROWS_PER_GROUP) {
    const uint r = r0 + slot;
    const bool live = r < p.rows;
    const uint n = live ? p.n : 0u, xb = p.x_off + r * p.n, gb = p.g_off + r * p.n;
    const float mu = live ? mean_[r] : 0.0, rstd = live ? rstd_[r] : 0.0;
    float a = 0.0, bsum = 0.0;
    for (uint c = lane; c < n; c += ROW_LANES) {
      const float gv = LOAD_TYPED(g, p.g_type, gb + c);
      const float gh = p.has_w != 0 ? gv * w[p.w_off + c] : gv;
      a += gh;
      bsum += gh * (x[xb + c] - mu) * rstd;
    }
    const float ma = row_sum(a) / float(p.n), mb = row_sum(bsum) / float(p.n);
    for (uint k = 0u; k < MAX_BLOCKS; ++k) {  // constant bounds: the sums stay in registers
      if (k >= blocks) continue;  // uniform
      const uint c0 = k * BLOCK, at = slot * BLOCK;
      if (p.has_low == 0) {
        for (uint j = lane; j < BLOCK; j += ROW_LANES) {
          const uint c = c0 + j;
          float dw = 0.0, db = 0.0;
          if (c < n) {
            db = LOAD_TYPED(g, p.g_type, gb + c);
            gx[p.gx_off + r * p.n + c] = gradient(r, c, db, x[xb + c], mu, rstd, ma, mb, dw);
          }
          block_dw_[at + j] = dw;
          block_db_[at + j] = db;
        }
      } else {  // pairs of elements, for the 16-bit copy's words (n even)
        for (uint j = 2u * lane; j < BLOCK; j += 2u * ROW_LANES) {
          const uint c = c0 + j;
          float dw0 = 0.0, db0 = 0.0, dw1 = 0.0, db1 = 0.0;
          if (c < n) {
            db0 = LOAD_TYPED(g, p.g_type, gb + c);
            db1 = LOAD_TYPED(g, p.g_type, gb + c + 1u);
            const float lo = gradient(r, c, db0, x[xb + c], mu, rstd, ma, mb, dw0);
            const float hi = gradient(r, c + 1u, db1, x[xb + c + 1u], mu, rstd, ma, mb, dw1);
            gx[p.gx_off + r * p.n + c] = lo;
            gx[p.gx_off + r * p.n + c + 1u] = hi;
            low[(p.low_off + r * p.n + c) / 2u] = half_pair(p.low_type, lo, hi);
          }
          block_dw_[at + j] = dw0;
          block_db_[at + j] = db0;
          block_dw_[at + j + 1u] = dw1;
          block_db_[at + j + 1u] = db1;
        }
      }
      barrier();
      for (uint s = 0u; s < ROWS_PER_GROUP; ++s) {  // in slot order: the same sums on every run
        sum_dw[k] += block_dw_[s * BLOCK + lid];
        sum_db[k] += block_db_[s * BLOCK + lid];
      }
      barrier();
    }
  }
  const uint base = gl_WorkGroupID.x * 2u * p.n;
  for (uint k = 0u; k < MAX_BLOCKS; ++k) {
    const uint c = k * BLOCK + lid;
    if (c < p.n) {
      partial[base + c] = sum_dw[k];
      partial[base + p.n + c] = sum_db[k];
    }
  }
}
