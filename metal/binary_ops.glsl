// The float32 binary ops of pcp::BinaryOp, shared by binary.comp and binary4.comp.
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
  }
  return x;
}
