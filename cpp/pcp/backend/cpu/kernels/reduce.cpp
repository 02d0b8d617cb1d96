// Reductions of a contiguous (O, R, I) block along R.
#include <limits>

#include "pcp/backend/cpu/kernels/common.h"

namespace pcp::cpu::PCP_ISA {

// Sum of n contiguous values: 32 independent lanes per 4096-element block (vectorizes),
// block sums added in double so long reductions stay accurate.
template <class T>
static acc_t<T> sum_contig(const T* x, int64_t n) {
  using C = acc_t<T>;
  if constexpr (is_float_v<C>) {
    double total = 0;
    for (int64_t b0 = 0; b0 < n; b0 += 4096) {
      int64_t m = n - b0 < 4096 ? n - b0 : 4096;
      const T* p = x + b0;
      C lanes[32] = {};
      int64_t i = 0;
      for (; i + 32 <= m; i += 32)
        for (int j = 0; j < 32; ++j) lanes[j] += ld(p[i + j]);
      C s = 0;
      for (int j = 0; j < 32; ++j) s += lanes[j];
      for (; i < m; ++i) s += ld(p[i]);
      total += double(s);
    }
    return C(total);
  } else {
    C s = 0;
    for (int64_t i = 0; i < n; ++i) s += ld(x[i]);
    return s;
  }
}

template <class C>
static inline C pick(bool is_max, C a, C v) {
  // NaN wins, as in NumPy.
  if (is_max) return (v > a || v != v) ? v : a;
  return (v < a || v != v) ? v : a;
}

template <class T>
static acc_t<T> extreme_contig(bool is_max, const T* x, int64_t n) {
  using C = acc_t<T>;
  C lanes[16];
  for (int j = 0; j < 16; ++j) lanes[j] = ld(x[0]);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) lanes[j] = pick<C>(is_max, lanes[j], ld(x[i + j]));
  C r = lanes[0];
  for (int j = 1; j < 16; ++j) r = pick<C>(is_max, r, lanes[j]);
  for (; i < n; ++i) r = pick<C>(is_max, r, ld(x[i]));
  return r;
}

template <class T>
static void reduce_typed(ReduceOp op, const T* x, int64_t O, int64_t R, int64_t I, char* out_raw) {
  using C = acc_t<T>;
  const bool is_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
    int64_t* out = reinterpret_cast<int64_t*>(out_raw);
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < I; ++i) {
        const T* p = x + o * R * I + i;
        C best = ld(p[0]);
        int64_t bi = 0;
        for (int64_t r = 1; r < R; ++r) {
          C v = ld(p[r * I]);
          if (best != best) break;  // first NaN is the answer
          bool better = is_max ? (v > best || v != v) : (v < best || v != v);
          if (better) { best = v; bi = r; }
        }
        out[o * I + i] = bi;
      }
    return;
  }
  T* out = reinterpret_cast<T*>(out_raw);
  if (I == 1) {
    for (int64_t o = 0; o < O; ++o) {
      const T* p = x + o * R;
      C v = op == ReduceOp::Sum ? sum_contig(p, R) : extreme_contig(is_max, p, R);
      out[o] = st<T>(v);
    }
    return;
  }
  // Reduce along an outer axis: accumulate whole rows of I values (vectorizes along I).
  C* acc = static_cast<C*>(kernel_scratch("reduction", sizeof(C) * size_t(I)));
  for (int64_t o = 0; o < O; ++o) {
    const T* p = x + o * R * I;
    if (op == ReduceOp::Sum) {
      for (int64_t i = 0; i < I; ++i) acc[i] = 0;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t i = 0; i < I; ++i) acc[i] += ld(p[r * I + i]);
    } else {
      for (int64_t i = 0; i < I; ++i) acc[i] = ld(p[i]);
      for (int64_t r = 1; r < R; ++r)
        for (int64_t i = 0; i < I; ++i) acc[i] = pick<C>(is_max, acc[i], ld(p[r * I + i]));
    }
    for (int64_t i = 0; i < I; ++i) out[o * I + i] = st<T>(acc[i]);
  }
  std::free(acc);
}

static void reduce(ReduceOp op, DType dt, const char* x, int64_t O, int64_t R, int64_t I, char* out) {
  switch (dt) {
    PCP_FLOAT_CASES(T, reduce_typed<T>(op, reinterpret_cast<const T*>(x), O, R, I, out))
    PCP_INT_CASES(T, reduce_typed<T>(op, reinterpret_cast<const T*>(x), O, R, I, out))
    PCP_BOOL_CASE(T, {
      if (op == ReduceOp::Sum) kernel_error("reduce kernel", "sum of bool must be computed in int64");
      reduce_typed<uint8_t>(op, reinterpret_cast<const uint8_t*>(x), O, R, I, out);
    })
  }
}

void register_reduce(KernelTable& t) { t.reduce = reduce; }

}  // namespace pcp::cpu::PCP_ISA
