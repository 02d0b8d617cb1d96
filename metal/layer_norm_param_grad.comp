#version 450
#extension GL_GOOGLE_include_directive : require
// Partial weight and bias gradients of layer norm: invocation (k, c) sums g xhat and g over the
// rows of chunk k in column c into partial[k][0][c] and partial[k][1][c]; a reduction over k
// follows. Consecutive invocations take consecutive columns, so row reads are coalesced.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) readonly buffer G { uint g[]; };  // g_type (typed.glsl)
layout(std430, set = 0, binding = 3) readonly buffer Mean { float mean_[]; };
layout(std430, set = 0, binding = 4) readonly buffer Rstd { float rstd_[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Partial { float partial[]; };
layout(push_constant) uniform Params { uint rows, n, x_off, g_off, chunks, g_type; } p;
#include "typed.glsl"

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.chunks * p.n; i += GRID_STRIDE) {
    const uint k = i / p.n, c = i - k * p.n;
    const uint base = p.rows / p.chunks, rem = p.rows % p.chunks;
    const uint r0 = k * base + min(k, rem), r1 = r0 + base + (k < rem ? 1u : 0u);
    float dw = 0.0, db = 0.0;
    for (uint r = r0; r < r1; ++r) {
      const float gv = LOAD_TYPED(g, p.g_type, p.g_off + r * p.n + c);
      dw += gv * (x[p.x_off + r * p.n + c] - mean_[r]) * rstd_[r];
      db += gv;
    }
    partial[k * 2 * p.n + c] = dw;
    partial[k * 2 * p.n + p.n + c] = db;
  }
}
