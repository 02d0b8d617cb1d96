// Neural-network ops: fused softmax / log-softmax, layer norm, cross-entropy and dropout kernels
// (CPU and GPU) with VJPs written in ops, and their fused first-order backward passes.
#include <cmath>
#include <cstring>

#include "pcp/autograd/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/random.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

Tensor S(double v) { return weak_scalar(v); }

int64_t rows_of(const Tensor& x) { return numel(Shape(x.shape().begin(), x.shape().end() - (x.ndim() ? 1 : 0))); }

// The fused kernels divide by the row length and assume rows exist: an empty input takes
// this instead. x * 0 keeps the shape, dtype and graph (gradients of zeros, as they must be).
Tensor empty_result(const Tensor& x) { return mul(x, S(0.0)); }
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)); }

// First-order backward of softmax from its output, one pass per row; used by Softmax::vjp when
// no graph of the gradient is wanted (create_graph composes ops instead).
class SoftmaxBackward : public Primitive {
 public:
  explicit SoftmaxBackward(bool log) : log_(log) {}
  const char* name() const override { return log_ ? "log_softmax_backward" : "softmax_backward"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor &y = in[0], &g = in[1];
    Tensor gx = Tensor::empty(y.shape(), y.dtype(), y.device());
    if (y.device().is_gpu()) {
      gpu::softmax_backward(y, g, gx, log_);
      return gx;
    }
    const int64_t n = y.shape().back(), rows = rows_of(y);
    const auto& k = cpu::kernels();
    const size_t row = size_t(n) * y.itemsize();
    const char *py = static_cast<const char*>(y.raw_data()), *pg = static_cast<const char*>(g.raw_data());
    char* pgx = static_cast<char*>(gx.raw_data());
    parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
      k.softmax_backward_rows(y.dtype(), py + b * row, pg + b * row, pgx + b * row, e - b, n, log_);
    });
    return gx;
  }

 private:
  bool log_;
};

// Softmax over the last axis of a contiguous tensor. causal_T > 0 (softmax only): the rows form
// (causal_T, n) blocks of attention scores, and row i of a block keeps columns 0..i, the others
// becoming 0. The gradient formulas hold as they are, since y is 0 where masked.
class Softmax : public Primitive {
 public:
  Softmax(bool log, int64_t causal_T = 0) : log_(log), causal_T_(causal_T) {}
  const char* name() const override { return log_ ? "log_softmax" : "softmax"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = in[0];
    Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
    if (x.device().is_gpu()) {
      gpu::softmax(x, y, log_, causal_T_);
      return y;
    }
    const int64_t n = x.shape().back(), rows = rows_of(x);
    const auto& k = cpu::kernels();
    const char* px = static_cast<const char*>(x.raw_data());
    char* py = static_cast<char*>(y.raw_data());
    const size_t row = size_t(n) * x.itemsize();
    parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
      if (!causal_T_) return k.softmax_rows(x.dtype(), px + b * row, py + b * row, e - b, n, log_);
      for (int64_t r = b; r < e; ++r) {
        const int64_t keep = std::min(n, r % causal_T_ + 1);
        k.softmax_rows(x.dtype(), px + r * row, py + r * row, 1, keep, false);
        std::memset(py + r * row + keep * x.itemsize(), 0, size_t(n - keep) * x.itemsize());
      }
    });
    return y;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const Tensor& y, const Tensor& g,
                          const std::vector<bool>&) override {
    if (!grad_enabled()) return {pcp::apply<SoftmaxBackward>({y, contiguous(astype(g, y.dtype()))}, log_)};
    std::vector<int64_t> last{-1};
    if (log_) return {sub(g, mul(exp(y), sum(g, last, true)))};
    return {mul(y, sub(g, sum(mul(g, y), last, true)))};
  }

 private:
  bool log_;
  int64_t causal_T_;
};

Tensor softmax_impl(const Tensor& x_in, int64_t axis, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  if (!x_in.defined()) fail<ValueError>(name, ": got an undefined tensor");
  Tensor x = astype(x_in, to_floating(x_in.dtype()));
  if (x.ndim() == 0) x = reshape(x, {1});
  int a = normalize_axis(axis, x.ndim(), name);
  int last = x.ndim() - 1;
  if (x.numel() == 0) return empty_result(x);
  Tensor moved = a == last ? x : swapaxes(x, a, last);
  Tensor y = pcp::apply<Softmax>({contiguous(moved)}, log);
  if (a != last) y = swapaxes(y, a, last);
  return x_in.ndim() == 0 ? reshape(y, {}) : y;
}

// First-order backward of layer norm from the forward's float32 row statistics, in one pass.
// Inputs (x, w or undefined, g, mean, rstd); the output packs the three gradients as rows of
// one (rows + 2, n) tensor: gx, then dw, then db (views split them without copying).
class LayerNormBackward : public Primitive {
 public:
  const char* name() const override { return "layer_norm_backward"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor &x = in[0], &w = in[1], &g = in[2];
    const int64_t n = x.shape().back(), rows = rows_of(x);
    Tensor out = Tensor::empty({rows + 2, n}, x.dtype(), x.device());
    if (x.device().is_gpu()) {
      gpu::layer_norm_backward(x, w, g, in[3], in[4], out);
      return out;
    }
    const auto& k = cpu::kernels();
    const size_t row = size_t(n) * x.itemsize();
    const char *px = static_cast<const char*>(x.raw_data()), *pg = static_cast<const char*>(g.raw_data());
    const char* pw = w.defined() ? static_cast<const char*>(w.raw_data()) : nullptr;
    char* po = static_cast<char*>(out.raw_data());
    const float *pm = in[3].data<float>(), *pr = in[4].data<float>();
    // Each chunk of rows sums its own dw, db; the partial sums are added in chunk order.
    const int64_t chunks = std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, rows / row_grain(n)));
    std::vector<float> partial(size_t(chunks * 2 * n), 0.0f);
    parallel_for(chunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        const int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
        float* dw = partial.data() + c * 2 * n;
        k.layer_norm_backward_rows(x.dtype(), px + r0 * row, pw, pg + r0 * row, pm + r0, pr + r0, po + r0 * row, dw,
                                   dw + n, r1 - r0, n);
      }
    });
    std::vector<float> total(size_t(2 * n), 0.0f);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t i = 0; i < 2 * n; ++i) total[i] += partial[c * 2 * n + i];
    Tensor sums = Tensor::empty({2, n}, DType::Float32);
    std::copy(total.begin(), total.end(), sums.data<float>());
    sums = astype(sums, x.dtype());
    std::memcpy(po + rows * row, sums.raw_data(), 2 * row);
    return out;
  }
};

class LayerNorm : public Primitive {
 public:
  explicit LayerNorm(double eps) : eps_(eps) {}
  const char* name() const override { return "layer_norm"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = in[0];
    Tensor w = in[1].defined() ? contiguous(in[1]) : Tensor();
    Tensor b = in[2].defined() ? contiguous(in[2]) : Tensor();
    const int64_t n = x.shape().back(), rows = rows_of(x);
    Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
    Shape stat_shape(x.shape().begin(), x.shape().end() - 1);
    stat_shape.push_back(1);
    mean_ = Tensor::empty(stat_shape, DType::Float32, x.device());
    rstd_ = Tensor::empty(stat_shape, DType::Float32, x.device());
    if (x.device().is_gpu()) {
      gpu::layer_norm(x, w, b, y, mean_, rstd_, eps_);
      return y;
    }
    const auto& k = cpu::kernels();
    const size_t row = size_t(n) * x.itemsize();
    const char* px = static_cast<const char*>(x.raw_data());
    char* py = static_cast<char*>(y.raw_data());
    const char* pw = w.defined() ? static_cast<const char*>(w.raw_data()) : nullptr;
    const char* pb = b.defined() ? static_cast<const char*>(b.raw_data()) : nullptr;
    float *pm = mean_.data<float>(), *pr = rstd_.data<float>();
    parallel_for(rows, row_grain(n), [&](int64_t s, int64_t e) {
      k.layer_norm_rows(x.dtype(), px + s * row, pw, pb, py + s * row, pm + s, pr + s, e - s, n, eps_);
    });
    return y;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const Tensor&, const Tensor& g,
                          const std::vector<bool>& needs) override {
    const Tensor &x = in[0], &w = in[1];
    if (!grad_enabled() && x.dtype() != DType::Float64) {
      const int64_t rows = rows_of(x);
      Tensor packed = pcp::apply<LayerNormBackward>({x, w, contiguous(astype(g, x.dtype())), mean_, rstd_});
      auto row_of = [&](int64_t r) { return reshape(slice(packed, 0, r, r + 1), {x.shape().back()}); };
      return {needs[0] ? reshape(slice(packed, 0, 0, rows), x.shape()) : Tensor(), needs[1] ? row_of(rows) : Tensor(),
              needs[2] ? row_of(rows + 1) : Tensor()};
    }
    std::vector<int64_t> last{-1};
    Tensor mu, rstd;
    if (grad_enabled() || x.dtype() == DType::Float64) {
      // Recompute the statistics with ops: exact for float64 and differentiable for higher order.
      mu = mean(x, last, true);
      rstd = rsqrt(add(var(x, last, 0, true), S(eps_)));
    } else {
      mu = astype(mean_, x.dtype());
      rstd = astype(rstd_, x.dtype());
    }
    Tensor xhat = mul(sub(x, mu), rstd);
    std::vector<int64_t> lead;
    for (int i = 0; i + 1 < x.ndim(); ++i) lead.push_back(i);
    Tensor gx, gw, gb;
    if (needs[1]) gw = sum(mul(g, xhat), lead);
    if (needs[2]) gb = sum(g, lead);
    if (needs[0]) {
      Tensor gxhat = w.defined() ? mul(g, w) : g;
      gx = mul(rstd, sub(sub(gxhat, mean(gxhat, last, true)), mul(xhat, mean(mul(gxhat, xhat), last, true))));
    }
    return {gx, gw, gb};
  }

 private:
  double eps_;
  Tensor mean_, rstd_;  // per-row statistics from the forward pass (float32)
};

// First-order gradient of the per-row cross-entropy from the forward pass's logsumexp (GPU).
class CrossEntropyBackward : public Primitive {
 public:
  CrossEntropyBackward(Tensor targets, int64_t ignore, Tensor lse) : targets_(std::move(targets)), ignore_(ignore),
                                                                     lse_(std::move(lse)) {}
  const char* name() const override { return "cross_entropy_backward"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor &logits = in[0], &g = in[1];
    Tensor gx = Tensor::empty(logits.shape(), logits.dtype(), logits.device());
    gpu::cross_entropy_backward(logits, targets_, ignore_, lse_, g, gx);
    return gx;
  }

 private:
  Tensor targets_;
  int64_t ignore_;
  Tensor lse_;
};

// Per-row loss over the last axis of contiguous logits. The targets are host int64 class indices,
// checked before (metadata of the op, like a slice's bounds), or int32 on the logits' GPU, checked
// by the kernel; either way GPU logits never wait on them.
class CrossEntropy : public Primitive {
 public:
  CrossEntropy(Tensor targets, int64_t ignore_index) : targets_(std::move(targets)), ignore_(ignore_index) {}
  const char* name() const override { return "cross_entropy"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& logits = in[0];
    const int64_t C = logits.shape().back(), rows = rows_of(logits);
    Tensor loss = Tensor::empty(targets_.shape(), logits.dtype(), logits.device());
    if (logits.device().is_gpu()) {
      lse_ = Tensor::empty({rows, 2}, DType::Float32, logits.device());
      gpu::cross_entropy(logits, targets_, ignore_, loss, lse_);
      return loss;
    }
    const auto& k = cpu::kernels();
    const size_t row = size_t(C) * logits.itemsize();
    const char* pl = static_cast<const char*>(logits.raw_data());
    const int64_t* pt = targets_.data<int64_t>();
    char* po = static_cast<char*>(loss.raw_data());
    const size_t isz = loss.itemsize();
    parallel_for(rows, row_grain(C), [&](int64_t s, int64_t e) {
      k.cross_entropy_rows(logits.dtype(), pl + s * row, pt + s, po + s * isz, e - s, C, ignore_);
    });
    return loss;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const Tensor&, const Tensor& g,
                          const std::vector<bool>&) override {
    const Tensor& logits = in[0];
    if (logits.device().is_gpu() && !grad_enabled())
      return {pcp::apply<CrossEntropyBackward>({logits, contiguous(g)}, targets_, ignore_, lse_)};
    if (!grad_enabled() && (logits.dtype() == DType::Float32 || logits.dtype() == DType::Float64))
      return {softmax_minus_target(logits, contiguous(g))};
    Tensor valid = to_device(astype(ne(targets_, weak_scalar_int(ignore_)), g.dtype()), logits.device());
    Tensor scale = unsqueeze(mul(g, valid), -1);
    Tensor target_hot = to_device(one_hot(targets_, logits.shape().back(), logits.dtype()), logits.device());
    return {mul(sub(softmax(logits, -1), target_hot), scale)};
  }

 private:
  // First-order gradient on the CPU: (softmax(logits) - one_hot(target)) g per row, zero for
  // ignored rows, as one pass over the softmax's output instead of five ops.
  Tensor softmax_minus_target(const Tensor& logits, const Tensor& g) {
    Tensor gx = softmax(logits, -1);
    const int64_t C = logits.shape().back(), rows = rows_of(logits);
    const int64_t* t = targets_.data<int64_t>();
    auto fix_rows = [&](auto* p, const auto* gr) {
      parallel_for(rows, row_grain(C), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const bool keep = t[r] != ignore_;
          const auto s = keep ? gr[r] : 0;
          auto* row = p + r * C;
          for (int64_t j = 0; j < C; ++j) row[j] *= s;
          if (keep) row[t[r]] -= s;
        }
      });
    };
    if (logits.dtype() == DType::Float32) fix_rows(gx.data<float>(), g.data<float>());
    else fix_rows(gx.data<double>(), g.data<double>());
    return gx;
  }

  Tensor targets_;  // host int64, or int32 on the logits' GPU
  int64_t ignore_;
  Tensor lse_;      // per row: max and log sum exp(x - max) (GPU forward)
};

// Inverted dropout of contiguous float32 x with the mask drawn from Philox counters
// [start, start + ceil(n / 4)) under `key`, on either device. Linear in x, so its gradient is
// the same op with the same mask.
class Dropout : public Primitive {
 public:
  Dropout(double p, uint64_t key, uint64_t start) : p_(p), key_(key), start_(start) {}
  const char* name() const override { return "dropout"; }
  bool runs_on_gpu() const override { return true; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = in[0];
    Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
    const float prob = float(p_), scale = float(1.0 / (1.0 - p_));
    if (x.device().is_gpu()) {
      gpu::dropout(x, out, prob, scale, key_, start_);
      return out;
    }
    const float* px = x.data<float>();
    float* po = out.data<float>();
    const int64_t n = x.numel();
    parallel_for((n + 3) / 4, 4096, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        uint32_t w[4];
        Philox::generate(key_, 0, start_ + uint64_t(c), w);
        for (int64_t j = 0; j < 4 && c * 4 + j < n; ++j)
          po[c * 4 + j] = uint_to_unit_float(w[j]) >= prob ? px[c * 4 + j] * scale : 0.0f;
      }
    });
    return out;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const Tensor&, const Tensor& g,
                          const std::vector<bool>&) override {
    return {pcp::apply<Dropout>({contiguous(astype(g, DType::Float32))}, p_, key_, start_)};
  }

 private:
  double p_;
  uint64_t key_, start_;
};

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) { return softmax_impl(x, axis, false); }

Tensor causal_softmax(const Tensor& scores) {
  if (scores.ndim() < 2) fail<ValueError>("causal_softmax: scores must be (..., T, S), got ", shape_str(scores.shape()));
  const int64_t T = scores.shape()[scores.ndim() - 2];
  if (T == 0 || scores.numel() == 0) return softmax(scores, -1);
  return pcp::apply<Softmax>({contiguous(astype(scores, to_floating(scores.dtype())))}, false, T);
}
Tensor log_softmax(const Tensor& x, int64_t axis) { return softmax_impl(x, axis, true); }

Tensor layer_norm(const Tensor& x_in, const Tensor& weight, const Tensor& bias, double eps) {
  if (!x_in.defined()) fail<ValueError>("layer_norm: got an undefined tensor");
  if (x_in.ndim() == 0) fail<ValueError>("layer_norm: input must have at least one dimension");
  if (eps < 0) fail<ValueError>("layer_norm: eps must be non-negative, got ", eps);
  const int64_t n = x_in.shape().back();
  DType dt = to_floating(x_in.dtype());
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    if (p->shape() != Shape{n})
      fail<ValueError>("layer_norm: ", p == &weight ? "weight" : "bias", " has shape ", shape_str(p->shape()),
                       " but the input's last dimension is ", n, " (input shape ", shape_str(x_in.shape()),
                       "); expected (", n, ",)");
    dt = promote_types(dt, to_floating(p->dtype()));
  }
  Tensor w = weight.defined() ? astype(weight, dt) : Tensor();
  Tensor b = bias.defined() ? astype(bias, dt) : Tensor();
  if (x_in.numel() == 0) {  // no rows, or rows of nothing: the parameters' gradients are zeros
    Tensor y = empty_result(astype(x_in, dt));
    for (const Tensor& p : {w, b})
      if (p.defined()) y = add(y, empty_result(p));
    return y;
  }
  return pcp::apply<LayerNorm>({contiguous(astype(x_in, dt)), w, b}, eps);
}

Reduction reduction_from_name(const std::string& name) {
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  if (name == "none") return Reduction::None;
  fail<ValueError>("cross_entropy: reduction must be 'mean', 'sum' or 'none', got '", name, "'");
}

Tensor cross_entropy(const Tensor& logits_in, const Tensor& targets, int64_t ignore_index, Reduction reduction) {
  if (!logits_in.defined() || !targets.defined()) fail<ValueError>("cross_entropy: got an undefined tensor");
  if (logits_in.ndim() < 1)
    fail<ValueError>("cross_entropy: logits must have a class axis (last), got shape ", shape_str(logits_in.shape()));
  if (!is_integral(targets.dtype()))
    fail<TypeError>("cross_entropy: targets must be an integer tensor of class indices, got ",
                    dtype_name(targets.dtype()));
  Shape expect(logits_in.shape().begin(), logits_in.shape().end() - 1);
  if (targets.shape() != expect)
    fail<ValueError>("cross_entropy: targets have shape ", shape_str(targets.shape()), " but logits have shape ",
                     shape_str(logits_in.shape()), "; expected targets of shape ", shape_str(expect),
                     " (classes on the last axis)");
  const int64_t C = logits_in.shape().back();
  Tensor logits = contiguous(astype(logits_in, to_floating(logits_in.dtype())));
  Tensor t, valid;  // the targets the primitive gets; how many are not ignored (float32 on the GPU)
  if (logits.device().is_gpu() && targets.device() == logits.device() && targets.dtype() == DType::Int32 &&
      ignore_index >= INT32_MIN && ignore_index <= INT32_MAX && logits.numel() > 0) {
    // int32 targets on the logits' GPU stay there, so nothing waits for the device: the kernel
    // checks them (an IndexError at the next synchronisation) and the mean's count is made on
    // the GPU. (int64 ones come to the host: the GPU's cast would wrap values above 2**31.)
    t = contiguous(targets);
    valid = sum(astype(ne(t, weak_scalar_int(ignore_index)), DType::Float32));
  } else {
    // Checked here; ignored targets become -1 (no valid class is negative), so the kernels
    // need no int64 ignore_index (2**40 did not survive their int32 one).
    t = contiguous(astype(targets.host_copy(), DType::Int64));
    if (t.is_same(targets)) t = copy(t);
    int64_t n = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      int64_t& v = t.data<int64_t>()[i];
      if (v == ignore_index) {
        v = -1;
        continue;
      }
      if (v < 0 || v >= C)
        fail<IndexError>("cross_entropy: target ", v, " is out of range for ", C, " classes (expected 0 <= target < ",
                         C, ", or ignore_index ", ignore_index, ")");
      ++n;
    }
    ignore_index = -1;
    valid = S(double(n));
  }
  Tensor loss = logits.numel() == 0 ? sum(empty_result(logits), std::vector<int64_t>{-1})
                                    : pcp::apply<CrossEntropy>({logits}, t, ignore_index);
  if (reduction == Reduction::None) return loss;
  Tensor total = sum(loss);
  if (reduction == Reduction::Sum) return total;
  // The mean over non-ignored targets (nan when there are none).
  if (valid.device().is_gpu()) return astype(div(astype(total, DType::Float32), valid), total.dtype());
  return div(total, valid);
}

Tensor dropout(const Tensor& x, double p, bool training) {
  if (!x.defined()) fail<ValueError>("dropout: got an undefined tensor");
  if (!(p >= 0.0 && p <= 1.0)) fail<ValueError>("dropout: probability must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  if (p == 1.0) return where(zeros(x.shape(), DType::Bool, x.device()), x, S(0.0));  // 0 even for inf and NaN
  if (x.dtype() == DType::Float32) {  // fused; the same draws and mask as the composed path below
    Generator& g = Generator::global();
    const uint64_t key = g.initial_seed(), start = g.reserve(uint64_t(x.numel() + 3) / 4);
    return pcp::apply<Dropout>({contiguous(x)}, p, key, start);
  }
  Tensor keep = to_device(ge(rand(x.shape(), DType::Float32), S(p)), x.device());
  return where(keep, mul(x, S(1.0 / (1.0 - p))), S(0.0));
}

}  // namespace pcp
