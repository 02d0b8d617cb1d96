// The float64 binary ops of pcp::BinaryOp (binary_f64.comp), on math64.glsl; special cases as
// binary_ops.glsl's (C's and NumPy's).
bool sign_bit64(double v) { return (unpackDouble2x32(v).y & 0x80000000u) != 0u; }
double with_sign64(double r, bool negative) {
  uvec2 w = unpackDouble2x32(r);
  w.y = (w.y & 0x7FFFFFFFu) | (negative ? 0x80000000u : 0u);
  return packDouble2x32(w);
}

// x^y: exact by squaring for integral |y| <= 64, else exp(y log x); C's special cases.
double pow64(double x, double y) {
  if (y == 0.0LF || x == 1.0LF) return 1.0LF;
  if (isnan(x) || isnan(y)) return x + y;
  const bool integral = floor(y) == y;  // every double from 2^53 on is an even integer
  const bool odd_y = integral && abs(y) < 9007199254740992.0LF && mod(y, 2.0LF) != 0.0LF;
  if (x == 0.0LF) {
    const double r = y > 0.0LF ? 0.0LF : inf64();
    return odd_y ? with_sign64(r, sign_bit64(x)) : r;
  }
  if (isinf(x) && x < 0.0LF) {
    const double r = y > 0.0LF ? inf64() : 0.0LF;
    return odd_y ? -r : r;
  }
  if (isinf(y)) return x == -1.0LF ? 1.0LF : (abs(x) < 1.0LF) == (y > 0.0LF) ? 0.0LF : inf64();
  if (x < 0.0LF && !integral) return nan64();
  double r;
  if (integral && abs(y) <= 64.0LF) {
    double base = abs(x);
    int e = int(abs(y));
    r = 1.0LF;
    while (e != 0) {
      if ((e & 1) != 0) r *= base;
      base *= base;
      e >>= 1;
    }
    if (y < 0.0LF) r = 1.0LF / r;
  } else {
    r = exp64(y * log64(abs(x)));
  }
  return x < 0.0LF && odd_y ? -r : r;
}

double atan2_64(double y, double x) {
  if (isnan(x) || isnan(y)) return x + y;
  const bool left = sign_bit64(x);
  double r;
  if (isinf(x) && isinf(y)) r = left ? 2.35619449019234492885e+00LF : PI_4_64;
  else if (y == 0.0LF || isinf(x)) r = left ? 3.14159265358979311600e+00LF : 0.0LF;
  else if (x == 0.0LF || isinf(y)) r = PI_2_64;
  else {
    r = atan64(abs(y) / abs(x));
    if (left) r = 3.14159265358979311600e+00LF - r;
  }
  return with_sign64(r, sign_bit64(y));
}

double hypot64(double x, double y) {
  x = abs(x);
  y = abs(y);
  if (isinf(x) || isinf(y)) return inf64();
  if (isnan(x) || isnan(y)) return x + y;
  const double big = x > y ? x : y, small = x > y ? y : x;
  if (big == 0.0LF) return 0.0LF;
  const double q = small / big;
  return big * sqrt(1.0LF + q * q);
}

double nextafter64(double x, double y) {
  if (isnan(x) || isnan(y)) return x + y;
  if (x == y) return y;
  if (x == 0.0LF) return packDouble2x32(uvec2(1u, y > 0.0LF ? 0u : 0x80000000u));
  uint64_t bits = packUint2x32(unpackDouble2x32(x));
  if ((x < y) == (x > 0.0LF)) bits += 1ul;
  else bits -= 1ul;
  return packDouble2x32(unpackUint2x32(bits));
}

// C's fmod, exactly (binary_ops.glsl's fmod_ on doubles).
double fmod64(double x, double y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == 0.0LF) return nan64();
  if (isinf(y)) return x;
  const double ay = abs(y);
  double r = abs(x);
  for (int guard = 0; r >= ay && guard < 2200; ++guard) {
    int er, ey;
    frexp(r, er);
    frexp(ay, ey);
    double s = ldexp(ay, er - ey);
    if (s > r) s = ldexp(ay, er - ey - 1);
    r -= s;
  }
  return with_sign64(r, sign_bit64(x));
}

double remainder64(double x, double y) {
  const double m = fmod64(x, y);
  if (m != 0.0LF) return (y < 0.0LF) != (m < 0.0LF) ? m + y : m;
  return with_sign64(0.0LF, sign_bit64(y));
}

double floor_divide64(double x, double y) {
  if (y == 0.0LF || isinf(x) || isinf(y) || isnan(x) || isnan(y)) return x / y;
  const double m = fmod64(x, y);
  double d = (x - m) / y;
  if (m != 0.0LF && (y < 0.0LF) != (m < 0.0LF)) d -= 1.0LF;
  if (d == 0.0LF) return with_sign64(0.0LF, sign_bit64(x) != sign_bit64(y));
  const double f = floor(d);
  return d - f > 0.5LF ? f + 1.0LF : f;
}

double apply64(uint op, double x, double y) {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return pow64(x, y);
    case 5: return (x > y || isnan(x)) ? x : y;  // maximum, NaN-propagating
    case 6: return (x < y || isnan(x)) ? x : y;  // minimum
    case 7:  // gelu_grad: y * d/dx gelu(x)
      return y * (0.5LF * erfc64(-x * SQRT1_2_64) +
                  x * 3.98942280401432677940e-01LF * exp64(-0.5LF * x * x));
    case 8: {  // gelu_tanh_grad
      const double t = tanh64(K_TANH_64 * (x + C_TANH_64 * x * x * x));
      return y * (0.5LF * (1.0LF + t) +
                  0.5LF * x * (1.0LF - t * t) * K_TANH_64 * (1.0LF + 3.0LF * C_TANH_64 * x * x));
    }
    case 18: return atan2_64(x, y);
    case 19: return hypot64(x, y);
    case 20: return with_sign64(x, sign_bit64(y));  // copysign
    case 21: return nextafter64(x, y);
    case 22: return remainder64(x, y);
    case 23: return floor_divide64(x, y);
  }
  return x;
}
