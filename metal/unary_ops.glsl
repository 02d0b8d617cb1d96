// The float32 unary ops of pcp::UnaryOp, shared by unary.comp and unary4.comp.
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
