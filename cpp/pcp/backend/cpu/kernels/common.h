// Shared by the per-ISA kernel files. Everything here is `static` or lives in the ISA's own
// namespace, so copies compiled with different instruction sets never get merged by the linker.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/core/half.h"

#ifndef PCP_ISA
#error "PCP_ISA must name the instruction set (baseline, avx2, avx512, neon)"
#endif

namespace pcp::cpu::PCP_ISA {

// Storage type -> compute type: 16-bit floats compute in float32.
template <class T> struct Acc { using type = T; };
template <> struct Acc<Half> { using type = float; };
template <> struct Acc<BFloat16> { using type = float; };
template <class T> using acc_t = typename Acc<T>::type;

template <class T> static inline acc_t<T> ld(T v) { return v; }
static inline float ld(Half v) { return half_to_float(v); }
static inline float ld(BFloat16 v) { return bf16_to_float(v); }

template <class T> static inline T st(acc_t<T> v) { return T(v); }
template <> inline Half st<Half>(float v) { return float_to_half(v); }
template <> inline BFloat16 st<BFloat16>(float v) { return float_to_bf16(v); }

// Math helpers must inline into the loops that call them, or those loops do not vectorize.
#define PCP_INLINE static inline __attribute__((always_inline))

template <class T> constexpr bool is_float_v = std::is_floating_point_v<T>;

PCP_INLINE float fbits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
PCP_INLINE uint32_t ubits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

// exp, log, tanh in float32 written branch-free so loops over them vectorize
// (Cephes polynomials, about 1-2 ulp). float64 uses the C library.
constexpr float kExpHi = 88.72283935546875f, kExpLo = -103.97208404541016f;

// exp(x) for x clamped to [kExpLo, kExpHi] (or NaN): exp(r) by a polynomial times 2^n.
PCP_INLINE float exp_clamped(float xc) {
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * r * r + r + 1.0f;
  int32_t ni = int32_t(n);
  int32_t h = ni >> 1;  // 2^n as two factors so subnormal results and n = 128 work
  float s1 = fbits(uint32_t(h + 127) << 23), s2 = fbits(uint32_t(ni - h + 127) << 23);
  return p * s1 * s2;
}

PCP_INLINE float exp_f(float x) {
  float res = exp_clamped(x > kExpHi ? kExpHi : (x < kExpLo ? kExpLo : x));
  res = x < kExpLo ? 0.0f : res;
  res = x > kExpHi ? INFINITY : res;
  return x != x ? x : res;
}

// exp(x) for x <= 0 or NaN, the shifted values of softmax, log-sum-exp and attention
// (x - max): exp_f without the overflow and NaN selects (a NaN flows through the
// arithmetic), which saves a sixth of its instructions.
PCP_INLINE float exp_nonpos_f(float x) {
  const float res = exp_clamped(x < kExpLo ? kExpLo : x);
  return x < kExpLo ? 0.0f : res;
}

PCP_INLINE float log_f(float x) {
  bool sub = x < 1.17549435e-38f;
  float xs = sub ? x * 8388608.0f : x;
  uint32_t u = ubits(xs);
  int32_t e = int32_t((u >> 23) & 0xff) - 126 - (sub ? 23 : 0);
  float m = fbits((u & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
  bool small = m < 0.707106781186547524f;
  float xm = small ? (m + m - 1.0f) : (m - 1.0f);
  float fe = float(small ? e - 1 : e);
  float z = xm * xm;
  float y = 7.0376836292E-2f;
  y = y * xm - 1.1514610310E-1f;
  y = y * xm + 1.1676998740E-1f;
  y = y * xm - 1.2420140846E-1f;
  y = y * xm + 1.4249322787E-1f;
  y = y * xm - 1.6668057665E-1f;
  y = y * xm + 2.0000714765E-1f;
  y = y * xm - 2.4999993993E-1f;
  y = y * xm + 3.3333331174E-1f;
  y = y * xm * z;
  y += fe * -2.12194440e-4f;
  y += -0.5f * z;
  float r = xm + y + fe * 0.693359375f;
  r = x == 0.0f ? -INFINITY : r;
  r = x < 0.0f ? NAN : r;
  r = x == INFINITY ? INFINITY : r;
  return x != x ? x : r;
}

PCP_INLINE float tanh_f(float x) {
  float ax = x < 0 ? -x : x;
  float z = x * x;
  float p = -5.70498872745E-3f;
  p = p * z + 2.06390887954E-2f;
  p = p * z - 5.37397155531E-2f;
  p = p * z + 1.33314422036E-1f;
  p = p * z - 3.33332819422E-1f;
  float small = std::copysign(x + x * z * p, x);  // -0 stays -0 (x + x z p gives +0 there)
  float big = 1.0f - 2.0f / (exp_f(2.0f * ax) + 1.0f);
  big = x < 0 ? -big : big;
  return ax < 0.625f ? small : big;
}

PCP_INLINE float k_exp(float x) { return exp_f(x); }
PCP_INLINE double k_exp(double x) { return std::exp(x); }
PCP_INLINE float k_exp_nonpos(float x) { return exp_nonpos_f(x); }
PCP_INLINE double k_exp_nonpos(double x) { return std::exp(x); }
PCP_INLINE float k_log(float x) { return log_f(x); }
PCP_INLINE double k_log(double x) { return std::log(x); }
PCP_INLINE float k_tanh(float x) { return tanh_f(x); }
PCP_INLINE double k_tanh(double x) { return std::tanh(x); }

// Switch over a dtype binding the storage type to T.
#define PCP_FLOAT_CASES(T, ...)                                         \
  case DType::Float32: { using T = float; __VA_ARGS__; break; }        \
  case DType::Float64: { using T = double; __VA_ARGS__; break; }       \
  case DType::Float16: { using T = Half; __VA_ARGS__; break; }         \
  case DType::BFloat16: { using T = BFloat16; __VA_ARGS__; break; }
#define PCP_INT_CASES(T, ...)                                           \
  case DType::Int32: { using T = int32_t; __VA_ARGS__; break; }        \
  case DType::Int64: { using T = int64_t; __VA_ARGS__; break; }
#define PCP_BOOL_CASE(T, ...) \
  case DType::Bool: { using T = bool; __VA_ARGS__; break; }

}  // namespace pcp::cpu::PCP_ISA
