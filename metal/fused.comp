#version 450
#extension GL_GOOGLE_include_directive : require
// A fused chain of float32 elementwise ops (pcp::FusedProgram, a plan's fusion pass): each
// thread loads its element of up to 4 inputs into registers, runs the program and stores up to
// 2 of the registers. Input k is contiguous, read at in_off + (i / in_div) % in_period: the
// same shape (div 1, period n), a scalar (period 1), a row repeated (div 1) or a column (div
// the row length). Instruction c: bit 0 binary, bits 1-7 the op, 8-15 and 16-23 its registers.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer I0 { float in0[]; };
layout(std430, set = 0, binding = 2) readonly buffer I1 { float in1[]; };
layout(std430, set = 0, binding = 3) readonly buffer I2 { float in2[]; };
layout(std430, set = 0, binding = 4) readonly buffer I3 { float in3[]; };
layout(std430, set = 0, binding = 5) buffer O0 { float out0[]; };
layout(std430, set = 0, binding = 6) buffer O1 { float out1[]; };
layout(push_constant) uniform Params {
  uint n;
  uint counts;  // inputs | instructions << 8 | outputs << 16
  uint outs;    // the output registers, 8 bits each
  uint code[12];
  uint in_off[4];
  uint in_div[4];
  uint in_period[4];
  uint out_off[2];
} p;

#include "unary_ops.glsl"
#include "binary_ops.glsl"

float load(uint k, uint i) {
  const uint at = p.in_off[k] + (i / p.in_div[k]) % p.in_period[k];
  switch (k) {
    case 0: return in0[at];
    case 1: return in1[at];
    case 2: return in2[at];
  }
  return in3[at];
}

void main() {
  const uint n_in = p.counts & 255u, n_code = (p.counts >> 8) & 255u, n_out = (p.counts >> 16) & 255u;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    float r[16];
    for (uint k = 0u; k < n_in; ++k) r[k] = load(k, i);
    for (uint c = 0u; c < n_code; ++c) {
      const uint ins = p.code[c], op = (ins >> 1) & 127u;
      const float a = r[(ins >> 8) & 255u];
      r[n_in + c] = (ins & 1u) != 0u ? apply(op, a, r[(ins >> 16) & 255u]) : apply(op, a);
    }
    out0[p.out_off[0] + i] = r[p.outs & 255u];
    if (n_out > 1u) out1[p.out_off[1] + i] = r[(p.outs >> 8) & 255u];
  }
}
