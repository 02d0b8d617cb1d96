// The float32 binary ops of pcp::BinaryOp, shared by binary.comp, binary4.comp and fused.comp.

bool sign_bit(float v) { return (floatBitsToUint(v) & 0x80000000u) != 0u; }

// Signs set through bits: without SignedZeroInfNanPreserve a driver may treat -0.0 as 0.0
// (NVIDIA's folds `c ? -0.0 : 0.0`).
float signed_zero(bool negative) { return uintBitsToFloat(negative ? 0x80000000u : 0u); }
// r (>= 0) with the given sign, by its sign bit (a zero's too).
float with_sign(float r, bool negative) { return uintBitsToFloat(floatBitsToUint(r) | (negative ? 0x80000000u : 0u)); }

// atan2 by quadrant on atan_, with C's special cases at zeros and infinities.
float atan2_(float y, float x) {
  if (isnan(x) || isnan(y)) return x + y;
  const bool left = sign_bit(x);  // x < 0, or x is -0
  float r;
  if (isinf(x) && isinf(y)) r = left ? 2.356194490192345 : 0.7853981633974483;
  else if (y == 0.0 || isinf(x)) r = left ? 3.141592653589793 : 0.0;
  else if (x == 0.0 || isinf(y)) r = 1.5707963267948966;
  else {
    r = atan_(abs(y) / abs(x));  // a quotient that overflows is inf: pi/2
    if (left) r = 3.141592653589793 - r;
  }
  return with_sign(r, sign_bit(y));
}

float hypot_(float x, float y) {
  x = abs(x);
  y = abs(y);
  if (isinf(x) || isinf(y)) return 1.0 / 0.0;  // even with a NaN
  const float big = max(x, y), small = min(x, y);
  if (isnan(x) || isnan(y) || big == 0.0) return x + y;
  const float q = small / big;  // scaled, so that the squares cannot overflow
  return big * sqrt(1.0 + q * q);
}

float nextafter_(float x, float y) {
  if (isnan(x) || isnan(y)) return x + y;
  if (x == y) return y;
  uint bits = floatBitsToUint(x);
  if (x == 0.0) bits = y > 0.0 ? 1u : 0x80000001u;  // the smallest subnormal, of y's sign
  else if ((x < y) == (x > 0.0)) bits += 1u;        // away from zero
  else bits -= 1u;
  return uintBitsToFloat(bits);
}

// C's fmod, exactly: |x| less the largest multiples of |y| by powers of two that fit, each
// subtraction exact (Sterbenz), with x's sign. GLSL's mod(x, y) = x - y floor(x / y) rounds.
float fmod_(float x, float y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == 0.0) return 0.0 / 0.0;
  if (isinf(y)) return x;
  const float ay = abs(y);
  float r = abs(x);
  for (int guard = 0; r >= ay && guard < 300; ++guard) {
    int er, ey;
    frexp(r, er);
    frexp(ay, ey);
    float s = ldexp(ay, er - ey);
    if (s > r) s = ldexp(ay, er - ey - 1);
    r -= s;
  }
  return with_sign(r, sign_bit(x));
}

// Python's remainder (y's sign) and floored division, as the CPU kernels compute them.
float remainder_(float x, float y) {
  const float m = fmod_(x, y);
  if (m != 0.0) return (y < 0.0) != (m < 0.0) ? m + y : m;  // NaN stays NaN
  return signed_zero(sign_bit(y));
}

float floor_divide_(float x, float y) {
  if (y == 0.0 || isinf(x) || isinf(y) || isnan(x) || isnan(y)) return x / y;
  const float m = fmod_(x, y);
  float d = (x - m) / y;
  if (m != 0.0 && (y < 0.0) != (m < 0.0)) d -= 1.0;
  if (d == 0.0) return signed_zero(sign_bit(x) != sign_bit(y));
  const float f = floor(d);
  return d - f > 0.5 ? f + 1.0 : f;
}

float apply(uint op, float x, float y) {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return pow_(x, y);
    case 5: return (x > y || isnan(x)) ? x : y;  // maximum, NaN-propagating
    case 6: return (x < y || isnan(x)) ? x : y;  // minimum
    case 7: {  // gelu_grad: y * d/dx gelu(x)
      return y * (0.5 * (1.0 + erf_(x * SQRT1_2)) + x * 0.3989422804014327 * exp(-0.5 * x * x));
    }
    case 8: {  // gelu_tanh_grad
      float t = tanh_(K_TANH * (x + C_TANH * x * x * x));
      return y * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * K_TANH * (1.0 + 3.0 * C_TANH * x * x));
    }
    case 18: return atan2_(x, y);
    case 19: return hypot_(x, y);
    case 20: return uintBitsToFloat((floatBitsToUint(x) & 0x7fffffffu) | (floatBitsToUint(y) & 0x80000000u));
    case 21: return nextafter_(x, y);
    case 22: return remainder_(x, y);
    case 23: return floor_divide_(x, y);
  }
  return x;
}
