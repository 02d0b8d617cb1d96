#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// A fused chain of elementwise ops (pcp::FusedProgram, a plan's fusion pass): each thread loads
// its element of up to 4 inputs into float32 registers (then up to 8 immediates), runs the
// program and stores up to 2 of the registers. The program is specialization constants, so the
// driver unrolls it into straight-line code for each program (a pipeline per program; no shader
// compiler at run time). Input k is contiguous, read at in_off + (i / in_div) % in_period: the
// same shape (div 1, period n), a scalar (period 1), a row repeated (div 1) or a column (div the
// row length). Instruction c: bit 0 binary, bits 1-7 the op (127: a conversion), 8-15 and 16-23
// its registers, 24-25 the type it rounds its result to. Types, 2 bits each: 0 float32, 1
// float16, 2 bfloat16. With a 16-bit output (even length and offsets) a thread takes two
// elements, stored as one word.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer I0 { uint in0[]; };
layout(std430, set = 0, binding = 2) readonly buffer I1 { uint in1[]; };
layout(std430, set = 0, binding = 3) readonly buffer I2 { uint in2[]; };
layout(std430, set = 0, binding = 4) readonly buffer I3 { uint in3[]; };
layout(std430, set = 0, binding = 5) buffer O0 { uint out0[]; };
layout(std430, set = 0, binding = 6) buffer O1 { uint out1[]; };
layout(push_constant) uniform Params {
  uint n;
  uint in_off[4];
  uint in_div[4];
  uint in_period[4];
  uint out_off[2];
} p;
layout(constant_id = 0) const uint N_IN = 1;
layout(constant_id = 1) const uint N_CODE = 1;
layout(constant_id = 2) const uint N_OUT = 1;
layout(constant_id = 3) const uint OUTS = 0;  // the output registers, 8 bits each
layout(constant_id = 4) const uint C0 = 0;
layout(constant_id = 5) const uint C1 = 0;
layout(constant_id = 6) const uint C2 = 0;
layout(constant_id = 7) const uint C3 = 0;
layout(constant_id = 8) const uint C4 = 0;
layout(constant_id = 9) const uint C5 = 0;
layout(constant_id = 10) const uint C6 = 0;
layout(constant_id = 11) const uint C7 = 0;
layout(constant_id = 12) const uint C8 = 0;
layout(constant_id = 13) const uint C9 = 0;
layout(constant_id = 14) const uint C10 = 0;
layout(constant_id = 15) const uint C11 = 0;
layout(constant_id = 16) const uint N_IMM = 0;  // immediates: registers after the inputs
layout(constant_id = 17) const uint M0 = 0;      // their float32 bits
layout(constant_id = 18) const uint M1 = 0;
layout(constant_id = 19) const uint M2 = 0;
layout(constant_id = 20) const uint M3 = 0;
layout(constant_id = 21) const uint M4 = 0;
layout(constant_id = 22) const uint M5 = 0;
layout(constant_id = 23) const uint M6 = 0;
layout(constant_id = 24) const uint M7 = 0;
layout(constant_id = 25) const uint IN_TYPES = 0;   // 2 bits per input
layout(constant_id = 26) const uint OUT_TYPES = 0;  // 2 bits per output
float immediate(uint j) {  // constant once the loop below is unrolled
  switch (j) {
    case 0: return uintBitsToFloat(M0);
    case 1: return uintBitsToFloat(M1);
    case 2: return uintBitsToFloat(M2);
    case 3: return uintBitsToFloat(M3);
    case 4: return uintBitsToFloat(M4);
    case 5: return uintBitsToFloat(M5);
    case 6: return uintBitsToFloat(M6);
  }
  return uintBitsToFloat(M7);
}

uint code(uint c) {  // constant once the loop below is unrolled
  switch (c) {
    case 0: return C0;
    case 1: return C1;
    case 2: return C2;
    case 3: return C3;
    case 4: return C4;
    case 5: return C5;
    case 6: return C6;
    case 7: return C7;
    case 8: return C8;
    case 9: return C9;
    case 10: return C10;
  }
  return C11;
}

#include "unary_ops.glsl"
#include "binary_ops.glsl"

// Bits of the type's element `at` of a buffer of 32-bit words.
#define ELEMENT_BITS(buf, type, at) ((type) == 0u ? (buf)[at] : HALF_OF(buf, at))

float widen(uint type, uint bits) {
  return type == 0u ? uintBitsToFloat(bits) : type == 2u ? uintBitsToFloat(bits << 16) : f16_value(bits);
}
uint narrow(uint type, float v) { return type == 2u ? bf16_bits(v) : f16_bits(v); }
float rounded(uint type, float v) { return type == 0u ? v : widen(type, narrow(type, v)); }

float load(uint k, uint i) {
  const uint at = p.in_off[k] + (i / p.in_div[k]) % p.in_period[k], t = (IN_TYPES >> (2u * k)) & 3u;
  switch (k) {
    case 0: return widen(t, ELEMENT_BITS(in0, t, at));
    case 1: return widen(t, ELEMENT_BITS(in1, t, at));
    case 2: return widen(t, ELEMENT_BITS(in2, t, at));
  }
  return widen(t, ELEMENT_BITS(in3, t, at));
}

// The program at element i: its outputs' registers.
vec2 run(uint i) {
  float r[24];
  [[unroll]] for (uint k = 0u; k < N_IN; ++k) r[k] = load(k, i);
  [[unroll]] for (uint j = 0u; j < N_IMM; ++j) r[N_IN + j] = immediate(j);
  [[unroll]] for (uint c = 0u; c < N_CODE; ++c) {
    const uint ins = code(c), op = (ins >> 1) & 127u;
    const float a = r[(ins >> 8) & 255u];
    const float v = op == 127u ? a : (ins & 1u) != 0u ? apply(op, a, r[(ins >> 16) & 255u]) : apply(op, a);
    r[N_IN + N_IMM + c] = rounded((ins >> 24) & 3u, v);
  }
  return vec2(r[OUTS & 255u], N_OUT > 1u ? r[(OUTS >> 8) & 255u] : 0.0);
}

void main() {
  const uint t0 = OUT_TYPES & 3u, t1 = N_OUT > 1u ? (OUT_TYPES >> 2) & 3u : 0u;
  if (t0 == 0u && t1 == 0u) {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
      const vec2 v = run(i);
      out0[p.out_off[0] + i] = floatBitsToUint(v.x);
      if (N_OUT > 1u) out1[p.out_off[1] + i] = floatBitsToUint(v.y);
    }
    return;
  }
  for (uint w = gl_GlobalInvocationID.x; 2u * w < p.n; w += GRID_STRIDE) {
    const vec2 lo = run(2u * w), hi = run(2u * w + 1u);
    if (t0 == 0u) {
      out0[p.out_off[0] + 2u * w] = floatBitsToUint(lo.x);
      out0[p.out_off[0] + 2u * w + 1u] = floatBitsToUint(hi.x);
    } else {
      out0[p.out_off[0] / 2u + w] = narrow(t0, lo.x) | narrow(t0, hi.x) << 16;
    }
    if (N_OUT > 1u) {
      if (t1 == 0u) {
        out1[p.out_off[1] + 2u * w] = floatBitsToUint(lo.y);
        out1[p.out_off[1] + 2u * w + 1u] = floatBitsToUint(hi.y);
      } else {
        out1[p.out_off[1] / 2u + w] = narrow(t1, lo.y) | narrow(t1, hi.y) << 16;
      }
    }
  }
}
