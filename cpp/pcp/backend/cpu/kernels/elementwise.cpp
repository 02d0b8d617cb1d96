// Elementwise kernels: unary, binary, where and casts over strided 1-D runs.
#include "pcp/backend/cpu/kernels/common.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace pcp::cpu::PCP_ISA {

// flatten: the per-element function must inline into the loop for it to vectorize.
template <class T, class R = T, class F>
__attribute__((flatten)) static void unary_loop(int64_t n, char* out, int64_t so, const char* a, int64_t sa, F f) {
  R* o = reinterpret_cast<R*>(out);
  const T* x = reinterpret_cast<const T*>(a);
  if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = st<R>(f(ld(x[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = st<R>(f(ld(x[i * sa])));
  }
}

// Integer arithmetic wraps around, as NumPy's: computed on the unsigned type, where overflow is
// defined (signed overflow is undefined behaviour in C++, and the optimiser may exploit it).
template <class C>
PCP_INLINE C wrap_add(C x, C y) { return C(std::make_unsigned_t<C>(x) + std::make_unsigned_t<C>(y)); }
template <class C>
PCP_INLINE C wrap_sub(C x, C y) { return C(std::make_unsigned_t<C>(x) - std::make_unsigned_t<C>(y)); }
template <class C>
PCP_INLINE C wrap_mul(C x, C y) { return C(std::make_unsigned_t<C>(x) * std::make_unsigned_t<C>(y)); }

// gelu_tanh(x) = 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = k (x + c x^3): one exp and one
// division instead of a tanh, and no cancellation in 1 + tanh(u) for negative x.
template <class C>
PCP_INLINE C gelu_tanh(C v) {
  const C k2 = C(2 * 0.7978845608028654), c = C(0.044715);
  return v / (C(1) + k_exp(-k2 * (v + c * v * v * v)));
}

// d/dx gelu_tanh(x) = s + 2 x s (1 - s) k (1 + 3 c x^2), s = sigmoid(2u).
template <class C>
PCP_INLINE C gelu_tanh_grad(C v) {
  const C k2 = C(2 * 0.7978845608028654), c = C(0.044715);
  const C s = C(1) / (C(1) + k_exp(-k2 * (v + c * v * v * v)));
  return s + v * s * (C(1) - s) * k2 * (C(1) + C(3) * c * v * v);
}

// d/dx gelu(x) = Phi(x) + x phi(x).
template <class C>
PCP_INLINE C gelu_grad(C v) {
  return C(0.5) * (C(1) + std::erf(v * C(0.7071067811865476))) + v * C(0.3989422804014327) * k_exp(C(-0.5) * v * v);
}

#if defined(__AVX512F__) || defined(__AVX2__)
// Sigmoid-based functions on contiguous float32, a vector at a time. The autovectorized loops
// above divide by 1 + e; here a reciprocal estimate refined by one Newton step replaces the
// division (within 2 ulp), and e = exp(-|t|) needs no overflow handling, which makes
// gelu_tanh 1.3x faster. With e and q = 1 / (1 + e): sigmoid(t) = q for t >= 0, else e q;
// sigmoid(t) (1 - sigmoid(t)) = e q^2 either way.
#if defined(__AVX512F__)
using VecF = __m512;
using MaskF = __mmask16;
constexpr int64_t kLanes = 16;
PCP_INLINE VecF vset(float v) { return _mm512_set1_ps(v); }
PCP_INLINE VecF vload(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(MaskF((1u << n) - 1), p); }
PCP_INLINE void vstore(float* p, VecF v, int64_t n) { _mm512_mask_storeu_ps(p, MaskF((1u << n) - 1), v); }
PCP_INLINE VecF vadd(VecF a, VecF b) { return _mm512_add_ps(a, b); }
PCP_INLINE VecF vmul(VecF a, VecF b) { return _mm512_mul_ps(a, b); }
PCP_INLINE VecF vfma(VecF a, VecF b, VecF c) { return _mm512_fmadd_ps(a, b, c); }
PCP_INLINE VecF vneg_abs(VecF a) { return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN))); }
PCP_INLINE MaskF vnegative(VecF a) { return _mm512_cmp_ps_mask(a, _mm512_setzero_ps(), _CMP_LT_OQ); }
PCP_INLINE VecF vselect(MaskF m, VecF yes, VecF no) { return _mm512_mask_blend_ps(m, no, yes); }
// 1 / d for d in [1, 2]
PCP_INLINE VecF vrecip12(VecF d) {
  const VecF q = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(q, _mm512_fnmadd_ps(d, q, vset(1.0f)), q);
}
#else
using VecF = __m256;
using MaskF = __m256;
constexpr int64_t kLanes = 8;
PCP_INLINE VecF vset(float v) { return _mm256_set1_ps(v); }
PCP_INLINE __m256i tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
PCP_INLINE VecF vload(const float* p, int64_t n) { return n == kLanes ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tail_mask(n)); }
PCP_INLINE void vstore(float* p, VecF v, int64_t n) {
  if (n == kLanes) _mm256_storeu_ps(p, v);
  else _mm256_maskstore_ps(p, tail_mask(n), v);
}
PCP_INLINE VecF vadd(VecF a, VecF b) { return _mm256_add_ps(a, b); }
PCP_INLINE VecF vmul(VecF a, VecF b) { return _mm256_mul_ps(a, b); }
PCP_INLINE VecF vfma(VecF a, VecF b, VecF c) { return _mm256_fmadd_ps(a, b, c); }
PCP_INLINE VecF vneg_abs(VecF a) { return _mm256_or_ps(a, vset(-0.0f)); }
PCP_INLINE MaskF vnegative(VecF a) { return _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_LT_OQ); }
PCP_INLINE VecF vselect(MaskF m, VecF yes, VecF no) { return _mm256_blendv_ps(no, yes, m); }
// 1 / d for d in [1, 2]
PCP_INLINE VecF vrecip12(VecF d) {
  const VecF q = _mm256_rcp_ps(d);
  return _mm256_fmadd_ps(q, _mm256_fnmadd_ps(d, q, vset(1.0f)), q);
}
#endif

// exp(x) for x <= 0 or NaN: exp_clamped's polynomial, with 2^n applied by vscalefps (AVX-512)
// or as two factors (AVX2), so that subnormal results come out right.
PCP_INLINE VecF vexp_nonpos(VecF x) {
#if defined(__AVX512F__)
  x = _mm512_max_ps(vset(kExpLo), x);  // a NaN x is kept (the second operand wins)
  const VecF n = _mm512_roundscale_ps(vmul(x, vset(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  x = _mm256_max_ps(vset(kExpLo), x);
  const VecF n = _mm256_round_ps(vmul(x, vset(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#endif
  VecF r = vfma(n, vset(-0.693359375f), x);
  r = vfma(n, vset(2.12194440e-4f), r);
  VecF p = vset(1.9875691500E-4f);
  p = vfma(p, r, vset(1.3981999507E-3f));
  p = vfma(p, r, vset(8.3334519073E-3f));
  p = vfma(p, r, vset(4.1665795894E-2f));
  p = vfma(p, r, vset(1.6666665459E-1f));
  p = vfma(p, r, vset(5.0000001201E-1f));
  p = vfma(vmul(p, r), r, vadd(r, vset(1.0f)));
#if defined(__AVX512F__)
  return _mm512_scalef_ps(p, n);
#else
  const __m256i ni = _mm256_cvtps_epi32(n), h = _mm256_srai_epi32(ni, 1), bias = _mm256_set1_epi32(127);
  const VecF s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  const VecF s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, h), bias), 23));
  return vmul(vmul(p, s1), s2);
#endif
}

struct SigmoidParts {
  VecF e, q;      // exp(-|t|) and 1 / (1 + e)
  MaskF negative; // t < 0
  VecF sigmoid() const { return vselect(negative, vmul(e, q), q); }
};
PCP_INLINE SigmoidParts sigmoid_parts(VecF t) {
  SigmoidParts s;
  s.e = vexp_nonpos(vneg_abs(t));
  s.q = vrecip12(vadd(vset(1.0f), s.e));
  s.negative = vnegative(t);
  return s;
}

constexpr float kGeluK2 = float(2 * 0.7978845608028654), kGeluK2C = float(2 * 0.7978845608028654 * 0.044715);

// 2u = k2 (x + c x^3) of gelu_tanh(x) = x sigmoid(2u)
PCP_INLINE VecF gelu_arg(VecF v) { return vmul(v, vfma(vset(kGeluK2C), vmul(v, v), vset(kGeluK2))); }

// out[i] = f(x[i]) for contiguous float32.
template <class F>
PCP_INLINE void unary_vec(int64_t n, float* out, const float* x, F f) {
  for (int64_t i = 0; i < n; i += kLanes) {
    const int64_t m = n - i < kLanes ? n - i : kLanes;
    vstore(out + i, f(vload(x + i, m)), m);
  }
}

static bool unary_f32_vec(UnaryOp op, int64_t n, float* out, const float* x) {
  switch (op) {
    case UnaryOp::GeluTanh:
      unary_vec(n, out, x, [](VecF v) { return vmul(v, sigmoid_parts(gelu_arg(v)).sigmoid()); });
      return true;
    case UnaryOp::Sigmoid:
      unary_vec(n, out, x, [](VecF v) { return sigmoid_parts(v).sigmoid(); });
      return true;
    case UnaryOp::Silu:
      unary_vec(n, out, x, [](VecF v) { return vmul(v, sigmoid_parts(v).sigmoid()); });
      return true;
    default: return false;
  }
}

// out = g * gelu_tanh'(x), gelu_tanh'(x) = s + x s (1 - s) k2 (1 + 3 c x^2), s = sigmoid(2u).
static void gelu_tanh_grad_f32_vec(int64_t n, float* out, const float* x, const float* g) {
  for (int64_t i = 0; i < n; i += kLanes) {
    const int64_t m = n - i < kLanes ? n - i : kLanes;
    const VecF v = vload(x + i, m);
    const SigmoidParts s = sigmoid_parts(gelu_arg(v));
    const VecF du = vfma(vset(3 * kGeluK2C), vmul(v, v), vset(kGeluK2));  // d(2u)/dx
    const VecF d = vfma(vmul(v, du), vmul(s.e, vmul(s.q, s.q)), s.sigmoid());
    vstore(out + i, vmul(vload(g + i, m), d), m);
  }
}
#endif

template <class T>
static void unary_typed(UnaryOp op, int64_t n, char* out, int64_t so, const char* a, int64_t sa) {
  using C = acc_t<T>;
#if defined(__AVX512F__) || defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>)
    if (so == 1 && sa == 1 && unary_f32_vec(op, n, reinterpret_cast<float*>(out), reinterpret_cast<const float*>(a)))
      return;
#endif
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    switch (op) {
      case UnaryOp::Neg: return unary_loop<T>(n, out, so, a, sa, [](C v) { return wrap_sub(C(0), v); });
      case UnaryOp::Abs: return unary_loop<T>(n, out, so, a, sa, [](C v) { return v < 0 ? wrap_sub(C(0), v) : v; });
      case UnaryOp::Square: return unary_loop<T>(n, out, so, a, sa, [](C v) { return wrap_mul(v, v); });
      case UnaryOp::BitwiseNot: return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(~v); });
      default: break;
    }
  }
  switch (op) {
    case UnaryOp::Neg: return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(-v); });
    case UnaryOp::Abs:  // clearing the sign: abs(-0.0) is +0.0 (IEEE 754, the Array API standard)
      if constexpr (is_float_v<C>) return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(std::fabs(v)); });
      else return unary_loop<T>(n, out, so, a, sa, [](C v) { return v < 0 ? C(-v) : v; });
    case UnaryOp::Square: return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(v * v); });
    case UnaryOp::Sign:  // NaN passes through; -0.0 gives +0 (the Array API standard)
      return unary_loop<T>(n, out, so, a, sa, [](C v) { return v > C(0) ? C(1) : v < C(0) ? C(-1) : v == C(0) ? C(0) : v; });
    case UnaryOp::Relu: return unary_loop<T>(n, out, so, a, sa, [](C v) { return v < C(0) ? C(0) : v; });  // NaN stays NaN, as in PyTorch
    default: break;
  }
  if constexpr (is_float_v<C>) {
    switch (op) {
      case UnaryOp::Exp: return unary_loop<T>(n, out, so, a, sa, [](C v) { return k_exp(v); });
      case UnaryOp::Log: return unary_loop<T>(n, out, so, a, sa, [](C v) { return k_log(v); });
      case UnaryOp::Sqrt: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::sqrt(v); });
      case UnaryOp::Rsqrt: return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(1) / std::sqrt(v); });
      case UnaryOp::Sin: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::sin(v); });
      case UnaryOp::Cos: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::cos(v); });
      case UnaryOp::Tanh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return k_tanh(v); });
      case UnaryOp::Erf: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::erf(v); });
      case UnaryOp::Sigmoid:
        return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(1) / (C(1) + k_exp(-v)); });
      case UnaryOp::Silu: return unary_loop<T>(n, out, so, a, sa, [](C v) { return v / (C(1) + k_exp(-v)); });
      case UnaryOp::GeluTanh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return gelu_tanh(v); });
      case UnaryOp::Gelu:
        return unary_loop<T>(n, out, so, a, sa,
                             [](C v) { return C(0.5) * v * (C(1) + std::erf(v * C(0.7071067811865476))); });
      case UnaryOp::Floor: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::floor(v); });
      case UnaryOp::Ceil: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::ceil(v); });
      case UnaryOp::Trunc: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::trunc(v); });
      case UnaryOp::Round: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::nearbyint(v); });  // half to even
      case UnaryOp::Tan: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::tan(v); });
      case UnaryOp::Asin: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::asin(v); });
      case UnaryOp::Acos: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::acos(v); });
      case UnaryOp::Atan: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::atan(v); });
      case UnaryOp::Sinh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::sinh(v); });
      case UnaryOp::Cosh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::cosh(v); });
      case UnaryOp::Asinh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::asinh(v); });
      case UnaryOp::Acosh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::acosh(v); });
      case UnaryOp::Atanh: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::atanh(v); });
      case UnaryOp::Expm1: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::expm1(v); });
      case UnaryOp::Log1p: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::log1p(v); });
      case UnaryOp::Log2: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::log2(v); });
      case UnaryOp::Log10: return unary_loop<T>(n, out, so, a, sa, [](C v) { return std::log10(v); });
      default: break;
    }
  }
  kernel_error("unary kernel", "the op is not defined for this dtype");
}

static void unary(UnaryOp op, DType dt, int64_t n, char* out, int64_t so, const char* a, int64_t sa) {
  if (op == UnaryOp::LogicalNot) return unary_loop<bool>(n, out, so, a, sa, [](bool v) { return !v; });
  switch (dt) {
    PCP_FLOAT_CASES(T, unary_typed<T>(op, n, out, so, a, sa))
    PCP_INT_CASES(T, unary_typed<T>(op, n, out, so, a, sa))
    default: kernel_error("unary kernel", "unsupported dtype ", dtype_name(dt));
  }
}

template <class T, class R, class F>
__attribute__((flatten)) static void binary_loop(int64_t n, char* out, int64_t so, const char* a, int64_t sa, const char* b, int64_t sb,
                        F f) {
  R* o = reinterpret_cast<R*>(out);
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  if (so == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = st<R>(f(ld(x[i]), ld(y[i])));
  } else if (so == 1 && sa == 1 && sb == 0) {
    auto yb = ld(y[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = st<R>(f(ld(x[i]), yb));
  } else if (so == 1 && sa == 0 && sb == 1) {
    auto xa = ld(x[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = st<R>(f(xa, ld(y[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = st<R>(f(ld(x[i * sa]), ld(y[i * sb])));
  }
}

template <class C>
static C int_pow(C base, C e) {
  if (e < 0) return base == 1 ? C(1) : (base == -1 ? ((e & 1) ? C(-1) : C(1)) : C(0));
  C r = 1;
  while (e) {
    if (e & 1) r = wrap_mul(r, base);
    base = wrap_mul(base, base);
    e >>= 1;
  }
  return r;
}

// Python's floored division and remainder on floats (the remainder takes y's sign, and a zero
// remainder y's sign of zero), with the Array API standard's special cases: x / y where y is zero
// or either is infinite.
template <class C>
PCP_INLINE C float_remainder(C x, C y) {
  C m = std::fmod(x, y);
  if (m != C(0)) return (y < C(0)) != (m < C(0)) ? m + y : m;
  return std::copysign(C(0), y);
}
template <class C>
PCP_INLINE C float_floor_divide(C x, C y) {
  if (y == C(0) || std::isinf(x) || std::isinf(y)) return x / y;
  const C m = std::fmod(x, y);
  C d = (x - m) / y;  // exact up to rounding: x - m is a multiple of y
  if (m != C(0) && (y < C(0)) != (m < C(0))) d -= C(1);
  if (d == C(0)) return std::copysign(C(0), x / y);
  const C f = std::floor(d);
  return d - f > C(0.5) ? f + C(1) : f;
}

// Integer floored division and remainder; by zero both give 0, as NumPy (C++ leaves them, and
// INT_MIN / -1, undefined).
template <class C>
PCP_INLINE C int_floor_divide(C x, C y) {
  if (y == 0) return 0;
  if (y == -1) return wrap_sub(C(0), x);
  const C q = x / y;
  return (x % y != 0 && (x < 0) != (y < 0)) ? C(q - 1) : q;
}
template <class C>
PCP_INLINE C int_remainder(C x, C y) {
  if (y == 0 || y == -1) return 0;
  const C m = x % y;
  return (m != 0 && (m < 0) != (y < 0)) ? C(m + y) : m;
}

// Shifts by a count outside [0, width) give what shifting one bit at a time would: 0, or -1 for a
// negative x shifted right (C++ leaves them undefined).
template <class C>
PCP_INLINE C shift_left(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return (y < 0 || y >= C(8 * sizeof(C))) ? C(0) : C(U(x) << y);
}
template <class C>
PCP_INLINE C shift_right(C x, C y) {
  return (y < 0 || y >= C(8 * sizeof(C))) ? C(x < 0 ? -1 : 0) : C(x >> y);
}

// The next value of T after x toward y. float16 and bfloat16 values (x and y arrive as floats) step
// their own 16 bits, which both formats order like sign and magnitude.
template <class T, class C>
PCP_INLINE C next_after(C x, C y) {
  if constexpr (std::is_same_v<T, C>) {
    return std::nextafter(x, y);
  } else {
    if (x != x || y != y) return x + y;
    if (x == y) return y;
    uint16_t bits;
    const T t = st<T>(x);
    std::memcpy(&bits, &t, 2);
    if (x == C(0)) bits = y > C(0) ? 1 : 0x8001;  // the smallest subnormal, of y's sign
    else if ((x < y) == (x > C(0))) ++bits;      // away from zero
    else --bits;
    T r;
    std::memcpy(&r, &bits, 2);
    return ld(r);
  }
}

template <class T>
static void binary_typed(BinaryOp op, int64_t n, char* out, int64_t so, const char* a, int64_t sa, const char* b,
                         int64_t sb) {
  using C = acc_t<T>;
#if defined(__AVX512F__) || defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>)
    if (op == BinaryOp::GeluTanhGrad && so == 1 && sa == 1 && sb == 1)
      return gelu_tanh_grad_f32_vec(n, reinterpret_cast<float*>(out), reinterpret_cast<const float*>(a),
                                    reinterpret_cast<const float*>(b));
#endif
#define PCP_BIN(R, expr) return binary_loop<T, R>(n, out, so, a, sa, b, sb, [](C x, C y) { return expr; })
  switch (op) {
    case BinaryOp::Eq: PCP_BIN(bool, x == y);
    case BinaryOp::Ne: PCP_BIN(bool, x != y);
    case BinaryOp::Lt: PCP_BIN(bool, x < y);
    case BinaryOp::Le: PCP_BIN(bool, x <= y);
    case BinaryOp::Gt: PCP_BIN(bool, x > y);
    case BinaryOp::Ge: PCP_BIN(bool, x >= y);
    default: break;
  }
  if constexpr (std::is_integral_v<C> && !std::is_same_v<T, bool>) {
    switch (op) {
      case BinaryOp::Add: PCP_BIN(T, wrap_add(x, y));
      case BinaryOp::Sub: PCP_BIN(T, wrap_sub(x, y));
      case BinaryOp::Mul: PCP_BIN(T, wrap_mul(x, y));
      case BinaryOp::BitwiseAnd: PCP_BIN(T, C(x & y));
      case BinaryOp::BitwiseOr: PCP_BIN(T, C(x | y));
      case BinaryOp::BitwiseXor: PCP_BIN(T, C(x ^ y));
      case BinaryOp::LeftShift: PCP_BIN(T, shift_left(x, y));
      case BinaryOp::RightShift: PCP_BIN(T, shift_right(x, y));
      case BinaryOp::FloorDivide: PCP_BIN(T, int_floor_divide(x, y));
      case BinaryOp::Remainder: PCP_BIN(T, int_remainder(x, y));
      default: break;
    }
  }
  if constexpr (!std::is_same_v<T, bool>) {
    switch (op) {
      case BinaryOp::Add: PCP_BIN(T, C(x + y));
      case BinaryOp::Sub: PCP_BIN(T, C(x - y));
      case BinaryOp::Mul: PCP_BIN(T, C(x * y));
      // NaN-propagating like NumPy's maximum/minimum.
      case BinaryOp::Maximum: PCP_BIN(T, (x > y || x != x) ? x : y);
      case BinaryOp::Minimum: PCP_BIN(T, (x < y || x != x) ? x : y);
      default: break;
    }
    if constexpr (is_float_v<C>) {
      switch (op) {
        case BinaryOp::Div: PCP_BIN(T, x / y);
        case BinaryOp::Pow: PCP_BIN(T, std::pow(x, y));
        case BinaryOp::GeluGrad: PCP_BIN(T, y * gelu_grad(x));
        case BinaryOp::GeluTanhGrad: PCP_BIN(T, y * gelu_tanh_grad(x));
        case BinaryOp::Atan2: PCP_BIN(T, std::atan2(x, y));
        case BinaryOp::Hypot: PCP_BIN(T, std::hypot(x, y));
        case BinaryOp::Copysign: PCP_BIN(T, std::copysign(x, y));
        case BinaryOp::Nextafter: PCP_BIN(T, (next_after<T, C>(x, y)));
        case BinaryOp::Remainder: PCP_BIN(T, float_remainder(x, y));
        case BinaryOp::FloorDivide: PCP_BIN(T, float_floor_divide(x, y));
        default: break;
      }
    } else {
      if (op == BinaryOp::Pow) PCP_BIN(T, int_pow<C>(x, y));
    }
  } else {
    switch (op) {
      case BinaryOp::Maximum: PCP_BIN(bool, x || y);
      case BinaryOp::Minimum: PCP_BIN(bool, x && y);
      default: break;
    }
  }
#undef PCP_BIN
  kernel_error("binary kernel", "the op is not defined for this dtype");
}

static void binary(BinaryOp op, DType dt, int64_t n, char* out, int64_t so, const char* a, int64_t sa,
                   const char* b, int64_t sb) {
  switch (dt) {
    PCP_FLOAT_CASES(T, binary_typed<T>(op, n, out, so, a, sa, b, sb))
    PCP_INT_CASES(T, binary_typed<T>(op, n, out, so, a, sa, b, sb))
    PCP_BOOL_CASE(T, binary_typed<T>(op, n, out, so, a, sa, b, sb))
  }
}

template <class T>
static void where_typed(int64_t n, char* out, int64_t so, const char* cond, int64_t sc, const char* a, int64_t sa,
                        const char* b, int64_t sb) {
  T* o = reinterpret_cast<T*>(out);
  const bool* c = reinterpret_cast<const bool*>(cond);
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  if (so == 1 && sc == 1 && sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = c[i * sc] ? x[i * sa] : y[i * sb];
  }
}

static void where(DType dt, int64_t n, char* out, int64_t so, const char* cond, int64_t sc, const char* a,
                  int64_t sa, const char* b, int64_t sb) {
  switch (itemsize(dt)) {  // a select moves bits: dispatch on width only
    case 1: return where_typed<uint8_t>(n, out, so, cond, sc, a, sa, b, sb);
    case 2: return where_typed<uint16_t>(n, out, so, cond, sc, a, sa, b, sb);
    case 4: return where_typed<uint32_t>(n, out, so, cond, sc, a, sa, b, sb);
    default: return where_typed<uint64_t>(n, out, so, cond, sc, a, sa, b, sb);
  }
}

template <class To, class C>
static inline To convert(C v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != C(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return st<To>(float(v));
  } else {
    return To(v);
  }
}

template <class From, class To>
static void cast_typed(int64_t n, char* out, int64_t so, const char* a, int64_t sa) {
  To* o = reinterpret_cast<To*>(out);
  const From* x = reinterpret_cast<const From*>(a);
  if (so == 1 && sa == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(ld(x[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * so] = convert<To>(ld(x[i * sa]));
  }
}

template <class From>
static void cast_from(DType to, int64_t n, char* out, int64_t so, const char* a, int64_t sa) {
  switch (to) {
    PCP_FLOAT_CASES(T, cast_typed<From, T>(n, out, so, a, sa))
    PCP_INT_CASES(T, cast_typed<From, T>(n, out, so, a, sa))
    PCP_BOOL_CASE(T, cast_typed<From, T>(n, out, so, a, sa))
  }
}

static void cast(DType from, DType to, int64_t n, char* out, int64_t so, const char* a, int64_t sa) {
  switch (from) {
    PCP_FLOAT_CASES(T, cast_from<T>(to, n, out, so, a, sa))
    PCP_INT_CASES(T, cast_from<T>(to, n, out, so, a, sa))
    PCP_BOOL_CASE(T, cast_from<T>(to, n, out, so, a, sa))
  }
}

void register_elementwise(KernelTable& t) {
  t.unary = unary;
  t.binary = binary;
  t.where = where;
  t.cast = cast;
}

}  // namespace pcp::cpu::PCP_ISA
