// Kernels against straightforward double-precision reference loops, at every ISA compiled in
// and supported by this CPU: elementwise (strided and broadcast inputs) and reductions over each
// axis (test_ops_linalg_nn.cpp: matmul, creation, the fused rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/ops/ops.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

namespace {

constexpr double kPi = 3.14159265358979323846;

// ------------------------------------------------------------------ unary

struct UnaryCase {
  const char* name;
  Tensor (*fn)(const Tensor&);
  double (*ref)(double);
  double lo, hi;
};

const std::vector<UnaryCase>& unary_cases() {
  static const std::vector<UnaryCase> cases = {
      {"neg", [](const Tensor& x) { return neg(x); }, [](double v) { return -v; }, -5, 5},
      {"abs", [](const Tensor& x) { return abs(x); }, [](double v) { return std::fabs(v); }, -5, 5},
      {"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); }, -20, 20},
      {"log", [](const Tensor& x) { return log(x); }, [](double v) { return std::log(v); }, 1e-3, 50},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, 0, 50},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, 1e-2, 50},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double v) { return std::sin(v); }, -10, 10},
      {"cos", [](const Tensor& x) { return cos(x); }, [](double v) { return std::cos(v); }, -10, 10},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, -6, 6},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); }, -15,
       15},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double v) { return v > 0 ? v : 0.0; }, -5, 5},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }, -6, 6},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, true); },
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / kPi) * (v + 0.044715 * v * v * v))); }, -6, 6},
      {"silu", [](const Tensor& x) { return silu(x); }, [](double v) { return v / (1 + std::exp(-v)); }, -15, 15},
      {"square", [](const Tensor& x) { return square(x); }, [](double v) { return v * v; }, -5, 5},
      {"sign", [](const Tensor& x) { return sign(x); }, [](double v) { return double((v > 0) - (v < 0)); }, -3, 3},
      {"erf", [](const Tensor& x) { return erf(x); }, [](double v) { return std::erf(v); }, -3, 3},
  };
  return cases;
}

TEST(Elementwise, UnaryStridedFloat32AndFloat64) {
  TestRng rng(11);
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const UnaryCase& c : unary_cases()) {
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt));
      std::vector<double> raw = rng.vec(13 * 7, c.lo, c.hi);
      raw[0] = 0;
      raw[1] = c.lo;
      raw[2] = c.hi;
      Tensor base = make({13, 7}, raw, dt);
      Tensor x = transpose(base);            // (7, 13), strides (1, 7)
      Tensor xs = slice(base, 0, 12, -100, -3);  // reversed, every third row: negative stride
      std::vector<double> big_raw = rng.vec(40000, c.lo, c.hi);  // more than one thread chunk
      Tensor big = make({40000}, big_raw, dt);
      ASSERT_FALSE(x.is_contiguous());
      auto ref_of = [&](const Tensor& t) {
        std::vector<double> v = values(t);
        for (double& e : v) e = c.ref(e);
        return v;
      };
      const auto rx = ref_of(x), rxs = ref_of(xs), rbig = ref_of(big);
      for_each_isa([&] {
        Tensor y = c.fn(x);
        ASSERT_EQ(y.dtype(), dt);
        ASSERT_EQ(y.shape(), x.shape());
        EXPECT_TRUE(all_close(values(y), rx, rtol_for(dt), atol_for(dt)));
        EXPECT_TRUE(all_close(values(c.fn(xs)), rxs, rtol_for(dt), atol_for(dt)));
        EXPECT_TRUE(all_close(values(c.fn(big)), rbig, rtol_for(dt), atol_for(dt)));
      });
    }
  }
}

TEST(Elementwise, UnarySixteenBitFloatsComputeInFloat32) {
  TestRng rng(12);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    for (const UnaryCase& c : unary_cases()) {
      if (std::string(c.name) == "exp") continue;  // exp(20) overflows float16
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt));
      Tensor x = transpose(make({9, 5}, rng.vec(45, c.lo, c.hi), dt));
      std::vector<double> want = values(x);
      for (double& e : want) e = store_as(c.ref(e), dt);
      for_each_isa([&] {
        Tensor y = c.fn(x);
        ASSERT_EQ(y.dtype(), dt);
        EXPECT_TRUE(all_close(values(y), want, rtol_for(dt), atol_for(dt)));
      });
    }
  }
}

TEST(Elementwise, UnaryOnIntegersPromotesOrKeepsType) {
  Tensor i = make({5}, {-2, -1, 0, 1, 3}, DType::Int32);
  for_each_isa([&] {
    Tensor n = neg(i), a = abs(i), s = square(i), sg = sign(i), r = relu(i);
    EXPECT_EQ(n.dtype(), DType::Int32);
    EXPECT_EQ(values(n), (std::vector<double>{2, 1, 0, -1, -3}));
    EXPECT_EQ(values(a), (std::vector<double>{2, 1, 0, 1, 3}));
    EXPECT_EQ(values(s), (std::vector<double>{4, 1, 0, 1, 9}));
    EXPECT_EQ(values(sg), (std::vector<double>{-1, -1, 0, 1, 1}));
    EXPECT_EQ(values(r), (std::vector<double>{0, 0, 0, 1, 3}));
    Tensor e = exp(i);
    EXPECT_EQ(e.dtype(), DType::Float32) << "float-only ops compute ints in float32";
    EXPECT_TRUE(all_close(values(e), {std::exp(-2.0), std::exp(-1.0), 1, std::exp(1.0), std::exp(3.0)}, 1e-6, 0));
    Tensor ln = logical_not(make({3}, {0, 2, -1}, DType::Int64));
    EXPECT_EQ(ln.dtype(), DType::Bool);
    EXPECT_EQ(values(ln), (std::vector<double>{1, 0, 0}));
  });
}

TEST(Elementwise, SpecialValues) {
  const double inf = INFINITY, nan = NAN;
  Tensor x = make({6}, {0.0, -0.0, inf, -inf, nan, 1e-40}, DType::Float32);
  for_each_isa([&] {
    EXPECT_TRUE(all_close(values(exp(x)), {1, 1, inf, 0, nan, 1}, 1e-6, 0));
    EXPECT_TRUE(all_close(values(log(x)), {-inf, -inf, inf, nan, nan, std::log(double(float(1e-40)))}, 1e-5, 0));
    EXPECT_TRUE(all_close(values(tanh(x)), {0, 0, 1, -1, nan, double(float(1e-40))}, 1e-6, 0));
    EXPECT_TRUE(all_close(values(sigmoid(x)), {0.5, 0.5, 1, 0, nan, 0.5}, 1e-6, 0));
    EXPECT_TRUE(all_close(values(abs(x)), {0, 0, inf, inf, nan, double(float(1e-40))}, 0, 0));
    EXPECT_TRUE(all_close(values(square(x)), {0, 0, inf, inf, nan, 0}, 0, 0));
  });
}

TEST(Elementwise, ReluPropagatesNan) {
  // relu(x) = max(x, 0). The library's maximum/minimum and max/min reductions propagate NaN
  // "as in NumPy" (and torch.relu / jax.nn.relu return NaN for NaN), so relu should too.
  Tensor x = make({4}, {NAN, -1, 2, -NAN}, DType::Float32);
  for_each_isa([&] {
    EXPECT_TRUE(all_close(values(maximum(x, weak_scalar(0.0))), {NAN, 0, 2, NAN}, 0, 0));
    EXPECT_TRUE(all_close(values(relu(x)), {NAN, 0, 2, NAN}, 0, 0));
  });
}

// ------------------------------------------------------------------ binary

struct BinaryCase {
  const char* name;
  Tensor (*fn)(const Tensor&, const Tensor&);
  double (*ref)(double, double);
  bool comparison;
};

const std::vector<BinaryCase>& binary_cases() {
  static const std::vector<BinaryCase> cases = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }, [](double a, double b) { return a + b; }, false},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }, [](double a, double b) { return a - b; }, false},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }, [](double a, double b) { return a * b; }, false},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); },
       [](double a, double b) { return a > b ? a : b; }, false},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); },
       [](double a, double b) { return a < b ? a : b; }, false},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }, [](double a, double b) { return double(a == b); }, true},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }, [](double a, double b) { return double(a != b); }, true},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }, [](double a, double b) { return double(a < b); }, true},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }, [](double a, double b) { return double(a <= b); }, true},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }, [](double a, double b) { return double(a > b); }, true},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }, [](double a, double b) { return double(a >= b); }, true},
  };
  return cases;
}

// a: (4, 1, 5) non-contiguous view; b: (3, 5) stride-2 view; result (4, 3, 5).
struct BroadcastInputs {
  Tensor a, b;
  std::vector<double> av, bv;  // logical values of a (4*5) and b (3*5)
};

BroadcastInputs broadcast_inputs(TestRng& rng, DType dt, double lo, double hi, bool integers) {
  auto draw = [&](size_t n) {
    std::vector<double> v = rng.vec(n, lo, hi);
    if (integers)
      for (double& e : v) e = std::floor(e);
    return v;
  };
  BroadcastInputs in;
  Tensor a_base = make({5, 4}, draw(20), dt);
  in.a = unsqueeze(transpose(a_base), 1);  // (4, 1, 5), strides (1, ., 4)
  Tensor b_base = make({3, 10}, draw(30), dt);
  in.b = slice(b_base, 1, 0, 10, 2);  // (3, 5), strides (10, 2)
  in.av = values(in.a);
  in.bv = values(in.b);
  return in;
}

std::vector<double> broadcast_ref(const BroadcastInputs& in, double (*f)(double, double), DType out_dt) {
  std::vector<double> out;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k) out.push_back(store_as(f(in.av[i * 5 + k], in.bv[j * 5 + k]), out_dt));
  return out;
}

TEST(Elementwise, BinaryBroadcastStrided) {
  TestRng rng(21);
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Float16}) {
    // Small integer values so that comparisons see ties.
    BroadcastInputs in = broadcast_inputs(rng, dt, -3, 4, true);
    ASSERT_FALSE(in.a.is_contiguous());
    ASSERT_FALSE(in.b.is_contiguous());
    for (const BinaryCase& c : binary_cases()) {
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt));
      DType out_dt = c.comparison ? DType::Bool : dt;
      std::vector<double> want = broadcast_ref(in, c.ref, out_dt);
      for_each_isa([&] {
        Tensor y = c.fn(in.a, in.b);
        ASSERT_EQ(y.shape(), (Shape{4, 3, 5}));
        ASSERT_EQ(y.dtype(), out_dt);
        EXPECT_EQ(values(y), want);
        // Swapped operands broadcast the other way round: (3, 5) op (4, 1, 5).
        Tensor z = c.fn(in.b, in.a);
        ASSERT_EQ(z.shape(), (Shape{4, 3, 5}));
        std::vector<double> want_z;
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 5; ++k) want_z.push_back(store_as(c.ref(in.bv[j * 5 + k], in.av[i * 5 + k]), out_dt));
        EXPECT_EQ(values(z), want_z);
      });
    }
  }
}

TEST(Elementwise, LargeBroadcastAcrossThreadChunks) {
  // 40 x 31 x 129 outputs from two non-contiguous broadcast operands, split between three
  // threads at chunk boundaries that fall inside rows.
  set_num_threads(3);
  TestRng rng(25);
  const int64_t P = 40, Q = 31, R = 129;
  std::vector<double> av = rounded(rng.vec(size_t(P * R), -2, 2), DType::Float32);
  std::vector<double> bv = rounded(rng.vec(size_t(Q * R), -2, 2), DType::Float32);
  // a: (P, 1, R) as a transposed view of (R, P) storage; b: (1, Q, R) as every other row of (2Q, R).
  std::vector<double> a_store(size_t(R * P)), b_store(size_t(2 * Q * R), 99.0);
  for (int64_t p = 0; p < P; ++p)
    for (int64_t r = 0; r < R; ++r) a_store[size_t(r * P + p)] = av[size_t(p * R + r)];
  for (int64_t q = 0; q < Q; ++q)
    for (int64_t r = 0; r < R; ++r) b_store[size_t(2 * q * R + r)] = bv[size_t(q * R + r)];
  Tensor a = unsqueeze(transpose(make({R, P}, a_store)), 1);
  Tensor b = unsqueeze(slice(make({2 * Q, R}, b_store), 0, 0, 2 * Q, 2), 0);
  ASSERT_EQ(a.shape(), (Shape{P, 1, R}));
  ASSERT_EQ(b.shape(), (Shape{1, Q, R}));
  std::vector<double> want_mul, want_max;
  for (int64_t p = 0; p < P; ++p)
    for (int64_t q = 0; q < Q; ++q)
      for (int64_t r = 0; r < R; ++r) {
        double x = av[size_t(p * R + r)], y = bv[size_t(q * R + r)];
        want_mul.push_back(double(float(x * y)));
        want_max.push_back(std::max(x, y));
      }
  for_each_isa([&] {
    EXPECT_EQ(values(mul(a, b)), want_mul);
    EXPECT_EQ(values(maximum(b, a)), want_max);
    Tensor bt = broadcast_to(b, {P, Q, R});
    Tensor c = astype(bt, DType::Float64);  // strided cast copy of a broadcast view
    std::vector<double> want_c;
    for (int64_t p = 0; p < P; ++p) want_c.insert(want_c.end(), bv.begin(), bv.end());
    EXPECT_EQ(values(c), want_c);
    EXPECT_TRUE(c.is_contiguous());
  });
  set_num_threads(0);
}

TEST(Elementwise, ZeroSizeTensors) {
  Tensor a = zeros({0, 3}), b = ones({1, 3});
  for_each_isa([&] {
    Tensor c = add(a, b);
    EXPECT_EQ(c.shape(), (Shape{0, 3}));
    EXPECT_EQ(exp(a).shape(), (Shape{0, 3}));
    Tensor s = sum(a, std::vector<int64_t>{0});
    EXPECT_EQ(s.shape(), (Shape{3}));
    EXPECT_EQ(values(s), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(sum(a).item_double(), 0.0);
    Tensor m = matmul(zeros({0, 4}), zeros({4, 5}));
    EXPECT_EQ(m.shape(), (Shape{0, 5}));
    EXPECT_EQ(values(matmul(zeros({2, 0}), zeros({0, 3}))), std::vector<double>(6, 0.0));
  });
}

TEST(Elementwise, DivAndPowFloat) {
  TestRng rng(22);
  for (DType dt : {DType::Float32, DType::Float64}) {
    BroadcastInputs in = broadcast_inputs(rng, dt, 0.25, 3, false);
    auto div_ref = [](double a, double b) { return a / b; };
    auto pow_ref = [](double a, double b) { return std::pow(a, b - 1.5); };
    std::vector<double> want_div = broadcast_ref(in, div_ref, DType::Float64);
    std::vector<double> want_pow = broadcast_ref(in, pow_ref, DType::Float64);
    for_each_isa([&] {
      EXPECT_TRUE(all_close(values(div(in.a, in.b)), want_div, rtol_for(dt), atol_for(dt)));
      Tensor e = sub(in.b, weak_scalar(1.5));
      EXPECT_TRUE(all_close(values(pow(in.a, e)), want_pow, 4 * rtol_for(dt), atol_for(dt)));
      // x ** 2 with a Python scalar exponent.
      std::vector<double> sq = in.av;
      for (double& v : sq) v = store_as(v * v, dt);
      EXPECT_TRUE(all_close(values(pow(in.a, weak_scalar(2.0))), sq, rtol_for(dt), 0));
    });
  }
}

TEST(Elementwise, IntegerDivPowAndNanPropagation) {
  Tensor a = make({6}, {-3, -1, 0, 2, 3, 7}, DType::Int64);
  Tensor b = make({6}, {2, 3, 1, 0, 3, 2}, DType::Int64);
  for_each_isa([&] {
    Tensor q = div(a, b);
    EXPECT_EQ(q.dtype(), DType::Float32);
    EXPECT_TRUE(all_close(values(q), {-1.5, -1.0 / 3, 0, INFINITY, 1, 3.5}, 1e-6, 0));
    Tensor p = pow(a, b);
    EXPECT_EQ(p.dtype(), DType::Int64);
    EXPECT_EQ(values(p), (std::vector<double>{9, -1, 0, 1, 27, 49}));
    Tensor f = make({4}, {NAN, 1, NAN, -2}, DType::Float32);
    Tensor g = make({4}, {1, NAN, NAN, 5}, DType::Float32);
    EXPECT_TRUE(all_close(values(maximum(f, g)), {NAN, NAN, NAN, 5}, 0, 0)) << "NaN propagates (NumPy)";
    EXPECT_TRUE(all_close(values(minimum(f, g)), {NAN, NAN, NAN, -2}, 0, 0));
    EXPECT_EQ(values(eq(f, f)), (std::vector<double>{0, 1, 0, 1})) << "NaN != NaN";
  });
}

TEST(Elementwise, MixedDtypesAndScalars) {
  TestRng rng(23);
  std::vector<double> av = rng.vec(12, -10, 10), bv = rng.vec(4, -10, 10);
  for (double& v : bv) v = std::round(v);
  Tensor a = make({3, 4}, av, DType::Float32);
  Tensor b = make({4}, bv, DType::Int32);
  std::vector<double> want, want_s;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      want.push_back(double(float(double(float(av[i * 4 + j])) * bv[j])));
      want_s.push_back(double(float(double(float(av[i * 4 + j])) + 2.5)));
    }
  for_each_isa([&] {
    Tensor y = mul(a, b);
    EXPECT_EQ(y.dtype(), DType::Float32);
    EXPECT_EQ(values(y), want);
    Tensor s = add(a, weak_scalar(2.5));
    EXPECT_EQ(s.dtype(), DType::Float32);
    EXPECT_EQ(values(s), want_s);
  });
}

TEST(Elementwise, WhereAndClip) {
  TestRng rng(24);
  std::vector<double> xv = rng.vec(20, -3, 3);
  Tensor x = make({4, 5}, xv, DType::Float32);
  Tensor cond = gt(x, weak_scalar(0.0));                // (4, 5)
  Tensor other = make({5}, {10, 20, 30, 40, 50}, DType::Float32);  // broadcast (5,)
  std::vector<double> want_w, want_c;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      double v = double(float(xv[i * 5 + j]));
      want_w.push_back(v > 0 ? v : 10.0 * (j + 1));
      want_c.push_back(std::min(std::max(v, -1.0), 0.5));
    }
  for_each_isa([&] {
    Tensor w = where(cond, x, other);
    EXPECT_EQ(w.shape(), (Shape{4, 5}));
    EXPECT_EQ(values(w), want_w);
    // Transposed operands go through the strided path.
    Tensor wt = where(transpose(cond), transpose(x), weak_scalar(-1.0));
    std::vector<double> want_t;
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 4; ++i) {
        double v = double(float(xv[i * 5 + j]));
        want_t.push_back(v > 0 ? v : -1.0);
      }
    EXPECT_EQ(values(wt), want_t);
    Tensor c = clip(x, scalar(-1.0), scalar(0.5));
    EXPECT_EQ(values(c), want_c);
  });
}

// ------------------------------------------------------------------ reductions

enum class Red { Sum, Mean, Max, Min, ArgMax, ArgMin, Var1, LogSumExp };
const char* red_name(Red r) {
  static const char* n[] = {"sum", "mean", "max", "min", "argmax", "argmin", "var(ddof=1)", "logsumexp"};
  return n[int(r)];
}

// Reference reduction over `axes` of row-major values `v` of shape `s`, in double.
std::vector<double> reduce_ref(const std::vector<double>& v, const Shape& s, const std::vector<int>& axes, Red op) {
  std::map<int64_t, std::vector<double>> buckets;  // output flat index -> values in axis order
  const int nd = int(s.size());
  for (int64_t f = 0; f < int64_t(v.size()); ++f) {
    auto idx = unravel(f, s);
    int64_t o = 0;
    for (int d = 0; d < nd; ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) o = o * s[d] + idx[d];
    buckets[o].push_back(v[size_t(f)]);
  }
  std::vector<double> out;
  for (auto& [o, b] : buckets) {
    double r = 0;
    switch (op) {
      case Red::Sum: for (double e : b) r += e; break;
      case Red::Mean: for (double e : b) r += e; r /= double(b.size()); break;
      case Red::Max: r = *std::max_element(b.begin(), b.end()); break;
      case Red::Min: r = *std::min_element(b.begin(), b.end()); break;
      case Red::ArgMax: r = double(std::max_element(b.begin(), b.end()) - b.begin()); break;
      case Red::ArgMin: r = double(std::min_element(b.begin(), b.end()) - b.begin()); break;
      case Red::Var1: {
        double m = 0;
        for (double e : b) m += e;
        m /= double(b.size());
        for (double e : b) r += (e - m) * (e - m);
        r /= double(b.size() - 1);
        break;
      }
      case Red::LogSumExp: {
        double m = *std::max_element(b.begin(), b.end());
        for (double e : b) r += std::exp(e - m);
        r = m + std::log(r);
        break;
      }
    }
    out.push_back(r);
  }
  return out;
}

Tensor run_red(Red op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  switch (op) {
    case Red::Sum: return sum(x, axes, keepdims);
    case Red::Mean: return mean(x, axes, keepdims);
    case Red::Max: return max(x, axes, keepdims);
    case Red::Min: return min(x, axes, keepdims);
    case Red::ArgMax: return argmax(x, axes.at(0), keepdims);
    case Red::ArgMin: return argmin(x, axes.at(0), keepdims);
    case Red::Var1: return var(x, axes, 1, keepdims);
    case Red::LogSumExp: return logsumexp(x, axes, keepdims);
  }
  return Tensor();
}

Shape reduced(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int d = 0; d < int(s.size()); ++d) {
    bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!r) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

TEST(Reductions, EachAxisOf3DTensor) {
  TestRng rng(31);
  const Shape s{5, 6, 7};
  for (DType dt : {DType::Float32, DType::Float64}) {
    std::vector<double> raw = rounded(rng.vec(210, -2, 2), dt);
    Tensor x = make(s, raw, dt);
    // The same values behind a non-contiguous view: permute a (7, 5, 6) tensor back to (5, 6, 7).
    std::vector<double> perm_raw(210);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 6; ++j)
        for (int k = 0; k < 7; ++k) perm_raw[size_t(k * 30 + i * 6 + j)] = raw[size_t(i * 42 + j * 7 + k)];
    Tensor xp = permute(make({7, 5, 6}, perm_raw, dt), {1, 2, 0});
    ASSERT_FALSE(xp.is_contiguous());
    ASSERT_EQ(values(xp), raw);
    const std::vector<std::vector<int>> axis_sets = {{0}, {1}, {2}, {0, 2}, {0, 1}, {1, 2}, {0, 1, 2}};
    for (Red op : {Red::Sum, Red::Mean, Red::Max, Red::Min, Red::ArgMax, Red::ArgMin, Red::Var1, Red::LogSumExp}) {
      for (const auto& axes : axis_sets) {
        bool arg = op == Red::ArgMax || op == Red::ArgMin;
        if (arg && axes.size() != 1) continue;
        std::vector<int64_t> ax(axes.begin(), axes.end());
        SCOPED_TRACE(std::string(red_name(op)) + " " + dtype_name(dt) + " axes " +
                     shape_str(Shape(ax.begin(), ax.end())));
        std::vector<double> want = reduce_ref(raw, s, axes, op);
        double tol = dt == DType::Float64 ? 1e-12 : 2e-6 * 210;
        for_each_isa([&] {
          for (const Tensor& in : {x, xp}) {
            for (bool keep : {false, true}) {
              Tensor y = run_red(op, in, ax, keep);
              ASSERT_EQ(y.shape(), reduced(s, axes, keep));
              ASSERT_EQ(y.dtype(), arg ? DType::Int64 : dt);
              if (arg) EXPECT_EQ(values(y), want);
              else EXPECT_TRUE(all_close(values(y), want, tol, tol));
            }
          }
        });
      }
    }
    // Negative axis and every axis at once.
    for_each_isa([&] {
      EXPECT_TRUE(all_close(values(sum(x, std::vector<int64_t>{-1})), reduce_ref(raw, s, {2}, Red::Sum), 1e-5, 1e-5));
      Tensor all = sum(x);
      EXPECT_EQ(all.ndim(), 0);
      EXPECT_NEAR(all.item_double(), reduce_ref(raw, s, {0, 1, 2}, Red::Sum)[0], 1e-4);
      EXPECT_EQ(argmax(x).item_int(), int64_t(std::max_element(raw.begin(), raw.end()) - raw.begin()));
      EXPECT_EQ(argmin(xp).item_int(), int64_t(std::min_element(raw.begin(), raw.end()) - raw.begin()));
    });
  }
}

TEST(Reductions, NanPropagatesThroughMaxAndArgmax) {
  // NumPy semantics (stated in the kernels): NaN wins max/min, argmax/argmin return the first NaN.
  const double nan = NAN;
  Tensor x = make({3, 5}, {1, nan, 3, nan, 2,  4, 5, 6, 7, 8,  -1, -2, -3, -4, nan});
  for_each_isa([&] {
    EXPECT_TRUE(all_close(values(max(x, std::vector<int64_t>{1})), {nan, 8, nan}, 0, 0));
    EXPECT_TRUE(all_close(values(min(x, std::vector<int64_t>{1})), {nan, 4, nan}, 0, 0));
    EXPECT_EQ(values(argmax(x, 1)), (std::vector<double>{1, 4, 4}));
    EXPECT_EQ(values(argmin(x, 1)), (std::vector<double>{1, 0, 4}));
    EXPECT_TRUE(all_close(values(max(x, std::vector<int64_t>{0})), {4, nan, 6, nan, nan}, 0, 0));
    EXPECT_EQ(values(argmax(x, 0)), (std::vector<double>{1, 0, 1, 0, 2}));
  });
}

TEST(Reductions, IntegerAndBoolSums) {
  Tensor i = make({2, 3}, {1, -2, 3, 4, 5, -6}, DType::Int32);
  Tensor b = make({2, 3}, {1, 0, 1, 1, 1, 0}, DType::Bool);
  for_each_isa([&] {
    Tensor s0 = sum(i, std::vector<int64_t>{0});
    EXPECT_EQ(s0.dtype(), DType::Int64);
    EXPECT_EQ(values(s0), (std::vector<double>{5, 3, -3}));
    EXPECT_EQ(values(sum(b, std::vector<int64_t>{1})), (std::vector<double>{2, 2}));
    EXPECT_EQ(values(max(i, std::vector<int64_t>{1})), (std::vector<double>{3, 5}));
    EXPECT_EQ(max(i).dtype(), DType::Int32);
    Tensor m = mean(i, std::vector<int64_t>{1});
    EXPECT_EQ(m.dtype(), DType::Float64) << "integers average in float64, as in NumPy";
    EXPECT_TRUE(all_close(values(m), {2.0 / 3, 1}, 1e-6, 0));
  });
}

TEST(Reductions, LongAxisSplitAcrossThreads) {
  // Few outer rows over a long axis take the path that splits the axis between threads
  // and combines partial results; force several threads so it runs on any machine.
  set_num_threads(4);
  TestRng rng(32);
  const int64_t R = 70001;
  std::vector<double> raw = rounded(rng.vec(size_t(2 * R), -1, 1), DType::Float32);
  raw[size_t(50000)] = 5;        // row 0: unique max late in the row
  raw[size_t(R + 10)] = 3;       // row 1: tied max in the first and last chunk -> first wins
  raw[size_t(R + 60000)] = 3;
  raw[size_t(R + 40000)] = -4;   // row 1: unique min in a middle chunk
  Tensor x = make({2, R}, raw, DType::Float32);
  // The same data laid out (R, 2): reduce axis 0 with I = 2.
  std::vector<double> tr(raw.size());
  for (int64_t r = 0; r < R; ++r)
    for (int o = 0; o < 2; ++o) tr[size_t(r * 2 + o)] = raw[size_t(o * R + r)];
  Tensor xt = make({R, 2}, tr, DType::Float32);
  Tensor xi = make({2, R}, raw, DType::Float64);
  const Shape s{2, R};
  auto sum_ref = reduce_ref(raw, s, {1}, Red::Sum);
  double abs_total = 0;
  for (double v : raw) abs_total += std::fabs(v);
  for_each_isa([&] {
    EXPECT_TRUE(all_close(values(sum(x, std::vector<int64_t>{1})), sum_ref, 0, 1e-6 * abs_total));
    EXPECT_TRUE(all_close(values(sum(xt, std::vector<int64_t>{0})), sum_ref, 0, 1e-6 * abs_total));
    EXPECT_TRUE(all_close(values(sum(xi, std::vector<int64_t>{1})), sum_ref, 1e-12, 1e-10));
    EXPECT_EQ(values(max(x, std::vector<int64_t>{1})), reduce_ref(raw, s, {1}, Red::Max));
    EXPECT_EQ(values(min(x, std::vector<int64_t>{1})), reduce_ref(raw, s, {1}, Red::Min));
    EXPECT_EQ(values(max(xt, std::vector<int64_t>{0})), reduce_ref(raw, s, {1}, Red::Max));
    EXPECT_EQ(values(argmax(x, 1)), (std::vector<double>{50000, 10}));
    EXPECT_EQ(values(argmax(xt, 0)), (std::vector<double>{50000, 10}));
    EXPECT_EQ(values(argmin(x, 1)), reduce_ref(raw, s, {1}, Red::ArgMin));
    EXPECT_EQ(values(argmin(xt, 0)), reduce_ref(raw, s, {1}, Red::ArgMin));
    EXPECT_EQ(values(argmin(x, 1))[1], 40000);
  });
  // An integer sum over the split path stays exact.
  const int64_t RI = 150001;
  std::vector<double> iv(static_cast<size_t>(RI));
  double itotal = 0;
  for (int64_t r = 0; r < RI; ++r) itotal += (iv[size_t(r)] = double((r * 7919) % 1000 - 500));
  Tensor ii = make({1, RI}, iv, DType::Int32);
  EXPECT_EQ(values(sum(ii, std::vector<int64_t>{1})), (std::vector<double>{itotal}));
  set_num_threads(0);
}

TEST(Reductions, SixteenBitFloatSums) {
  TestRng rng(33);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> raw = rounded(rng.vec(4 * 50, -1, 1), dt);
    Tensor x = make({4, 50}, raw, dt);
    std::vector<double> want = reduce_ref(raw, {4, 50}, {1}, Red::Sum);
    for (double& w : want) w = store_as(w, dt);
    std::vector<double> want_max = reduce_ref(raw, {4, 50}, {1}, Red::Max);
    for_each_isa([&] {
      Tensor s = sum(x, std::vector<int64_t>{1});
      EXPECT_EQ(s.dtype(), dt);
      EXPECT_TRUE(all_close(values(s), want, rtol_for(dt), 50 * atol_for(dt)));
      EXPECT_EQ(values(max(x, std::vector<int64_t>{1})), want_max);
    });
  }
}

}  // namespace
