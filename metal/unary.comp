#version 450
#extension GL_GOOGLE_include_directive : require
// float32 unary math: out[out_off + i] = f(x[x_off + offset(i)]); op codes follow pcp::UnaryOp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, x_off, out_off, op;
  uint shape[MAX_DIMS];
  int strides[MAX_DIMS];
} p;

float apply(uint op, float v) {
  switch (op) {
    case 0: return -v;                                   // neg
    case 1: return abs(v);                               // abs
    case 2: return exp(v);                               // exp
    case 3: return log(v);                               // log
    case 4: return sqrt(v);                              // sqrt
    case 5: return inversesqrt(v);                       // rsqrt
    case 6: return sin(v);                               // sin
    case 7: return cos(v);                               // cos
    case 8: return tanh_(v);                             // tanh
    case 9: return 1.0 / (1.0 + exp(-v));                // sigmoid
    case 10: return v < 0.0 ? 0.0 : v;                   // relu
    case 11: return 0.5 * v * (1.0 + erf_(v * SQRT1_2));  // gelu
    case 12: return 0.5 * v * (1.0 + tanh_(K_TANH * (v + C_TANH * v * v * v)));  // gelu_tanh
    case 13: return v / (1.0 + exp(-v));                 // silu
    case 14: return v * v;                               // square
    case 15: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);  // sign
    case 16: return erf_(v);                             // erf
  }
  return v;
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
    out_[p.out_off + i] = apply(p.op, x[int(p.x_off) + strided_offset(i, p.ndim, p.shape, p.strides)]);
}
