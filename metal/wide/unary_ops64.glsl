// The float64 unary ops of pcp::UnaryOp (unary_f64.comp), on math64.glsl.
const double SQRT1_2_64 = 7.07106781186547524401e-01LF, K_TANH_64 = 7.97884560802865355879e-01LF;
const double C_TANH_64 = 4.4715e-02LF;

double tanh64(double v) {  // expm1(2|v|) / (expm1(2|v|) + 2): no cancellation near 0
  if (isnan(v) || v == 0.0LF) return v;
  if (abs(v) > 22.0LF) return v < 0.0LF ? -1.0LF : 1.0LF;
  const double e = expm1_64(2.0LF * abs(v)), t = e / (e + 2.0LF);
  return v < 0.0LF ? -t : t;
}
double sinh64(double v) {
  const double a = abs(v);
  if (v == 0.0LF || isnan(v)) return v;
  double r;
  if (a < 1.0LF) {
    const double e = expm1_64(a);
    r = 0.5LF * (e + e / (e + 1.0LF));
  } else {
    const double h = exp64(a - LN2_HI - LN2_LO);  // exp(a) / 2, overflowing only as sinh does
    r = h - 0.25LF / h;
  }
  return v < 0.0LF ? -r : r;
}
double cosh64(double v) {
  const double h = exp64(abs(v) - LN2_HI - LN2_LO);
  return h + 0.25LF / h;
}
double zero_signed_as64(double r, double v) { return r == 0.0LF && v < 0.0LF ? -0.0LF : r; }
double sign_of64(double v) { return v > 0.0LF ? 1.0LF : (v < 0.0LF ? -1.0LF : (v == 0.0LF ? 0.0LF : v)); }

double apply64(uint op, double v) {
  switch (op) {
    case 0: return -v;                                          // neg
    case 1: return abs(v);                                      // abs
    case 2: return exp64(v);                                    // exp
    case 3: return log64(v);                                    // log
    case 4: return sqrt(v);                                     // sqrt
    case 5: return 1.0LF / sqrt(v);                             // rsqrt
    case 6: return sin_cos64(v, 0u);                            // sin
    case 7: return sin_cos64(v, 1u);                            // cos
    case 8: return tanh64(v);                                   // tanh
    case 9: return 1.0LF / (1.0LF + exp64(-v));                 // sigmoid
    case 10: return isnan(v) ? v : (v > 0.0LF ? v : 0.0LF);     // relu
    case 11: return 0.5LF * v * erfc64(-v * SQRT1_2_64);      // gelu (1 + erf(v / sqrt 2), exactly where it is small)
    case 12: return 0.5LF * v * (1.0LF + tanh64(K_TANH_64 * (v + C_TANH_64 * v * v * v)));  // gelu_tanh
    case 13: return v / (1.0LF + exp64(-v));                    // silu
    case 14: return v * v;                                      // square
    case 15: return sign_of64(v);                               // sign
    case 16: return erf64(v);                                   // erf
    case 19: return zero_signed_as64(floor(v), v);              // floor
    case 20: return zero_signed_as64(ceil(v), v);               // ceil
    case 21: return zero_signed_as64(trunc(v), v);              // trunc
    case 22: return zero_signed_as64(roundEven(v), v);          // round (half to even)
    case 23: return v == 0.0LF ? v : sin_cos64(v, 0u) / sin_cos64(v, 1u);  // tan
    case 24: return abs(v) > 1.0LF ? nan64() : atan64(v / sqrt((1.0LF - v) * (1.0LF + v)));  // asin
    case 25: return abs(v) > 1.0LF ? nan64() : 2.0LF * atan64(sqrt((1.0LF - v) / (1.0LF + v)));  // acos
    case 26: return atan64(v);                                  // atan
    case 27: return sinh64(v);                                  // sinh
    case 28: return cosh64(v);                                  // cosh
    case 29: {                                                  // asinh
      const double a = abs(v);
      const double r = a < 0.5LF ? log1p_64(a + a * a / (1.0LF + sqrt(1.0LF + a * a)))
                     : a > 1e8LF ? log64(a) + LN2_HI + LN2_LO : log64(a + sqrt(a * a + 1.0LF));
      return v < 0.0LF ? -r : (v == 0.0LF ? v : r);
    }
    case 30: {                                                  // acosh
      if (!(v >= 1.0LF)) return nan64();
      const double t = v - 1.0LF;
      return v > 1e8LF ? log64(v) + LN2_HI + LN2_LO
           : v < 2.0LF ? log1p_64(t + sqrt(t * (v + 1.0LF))) : log64(v + sqrt(v * v - 1.0LF));
    }
    case 31: {                                                  // atanh
      if (abs(v) > 1.0LF) return nan64();
      const double r = 0.5LF * log1p_64(2.0LF * abs(v) / (1.0LF - abs(v)));
      return v < 0.0LF ? -r : (v == 0.0LF ? v : r);
    }
    case 32: return expm1_64(v);                                // expm1
    case 33: return log1p_64(v);                                // log1p
    case 34: return log64(v) * INV_LN2;                         // log2
    case 35: return log64(v) * 4.34294481903251827651e-01LF;    // log10
  }
  return v;
}
