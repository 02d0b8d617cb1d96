// Matmul over awkward shapes, creation and joins, and the fused softmax, layer_norm and
// cross_entropy rows, against straightforward double-precision reference loops at every ISA
// compiled in and supported by this CPU (test_ops.cpp: elementwise and reductions).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/ops/ops.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

namespace {

// ------------------------------------------------------------------ matmul

// C = A @ B in double for row-major value vectors.
std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b, int64_t M, int64_t K,
                               int64_t N, std::vector<double>* abs_bound = nullptr) {
  std::vector<double> c(size_t(M * N), 0.0);
  if (abs_bound) abs_bound->assign(size_t(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0, sa = 0;
      for (int64_t k = 0; k < K; ++k) {
        s += a[size_t(i * K + k)] * b[size_t(k * N + j)];
        sa += std::fabs(a[size_t(i * K + k)] * b[size_t(k * N + j)]);
      }
      c[size_t(i * N + j)] = s;
      if (abs_bound) (*abs_bound)[size_t(i * N + j)] = sa;
    }
  return c;
}

::testing::AssertionResult close_to_matmul(const Tensor& y, const std::vector<double>& want,
                                           const std::vector<double>& bound, double eps) {
  std::vector<double> got = values(y);
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  int bad = 0;
  std::string msg;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= eps * bound[i] + 1e-30)) {
      if (bad++ < 5) msg += "\n  [" + std::to_string(i) + "] got " + std::to_string(got[i]) + " want " + std::to_string(want[i]);
    }
  if (bad) return ::testing::AssertionFailure() << bad << " of " << got.size() << " differ:" << msg;
  return ::testing::AssertionSuccess();
}

struct MatmulShape {
  int64_t M, K, N;
};

TEST(Matmul, ShapesAgainstNaiveTripleLoop) {
  TestRng rng(41);
  const std::vector<MatmulShape> shapes = {
      {1, 7, 33}, {65, 130, 17}, {7, 1, 5},   {12, 32, 64}, {13, 300, 37},  // K > 256: packed depth blocks
      {1, 1, 1},  {3, 5, 4200},  {33, 17, 1}, {97, 64, 49}, {4, 0, 3},      // K = 0 gives zeros
      {1, 33, 7}, {65, 17, 130}, {7, 33, 1}, {130, 65, 17},                 // the odd sizes, other orders
  };
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const MatmulShape& sh : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " M=" + std::to_string(sh.M) + " K=" + std::to_string(sh.K) +
                   " N=" + std::to_string(sh.N));
      std::vector<double> av = rounded(rng.vec(size_t(sh.M * sh.K), -1, 1), dt);
      std::vector<double> bv = rounded(rng.vec(size_t(sh.K * sh.N), -1, 1), dt);
      std::vector<double> bound;
      std::vector<double> want = matmul_ref(av, bv, sh.M, sh.K, sh.N, &bound);
      Tensor a = make({sh.M, sh.K}, av, dt), b = make({sh.K, sh.N}, bv, dt);
      // Transposed storage for both operands (column-major reads).
      std::vector<double> at(av.size()), bt(bv.size());
      for (int64_t i = 0; i < sh.M; ++i)
        for (int64_t k = 0; k < sh.K; ++k) at[size_t(k * sh.M + i)] = av[size_t(i * sh.K + k)];
      for (int64_t k = 0; k < sh.K; ++k)
        for (int64_t j = 0; j < sh.N; ++j) bt[size_t(j * sh.K + k)] = bv[size_t(k * sh.N + j)];
      Tensor a_t = transpose(make({sh.K, sh.M}, at, dt)), b_t = transpose(make({sh.N, sh.K}, bt, dt));
      // Rigorous bound for a K-term dot product: about K unit roundoffs of sum |a*b|.
      const double eps = double(sh.K + 2) * (dt == DType::Float64 ? 2.3e-16 : 1.2e-7);
      for_each_isa([&] {
        Tensor y = matmul(a, b);
        ASSERT_EQ(y.shape(), (Shape{sh.M, sh.N}));
        ASSERT_EQ(y.dtype(), dt);
        EXPECT_TRUE(close_to_matmul(y, want, bound, eps));
        EXPECT_TRUE(close_to_matmul(matmul(a_t, b_t), want, bound, eps)) << "transposed operands";
        EXPECT_TRUE(close_to_matmul(matmul(a, b_t), want, bound, eps)) << "transposed B";
      });
    }
  }
}

TEST(Matmul, StridedSlicesVectorsAndBatches) {
  TestRng rng(42);
  // A column-strided slice: every other column of a (9, 22) matrix -> (9, 11), times (11, 6).
  std::vector<double> big = rounded(rng.vec(9 * 22, -1, 1), DType::Float32);
  std::vector<double> bv = rounded(rng.vec(11 * 6, -1, 1), DType::Float32);
  std::vector<double> av;
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 22; j += 2) av.push_back(big[size_t(i * 22 + j)]);
  std::vector<double> bound;
  std::vector<double> want = matmul_ref(av, bv, 9, 11, 6, &bound);
  Tensor a = slice(make({9, 22}, big), 1, 0, 22, 2), b = make({11, 6}, bv);

  // 1-D operands.
  std::vector<double> v7 = rounded(rng.vec(7, -1, 1), DType::Float32);
  std::vector<double> m75 = rounded(rng.vec(35, -1, 1), DType::Float32);
  std::vector<double> b1, b2, b3;
  auto vm = matmul_ref(v7, m75, 1, 7, 5, &b1);  // (7) @ (7, 5) -> (5)
  std::vector<double> m57(35);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 7; ++k) m57[size_t(i * 7 + k)] = m75[size_t(k * 5 + i)];
  auto mv = matmul_ref(m57, v7, 5, 7, 1, &b2);  // (5, 7) @ (7) -> (5)
  auto vv = matmul_ref(v7, v7, 1, 7, 1, &b3);   // (7) @ (7) -> ()

  // Batched with broadcast batch dims: (2, 1, 4, 6) @ (3, 6, 5) -> (2, 3, 4, 5).
  std::vector<double> ba = rounded(rng.vec(2 * 4 * 6, -1, 1), DType::Float32);
  std::vector<double> bb = rounded(rng.vec(3 * 6 * 5, -1, 1), DType::Float32);
  std::vector<double> want_b, bound_b;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q) {
      std::vector<double> ap(ba.begin() + p * 24, ba.begin() + (p + 1) * 24);
      std::vector<double> bq(bb.begin() + q * 30, bb.begin() + (q + 1) * 30);
      std::vector<double> bd;
      auto c = matmul_ref(ap, bq, 4, 6, 5, &bd);
      want_b.insert(want_b.end(), c.begin(), c.end());
      bound_b.insert(bound_b.end(), bd.begin(), bd.end());
    }
  // A large batch (each GEMM big enough to use every thread itself): (2, 130, 140) @ (2, 140, 120).
  std::vector<double> la = rounded(rng.vec(2 * 130 * 140, -1, 1), DType::Float32);
  std::vector<double> lb = rounded(rng.vec(2 * 140 * 120, -1, 1), DType::Float32);
  std::vector<double> want_l, bound_l;
  for (int p = 0; p < 2; ++p) {
    std::vector<double> ap(la.begin() + p * 130 * 140, la.begin() + (p + 1) * 130 * 140);
    std::vector<double> bq(lb.begin() + p * 140 * 120, lb.begin() + (p + 1) * 140 * 120);
    std::vector<double> bd;
    auto c = matmul_ref(ap, bq, 130, 140, 120, &bd);
    want_l.insert(want_l.end(), c.begin(), c.end());
    bound_l.insert(bound_l.end(), bd.begin(), bd.end());
  }
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    const double eps = 142 * (dt == DType::Float64 ? 2.3e-16 : 1.2e-7);
    Tensor A = astype(a, dt), B = astype(b, dt);
    Tensor V = make({7}, v7, dt), M75 = make({7, 5}, m75, dt), M57 = make({5, 7}, m57, dt);
    Tensor BA = make({2, 1, 4, 6}, ba, dt), BB = make({3, 6, 5}, bb, dt);
    Tensor LA = make({2, 130, 140}, la, dt), LB = make({2, 140, 120}, lb, dt);
    for_each_isa([&] {
      EXPECT_TRUE(close_to_matmul(matmul(A, B), want, bound, eps));
      Tensor y1 = matmul(V, M75), y2 = matmul(M57, V), y3 = matmul(V, V);
      EXPECT_EQ(y1.shape(), (Shape{5}));
      EXPECT_EQ(y2.shape(), (Shape{5}));
      EXPECT_EQ(y3.shape(), (Shape{}));
      EXPECT_TRUE(close_to_matmul(y1, vm, b1, eps));
      EXPECT_TRUE(close_to_matmul(y2, mv, b2, eps));
      EXPECT_TRUE(close_to_matmul(y3, vv, b3, eps));
      Tensor yb = matmul(BA, BB);
      EXPECT_EQ(yb.shape(), (Shape{2, 3, 4, 5}));
      EXPECT_TRUE(close_to_matmul(yb, want_b, bound_b, eps));
      Tensor yl = matmul(LA, LB);
      EXPECT_EQ(yl.shape(), (Shape{2, 130, 120}));
      EXPECT_TRUE(close_to_matmul(yl, want_l, bound_l, eps));
    });
  }
}

TEST(Matmul, SixteenBitFloatsComputeInFloat32) {
  TestRng rng(43);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> av = rounded(rng.vec(5 * 19, -1, 1), dt), bv = rounded(rng.vec(19 * 7, -1, 1), dt);
    std::vector<double> bound;
    std::vector<double> want = matmul_ref(av, bv, 5, 19, 7, &bound);
    Tensor a = make({5, 19}, av, dt), b = make({19, 7}, bv, dt);
    for_each_isa([&] {
      Tensor y = matmul(a, b);
      EXPECT_EQ(y.dtype(), dt);
      std::vector<double> got = values(y);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], want[i], rtol_for(dt) * std::fabs(want[i]) + 1e-5 * bound[i]) << i;
    });
  }
}

// ------------------------------------------------------------------ creation and copying shape ops

TEST(Creation, RangesIdentityTrianglesAndJoins) {
  for_each_isa([&] {
    EXPECT_EQ(values(arange(2, 11, 3, DType::Int64)), (std::vector<double>{2, 5, 8}));
    EXPECT_TRUE(all_close(values(arange(0, 1, 0.25, DType::Float64)), {0, 0.25, 0.5, 0.75}, 0, 0));
    EXPECT_EQ(values(arange(5, 0, -2, DType::Int32)), (std::vector<double>{5, 3, 1}));
    EXPECT_EQ(arange(3, 3, 1, DType::Float32).shape(), (Shape{0}));
    std::vector<double> want_eye;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) want_eye.push_back(j - i == 1 ? 1 : 0);
    EXPECT_EQ(values(eye(3, 4, 1)), want_eye);
    Tensor m = make({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    std::vector<double> lo, up;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        double v = double(i * 4 + j + 1);
        lo.push_back(j - i <= 0 ? v : 0);
        up.push_back(j - i >= 1 ? v : 0);
      }
    EXPECT_EQ(values(tril(m)), lo);
    EXPECT_EQ(values(triu(m, 1)), up);
    Tensor c = concatenate({m, make({1, 4}, {-1, -2, -3, -4})}, 0);
    EXPECT_EQ(c.shape(), (Shape{4, 4}));
    EXPECT_EQ(values(c), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -2, -3, -4}));
    Tensor c1 = concatenate({transpose(m), make({4, 1}, {0, 0, 0, 0}, DType::Int32)}, 1);  // promotes
    EXPECT_EQ(c1.dtype(), DType::Float32);
    EXPECT_EQ(values(c1), (std::vector<double>{1, 5, 9, 0, 2, 6, 10, 0, 3, 7, 11, 0, 4, 8, 12, 0}));
    Tensor st = stack({slice(m, 1, 0, 2), slice(m, 1, 2, 4)}, 2);  // (3, 2, 2)
    EXPECT_EQ(st.shape(), (Shape{3, 2, 2}));
    EXPECT_EQ(values(st), (std::vector<double>{1, 3, 2, 4, 5, 7, 6, 8, 9, 11, 10, 12}));
    std::vector<Tensor> parts = split(m, 2, 1);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(values(parts[1]), (std::vector<double>{3, 4, 7, 8, 11, 12}));
    EXPECT_EQ(parts[1].storage().get(), m.storage().get()) << "split pieces are views";
    std::vector<Tensor> at = split_at(m, {1, 3}, 1);
    ASSERT_EQ(at.size(), 3u);
    EXPECT_EQ(values(at[1]), (std::vector<double>{2, 3, 6, 7, 10, 11}));
    EXPECT_EQ(values(one_hot(make({3}, {2, 0, 1}, DType::Int64), 3)),
              (std::vector<double>{0, 0, 1, 1, 0, 0, 0, 1, 0}));
    EXPECT_EQ(values(full({2}, 2.5, DType::Float16)), (std::vector<double>{2.5, 2.5}));
    EXPECT_EQ(values(full_int({2}, (int64_t(1) << 40) + 3)), (std::vector<double>{double((int64_t(1) << 40) + 3),
                                                                                  double((int64_t(1) << 40) + 3)}));
  });
}

// ------------------------------------------------------------------ softmax, layer_norm, cross_entropy

TEST(NN, SoftmaxAndLogSoftmaxRows) {
  TestRng rng(51);
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    const int rows = 6, n = 37;
    std::vector<double> xv = rounded(rng.vec(rows * n, -8, 8), dt);
    xv[n + 3] = -INFINITY;  // a masked entry
    for (int j = 0; j < n; ++j) xv[size_t(5 * n + j)] = j == 7 ? 2.0 : -INFINITY;  // one live entry
    std::vector<double> sm(xv.size()), lsm(xv.size());
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int j = 0; j < n; ++j) m = std::max(m, xv[size_t(r * n + j)]);
      for (int j = 0; j < n; ++j) s += std::exp(xv[size_t(r * n + j)] - m);
      for (int j = 0; j < n; ++j) {
        sm[size_t(r * n + j)] = std::exp(xv[size_t(r * n + j)] - m) / s;
        lsm[size_t(r * n + j)] = xv[size_t(r * n + j)] - m - std::log(s);
      }
    }
    Tensor x = make({rows, n}, xv, dt);
    // Along axis 0 of the transposed data: same rows, other layout.
    Tensor xt = transpose(make({rows, n}, xv, dt));  // (n, rows)
    std::vector<double> sm_t(xv.size());
    for (int j = 0; j < n; ++j)
      for (int r = 0; r < rows; ++r) sm_t[size_t(j * rows + r)] = sm[size_t(r * n + j)];
    for_each_isa([&] {
      Tensor y = softmax(x);
      EXPECT_TRUE(all_close(values(y), sm, 4 * rtol_for(dt), atol_for(dt)));
      EXPECT_TRUE(all_close(values(log_softmax(x, -1)), lsm, 4 * rtol_for(dt), 4 * atol_for(dt)));
      Tensor yt = softmax(xt, 0);
      EXPECT_EQ(yt.shape(), (Shape{n, rows}));
      EXPECT_TRUE(all_close(values(yt), sm_t, 4 * rtol_for(dt), atol_for(dt)));
      // Rows sum to one.
      std::vector<double> ones(rows, 1.0);
      EXPECT_TRUE(all_close(values(sum(y, std::vector<int64_t>{1})), ones, 1e-5, 0));
    });
  }
}

TEST(NN, LayerNormRows) {
  TestRng rng(52);
  const int rows = 5, n = 33;
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> xv = rounded(rng.vec(rows * n, -3, 5), dt);
    std::vector<double> wv = rounded(rng.vec(n, 0.5, 1.5), dt), bv = rounded(rng.vec(n, -1, 1), dt);
    const double eps = 1e-5;
    std::vector<double> want(xv.size()), want_plain(xv.size());
    for (int r = 0; r < rows; ++r) {
      double m = 0, v = 0;
      for (int j = 0; j < n; ++j) m += xv[size_t(r * n + j)];
      m /= n;
      for (int j = 0; j < n; ++j) v += (xv[size_t(r * n + j)] - m) * (xv[size_t(r * n + j)] - m);
      v /= n;
      for (int j = 0; j < n; ++j) {
        double xh = (xv[size_t(r * n + j)] - m) / std::sqrt(v + eps);
        want_plain[size_t(r * n + j)] = xh;
        want[size_t(r * n + j)] = xh * wv[size_t(j)] + bv[size_t(j)];
      }
    }
    Tensor x = make({rows, n}, xv, dt), w = make({n}, wv, dt), b = make({n}, bv, dt);
    Tensor x3 = reshape(x, {1, rows, n});
    for_each_isa([&] {
      EXPECT_TRUE(all_close(values(layer_norm(x, w, b, eps)), want, 10 * rtol_for(dt), 10 * atol_for(dt)));
      EXPECT_TRUE(all_close(values(layer_norm(x, Tensor(), Tensor(), eps)), want_plain, 10 * rtol_for(dt),
                            10 * atol_for(dt)));
      Tensor y3 = layer_norm(x3, w, b, eps);
      EXPECT_EQ(y3.shape(), (Shape{1, rows, n}));
      EXPECT_TRUE(all_close(values(y3), want, 10 * rtol_for(dt), 10 * atol_for(dt)));
    });
  }
}

TEST(NN, CrossEntropyRows) {
  TestRng rng(53);
  const int rows = 8, C = 11;
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    std::vector<double> lv = rounded(rng.vec(rows * C, -6, 6), dt);
    std::vector<double> tv = {3, 0, 10, -100, 5, 5, 1, -100};  // two ignored rows
    std::vector<double> want(rows);
    double total = 0;
    int valid = 0;
    for (int r = 0; r < rows; ++r) {
      if (tv[size_t(r)] == -100) { want[size_t(r)] = 0; continue; }
      double m = -INFINITY, s = 0;
      for (int j = 0; j < C; ++j) m = std::max(m, lv[size_t(r * C + j)]);
      for (int j = 0; j < C; ++j) s += std::exp(lv[size_t(r * C + j)] - m);
      want[size_t(r)] = m + std::log(s) - lv[size_t(r * C + int(tv[size_t(r)]))];
      total += want[size_t(r)];
      ++valid;
    }
    Tensor logits = make({rows, C}, lv, dt), targets = make({rows}, tv, DType::Int64);
    Tensor targets32 = make({rows}, tv, DType::Int32);
    for_each_isa([&] {
      Tensor none = cross_entropy(logits, targets, -100, Reduction::None);
      EXPECT_EQ(none.shape(), (Shape{rows}));
      EXPECT_EQ(none.dtype(), dt);
      EXPECT_TRUE(all_close(values(none), want, 10 * rtol_for(dt), 10 * atol_for(dt)));
      EXPECT_NEAR(cross_entropy(logits, targets, -100, Reduction::Sum).item_double(), total, 1e-4);
      EXPECT_NEAR(cross_entropy(logits, targets32, -100, Reduction::Mean).item_double(), total / valid, 1e-5);
      // With (2, 4, C) logits the rows are the same.
      Tensor l3 = reshape(logits, {2, 4, C}), t3 = reshape(targets, {2, 4});
      EXPECT_TRUE(all_close(values(cross_entropy(l3, t3, -100, Reduction::None)), want, 10 * rtol_for(dt),
                            10 * atol_for(dt)));
    });
  }
}

}  // namespace
