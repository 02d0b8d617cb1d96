// The float32 unary ops of pcp::UnaryOp, shared by unary.comp and unary4.comp.

// v - k pi/2 with k = round(v / (pi/2)), adding k (mod 4) to q. pi/2 is split into four float
// constants of at most 12 significant bits (A..C, and the rest D), and k into its top and
// bottom 12 bits, so that every product is exact without relying on fma (GLSL may split fma
// into a rounded product and an add: lavapipe does, and sin(1e7) came out 0.137, not 0.421).
void reduce_half_pi(inout float r, inout uint q) {
  const float A = 1.5703125, B = 4.837512969970703125e-4, C = 7.5495336e-8, D = 2.563283e-12;
  const float k = round(r * 0.6366197723675814);
  const float kh = uintBitsToFloat(floatBitsToUint(k) & 0xFFFFF000u), kl = k - kh;
  precise float x = r - kh * A;
  x = x - kl * A;
  x = x - kh * B;
  x = x - kl * B;
  x = x - kh * C;
  x = x - kl * C;
  r = x - k * D;
  q += abs(k) < 67108864.0 ? uint(int(k)) : 0u;  // from 2**26 on, k is a multiple of 4
}

// sin (cos: shift = 1) after reducing the argument to [-pi/4, pi/4]: GPU sin and cos are
// accurate only near zero. Twice, for |v| above 2**24 where k itself is rounded; the error
// stays below 1e-6 for |v| < 1e8 and 1e-4 for |v| < 1e10.
float sin_cos(float v, uint shift) {
  if (isinf(v)) return 0.0 / 0.0;
  float r = v;
  uint q = shift;
  reduce_half_pi(r, q);
  reduce_half_pi(r, q);
  const uint quadrant = q & 3u;
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
