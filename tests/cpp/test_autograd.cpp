// Reverse-mode autodiff: gradients against finite differences in float64, accumulation,
// grad() for unrelated inputs, grad-mode guards, and higher-order gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "pcp/autograd/engine.h"
#include "pcp/core/grad_mode.h"
#include "pcp/ops/ops.h"
#include "test_util.h"

using namespace pcp;
using namespace pcp_test;

namespace {

Tensor f64(const Shape& s, const std::vector<double>& v) { return make(s, v, DType::Float64); }

Tensor leaf(const Shape& s, const std::vector<double>& v) {
  Tensor t = f64(s, v);
  t.set_requires_grad(true);
  return t;
}

// y = sum_ij tanh(sum_k x_ik w_kj + b_j), written out in double.
double ref_forward(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b, int M,
                   int K, int N) {
  double y = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double z = b[size_t(j)];
      for (int k = 0; k < K; ++k) z += x[size_t(i * K + k)] * w[size_t(k * N + j)];
      y += std::tanh(z);
    }
  return y;
}

// Central differences of ref_forward with respect to every element of one argument.
std::vector<double> ref_fd(std::vector<double> x, std::vector<double> w, std::vector<double> b, int M, int K, int N,
                           int which) {
  std::vector<double>& p = which == 0 ? x : which == 1 ? w : b;
  std::vector<double> g(p.size());
  const double h = 1e-6;
  for (size_t i = 0; i < p.size(); ++i) {
    double v = p[i];
    p[i] = v + h;
    double fp = ref_forward(x, w, b, M, K, N);
    p[i] = v - h;
    double fm = ref_forward(x, w, b, M, K, N);
    p[i] = v;
    g[i] = (fp - fm) / (2 * h);
  }
  return g;
}

}  // namespace

TEST(Autograd, TanhAffineGraphMatchesFiniteDifferences) {
  const int M = 4, K = 3, N = 5;
  TestRng rng(61);
  std::vector<double> xv = rng.vec(M * K, -1, 1), wv = rng.vec(K * N, -1, 1), bv = rng.vec(N, -0.5, 0.5);
  Tensor x = leaf({M, K}, xv), w = leaf({K, N}, wv), b = leaf({N}, bv);
  Tensor y = sum(tanh(add(matmul(x, w), b)));
  ASSERT_TRUE(y.requires_grad());
  ASSERT_FALSE(y.is_leaf());
  EXPECT_EQ(y.ndim(), 0);
  EXPECT_NEAR(y.item_double(), ref_forward(xv, wv, bv, M, K, N), 1e-12);

  std::vector<Tensor> g = grad(y, {x, w, b}, Tensor(), false, /*retain_graph=*/true);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_FALSE(x.grad().defined()) << "grad() does not touch .grad";
  const std::vector<double>* inputs[] = {&xv, &wv, &bv};
  for (int which = 0; which < 3; ++which) {
    SCOPED_TRACE(which);
    ASSERT_EQ(g[which].dtype(), DType::Float64);
    std::vector<double> fd = ref_fd(xv, wv, bv, M, K, N, which);
    EXPECT_EQ(count(g[which].shape()), int64_t(inputs[which]->size()));
    EXPECT_TRUE(all_close(values(g[which]), fd, 1e-6, 1e-8));
  }
  EXPECT_EQ(g[2].shape(), (Shape{N})) << "b's gradient is summed back over the broadcast rows";

  // backward() writes the same gradients into .grad.
  backward(y);
  EXPECT_TRUE(all_close(values(x.grad()), values(g[0]), 1e-14, 0));
  EXPECT_TRUE(all_close(values(w.grad()), values(g[1]), 1e-14, 0));
  EXPECT_TRUE(all_close(values(b.grad()), values(g[2]), 1e-14, 0));
  // Analytic form as a second reference: dz = 1 - tanh(z)^2, dW = x^T dz, db = sum_i dz.
  std::vector<double> dw(size_t(K * N), 0.0), db(size_t(N), 0.0), dx(size_t(M * K), 0.0);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double z = bv[size_t(j)];
      for (int k = 0; k < K; ++k) z += xv[size_t(i * K + k)] * wv[size_t(k * N + j)];
      double dz = 1 - std::tanh(z) * std::tanh(z);
      db[size_t(j)] += dz;
      for (int k = 0; k < K; ++k) {
        dw[size_t(k * N + j)] += xv[size_t(i * K + k)] * dz;
        dx[size_t(i * K + k)] += wv[size_t(k * N + j)] * dz;
      }
    }
  EXPECT_TRUE(all_close(values(x.grad()), dx, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(values(w.grad()), dw, 1e-12, 1e-14));
  EXPECT_TRUE(all_close(values(b.grad()), db, 1e-12, 1e-14));
}

TEST(Autograd, Float32GraphCastsGradientsToInputDtype) {
  // Same graph in float32 with a float64 bias: each gradient comes back in its input's dtype.
  Tensor x = make({2, 3}, {0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, DType::Float32);
  Tensor w = make({3, 2}, {0.5, -1, 0.25, 0.75, -0.5, 1}, DType::Float32);
  Tensor b = make({2}, {0.1, -0.1}, DType::Float64);
  for (Tensor* t : {&x, &w, &b}) t->set_requires_grad(true);
  Tensor y = sum(tanh(add(matmul(x, w), b)));
  EXPECT_EQ(y.dtype(), DType::Float64);
  backward(y);
  EXPECT_EQ(x.grad().dtype(), DType::Float32);
  EXPECT_EQ(w.grad().dtype(), DType::Float32);
  EXPECT_EQ(b.grad().dtype(), DType::Float64);
  std::vector<double> xv = rounded({0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, DType::Float32);
  std::vector<double> wv = rounded({0.5, -1, 0.25, 0.75, -0.5, 1}, DType::Float32);
  EXPECT_TRUE(all_close(values(x.grad()), ref_fd(xv, wv, {0.1, -0.1}, 2, 3, 2, 0), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(values(w.grad()), ref_fd(xv, wv, {0.1, -0.1}, 2, 3, 2, 1), 1e-5, 1e-6));
  EXPECT_TRUE(all_close(values(b.grad()), ref_fd(xv, wv, {0.1, -0.1}, 2, 3, 2, 2), 1e-5, 1e-6));
}

TEST(Autograd, GradientsAccumulateWhenAnInputIsUsedTwice) {
  const std::vector<double> xv = {0.5, -1.5, 2.0, 0.25, -0.75, 1.0};
  {
    Tensor x = leaf({6}, xv);
    backward(sum(mul(x, x)));  // d/dx sum x^2 = 2x
    std::vector<double> want;
    for (double v : xv) want.push_back(2 * v);
    EXPECT_TRUE(all_close(values(x.grad()), want, 1e-15, 0));
  }
  {
    Tensor x = leaf({6}, xv);
    backward(add(sum(square(x)), sum(sin(x))));  // two branches: 2x + cos x
    std::vector<double> want;
    for (double v : xv) want.push_back(2 * v + std::cos(v));
    EXPECT_TRUE(all_close(values(x.grad()), want, 1e-14, 0));
  }
  {
    // Used twice through different views: sum_ij x_ij x_ji -> d/dx_ij = 2 x_ji.
    Tensor x = leaf({2, 3}, xv);
    Tensor sq = reshape(x, {3, 2});  // not the transpose: y = sum_k x.flat[k] * x.T.flat[k]
    Tensor y = sum(mul(transpose(sq), x));
    // Reference: y = sum_{i<2, j<3} X[i][j] * S[j][i] with S = x viewed as (3, 2).
    std::vector<double> want(6, 0.0);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        int xi = i * 3 + j, si = j * 2 + i;  // flat positions of X[i][j] and S[j][i]
        want[size_t(xi)] += xv[size_t(si)];
        want[size_t(si)] += xv[size_t(xi)];
      }
    backward(y);
    EXPECT_TRUE(all_close(values(x.grad()), want, 1e-15, 0));
  }
  {
    // An intermediate used twice: h = tanh(x), y = sum(h*h + h) -> (2h + 1)(1 - h^2).
    Tensor x = leaf({6}, xv);
    Tensor h = tanh(x);
    backward(sum(add(mul(h, h), h)));
    std::vector<double> want;
    for (double v : xv) {
      double t = std::tanh(v);
      want.push_back((2 * t + 1) * (1 - t * t));
    }
    EXPECT_TRUE(all_close(values(x.grad()), want, 1e-14, 1e-15));
  }
  {
    // backward twice adds into .grad, the first retaining the graph; a third pass finds it freed.
    Tensor x = leaf({6}, xv);
    Tensor y = sum(mul(x, weak_scalar(3.0)));
    backward(y, Tensor(), false, /*retain_graph=*/true);
    backward(y);
    EXPECT_EQ(values(x.grad()), std::vector<double>(6, 6.0));
    PCP_EXPECT_THROW_MSG(backward(y), RuntimeError, "backward", "sum", "retain_graph=True");
  }
}

TEST(Autograd, GradOfUnrelatedInputIsZeros) {
  Tensor x = leaf({3}, {1, 2, 3});
  Tensor z = leaf({2, 4}, std::vector<double>(8, 5.0));
  Tensor z32 = make({7}, std::vector<double>(7, 1.0), DType::Float32);
  z32.set_requires_grad(true);
  Tensor y = sum(mul(x, x));
  std::vector<Tensor> g = grad(y, {x, z, z32});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(values(g[0]), (std::vector<double>{2, 4, 6}));
  ASSERT_TRUE(g[1].defined());
  EXPECT_EQ(g[1].shape(), (Shape{2, 4}));
  EXPECT_EQ(g[1].dtype(), DType::Float64);
  EXPECT_EQ(values(g[1]), std::vector<double>(8, 0.0));
  EXPECT_EQ(g[2].dtype(), DType::Float32);
  EXPECT_EQ(values(g[2]), std::vector<double>(7, 0.0));
  EXPECT_FALSE(z.grad().defined());
}

TEST(Autograd, GradModeGuardsDisableRecording) {
  Tensor x = leaf({3}, {1, 2, 3});
  ASSERT_TRUE(grad_enabled());
  {
    NoGradGuard ng;
    EXPECT_FALSE(grad_enabled());
    Tensor y = mul(x, x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    EXPECT_EQ(values(y), (std::vector<double>{1, 4, 9})) << "values are still computed";
    PCP_EXPECT_THROW_MSG(backward(sum(y)), ValueError, "backward");
    // Grad mode is per thread: another thread still records.
    bool other = false, other_recorded = false;
    std::thread t([&] {
      other = grad_enabled();
      other_recorded = mul(x, x).requires_grad();
    });
    t.join();
    EXPECT_TRUE(other);
    EXPECT_TRUE(other_recorded);
  }
  EXPECT_TRUE(grad_enabled()) << "the guard restores the previous mode";
  {
    GradModeGuard off(false);
    EXPECT_FALSE(grad_enabled());
    {
      GradModeGuard on(true);
      Tensor y = mul(x, x);
      EXPECT_TRUE(y.requires_grad());
      EXPECT_NE(y.grad_fn(), nullptr);
    }
    EXPECT_FALSE(grad_enabled());
    EXPECT_FALSE(exp(x).requires_grad());
  }
  EXPECT_TRUE(grad_enabled());
  // detach() cuts the graph: y = sum(stop(x) * x) -> dy/dx = x.
  Tensor y = sum(mul(x.detach(), x));
  backward(y);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 2, 3}));
}

TEST(Autograd, MaxGradientSplitsTiesEvenly) {
  Tensor x = leaf({2, 4}, {1, 3, 3, 2, 5, -1, 0, 4});
  backward(sum(max(x, std::vector<int64_t>{1})));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0.5, 0.5, 0, 1, 0, 0, 0}));
  Tensor y = leaf({3}, {2, 2, 1});
  Tensor z = leaf({3}, {2, 1, 1});
  backward(sum(maximum(y, z)));  // ties split between the operands
  EXPECT_EQ(values(y.grad()), (std::vector<double>{0.5, 1, 0.5}));
  EXPECT_EQ(values(z.grad()), (std::vector<double>{0.5, 0, 0.5}));
}

TEST(Autograd, RetainGradAndHigherOrder) {
  Tensor x = leaf({4}, {0.5, -1, 2, 1.5});
  Tensor h = mul(x, weak_scalar(2.0));
  h.retain_grad();
  Tensor y = sum(square(h));  // dy/dh = 2h = 4x
  backward(y);
  ASSERT_TRUE(h.grad().defined());
  EXPECT_EQ(values(h.grad()), (std::vector<double>{2, -4, 8, 6}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, -8, 16, 12}));  // 8x

  // d/dx sum x^3 = 3x^2; d/dx sum(3x^2) = 6x.
  Tensor x2 = leaf({4}, {0.5, -1, 2, 1.5});
  Tensor c = sum(pow(x2, weak_scalar(3.0)));
  std::vector<Tensor> g1 = grad(c, {x2}, Tensor(), /*create_graph=*/true);
  ASSERT_TRUE(g1[0].requires_grad()) << "create_graph records the backward pass";
  EXPECT_TRUE(all_close(values(g1[0]), {0.75, 3, 12, 6.75}, 1e-14, 0));
  std::vector<Tensor> g2 = grad(sum(g1[0]), {x2});
  EXPECT_TRUE(all_close(values(g2[0]), {3, -6, 12, 9}, 1e-14, 0));
}

// ------------------------------------------------------------------ finite-difference sweep over ops

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Compares grad() of scalar f at float64 `inputs` with central differences of f itself.
void check_fd(const char* what, const Fn& f, std::vector<Tensor> inputs, double tol = 1e-6) {
  SCOPED_TRACE(what);
  for (Tensor& t : inputs) t.set_requires_grad(true);
  Tensor y = f(inputs);
  ASSERT_EQ(y.numel(), 1);
  std::vector<Tensor> g = grad(y, inputs);
  NoGradGuard ng;
  const double h = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(inputs[i].is_contiguous());
    double* p = inputs[i].data<double>();
    std::vector<double> fd(size_t(inputs[i].numel()));
    for (int64_t j = 0; j < inputs[i].numel(); ++j) {
      double v = p[j];
      p[j] = v + h;
      double fp = f(inputs).item_double();
      p[j] = v - h;
      double fm = f(inputs).item_double();
      p[j] = v;
      fd[size_t(j)] = (fp - fm) / (2 * h);
    }
    EXPECT_EQ(g[i].shape(), inputs[i].shape()) << "input " << i;
    EXPECT_TRUE(all_close(values(g[i]), fd, tol, tol)) << "input " << i;
  }
}

}  // namespace

TEST(Autograd, OpVjpsMatchFiniteDifferences) {
  TestRng rng(62);
  auto r = [&](const Shape& s, double lo = -1, double hi = 1) { return f64(s, rng.vec(size_t(count(s)), lo, hi)); };
  const std::vector<int64_t> last{-1};

  check_fd("softmax/log_softmax", [](const std::vector<Tensor>& in) {
    Tensor w = f64({3, 4}, {1, -2, 3, 0.5, 2, 1, -1, 0, 0.3, 0.7, -0.2, 1.1});
    return add(sum(mul(softmax(in[0], 0), w)), sum(mul(log_softmax(in[0], -1), w)));
  }, {r({3, 4}, -2, 2)});

  check_fd("layer_norm + matmul + cross_entropy", [](const std::vector<Tensor>& in) {
    Tensor t = make({4}, {2, 0, -100, 1}, DType::Int64);
    return cross_entropy(matmul(layer_norm(in[0], in[1], in[2]), in[3]), t);
  }, {r({4, 5}, -2, 2), r({5}, 0.5, 1.5), r({5}), r({5, 3})});

  check_fd("reductions: mean, var, logsumexp, max, min", [last](const std::vector<Tensor>& in) {
    Tensor a = sum(mul(mean(in[0], std::vector<int64_t>{1}), var(in[0], last, 1)));  // both (3,)
    Tensor b = sum(logsumexp(in[0], std::vector<int64_t>{1}));
    return add(add(a, b), sub(sum(max(in[0], last)), sum(min(in[0], std::vector<int64_t>{0}))));
  }, {r({3, 4})});

  check_fd("elementwise: div, pow, sqrt, maximum, where, sigmoid, gelu, silu, erf, log, abs",
           [](const std::vector<Tensor>& in) {
             const Tensor &a = in[0], &b = in[1];
             Tensor t = add(div(a, b), pow(b, a));
             t = add(t, sqrt(b));
             t = add(t, maximum(a, mul(b, weak_scalar(0.5))));
             t = add(t, where(gt(a, weak_scalar(0.0)), sigmoid(a), gelu(a)));
             t = add(t, add(silu(a), gelu(a, true)));
             t = add(t, add(erf(a), log(b)));
             t = add(t, mul(abs(a), rsqrt(b)));
             return sum(t);
           },
           {r({2, 3}, -1, 1), r({2, 3}, 0.5, 2)});

  check_fd("views: slice, permute, broadcast_to, concatenate, stack, take", [](const std::vector<Tensor>& in) {
    Tensor x = in[0];  // (3, 4)
    Tensor s = slice(x, 1, 3, 0, -2);                      // columns 3, 1
    Tensor p = permute(reshape(x, {2, 3, 2}), {2, 0, 1});  // (2, 2, 3)
    Tensor bc = broadcast_to(in[1], {3, 4});               // in[1]: (4,)
    Tensor cat = concatenate({x, bc}, 0);                  // (6, 4)
    Tensor st = stack({x, bc}, 1);                         // (3, 2, 4)
    Tensor tk = take(x, make({3}, {2, 0, 2}, DType::Int64), 1);  // column 2 twice
    Tensor w = f64({6, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1, -2, -3, -4, 0.5, 0.25, 2, 3, 1, 1, 1, 1});
    return add(add(add(sum(square(s)), sum(tanh(p))), sum(mul(cat, w))),
               add(sum(exp(mul(st, weak_scalar(0.1)))), sum(square(tk))));
  }, {r({3, 4}), r({4})});

  check_fd("batched matmul with broadcast batch dims, and 1-D operands", [](const std::vector<Tensor>& in) {
    Tensor y = matmul(in[0], in[1]);                        // (2, 1, 4, 3) @ (3, 3, 2) -> (2, 3, 4, 2)
    Tensor v = matmul(in[2], in[3]);                        // (3,) @ (3, 2) -> (2,)
    Tensor u = matmul(in[3], f64({2}, {0.5, -1.5}));        // (3, 2) @ (2,) -> (3,)
    return add(add(sum(tanh(y)), sum(square(v))), sum(mul(u, in[2])));
  }, {r({2, 1, 4, 3}), r({3, 3, 2}), r({3}), r({3, 2})});

  check_fd("index with slices, ints and integer tensors", [](const std::vector<Tensor>& in) {
    Tensor idx = make({2, 2}, {0, 2, 2, 1}, DType::Int64);
    std::vector<IndexItem> items = {IndexItem{IndexItem::Slice, 0, SliceSpec{1, std::nullopt, 1}, Tensor()},
                                    IndexItem{IndexItem::Array, 0, {}, idx}};
    Tensor a = index(in[0], items);  // x[1:, idx] -> (2, 2, 2)
    Tensor b = index(in[0], {IndexItem{IndexItem::Int, -1, {}, Tensor()}});  // last row
    return add(sum(square(a)), sum(exp(b)));
  }, {r({3, 3})});

  check_fd("scaled_dot_product_attention (causal)", [](const std::vector<Tensor>& in) {
    return sum(square(scaled_dot_product_attention(in[0], in[1], in[2], true)));
  }, {r({2, 3, 4}), r({2, 3, 4}), r({2, 3, 2})}, 1e-5);
}

// float32 attention runs the flash kernel (blocks, online softmax, causal skipping) and its fused
// backward; float64 composes ops. Shapes: several query and key blocks, and widths that are not
// multiples of the register tile (this also runs under AddressSanitizer).
TEST(Autograd, FusedAttentionMatchesComposedFloat64) {
  TestRng rng(71);
  for (bool causal : {false, true})
    for (auto [T, D] : std::vector<std::pair<int64_t, int64_t>>{{300, 40}, {7, 5}}) {
      SCOPED_TRACE(std::string(causal ? "causal" : "full") + " T=" + std::to_string(T));
      const int64_t B = 2, H = 2, C = H * D;
      Tensor x64 = f64({B, T, 3 * C}, rng.vec(size_t(B * T * 3 * C), -2, 2));
      Tensor g64 = f64({B, T, C}, rng.vec(size_t(B * T * C), -1, 1));
      auto run = [&](DType dt) {
        Tensor x = astype(x64, dt);
        x.set_requires_grad(true);
        Tensor y = qkv_attention(x, H, causal);
        std::vector<Tensor> g = grad(sum(mul(astype(y, DType::Float64), g64)), {x});
        return std::make_pair(values(astype(y, DType::Float64)), values(astype(g[0], DType::Float64)));
      };
      auto [y32, g32] = run(DType::Float32);
      auto [y64, g64v] = run(DType::Float64);
      EXPECT_TRUE(all_close(y32, y64, 1e-4, 1e-5));
      EXPECT_TRUE(all_close(g32, g64v, 1e-4, 1e-5));
    }
}

TEST(Autograd, ScaledMatmulAndItsGradientsMatchTheScaledProduct) {
  // matmul(a, b, alpha) = alpha (a @ b), batched, with a transposed operand; its gradients are
  // alpha times the product's (float64, against the unscaled product's gradients).
  const double alpha = 0.37;
  TestRng rng(62);
  std::vector<double> av = rng.vec(2 * 3 * 4, -1, 1), bv = rng.vec(5 * 4, -1, 1);
  Tensor a = leaf({2, 3, 4}, av), b = leaf({5, 4}, bv);
  Tensor y = matmul(a, swapaxes(b, 0, 1), alpha);
  Tensor ref = matmul(a, swapaxes(b, 0, 1));
  EXPECT_TRUE(all_close(values(y), values(mul(ref, make({}, {alpha}, DType::Float64))), 1e-14, 0));
  Tensor w = make({2, 3, 5}, rng.vec(30, -1, 1), DType::Float64);
  std::vector<Tensor> g = grad(sum(mul(y, w)), {a, b});
  std::vector<Tensor> g_ref = grad(sum(mul(ref, w)), {a, b});
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(all_close(values(g[i]), values(mul(g_ref[i], make({}, {alpha}, DType::Float64))), 1e-13, 1e-15));
  EXPECT_THROW(matmul(make({2, 2}, {1, 2, 3, 4}, DType::Int32), make({2, 2}, {1, 2, 3, 4}, DType::Int32), 0.5),
               TypeError);
}
