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

// The bits of 2/pi after the binary point, 32 a word, after a zero word (the integer part).
const uint TWO_OVER_PI[8] = uint[8](0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u,
                                    0x3C439041u, 0xFE5163ABu);

// 32 bits of TWO_OVER_PI from bit p on (p counted from the zero word's top bit).
uint two_over_pi_bits(uint p) {
  const uint w = p >> 5, s = p & 31u;
  return s == 0u ? TWO_OVER_PI[w] : (TWO_OVER_PI[w] << s) | (TWO_OVER_PI[w + 1u] >> (32u - s));
}

// Payne-Hanek: v - k pi/2 for |v| >= 2**24, adding k (mod 4) to q. |v| = m 2^e with a 24-bit
// integer m and e >= 1, so only the bits of 2/pi from 2^-(e-1) on matter mod 4: 96 of them times
// m give (v 2/pi mod 4) as 2 integer bits and 62 fraction bits, in exact integer arithmetic.
void reduce_large(inout float r, inout uint q) {
  const uint bits = floatBitsToUint(abs(r));
  const uint m = (bits & 0x7FFFFFu) | 0x800000u;
  const uint p = (bits >> 23) - 150u + 30u;  // e - 2 + 32
  const uint w2 = two_over_pi_bits(p), w1 = two_over_pi_bits(p + 32u), w0 = two_over_pi_bits(p + 64u);
  uint hi0, lo0, hi1, lo1, hi2, lo2, carry;
  umulExtended(m, w0, hi0, lo0);
  umulExtended(m, w1, hi1, lo1);
  umulExtended(m, w2, hi2, lo2);
  const uint p1 = uaddCarry(hi0, lo1, carry);
  const uint p2 = hi1 + lo2 + carry;  // mod 2^32: the bits above are multiples of 4
  uint k = p2 >> 30;
  float f = float(p2 & 0x3FFFFFFFu) * 9.313225746154785e-10 + float(p1) * 2.168404344971009e-19;  // 2^-30, 2^-62
  if (f >= 0.5) {
    f -= 1.0;
    k += 1u;
  }
  const bool negative = r < 0.0;
  r = negative ? -f * 1.5707963267948966 : f * 1.5707963267948966;
  q += negative ? 4u - (k & 3u) : k;
}

// sin (cos: shift = 1) after reducing the argument to [-pi/4, pi/4]: GPU sin and cos are
// accurate only near zero. Below 2**24 twice by reduce_half_pi (the error stays below 1e-6),
// above by Payne-Hanek (below 1e-7, for any float32).
float sin_cos(float v, uint shift) {
  if (isinf(v)) return 0.0 / 0.0;
  if (v == 0.0) return shift == 0u ? v : 1.0;  // sin(-0) is -0 (the reduction would give +0)
  float r = v;
  uint q = shift;
  if (abs(v) >= 16777216.0) {
    reduce_large(r, q);
  } else {
    reduce_half_pi(r, q);
    reduce_half_pi(r, q);
  }
  const uint quadrant = q & 3u;
  const float s = (quadrant & 1u) == 0u ? sin(r) : cos(r);
  return quadrant >= 2u ? -s : s;
}

// log(1 + v), accurate near 0 without the driver's log, which may be 1e-7 off near 1: for
// |v| < 1/2, 2 atanh(s) with s = v / (2 + v) in [-1/3, 1/5] by its series; else Goldberg's
// correction of the rounding of 1 + v. -0 stays -0.
float log1p_(float v) {
  if (abs(v) < 0.5) {
    const float s = v / (2.0 + v), z = s * s;
    float t = 1.0 / 17.0;
    for (int k = 15; k >= 3; k -= 2) t = t * z + 1.0 / float(k);
    return 2.0 * (s + s * z * t);
  }
  if (isinf(v)) return v > 0.0 ? v : 0.0 / 0.0;
  const float u = 1.0 + v;
  return log(u) * (v / (u - 1.0));
}

// exp(v) - 1, accurate near 0: the Taylor series for |v| < 1/2 (exp may be an ulp off near 0),
// else Kahan's correction.
float expm1_(float v) {
  if (v == 0.0) return v;  // -0 stays -0
  if (abs(v) < 0.5) {
    const float t = 1.0 / 2.0 + v * (1.0 / 6.0 + v * (1.0 / 24.0 + v * (1.0 / 120.0 + v * (1.0 / 720.0 +
                    v * (1.0 / 5040.0 + v * (1.0 / 40320.0 + v * (1.0 / 362880.0)))))));
    return v + v * v * t;
  }
  const float u = exp(v);
  if (u - 1.0 == -1.0 || isinf(u)) return u - 1.0;
  return (u - 1.0) * (v / log(u));
}

// sinh and cosh from exp, with the cancellation near 0 avoided (and -0 kept) and the overflow
// of exp(|v|) put off by halving first.
float sinh_(float v) {
  const float a = abs(v);
  if (v == 0.0) return v;
  if (a < 0.5) {
    const float e = expm1_(a), r = 0.5 * (e + e / (e + 1.0));
    return v < 0.0 ? -r : r;
  }
  const float h = exp(a - 0.6931471805599453);  // exp(a) / 2
  return sign(v) * (h - 0.25 / h);
}
float cosh_(float v) {
  const float h = exp(abs(v) - 0.6931471805599453);
  return h + 0.25 / h;
}

// A rounded zero takes the sign of what was rounded, as C's (ceil(-0.5) is -0); drivers differ.
float zero_signed_as(float r, float v) {
  return r == 0.0 ? uintBitsToFloat(floatBitsToUint(v) & 0x80000000u) : r;
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
    case 15: return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : (v == 0.0 ? abs(v) : v));  // sign (-0 gives +0)
    case 16: return erf_(v);                             // erf
    case 19: return zero_signed_as(floor(v), v);         // floor
    case 20: return zero_signed_as(ceil(v), v);          // ceil
    case 21: return zero_signed_as(trunc(v), v);         // trunc
    case 22: return zero_signed_as(roundEven(v), v);     // round (half to even)
    case 23: return v == 0.0 ? v : sin_cos(v, 0u) / sin_cos(v, 1u);  // tan
    case 24: return atan_(v / sqrt((1.0 - v) * (1.0 + v)));  // asin
    case 25: return 2.0 * atan_(sqrt((1.0 - v) / (1.0 + v)));  // acos
    case 26: return atan_(v);                            // atan
    case 27: return sinh_(v);                            // sinh
    case 28: return cosh_(v);                            // cosh
    case 29: {                                           // asinh
      const float a = abs(v);
      const float r = a < 0.5 ? log1p_(a + a * a / (1.0 + sqrt(1.0 + a * a)))
                    : a > 1e4 ? log(a) + 0.6931471805599453 : log(a + sqrt(a * a + 1.0));
      return v < 0.0 ? -r : (v == 0.0 ? v : r);
    }
    case 30: {                                           // acosh
      if (v < 1.0) return 0.0 / 0.0;  // also where t + sqrt(t (v + 1)) would cancel to 0
      const float t = v - 1.0;
      return v > 1e4 ? log(v) + 0.6931471805599453 : v < 2.0 ? log1p_(t + sqrt(t * (v + 1.0)))
                                                             : log(v + sqrt(v * v - 1.0));
    }
    case 31: {                                           // atanh
      const float r = 0.5 * log1p_(2.0 * abs(v) / (1.0 - abs(v)));
      return v < 0.0 ? -r : (v == 0.0 ? v : r);
    }
    case 32: return expm1_(v);                           // expm1
    case 33: return log1p_(v);                           // log1p
    case 34: return abs(v - 1.0) < 0.5 ? log1p_(v - 1.0) * 1.4426950408889634 : log2(v);  // log2
    case 35: return abs(v - 1.0) < 0.5 ? log1p_(v - 1.0) * 0.43429448190325182 : log2(v) * 0.30102999566398120;  // log10
  }
  return v;
}
