// Elementwise kernels: unary, binary, where and casts over strided 1-D runs.
#include "pcp/backend/cpu/kernels/common.h"

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

template <class T>
static void unary_typed(UnaryOp op, int64_t n, char* out, int64_t so, const char* a, int64_t sa) {
  using C = acc_t<T>;
  switch (op) {
    case UnaryOp::Neg: return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(-v); });
    case UnaryOp::Abs: return unary_loop<T>(n, out, so, a, sa, [](C v) { return v < 0 ? C(-v) : v; });
    case UnaryOp::Square: return unary_loop<T>(n, out, so, a, sa, [](C v) { return C(v * v); });
    case UnaryOp::Sign: return unary_loop<T>(n, out, so, a, sa, [](C v) { return v > C(0) ? C(1) : (v < C(0) ? C(-1) : v); });  // NaN and 0 pass through
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
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

template <class T>
static void binary_typed(BinaryOp op, int64_t n, char* out, int64_t so, const char* a, int64_t sa, const char* b,
                         int64_t sb) {
  using C = acc_t<T>;
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
