// Neural-network ops: fused softmax / log-softmax, layer norm, cross-entropy and dropout, their
// fused first-order backward passes and their VJPs written in ops. The host code is in
// backend/cpu/nn.cpp, the GPU's in backend/gpu/nn.cpp.
#include <cmath>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/random.h"
#include "pcp/core/error.h"
#include "pcp/ops/formula.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// The fused kernels divide by the row length and assume rows exist: an empty input takes
// this instead. x * 0 keeps the shape, dtype and graph (gradients of zeros, as they must be).
Tensor empty_result(const Tensor& x) { return mul(x, S(0.0)); }

// First-order backward of softmax from its output, one pass per row; used by Softmax::vjp when
// no graph of the gradient is wanted (create_graph composes ops instead). Inputs (y, g).
// causal_T > 0: y came from a causal softmax (see Softmax), and its masked columns, constants
// of the input, get a zero gradient without being read.
class SoftmaxBackward : public Primitive {
 public:
  SoftmaxBackward(bool log, int64_t causal_T) : log_(log), causal_T_(causal_T) {}
  const char* name() const override { return log_ ? "log_softmax_backward" : "softmax_backward"; }
  Attributes attributes() const override { return {{"causal_T", causal_T_}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor gx = empty(specs[0]);
    backend::softmax_backward(in[0], in[1], gx, log_, causal_T_);
    return {gx};
  }

 private:
  bool log_;
  int64_t causal_T_;
};

// Softmax over the last axis of a contiguous tensor. causal_T > 0 (softmax only): the rows form
// (causal_T, n) blocks of attention scores, and row i of a block keeps columns 0..i, the others
// becoming 0. The gradient formulas hold as they are, since y is 0 where masked.
class Softmax : public Primitive {
 public:
  Softmax(bool log, int64_t causal_T = 0) : log_(log), causal_T_(causal_T) {}
  const char* name() const override { return log_ ? "log_softmax" : "softmax"; }
  Attributes attributes() const override { return {{"causal_T", causal_T_}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor y = empty(specs[0]);
    backend::softmax(in[0], y, log_, causal_T_);
    return {y};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>& outs, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    const Tensor &y = outs[0], &g = gs[0];
    if (!grad_enabled()) return {pcp::apply<SoftmaxBackward>({y, contiguous(astype(g, y.dtype()))}, log_, causal_T_)};
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

// The per-row statistics of a layer norm: float32 (rows..., 1) on x's device.
TensorSpec row_stats(const TensorSpec& x) {
  Shape s(x.shape.begin(), x.shape.end() - 1);
  s.push_back(1);
  return {s, DType::Float32, x.device};
}

// First-order backward of layer norm from the forward's float32 row statistics, in one pass.
// Inputs (x, w or undefined, g, mean, rstd); outputs gx, dw, db.
// Cast folding (Primitive::with_output_dtype / with_input_dtype): whether t is float16 or
// bfloat16, and the type a primitive's folded output takes ("out_dtype" in plan files).
void put_out_dtype(Attributes& a, std::optional<DType> out) {
  if (out) a["out_dtype"] = std::string(dtype_name(*out));
}
std::optional<DType> out_dtype_attr(const std::string& prim, const Attributes& a) {
  if (!a.count("out_dtype")) return std::nullopt;
  const DType t = dtype_from_name(attr_str(prim, a, "out_dtype"));
  if (!is_half_float(t) && t != DType::Float32)
    fail<ValueError>(prim, ": out_dtype ", dtype_name(t), " is not float32, float16 or bfloat16");
  return t;
}

class LayerNormBackward : public Primitive {
 public:
  // accumulate: a plan's add folded in (fuse_residual_layer_norm): a sixth input, another
  // gradient of x, added to gx as it is written.
  // low: a plan's cast of gx folded in (with_extra_output): gx in that type as a fourth output.
  // partial_rows: a plan's form whose weight sums run batched with others' (batch_layer_norm_sums):
  // instead of dw and db, float32 (partial_rows, 2n) rows whose column sums are (dw, db).
  explicit LayerNormBackward(bool accumulate = false, std::optional<DType> low = std::nullopt,
                             int64_t partial_rows = 0)
      : accumulate_(accumulate), low_(low), partial_rows_(partial_rows) {}
  const char* name() const override { return "layer_norm_backward"; }
  Attributes attributes() const override {
    Attributes a;
    if (accumulate_) a["accumulate"] = true;
    if (low_) a["low_dtype"] = std::string(dtype_name(*low_));
    if (partial_rows_) a["partial_rows"] = partial_rows_;
    return a;
  }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const TensorSpec& x = in[0];
    const TensorSpec param{{x.shape.back()}, x.dtype, x.device};
    std::vector<TensorSpec> out{x, param, param};
    if (partial_rows_) out = {x, {{partial_rows_, 2 * x.shape.back()}, DType::Float32, x.device}};
    if (low_) out.push_back({x.shape, *low_, x.device});
    return out;
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor &x = in[0], &w = in[1], &mean = in[3], &rstd = in[4];
    const int64_t n = x.shape().back();
    Tensor gx = empty(specs[0]);
    if (partial_rows_) return with_partial_rows(in, specs, gx);
    Tensor param_grads = Tensor::empty({2, n}, x.dtype(), x.device());  // dw and db, as rows
    const Tensor acc = accumulate_ ? contiguous(in[5]) : Tensor();
    const Tensor low = low_ ? empty(specs[3]) : Tensor();
    backend::layer_norm_backward(x, w, in[2], mean, rstd, gx, param_grads, acc, low, Tensor());  // g as it is
    std::vector<Tensor> out{gx, param_grads.alias({n}, {1}, 0), param_grads.alias({n}, {1}, n)};
    if (low_) out.push_back(low);
    return out;
  }
  // A cast of gx that the rest of the gradient reads too (the branch's product, in 16 bits).
  std::shared_ptr<Primitive> with_extra_output(const std::vector<TensorSpec>& in, size_t k, DType to) const override {
    if (k != 0 || low_ || !is_half_float(to) || in[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<LayerNormBackward>(accumulate_, to, partial_rows_);
  }
  // The gradient g of a float32 layer norm may come 16-bit (its product's type).
  std::shared_ptr<Primitive> with_input_dtype(const std::vector<TensorSpec>& in, size_t i, DType from) const override {
    if (i != 2 || !is_half_float(from) || in[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<LayerNormBackward>(accumulate_, low_, partial_rows_);
  }

 private:
  // {gx, partial rows, [low]}: on a GPU the one-pass kernel's own rows; on the CPU the sums in
  // row 0 and zeros below.
  std::vector<Tensor> with_partial_rows(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs,
                                        const Tensor& gx) const {
    const Tensor acc = accumulate_ ? contiguous(in[5]) : Tensor();
    const Tensor low = low_ ? empty(specs[2]) : Tensor(), part = empty(specs[1]);
    backend::layer_norm_backward(in[0], in[1], in[2], in[3], in[4], gx, Tensor(), acc, low, part);
    return low_ ? std::vector<Tensor>{gx, part, low} : std::vector<Tensor>{gx, part};
  }

  bool accumulate_;
  std::optional<DType> low_;
  int64_t partial_rows_;
};

// Outputs y and the per-row mean and rstd (float32, not differentiable) that the first-order
// backward reads.
class LayerNorm : public Primitive {
 public:
  // residual: a plan's add folded in (fuse_residual_layer_norm): inputs (x, w, b, r), x + r
  // normalized and returned as a fourth output.
  explicit LayerNorm(double eps, std::optional<DType> out = std::nullopt, bool residual = false)
      : eps_(eps), out_(out), residual_(residual) {}
  const char* name() const override { return "layer_norm"; }
  Attributes attributes() const override {
    Attributes a{{"eps", eps_}};
    put_out_dtype(a, out_);
    if (residual_) a["residual"] = true;
    return a;
  }
  bool differentiable_output(size_t i) const override { return i == 0; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    TensorSpec y = in[0];
    if (out_) y.dtype = *out_;
    if (residual_) return {y, row_stats(in[0]), row_stats(in[0]), in[0]};
    return {y, row_stats(in[0]), row_stats(in[0])};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor x = in[0];
    Tensor w = in[1].defined() ? contiguous(in[1]) : Tensor();
    Tensor b = in[2].defined() ? contiguous(in[2]) : Tensor();
    Tensor y = empty(specs[0]), mean = empty(specs[1]), rstd = empty(specs[2]);
    Tensor s = residual_ ? empty(specs[3]) : Tensor();
    // A 16-bit y for a float32 x (a folded cast) and the residual form: the backends' business.
    backend::layer_norm(x, w, b, y, mean, rstd, eps_, residual_ ? contiguous(in[3]) : Tensor(), s);
    return residual_ ? std::vector<Tensor>{y, mean, rstd, s} : std::vector<Tensor>{y, mean, rstd};
  }
  // A float32 layer norm whose output is only cast to 16 bits writes them itself.
  std::shared_ptr<Primitive> with_output_dtype(const std::vector<TensorSpec>& in, size_t k, DType to) const override {
    if (k != 0 || !is_half_float(to) || in[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<LayerNorm>(eps_, to, residual_);
  }
  // The residual may come 16-bit (a product's output), widened as it is read.
  std::shared_ptr<Primitive> with_input_dtype(const std::vector<TensorSpec>& in, size_t i, DType from) const override {
    if (!residual_ || i != 3 || !is_half_float(from) || in[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<LayerNorm>(eps_, out_, true);
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                          const std::vector<Tensor>& gs, const std::vector<bool>& needs) override {
    if (residual_)  // made by plans only, whose backward is in the plan already
      fail<NotImplementedError>("layer_norm: the residual form a plan makes has no gradient of its own");
    const Tensor &x = in[0], &w = in[1], &g = gs[0];
    if (!grad_enabled() && x.dtype() != DType::Float64) {
      auto d = pcp::apply_all<LayerNormBackward>({x, w, contiguous(astype(g, x.dtype())), outs[1], outs[2]});
      return {needs[0] ? d[0] : Tensor(), needs[1] ? d[1] : Tensor(), needs[2] ? d[2] : Tensor()};
    }
    std::vector<int64_t> last{-1};
    Tensor mu, rstd;
    if (grad_enabled() || x.dtype() == DType::Float64) {
      // Recompute the statistics with ops: exact for float64 and differentiable for higher order.
      mu = mean(x, last, true);
      rstd = rsqrt(add(var(x, last, 0, true), S(eps_)));
    } else {
      mu = astype(outs[1], x.dtype());
      rstd = astype(outs[2], x.dtype());
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
  std::optional<DType> out_;  // y's type where a plan folded a cast in (else x's)
  bool residual_;
};

// Host targets as the kernels take them: contiguous int64, checked against C classes, with the
// ignored ones set to -1 (no valid class is negative, so the kernels need no int64
// ignore_index: 2**40 did not survive their int32 one); `valid` counts the others.
Tensor prepared_targets(const Tensor& targets, int64_t C, int64_t ignore_index, int64_t* valid = nullptr) {
  Tensor t = contiguous(astype(targets.host_copy(), DType::Int64));
  if (t.is_same(targets) || t.storage() == targets.storage()) t = copy(t);
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t& v = t.data<int64_t>()[i];
    if (v == ignore_index) {
      v = -1;
      continue;
    }
    if (v < 0 || v >= C)
      fail<IndexError>("cross_entropy: target ", v, " is out of range for ", C, " classes (expected 0 <= target < ", C,
                       ", or ignore_index ", ignore_index, ")");
    ++n;
  }
  if (valid) *valid = n;
  return t;
}

// The per-row gradient cross-entropy's backward reads: one value broadcast to every row (a mean's
// gradient) as it is, which the kernels read once for all rows, else contiguous.
Tensor row_grads(const Tensor& g) { return g.one_value() ? g : contiguous(g); }

// Targets stay where the user put them: int32 on the logits' GPU are read by the kernels, which
// check them (an IndexError at the next synchronisation); any other targets live on the host and
// are checked there as the op runs (GPU logits never wait on them).
bool device_targets(const Tensor& targets) { return targets.device().is_gpu(); }

// First-order gradient of the per-row cross-entropy. Inputs (logits, g, targets), and on the GPU
// the forward pass's per-row (max, log-sum-exp) as a fourth.
class CrossEntropyBackward : public Primitive {
 public:
  explicit CrossEntropyBackward(int64_t ignore, std::optional<DType> out = std::nullopt) : ignore_(ignore), out_(out) {}
  const char* name() const override { return "cross_entropy_backward"; }
  Attributes attributes() const override {
    Attributes a{{"ignore_index", ignore_}};
    put_out_dtype(a, out_);
    return a;
  }
  bool host_input(size_t i) const override { return i == 2; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    TensorSpec gx = in[0];
    if (out_) gx.dtype = *out_;
    return {gx};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor &logits = in[0], &g = in[1];
    const bool on_device = device_targets(in[2]);
    const Tensor t = on_device ? in[2] : prepared_targets(in[2], logits.shape().back(), ignore_);
    const int64_t ignore = on_device ? ignore_ : -1;
    Tensor gx = empty(specs[0]);
    backend::cross_entropy_backward(logits, t, ignore, in.size() > 3 ? in[3] : Tensor(), g, gx);
    return {gx};
  }
  // Logits that reach it only through a float32 cast are read as they are; a gradient that is
  // only cast to 16 bits is written in them.
  std::shared_ptr<Primitive> with_input_dtype(const std::vector<TensorSpec>& in, size_t i, DType from) const override {
    if (i != 0 || !is_half_float(from) || in[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<CrossEntropyBackward>(ignore_, out_.value_or(DType::Float32));
  }
  std::shared_ptr<Primitive> with_output_dtype(const std::vector<TensorSpec>& in, size_t k, DType to) const override {
    if (k != 0 || !is_half_float(to) || infer(in)[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<CrossEntropyBackward>(ignore_, to);
  }

 private:
  int64_t ignore_;
  std::optional<DType> out_;  // gx's type where a plan folded a cast in (else the logits')
};

// Per-row loss over the last axis of contiguous logits; inputs (logits, targets). Outputs: the
// loss; each row's (max, log-sum-exp), which the GPU keeps for the backward pass (zeros on the
// CPU, whose backward recomputes them); with host targets, how many are not ignored (a 0-d
// float32, float64 for float64 logits, on the logits' device), counted as they are checked. The
// outputs are the same on every device, so a plan traced on one runs on another. Only the loss
// is differentiable.
class CrossEntropy : public Primitive {
 public:
  // keep_targets: host targets are also output as the kernels read them (int32 on the logits'
  // device, ignored ones -1), which a GPU backward reads: one upload of a batch's targets, not two.
  explicit CrossEntropy(int64_t ignore_index, std::optional<DType> out = std::nullopt, bool keep_targets = false)
      : ignore_(ignore_index), out_(out), keep_targets_(keep_targets) {}
  const char* name() const override { return "cross_entropy"; }
  Attributes attributes() const override {
    Attributes a{{"ignore_index", ignore_}};
    put_out_dtype(a, out_);
    if (keep_targets_) a["keep_targets"] = true;
    return a;
  }
  bool host_input(size_t i) const override { return i == 1; }
  bool differentiable_output(size_t i) const override { return i == 0; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const TensorSpec& logits = in[0];
    const DType dt = out_.value_or(logits.dtype);
    std::vector<TensorSpec> out{{in[1].shape, dt, logits.device}, {{rows_of(logits.shape), 2}, DType::Float32, logits.device}};
    if (!in[1].device.is_gpu()) out.push_back({{}, dt == DType::Float64 ? DType::Float64 : DType::Float32, logits.device});
    if (kept_targets(in)) out.push_back({in[1].shape, DType::Int32, logits.device});
    return out;
  }
  bool kept_targets(const std::vector<TensorSpec>& in) const {
    return keep_targets_ && !in[1].device.is_gpu();
  }
  // Logits that reach it only through a float32 cast are read as they are (widened exactly).
  std::shared_ptr<Primitive> with_input_dtype(const std::vector<TensorSpec>& in, size_t i, DType from) const override {
    if (i != 0 || !is_half_float(from) || in[0].dtype != DType::Float32) return nullptr;
    return std::make_shared<CrossEntropy>(ignore_, out_.value_or(DType::Float32), keep_targets_);
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor& logits = in[0];
    const bool on_device = device_targets(in[1]);
    int64_t valid = 0;
    Tensor t = on_device ? in[1] : prepared_targets(in[1], logits.shape().back(), ignore_, &valid);
    const int64_t ignore = on_device ? ignore_ : -1;
    const bool gpu = logits.device().is_gpu(), keep = keep_targets_ && !on_device;
    Tensor kept;
    if (keep) kept = gpu ? gpu::device_class_indices(t, logits.device()) : astype(t, DType::Int32);
    if (keep && gpu) t = kept;
    std::vector<Tensor> out{empty(specs[0]), gpu ? empty(specs[1]) : full(specs[1].shape, 0.0, DType::Float32, logits.device())};
    backend::cross_entropy(logits, t, ignore, out[0], gpu ? out[1] : Tensor());
    if (!on_device) out.push_back(full({}, double(valid), specs[out.size()].dtype, logits.device()));
    if (keep) out.push_back(kept);
    return out;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                          const std::vector<Tensor>& gs, const std::vector<bool>&) override {
    const Tensor &logits = in[0], &targets = in[1], &g = gs[0];
    if (logits.device().is_gpu() && !grad_enabled()) {
      if (keep_targets_ && !targets.device().is_gpu())  // the forward's upload (ignored ones -1)
        return {pcp::apply<CrossEntropyBackward>({logits, row_grads(g), outs.back(), outs[1]}, int64_t(-1)), Tensor()};
      return {pcp::apply<CrossEntropyBackward>({logits, row_grads(g), targets, outs[1]}, ignore_), Tensor()};
    }
    if (!grad_enabled() && (logits.dtype() == DType::Float32 || logits.dtype() == DType::Float64))
      return {pcp::apply<CrossEntropyBackward>({logits, row_grads(astype(g, logits.dtype())), targets}, ignore_),
              Tensor()};
    // Differentiable (create_graph): composed from ops, with the targets prepared on the host.
    const Tensor t = prepared_targets(targets, logits.shape().back(), ignore_);
    Tensor valid = to_device(astype(ne(t, weak_scalar_int(-1)), g.dtype()), logits.device());
    Tensor scale = unsqueeze(mul(g, valid), -1);
    Tensor target_hot = to_device(one_hot(maximum(t, weak_scalar_int(0)), logits.shape().back(), logits.dtype()),
                                  logits.device());
    return {mul(sub(softmax(logits, -1), target_hot), scale), Tensor()};
  }
  bool vjp_reads_output() const override { return true; }

 private:
  int64_t ignore_;
  std::optional<DType> out_;  // the loss's type where a plan folded a cast in (else the logits')
  bool keep_targets_;
};

// Inverted dropout of contiguous float32 x with the mask drawn from Philox counters
// [start, start + ceil(n / 4)) under `key`, on either device. Linear in x, so its gradient is
// the same op with the same mask.
class Dropout : public Primitive {
 public:
  Dropout(double p, RandomDrawPtr draw) : p_(p), draw_(std::move(draw)) {}
  const char* name() const override { return "dropout"; }
  Attributes attributes() const override { return {{"p", p_}}; }
  SharedState shared_state() const override { return {{}, {draw_}}; }
  bool draws_random() const override { return true; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    const float prob = float(p_), scale = float(1.0 / (1.0 - p_));
    backend::dropout(in[0], out, prob, scale, draw_->key, draw_->start);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    // The same mask on the gradient: in its own 16-bit type on a GPU, in float32 on the CPU.
    const Tensor& g = gs[0];
    const bool keep = g.device().is_gpu() && (g.dtype() == DType::Float16 || g.dtype() == DType::BFloat16);
    return {pcp::apply<Dropout>({contiguous(keep ? g : astype(g, DType::Float32))}, p_, draw_)};
  }

 private:
  double p_;
  RandomDrawPtr draw_;  // the counters, read as the op runs (a plan's replay draws them again)
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
  Tensor logits = contiguous(astype(logits_in, to_floating(logits_in.dtype())));
  // int32 targets on the logits' GPU stay there; others on a GPU are read back (int64: the GPU's
  // cast would wrap values above 2**31).
  const bool on_device = targets.device() == logits.device() && logits.device().is_gpu() &&
                         targets.dtype() == DType::Int32 && ignore_index >= INT32_MIN && ignore_index <= INT32_MAX;
  const Tensor tg = targets.device().is_gpu() && !on_device ? to_device(targets, cpu_device()) : targets;
  if (logits.numel() == 0) {
    if (!on_device) prepared_targets(tg, logits.shape().back(), ignore_index);  // C = 0: no target is valid
    Tensor loss = sum(empty_result(logits), std::vector<int64_t>{-1});
    if (reduction == Reduction::None) return loss;
    Tensor total = sum(loss);
    return reduction == Reduction::Sum ? total : div(total, S(0.0));
  }
  std::vector<Tensor> outs = pcp::apply_all<CrossEntropy>({logits, contiguous(tg)}, ignore_index, std::nullopt, true);
  const Tensor& loss = outs[0];
  if (reduction == Reduction::None) return loss;
  Tensor total = sum(loss);
  if (reduction == Reduction::Sum) return total;
  // The mean over non-ignored targets (nan when there are none), counted on the GPU for device
  // targets, by the op for host ones.
  // (float32 counts are exact to 2^24 targets; float64 losses divide in float64)
  const DType count = total.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor valid = on_device ? sum(astype(ne(tg, weak_scalar_int(ignore_index)), count))
                           : outs[2];  // after the loss and the row statistics
  return astype(div(astype(total, valid.dtype()), valid), total.dtype());
}

Tensor dropout(const Tensor& x, double p, bool training) {
  if (!x.defined()) fail<ValueError>("dropout: got an undefined tensor");
  if (!(p >= 0.0 && p <= 1.0)) fail<ValueError>("dropout: probability must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  if (p == 1.0) return where(zeros(x.shape(), DType::Bool, x.device()), x, S(0.0));  // 0 even for inf and NaN
  // Fused (float32, float16 and bfloat16: in float32 on the CPU); the same draws and mask as the
  // composed path below (float64), which draws its mask on the host.
  const bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  if (x.dtype() == DType::Float32 || half) {
    return dropout_with(x, p, Generator::global().draw(uint64_t(x.numel() + 3) / 4));
  }
  Tensor keep = to_device(ge(rand(x.shape(), DType::Float32), S(p)), x.device());
  return where(keep, mul(x, S(1.0 / (1.0 - p))), S(0.0));
}

Tensor dropout_with(const Tensor& x, double p, RandomDrawPtr draw) {
  const bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  const Tensor in = half && x.device().is_gpu() ? x : astype(x, DType::Float32);
  return astype(pcp::apply<Dropout>({contiguous(in)}, p, std::move(draw)), x.dtype());
}

Tensor dropout_with(const Tensor& x, double p, uint64_t key, uint64_t start) {
  return dropout_with(x, p, std::make_shared<RandomDraw>(RandomDraw{uint64_t(x.numel() + 3) / 4, key, start}));
}

namespace {
// What a plan file's nodes of these primitives must satisfy against their inputs.
void check_softmax(const NodeCheck& c) {
  const int64_t T = attr_int(c.op, c.attrs, "causal_T");
  c.require(c.ndim(0) >= 1, "a 0-d input");
  c.require(T >= 0 && (T == 0 || rows_of(c.in[0].shape) % T == 0), "causal_T does not divide the rows");
  if (c.in.size() > 1) c.same_shapes(0, 1);
}

void check_layer_norm(const NodeCheck& c) {
  const auto& in = c.in;
  c.require(c.ndim(0) >= 1, "a 0-d input");
  for (size_t i = 1; i < 3; ++i)
    c.require(!in[i].defined || in[i].shape == Shape{in[0].shape.back()}, "weight or bias is not the last axis");
  const bool residual = c.attrs.count("residual") && attr_bool(c.op, c.attrs, "residual");
  c.require(residual == (in.size() == 4), "a residual input without the residual form, or the other way");
  if (residual)
    c.require(in[3].defined && in[3].shape == in[0].shape && in[0].dtype == DType::Float32 &&
                  is_compute_float(in[3].dtype),
              "the residual is not x's shape or x is not float32");
}

void check_layer_norm_backward(const NodeCheck& c) {
  const auto& in = c.in;
  const auto& a = c.attrs;
  c.require(c.ndim(0) >= 1, "a 0-d input");
  c.same_shapes(0, 2);
  if (a.count("low_dtype")) c.require(in[0].dtype == DType::Float32, "a 16-bit copy of a gradient that is not float32");
  if (a.count("partial_rows"))
    c.require(in[0].dtype == DType::Float32 && attr_int(c.op, a, "partial_rows") >= 1,
              "partial rows of a gradient that is not float32, or fewer than one");
  const bool g_fits = in[2].dtype == in[0].dtype ||  // or 16-bit for float32 x: a folded cast
                      (in[0].dtype == DType::Float32 && is_half_float(in[2].dtype));
  c.require(g_fits && (!in[1].defined || in[1].dtype == in[0].dtype) && in[3].dtype == DType::Float32 &&
                in[4].dtype == DType::Float32,
            "dtypes that do not fit");
  Shape rows(in[0].shape.begin(), in[0].shape.end() - 1);
  rows.push_back(1);
  c.require(!in[1].defined || in[1].shape == Shape{in[0].shape.back()}, "weight is not the last axis");
  c.require(in[3].shape == rows && in[4].shape == rows, "statistics are not one per row");
  const bool accumulate = a.count("accumulate") && attr_bool(c.op, a, "accumulate");
  c.require(accumulate == (in.size() == 6), "an accumulated gradient without the accumulate form, or the other way");
  if (accumulate)
    c.require(in[5].defined && in[5].shape == in[0].shape && in[5].dtype == DType::Float32 &&
                  in[0].dtype == DType::Float32,
              "the accumulated gradient is not float32 of x's shape");
}

void check_cross_entropy(const NodeCheck& c) {
  const TensorSpec& t = c.in[c.op == "cross_entropy" ? 1 : 2];
  c.require(c.ndim(0) >= 1 && is_integral(t.dtype), "logits must be at least 1-D and targets integers");
  c.require(t.shape == Shape(c.in[0].shape.begin(), c.in[0].shape.end() - 1), "targets do not match the logits' rows");
  if (c.op == "cross_entropy_backward") c.require(c.in[1].shape == t.shape, "the gradient does not match the targets");
}

// Plan files make these again by name (ops/primitive.h).
const bool registered = [] {
  for (const char* name : {"softmax", "log_softmax"})
    register_primitive(name, {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
      return std::shared_ptr<Primitive>(std::make_shared<Softmax>(n == "log_softmax", attr_int(n, a, "causal_T")));
    }, .inputs = {1}, .check = check_softmax, .gpu = true, .autocast = CastPolicy::Float32});
  for (const char* name : {"softmax_backward", "log_softmax_backward"})
    register_primitive(name, {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
      return std::shared_ptr<Primitive>(
          std::make_shared<SoftmaxBackward>(n == "log_softmax_backward", attr_int(n, a, "causal_T")));
    }, .inputs = {2}, .check = check_softmax, .gpu = true});
  register_primitive("layer_norm", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<LayerNorm>(attr_double(n, a, "eps"), out_dtype_attr(n, a),
                                                                  a.count("residual") && attr_bool(n, a, "residual")));
  }, .inputs = {3, 4}, .check = check_layer_norm, .optional_inputs = {1, 2}, .gpu = true,
                     .autocast = CastPolicy::Float32});
  register_primitive("layer_norm_backward", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    const bool accumulate = a.count("accumulate") && attr_bool(n, a, "accumulate");
    std::optional<DType> low;
    if (a.count("low_dtype")) {
      low = dtype_from_name(attr_str(n, a, "low_dtype"));
      if (!is_half_float(*low)) fail<ValueError>(n, ": low_dtype ", dtype_name(*low), " is not float16 or bfloat16");
    }
    const int64_t partial_rows = a.count("partial_rows") ? attr_int(n, a, "partial_rows") : 0;
    if (partial_rows < 0 || partial_rows > 65535)
      fail<ValueError>(n, ": partial_rows ", partial_rows, " is not in 0..65535 (a GPU dispatch's workgroups)");
    return std::shared_ptr<Primitive>(std::make_shared<LayerNormBackward>(accumulate, low, partial_rows));
  }, .inputs = {5, 6}, .check = check_layer_norm_backward, .optional_inputs = {1}, .gpu = true});
  register_primitive("cross_entropy", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<CrossEntropy>(
        attr_int(n, a, "ignore_index"), out_dtype_attr(n, a), a.count("keep_targets") && attr_bool(n, a, "keep_targets")));
  }, .inputs = {2}, .check = check_cross_entropy, .gpu = true, .autocast = CastPolicy::Float32});
  register_primitive("cross_entropy_backward", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(
        std::make_shared<CrossEntropyBackward>(attr_int(n, a, "ignore_index"), out_dtype_attr(n, a)));
  }, .inputs = {3, 4}, .check = check_cross_entropy, .gpu = true});
  register_primitive("dropout", {.make = [](const std::string& n, const Attributes& a, const SharedState& s) {
    return std::shared_ptr<Primitive>(std::make_shared<Dropout>(attr_double(n, a, "p"), shared_draw(n, s, 0)));
  }, .inputs = {1}, .check = [](const NodeCheck& c) {
    const double p = attr_double(c.op, c.attrs, "p");
    c.require(p >= 0.0 && p < 1.0, "p " + std::to_string(p) + " is not in [0, 1)");
  }, .gpu = true});
  return true;
}();
}  // namespace

}  // namespace pcp
