// float64 math for the wide kernels. GLSL has double arithmetic, sqrt, floor, frexp and ldexp
// but no double exp, log, sin or atan: they are written here, each to within a few units in the
// last place of float64 (tests/test_gpu_float64.py compares them with NumPy). Literals carry LF:
// an unsuffixed GLSL literal is a float and would round the constant to 24 bits.
const double LN2_HI = 6.93147180369123816490e-01LF;  // ln 2 to 32 bits: k LN2_HI is exact
const double LN2_LO = 1.90821492927058770002e-10LF;
const double INV_LN2 = 1.44269504088896338700e+00LF;
const double PI_2_64 = 1.57079632679489655800e+00LF;
const double PI_4_64 = 7.85398163397448278999e-01LF;
const double SQRT_PI_INV_2 = 1.12837916709551255856e+00LF;  // 2 / sqrt(pi)

double inf64() { return 1.0LF / 0.0LF; }
double nan64() { return 0.0LF / 0.0LF; }

// e^r for |r| <= ln2 / 2, by its Taylor series to r^14.
double exp_small(double r) {
  double t = 1.0LF / 87178291200.0LF;  // 1 / 14!
  for (int k = 13; k >= 1; --k) t = t * r / double(k) + 1.0LF;
  return t;
}

double exp64(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384LF) return inf64();
  if (x < -745.1332191019412LF) return 0.0LF;
  const double k = roundEven(x * INV_LN2);
  precise double r = x - k * LN2_HI;
  r = r - k * LN2_LO;
  const int ki = int(k), ki_half = ki / 2;  // two steps, so that subnormal results are not flushed early
  return ldexp(ldexp(exp_small(r), ki_half), ki - ki_half);
}

// log(m) for m in [sqrt(1/2), sqrt(2)): 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172.
double log_near_one(double m) {
  const double f = m - 1.0LF, s = f / (2.0LF + f), z = s * s;
  double t = 1.0LF / 25.0LF;
  for (int k = 23; k >= 3; k -= 2) t = t * z + 1.0LF / double(k);
  return 2.0LF * s + 2.0LF * s * z * t;
}

double log64(double x) {
  if (isnan(x) || x == inf64()) return x;
  if (x < 0.0LF) return nan64();
  if (x == 0.0LF) return -inf64();
  int e = 0;
  if (x < 2.2250738585072014e-308LF) {  // subnormal: scale into the normal range first
    x *= 18014398509481984.0LF;        // 2^54
    e = -54;
  }
  int fe;
  double m = frexp(x, fe);  // m in [1/2, 1)
  e += fe;
  if (m < 0.70710678118654752440LF) {
    m *= 2.0LF;
    e -= 1;
  }
  const double de = double(e);
  return de * LN2_HI + (log_near_one(m) + de * LN2_LO);
}

// expm1 and log1p, accurate near 0 (series there; elsewhere exp and log lose nothing).
double expm1_64(double x) {
  if (x == 0.0LF || isnan(x)) return x;  // -0 stays -0
  if (abs(x) < 0.5LF) {  // x (1 + x/2 (1 + x/3 (1 + ...))) to x^17
    double h = 1.0LF;
    for (int k = 17; k >= 2; --k) h = 1.0LF + x * h / double(k);
    return x * h;
  }
  return exp64(x) - 1.0LF;
}

double log1p_64(double x) {
  if (isnan(x) || x == inf64()) return x;
  if (x < -1.0LF) return nan64();
  if (x == -1.0LF) return -inf64();
  if (abs(x) < 0.5LF) {
    if (x == 0.0LF) return x;  // -0 stays -0
    const double s = x / (2.0LF + x), z = s * s;  // |s| <= 1/3
    double t = 1.0LF / 37.0LF;
    for (int k = 35; k >= 3; k -= 2) t = t * z + 1.0LF / double(k);
    return 2.0LF * s + 2.0LF * s * z * t;
  }
  const double u = 1.0LF + x;  // Goldberg: log(u) scaled by the rounding of 1 + x
  return log64(u) * (x / (u - 1.0LF));
}

// sin (cos: shift = 1) of r in [-pi/4, pi/4], quadrant q.
double sin_poly(double r) {
  const double z = r * r;
  double t = 1.0LF;
  for (int k = 17; k >= 3; k -= 2) t = 1.0LF - z * t / double(k * (k - 1));
  return r * t;
}
double cos_poly(double r) {
  const double z = r * r;
  double t = 1.0LF;
  for (int k = 18; k >= 2; k -= 2) t = 1.0LF - z * t / double(k * (k - 1));
  return t;
}

// The bits of 2/pi after the binary point, 32 a word, after two zero words.
const uint TWO_OVER_PI_64[42] = uint[42](0u, 0u,
    0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u,
    0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u,
    0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu,
    0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu,
    0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du);

// 32 bits of TWO_OVER_PI_64 from bit b on (b counted from the first zero word's top bit).
uint two_over_pi_word(uint b) {
  const uint w = b >> 5, s = b & 31u;
  return s == 0u ? TWO_OVER_PI_64[w] : (TWO_OVER_PI_64[w] << s) | (TWO_OVER_PI_64[w + 1u] >> (32u - s));
}

// Adds the 64-bit hi:lo at limb pos of a 256-bit integer (bits beyond it dropped).
void add_at(inout uint limb[8], int pos, uint lo, uint hi) {
  uint c1, c2, c3;
  limb[pos] = uaddCarry(limb[pos], lo, c1);
  if (pos + 1 >= 8) return;
  limb[pos + 1] = uaddCarry(limb[pos + 1], hi, c2);
  limb[pos + 1] = uaddCarry(limb[pos + 1], c1, c3);
  uint carry = c2 + c3;
  for (int k = pos + 2; k < 8 && carry != 0u; ++k) limb[k] = uaddCarry(limb[k], carry, carry);
}

// Payne-Hanek for |x| >= 2^-10: x = m 2^E with a 53-bit integer m. Bits of 2/pi of weight
// 2^-i with i <= E - 2 give multiples of 4, so x 2/pi mod 4 = m W 2^-190 mod 4, W the 192 bits
// from weight 2^-(E-1) on, in exact integer arithmetic. Returns the remainder in radians as
// hi + lo; q gets the quadrant.
void reduce_large64(double x, out double hi, out double lo, inout uint q) {
  const uvec2 words = unpackDouble2x32(abs(x));
  const int E = int(words.y >> 20) - 1075;
  const uint m_lo = words.x, m_hi = (words.y & 0xFFFFFu) | 0x100000u;
  const uint start = uint(E + 62);  // the bit of weight 2^-(E-1) (table bit b has weight 2^(63-b))
  uint w[6];
  for (int j = 0; j < 6; ++j) w[j] = two_over_pi_word(start + uint(32 * j));
  // limbs (32-bit, least significant first) of m W: W = w0 .. w5, w5 the least significant.
  uint limb[8] = uint[8](0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u);
  for (int j = 0; j < 6; ++j) {
    uint hi1, lo1, hi2, lo2;
    umulExtended(w[j], m_lo, hi1, lo1);
    umulExtended(w[j], m_hi, hi2, lo2);
    add_at(limb, 5 - j, lo1, hi1);
    add_at(limb, 6 - j, lo2, hi2);
  }
  // x 2/pi = m W 2^-190: times 4, the integer part is limb 6 (mod 4) and the fraction limbs 5 .. 2
  // (128 bits; the lower ones are dropped).
  for (int i = 7; i > 0; --i) limb[i] = limb[i] << 2 | limb[i - 1] >> 30;
  limb[0] <<= 2;
  uint k = limb[6] & 3u;
  bool negative = false;
  if ((limb[5] & 0x80000000u) != 0u) {  // fraction >= 1/2: take fraction - 1, and k + 1
    k += 1u;
    negative = true;
    uint borrow = 1u;  // 2^128 - fraction: the complement plus one
    for (int i = 2; i <= 5; ++i) {
      uint c;
      limb[i] = uaddCarry(~limb[i], borrow, c);
      borrow = c;
    }
  }
  // fraction = (limb5 limb4) 2^-64 + (limb3 limb2) 2^-128, as a double-double.
  const double top = double(limb[5]) * 4294967296.0LF + double(limb[4]);
  const double bottom = double(limb[3]) * 4294967296.0LF + double(limb[2]);
  // top's rounding error, exactly: the 64-bit integer less the double's integer value.
  const double top_hi = top;
  const double top_err = (double(limb[5]) * 4294967296.0LF - top_hi) + double(limb[4]);
  const double f_hi = top_hi * 5.42101086242752217e-20LF;  // 2^-64
  const double f_lo = top_err * 5.42101086242752217e-20LF + bottom * 2.93873587705571877e-39LF;  // 2^-128
  // times pi/2 = P1 + P2
  const double P1 = 1.57079632679489655800e+00LF, P2 = 6.12323399573676603587e-17LF;
  hi = f_hi * P1;
  lo = f_lo * P1 + f_hi * P2;
  if (negative != (x < 0.0LF)) {
    hi = -hi;
    lo = -lo;
  }
  q += x < 0.0LF ? 4u - (k & 3u) : k;
}

double sin_cos64(double x, uint shift) {
  if (isinf(x) || isnan(x)) return nan64();
  if (x == 0.0LF) return shift == 0u ? x : 1.0LF;  // sin(-0) is -0
  uint q = shift;
  double r = x, lo = 0.0LF;
  // Every argument beyond pi/4 is reduced in integer arithmetic: a Cody-Waite reduction in
  // doubles, exact in IEEE order, lost up to 1e-10 at 1e5 on NVIDIA's Vulkan driver (measured).
  if (abs(x) > PI_4_64) reduce_large64(x, r, lo, q);
  r += lo;
  const uint quadrant = q & 3u;
  const double s = (quadrant & 1u) == 0u ? sin_poly(r) : cos_poly(r);
  return quadrant >= 2u ? -s : s;
}

// atan for any x: by 1/x beyond 1, and (t - 1) / (t + 1) beyond tan(pi/8), then its series.
double atan64(double x) {
  if (isnan(x) || x == 0.0LF) return x;
  const double a = abs(x);
  double t = a, base = 0.0LF, sign_of_t = 1.0LF;
  if (a > 1.0LF) {
    t = 1.0LF / a;
    base = PI_2_64;
    sign_of_t = -1.0LF;
  }
  double offset = 0.0LF;
  if (t > 0.41421356237309504880LF) {
    offset = PI_4_64;
    t = (t - 1.0LF) / (t + 1.0LF);
  }
  const double z = t * t;  // atan(t) = t (1 - z/3 + z^2/5 - ...), z <= 0.172: 21 terms
  double s = 1.0LF / 43.0LF;
  for (int n = 20; n >= 0; --n) s = 1.0LF / double(2 * n + 1) - z * s;
  const double at = offset + t * s;
  const double r = base + sign_of_t * at;
  return x < 0.0LF ? -r : r;
}

// erfc(a) for a >= 2: its continued fraction (60 terms, backwards), with e^(-a^2) from a^2 split
// exactly into hi + lo.
double erfc_tail(double a) {
  if (a >= 27.3LF) return 0.0LF;
  double f = a;
  for (int n = 60; n >= 1; --n) f = a + double(n) * 0.5LF / f;
  const uvec2 bits = unpackDouble2x32(a);
  const double ah = packDouble2x32(uvec2(bits.x & 0xF8000000u, bits.y)), al = a - ah;
  const double zh = ah * ah, zl = (a + ah) * al;  // a^2 = zh + zl exactly (ah has 26 bits)
  return exp64(-zh) * exp64(-zl) / (f * 1.77245385090551602730LF);
}

// erf: its series below 2, 1 - erfc above.
double erf64(double x) {
  const double a = abs(x);
  if (isnan(x)) return x;
  double r;
  if (a < 2.0LF) {
    const double z = a * a;
    double term = a, s = a;
    for (int n = 1; n < 40; ++n) {
      term *= -z / double(n);
      s += term / double(2 * n + 1);
    }
    r = s * SQRT_PI_INV_2;
  } else {
    r = a >= 6.0LF ? 1.0LF : 1.0LF - erfc_tail(a);
  }
  return x < 0.0LF ? -r : r;
}

// erfc, accurate where it is small (x >= 2) too: GELU of large negative inputs needs it.
double erfc64(double x) {
  if (isnan(x)) return x;
  if (x >= 2.0LF) return erfc_tail(x);
  if (x <= -6.0LF) return 2.0LF;
  return x <= -2.0LF ? 2.0LF - erfc_tail(-x) : 1.0LF - erf64(x);
}
