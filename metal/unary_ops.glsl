// The float32 unary ops of pcp::UnaryOp, shared by unary.comp and unary4.comp.

// sin (cos: shift = 1) with the argument reduced by pi/2 in three parts first: GPU sin and cos
// are accurate only near zero (measured on an H200: sin(100) off by 1e-5).
float sin_cos(float v, uint shift) {
  if (isinf(v)) return 0.0 / 0.0;
  const float k = round(v * 0.6366197723675814);  // v / (pi / 2)
  // Cody-Waite: pi/2 = 1.5703125 + 4.837512969970703125e-4 + 7.54978995489188216e-8 (cephes' sinf)
  const float r = fma(-k, 7.54978995489188216e-8, fma(-k, 4.837512969970703125e-4, fma(-k, 1.5703125, v)));
  const uint quadrant = (uint(int(k)) + shift) & 3u;
  const float s = (quadrant & 1u) == 0u ? sin(r) : cos(r);
  return quadrant >= 2u ? -s : s;
}

float apply(uint op, float v) {
  switch (op) {
    case 0: return -v;                                   // neg
    case 1: return abs(v);                               // abs
    case 2: return exp(v);                               // exp
    case 3: return log(v);                               // log
    case 4: return sqrt(v);                              // sqrt
    case 5: return inversesqrt(v);                       // rsqrt
    case 6: return sin_cos(v, 0u);                       // sin
    case 7: return sin_cos(v, 1u);                       // cos
    case 8: return tanh_(v);                             // tanh
    case 9: return 1.0 / (1.0 + exp(-v));                // sigmoid
    case 10: return isnan(v) ? v : max(v, 0.0);          // relu (NVIDIA's max drops NaNs)
    case 11: return 0.5 * v * (1.0 + erf_(v * SQRT1_2));  // gelu
    case 12: return 0.5 * v * (1.0 + tanh_(K_TANH * (v + C_TANH * v * v * v)));  // gelu_tanh
    case 13: return v / (1.0 + exp(-v));                 // silu
    case 14: return v * v;                               // square
    case 15: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : v);  // sign
    case 16: return erf_(v);                             // erf
  }
  return v;
}
