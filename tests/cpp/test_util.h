// Helpers shared by the PCP GoogleTest files: building tensors from plain vectors, reading any
// (strided, offset, 16-bit) tensor back into doubles with an independent index walk, a small
// deterministic RNG for test inputs, and a guard that runs a check at every compiled ISA.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/core/error.h"
#include "pcp/core/half.h"
#include "pcp/core/tensor.h"
#include "pcp/ops/ops.h"

namespace pcp_test {

using pcp::DType;
using pcp::Shape;
using pcp::Tensor;

// Row-major element count / strides computed here, not through pcp::numel / contiguous_strides.
inline int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Multi-index of the flat (row-major) position `flat` in shape `s`.
inline std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = int(s.size()) - 1; d >= 0; --d) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return idx;
}

inline void write_elem(void* p, DType dt, double v) {
  switch (dt) {
    case DType::Bool: *static_cast<bool*>(p) = v != 0; break;
    case DType::Int32: *static_cast<int32_t*>(p) = int32_t(v); break;
    case DType::Int64: *static_cast<int64_t*>(p) = int64_t(v); break;
    case DType::Float16: *static_cast<pcp::Half*>(p) = pcp::float_to_half(float(v)); break;
    case DType::BFloat16: *static_cast<pcp::BFloat16*>(p) = pcp::float_to_bf16(float(v)); break;
    case DType::Float32: *static_cast<float*>(p) = float(v); break;
    case DType::Float64: *static_cast<double*>(p) = v; break;
  }
}

inline double read_elem(const void* p, DType dt) {
  switch (dt) {
    case DType::Bool: return *static_cast<const bool*>(p) ? 1.0 : 0.0;
    case DType::Int32: return *static_cast<const int32_t*>(p);
    case DType::Int64: return double(*static_cast<const int64_t*>(p));
    case DType::Float16: return pcp::half_to_float(*static_cast<const pcp::Half*>(p));
    case DType::BFloat16: return pcp::bf16_to_float(*static_cast<const pcp::BFloat16*>(p));
    case DType::Float32: return *static_cast<const float*>(p);
    case DType::Float64: return *static_cast<const double*>(p);
  }
  return 0;
}

inline size_t elem_size(DType dt) {
  switch (dt) {
    case DType::Bool: return 1;
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    default: return 8;
  }
}

// A fresh contiguous tensor holding `v` (row-major) converted to `dt`.
inline Tensor make(const Shape& shape, const std::vector<double>& v, DType dt = DType::Float32) {
  EXPECT_EQ(int64_t(v.size()), count(shape)) << "test bug: value count does not match shape";
  Tensor t = Tensor::empty(shape, dt);
  char* p = static_cast<char*>(t.raw_data());
  for (size_t i = 0; i < v.size(); ++i) write_elem(p + i * elem_size(dt), dt, v[i]);
  return t;
}

// Reads any tensor (arbitrary strides and offset) into a row-major vector of doubles, walking
// storage()->data() + (offset + sum idx*stride) * itemsize itself.
inline std::vector<double> values(const Tensor& t) {
  const int64_t n = count(t.shape());
  std::vector<double> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  if (n <= 0) return out;
  const char* base = static_cast<const char*>(t.storage()->data());
  const size_t isz = elem_size(t.dtype());
  const int nd = int(t.shape().size());
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);  // odometer over the logical index
  for (int64_t f = 0; f < n; ++f) {
    int64_t off = t.offset();
    for (int d = 0; d < nd; ++d) off += idx[d] * t.strides()[d];
    out[size_t(f)] = read_elem(base + off * int64_t(isz), t.dtype());
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Deterministic inputs independent of PCP's own generator (SplitMix64).
struct TestRng {
  uint64_t s;
  explicit TestRng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * double(next() >> 11) * (1.0 / 9007199254740992.0); }
  std::vector<double> vec(size_t n, double lo, double hi) {
    std::vector<double> v(n);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }
};

// Values rounded to what dtype `dt` stores (so references start from the same inputs).
inline std::vector<double> rounded(const std::vector<double>& v, DType dt) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dt) {
      case DType::Float32: out[i] = double(float(v[i])); break;
      case DType::Float16: out[i] = pcp::half_to_float(pcp::float_to_half(float(v[i]))); break;
      case DType::BFloat16: out[i] = pcp::bf16_to_float(pcp::float_to_bf16(float(v[i]))); break;
      default: out[i] = v[i];
    }
  }
  return out;
}

// |got - want| <= atol + rtol * |want| for every element; NaNs must match NaNs, infs must match.
inline ::testing::AssertionResult all_close(const std::vector<double>& got, const std::vector<double>& want,
                                            double rtol, double atol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  int bad = 0;
  std::string msg;
  for (size_t i = 0; i < got.size(); ++i) {
    double g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok) {
      if (bad < 5) msg += "\n  [" + std::to_string(i) + "] got " + std::to_string(g) + " want " + std::to_string(w);
      ++bad;
    }
  }
  if (bad) return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements differ:" << msg;
  return ::testing::AssertionSuccess();
}

inline std::vector<std::string> isa_list() {
  std::vector<std::string> out;
  std::string s = pcp::cpu::available_isas();
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    if (c == std::string::npos) c = s.size();
    if (c > pos) out.push_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

// Restores the best ISA (first of available_isas) when it goes out of scope.
struct IsaRestore {
  ~IsaRestore() {
    auto l = isa_list();
    if (!l.empty()) pcp::cpu::set_isa(l.front().c_str());
  }
};

// Runs fn() once per available ISA with that ISA active, tracing which one failed.
template <class F>
void for_each_isa(F&& fn) {
  IsaRestore restore;
  for (const std::string& isa : isa_list()) {
    SCOPED_TRACE("isa=" + isa);
    pcp::cpu::set_isa(isa.c_str());
    ASSERT_STREQ(pcp::cpu::kernels().isa, isa.c_str());
    fn();
  }
}

// Expects `stmt` to throw exception type E with a message containing every string in `parts`.
#define PCP_EXPECT_THROW_MSG(stmt, E, ...)                                                  \
  do {                                                                                      \
    bool caught_ = false;                                                                   \
    try {                                                                                   \
      stmt;                                                                                 \
    } catch (const E& e_) {                                                                 \
      caught_ = true;                                                                       \
      std::string what_ = e_.what();                                                        \
      for (const char* part_ : {__VA_ARGS__})                                               \
        EXPECT_NE(what_.find(part_), std::string::npos)                                     \
            << "message \"" << what_ << "\" lacks \"" << part_ << "\"";                     \
    } catch (const std::exception& e_) {                                                    \
      ADD_FAILURE() << "expected " #E " but got another exception: " << e_.what();          \
      caught_ = true;                                                                       \
    }                                                                                       \
    if (!caught_) ADD_FAILURE() << "expected " #E " from: " #stmt;                          \
  } while (0)

// Tolerances for results computed in dtype dt (relative, absolute).
inline double rtol_for(pcp::DType dt) {
  switch (dt) {
    case pcp::DType::Float64: return 1e-12;
    case pcp::DType::Float32: return 1e-5;
    case pcp::DType::Float16: return 2e-3;
    case pcp::DType::BFloat16: return 1.6e-2;
    default: return 0;
  }
}
inline double atol_for(pcp::DType dt) {
  switch (dt) {
    case pcp::DType::Float64: return 1e-13;
    case pcp::DType::Float32: return 1e-6;
    case pcp::DType::Float16: return 1e-4;
    case pcp::DType::BFloat16: return 1e-3;
    default: return 0;
  }
}

// Rounds a double result to what dtype dt can hold (the reference for a kernel that computes in
// higher precision and stores into dt).
inline double store_as(double v, pcp::DType dt) {
  switch (dt) {
    case pcp::DType::Float32: return double(float(v));
    case pcp::DType::Float16: return pcp::half_to_float(pcp::float_to_half(float(v)));
    case pcp::DType::BFloat16: return pcp::bf16_to_float(pcp::float_to_bf16(float(v)));
    case pcp::DType::Int32: return double(int32_t(v));
    default: return v;
  }
}

}  // namespace pcp_test
