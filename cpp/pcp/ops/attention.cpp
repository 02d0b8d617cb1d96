// scaled_dot_product_attention and qkv_attention: a fused float32 CPU kernel for (B, H, T, D)
// self-attention shapes, fused GPU kernels for heads up to 64 wide (on tensor cores for 16-bit
// heads, metal/coop/attention_*.glsl; else metal/attention*.comp, float32 math, where the composed
// path's scores would be large: see fusable()), with dropout on the attention weights inside
// them on a GPU, and composed from ops otherwise (other dtypes, broadcast batches,
// cross-attention shapes, dropout on the CPU).
//
// The fused path is flash-style (backend/cpu/attention.cpp): one (batch, head) at a
// time, scores in blocks, online softmax, no T x T matrix; it keeps each row's log-sum-exp for
// the backward pass. Its output lives in (B, T, H, D) memory, returned as a (B, H, T, D) view,
// so the usual `y.transpose(0, 2, 1, 3).reshape(B, T, C)` that merges heads costs no copy.
// qkv_attention takes GPT-2's packed projection (B, T, 3C) directly and returns (B, T, C): its
// gradient is one (B, T, 3C) tensor, with no split, transposes or slice scatters around it.
#include <array>
#include <atomic>
#include <cmath>
#include <vector>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"
#include "pcp/core/random.h"
#include "pcp/ops/autocast.h"
#include "pcp/ops/formula.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// (B, H, T, D) view of a (B, T, H, D) contiguous buffer.
Tensor heads_view(const Tensor& buf) {
  const Shape& s = buf.shape();  // (B, T, H, D)
  return buf.alias({s[0], s[2], s[1], s[3]}, {s[1] * s[2] * s[3], s[3], s[2] * s[3], 1}, buf.offset());
}

// softmax(scale q k^T) with the causal mask, composed from ops (differentiable to any order).
// The product applies the scale as it writes the scores (no pass over q or the scores; for a
// power of two, PyTorch's math path's bits, which scales q first).
Tensor attention_weights(const Tensor& q, const Tensor& k, double scale, bool causal) {
  const DType dt = promote_types(to_floating(q.dtype()), to_floating(k.dtype()));
  Tensor scores = matmul(astype(q, dt), swapaxes(k, -1, -2), scale);
  return causal ? causal_softmax(scores) : softmax(scores, -1);
}

// Dropout of the attention weights: the probability and the draw its mask comes from, read as the
// op runs (a plan's replay draws it again).
struct WeightDropout {
  double p = 0.0;
  RandomDrawPtr draw;
  gpu::AttentionDropout now() const { return {p, draw ? draw->key : 0, draw ? draw->start : 0}; }
};

// The attention VJP in ops, so that the gradient is itself differentiable (create_graph); with
// the fused kernels' dropout mask where they applied one.
std::array<Tensor, 3> attention_vjp_ops(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                                        double scale, bool causal, const WeightDropout& drop) {
  const auto masked = [&](const Tensor& x) { return drop.p != 0.0 ? dropout_with(x, drop.p, drop.draw) : x; };
  Tensor p = attention_weights(q, k, scale, causal);
  Tensor dv = matmul(swapaxes(masked(p), -1, -2), g);
  Tensor dp = masked(matmul(g, swapaxes(v, -1, -2)));
  Tensor ds = mul(p, sub(dp, sum(mul(dp, p), std::vector<int64_t>{-1}, true)));  // the scale: in the products
  return {matmul(ds, k, scale), matmul(swapaxes(ds, -1, -2), q, scale), dv};
}

// (B, H, T, D) heads of a packed (B, T, 3C) projection, and their merge back, in ops. The heads
// are views of (3, B, H, T, D) split on its first axis, so that their gradient is one
// concatenation of whole (contiguous) gradients and one strided copy back to (B, T, 3C), where
// splitting the last axis first would copy each head's gradient twice.
std::array<Tensor, 3> split_qkv(const Tensor& qkv, int64_t H) {
  const int64_t B = qkv.shape()[0], T = qkv.shape()[1], D = qkv.shape()[2] / 3 / H;
  const std::vector<Tensor> parts = split(permute(reshape(qkv, {B, T, 3, H, D}), {2, 0, 3, 1, 4}), 3, 0);
  std::array<Tensor, 3> out;
  for (size_t i = 0; i < 3; ++i) out[i] = reshape(parts[i], {B, H, T, D});
  return out;
}
Tensor merge_heads(const Tensor& x) {  // (B, H, T, D) -> (B, T, H * D)
  const Shape& s = x.shape();
  return reshape(swapaxes(x, 1, 2), {s[0], s[2], s[1] * s[3]});
}

// (B, T, H, D) of the heads in q (B, H, T, D), or of a packed qkv (B, T, 3 * H * D).
Shape head_buffer_shape(const Shape& q, int64_t packed_heads) {
  if (!packed_heads) return {q[0], q[2], q[1], q[3]};
  return {q[0], q[1], packed_heads, q[2] / 3 / packed_heads};
}

// Where the GPU kernels find the heads: of a packed (B, T, 3 H D) qkv, or of (B, H, T, D) q, k,
// v with one set of strides (the fused path's condition).
gpu::AttentionHeads gpu_heads(const std::vector<Tensor>& in, int64_t packed_heads) {
  const Tensor& x = in[0];
  const Strides& s = x.strides();
  if (packed_heads) {
    const int64_t C = x.shape()[2] / 3, D = C / packed_heads;
    return {x.shape()[0], packed_heads, x.shape()[1], D, x.offset(), x.offset() + C, x.offset() + 2 * C,
            s[0], D, s[1]};
  }
  return {x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3], x.offset(), in[1].offset(), in[2].offset(),
          s[0], s[1], s[2]};
}

// The attention output's memory, (B, T, H, D) contiguous, for the GPU kernels: o's own when it is
// the view the forward made, else a copy.
Tensor bthd(const Tensor& o, int64_t packed_heads) {
  const Tensor x = packed_heads ? o : swapaxes(o, 1, 2);
  return x.is_contiguous() ? x : contiguous(x);
}

// The fused backward. Inputs (q, k, v, o, lse, g, mask) with 4-D heads, or (qkv, o, lse, g, mask)
// when packed (mask: the forward's dropout bits). Outputs dq, dk, dv, or d(qkv).
class AttentionBackward : public Primitive {
 public:
  AttentionBackward(double scale, bool causal, int64_t packed_heads, const gpu::AttentionDropout& drop)
      : scale_(scale), causal_(causal), packed_heads_(packed_heads), drop_(drop) {}
  const char* name() const override { return "attention_backward"; }
  Attributes attributes() const override { return {{"scale", scale_}, {"causal", causal_}, {"packed_heads", packed_heads_}, {"dropout_p", drop_.p}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    if (packed_heads_) return {in[0]};
    return {in[0], in[1], in[2]};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    if (in[0].device().is_gpu()) {
      // The gradients are contiguous; the kernels write them with the heads' strides, so the heads
      // are read from contiguous memory too.
      const size_t n = packed_heads_ ? 1 : 3;  // o, lse, g follow the heads
      std::vector<Tensor> heads(in.begin(), in.begin() + n), d;
      for (Tensor& h : heads) h = contiguous(h);
      for (const TensorSpec& spec : specs) d.push_back(empty(spec));
      const Tensor o = bthd(in[n], packed_heads_), go = bthd(in[n + 2], packed_heads_);
      const Tensor &q = heads[0], &k = heads[n - 1 ? 1 : 0], &v = heads[n - 1 ? 2 : 0];
      gpu::attention_backward(gpu_heads(heads, packed_heads_), gpu_heads(d, packed_heads_), q, k, v, o, go, in[n + 1],
                              in[n + 3], d[0], d[n - 1 ? 1 : 0], d[n - 1 ? 2 : 0], scale_, causal_, drop_);
      return d;
    }
    if (drop_.p != 0.0) fail<NotImplementedError>("attention: dropout in the fused CPU kernel");  // fusable() says no
    if (packed_heads_) {
      Tensor dqkv = empty(specs[0]);
      cpu::qkv_attention_backward(in[0], packed_heads_, in[1], in[2], in[3], dqkv, scale_, causal_);
      return {dqkv};
    }
    // dq, dk, dv share one row stride: (B, T, H, D) blocks of one buffer, seen as heads.
    Shape s = head_buffer_shape(in[0].shape(), 0);
    s.insert(s.begin(), 3);
    Tensor buf = Tensor::empty(s, DType::Float32);
    const int64_t part = numel(s) / 3;
    Shape one(s.begin() + 1, s.end());
    std::vector<Tensor> d;
    for (int64_t i = 0; i < 3; ++i) d.push_back(heads_view(buf.alias(one, contiguous_strides(one), i * part)));
    cpu::attention_backward(in[0], in[1], in[2], in[3], in[4], in[5], d[0], d[1], d[2], scale_, causal_);
    return d;
  }

 private:
  double scale_;
  bool causal_;
  int64_t packed_heads_;
  gpu::AttentionDropout drop_;
};

// Fused attention over (q, k, v) heads, or over one packed qkv when packed_heads (H) is set.
// Outputs the attention (B, H, T, D) or (B, T, C), viewing (B, T, H, D) memory, and for the
// backward pass, not differentiable, each row's log-sum-exp (B, H, T) and the dropout mask's bits
// (int32 words; one unused word without dropout).
class Attention : public Primitive {
 public:
  Attention(double scale, bool causal, int64_t packed_heads, WeightDropout drop)
      : scale_(scale), causal_(causal), packed_heads_(packed_heads), drop_(std::move(drop)) {}
  const char* name() const override { return "attention"; }
  Attributes attributes() const override { return {{"scale", scale_}, {"causal", causal_}, {"packed_heads", packed_heads_}, {"dropout_p", drop_.p}}; }
  SharedState shared_state() const override { return drop_.draw ? SharedState{{}, {drop_.draw}} : SharedState{}; }
  bool draws_random() const override { return drop_.p != 0.0; }
  bool differentiable_output(size_t i) const override { return i == 0; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const Shape b = head_buffer_shape(in[0].shape, packed_heads_);  // (B, T, H, D)
    const Shape o = packed_heads_ ? Shape{b[0], b[1], b[2] * b[3]} : Shape{b[0], b[2], b[1], b[3]};
    const int64_t words = gpu::attention_mask_words({b[0], b[2], b[1], b[3], 0, 0, 0, 0, 0, 0}, drop_.p);
    return {{o, in[0].dtype, in[0].device}, {{b[0], b[2], b[1]}, DType::Float32, in[0].device},
            {{words}, DType::Int32, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Shape b = head_buffer_shape(in[0].shape(), packed_heads_);
    Tensor buf = Tensor::empty(b, in[0].dtype(), in[0].device()), lse = empty(specs[1]), mask = empty(specs[2]);
    if (in[0].device().is_gpu()) {
      const bool packed = packed_heads_ != 0;
      gpu::attention(gpu_heads(in, packed_heads_), in[0], in[packed ? 0 : 1], in[packed ? 0 : 2], buf, lse, mask,
                     scale_, causal_, drop_.now());
      if (packed) return {buf.alias(specs[0].shape, contiguous_strides(specs[0].shape), 0), lse, mask};
      return {heads_view(buf), lse, mask};
    }
    if (drop_.p != 0.0) fail<NotImplementedError>("attention: dropout in the fused CPU kernel");  // fusable() says no
    if (packed_heads_) {
      cpu::qkv_attention(in[0], packed_heads_, buf, lse, scale_, causal_);
      return {buf.alias(specs[0].shape, contiguous_strides(specs[0].shape), 0), lse, mask};
    }
    cpu::attention(in[0], in[1], in[2], buf, lse, scale_, causal_);
    return {heads_view(buf), lse, mask};
  }

  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                          const std::vector<Tensor>& gs, const std::vector<bool>&) override {
    const Tensor &output = outs[0], &lse = outs[1], &mask = outs[2], &g = gs[0];
    if (packed_heads_) {
      if (!grad_enabled())
        return {pcp::apply<AttentionBackward>({in[0], output, lse, astype(g, in[0].dtype()), mask}, scale_, causal_,
                                              packed_heads_, drop_.now())};
      auto [q, k, v] = split_qkv(in[0], packed_heads_);
      Tensor g4 = swapaxes(reshape(g, {q.shape()[0], q.shape()[2], q.shape()[1], q.shape()[3]}), 1, 2);
      auto d = attention_vjp_ops(q, k, v, g4, scale_, causal_, drop_);
      return {concatenate({merge_heads(d[0]), merge_heads(d[1]), merge_heads(d[2])}, 2)};
    }
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    if (grad_enabled()) {
      auto d = attention_vjp_ops(q, k, v, g, scale_, causal_, drop_);
      return {d[0], d[1], d[2]};
    }
    return pcp::apply_all<AttentionBackward>({q, k, v, output, lse, astype(g, q.dtype()), mask}, scale_, causal_, 0,
                                             drop_.now());
  }

 private:
  double scale_;
  bool causal_;
  int64_t packed_heads_;
  WeightDropout drop_;
};

std::atomic<int> g_gpu_attention{0};  // GpuAttention

// Whether the fused kernels take heads of width D in t: float32 on the CPU; on a GPU, what
// gpu::attention_fits says, with 16-bit heads at even offsets and strides (written in pairs),
// where the GPU policy picks them. `scores` is the element count of the T x T scores the
// composed path would hold (B H T S; a double, as the product may not fit an int64).
bool fusable(const Tensor& t, int64_t D, double dropout_p, double scores) {
  if (t.numel() == 0) return false;
  if (!t.device().is_gpu()) return dropout_p == 0.0 && t.dtype() == DType::Float32;
  // The GPU kernels number the dropout mask's bits in 32 bits; dropout of 1 draws nothing
  // (pcp::dropout's zeros), so the composed path keeps the generator's state.
  if (dropout_p == 1.0 || (dropout_p != 0.0 && scores >= 4294967296.0)) return false;
  const auto mode = GpuAttention(g_gpu_attention.load());
  if (mode == GpuAttention::Composed || !gpu::attention_fits(D, t.dtype()) || t.strides().back() != 1) return false;
  // The tensor-core kernels take every size, with dropout too (H200, (64, 6, 256, 64) bfloat16
  // with dropout 0.2: 0.57 against the composed path's 0.74 ms). The scalar ones (float32 math)
  // are slower than the composed products at GPT's shapes (measured on an H100), so by default
  // they take only sequences whose scores would fill more than 256 MiB, where they save that
  // memory.
  if (mode == GpuAttention::Auto && scores * 4 <= 256.0 * (1 << 20) &&
      !gpu::attention_on_tensor_cores(t.dtype(), t.device().index, dropout_p))
    return false;
  if (t.dtype() == DType::Float32) return true;
  bool even = t.offset() % 2 == 0;
  for (int64_t s : t.strides()) even = even && (s % 2 == 0 || s == 1);
  return even;
}

// The global generator's draws for dropout on the fused kernels' `weights` (B H T T) attention
// weights, reserved where and as pcp::dropout reserves them, so the mask is the composed path's.
WeightDropout reserve_dropout(double p, double weights) {
  if (p == 0.0) return {};
  return {p, Generator::global().draw((uint64_t(weights) + 3) / 4)};
}

// Under autocast, attention on a GPU computes in the scope's type, as its products do elsewhere.
Tensor low_on_gpu(const Tensor& t) {
  const std::optional<DType> low = autocast_dtype();
  return low && t.device().is_gpu() && t.dtype() == DType::Float32 ? astype(t, *low) : t;
}

void check_dropout(const char* op, double dropout_p) {
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) fail<ValueError>(op, ": dropout_p must be in [0, 1], got ", dropout_p);
}

}  // namespace

void set_gpu_attention(GpuAttention mode) { g_gpu_attention = int(mode); }

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                    std::optional<double> scale, double dropout_p) {
  const char* op = "scaled_dot_product_attention";
  check_dropout(op, dropout_p);
  if (!q.defined() || !k.defined() || !v.defined()) fail<ValueError>(op, ": got an undefined tensor");
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2)
    fail<ValueError>(op, ": q, k, v must be (..., T, D), got shapes ", shape_str(q.shape()), ", ",
                     shape_str(k.shape()), ", ", shape_str(v.shape()));
  const int64_t D = q.shape().back(), Sk = k.shape()[k.ndim() - 2];
  if (k.shape().back() != D)
    fail<ValueError>(op, ": q and k must share the last dimension, got shapes ", shape_str(q.shape()), " and ",
                     shape_str(k.shape()));
  if (v.shape()[v.ndim() - 2] != Sk)
    fail<ValueError>(op, ": k and v must have the same sequence length, got shapes ", shape_str(k.shape()), " and ",
                     shape_str(v.shape()));
  Shape bq(q.shape().begin(), q.shape().end() - 2), bk(k.shape().begin(), k.shape().end() - 2),
      bv(v.shape().begin(), v.shape().end() - 2);
  try {
    broadcast_shapes(broadcast_shapes(bq, bk, op), bv, op);
  } catch (const ValueError&) {
    fail<ValueError>(op, ": batch dimensions of q ", shape_str(q.shape()), ", k ", shape_str(k.shape()), " and v ",
                     shape_str(v.shape()), " cannot be broadcast together");
  }
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(D));
  const Tensor ql = low_on_gpu(q), kl = low_on_gpu(k), vl = low_on_gpu(v);  // q, k, v unless autocast on a GPU
  if (q.ndim() == 4 && q.shape() == k.shape() && q.shape() == v.shape()) {
    // On a GPU the kernels read q, k and v with one set of strides (contiguous heads).
    const bool gpu_ok = !q.device().is_gpu() || (ql.is_contiguous() && kl.is_contiguous() && vl.is_contiguous() &&
                                                 ql.dtype() == kl.dtype() && ql.dtype() == vl.dtype());
    const double scores = double(numel(Shape(q.shape().begin(), q.shape().end() - 1))) * double(Sk);
    if (gpu_ok && fusable(ql, D, dropout_p, scores) && fusable(kl, D, dropout_p, scores) &&
        fusable(vl, D, dropout_p, scores))
      return pcp::apply<Attention>({ql, kl, vl}, sc, causal, 0, reserve_dropout(dropout_p, scores));
  }
  // Under autocast on a GPU the composed path runs wholly in the low type, as PyTorch's attention
  // does: the softmax reads and writes the 16-bit scores (computing in float32), so no float32
  // copy of the T x S scores is made, cast or kept for backward.
  AutocastGuard scope(q.device().is_gpu() ? std::nullopt : autocast_dtype());
  return matmul(dropout(attention_weights(ql, kl, sc, causal), dropout_p), vl);
}

Tensor qkv_attention(const Tensor& qkv, int64_t num_heads, bool causal, std::optional<double> scale,
                     double dropout_p) {
  const char* op = "qkv_attention";
  check_dropout(op, dropout_p);
  if (!qkv.defined()) fail<ValueError>(op, ": got an undefined tensor");
  if (num_heads <= 0) fail<ValueError>(op, ": num_heads must be positive, got ", num_heads);
  if (qkv.ndim() != 3 || qkv.shape()[2] % (3 * num_heads) != 0)
    fail<ValueError>(op, ": expected qkv of shape (B, T, 3 * C) with C divisible by num_heads = ", num_heads,
                     ", got ", shape_str(qkv.shape()));
  const int64_t D = qkv.shape()[2] / 3 / num_heads;
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(D));
  const double scores = double(qkv.shape()[0]) * double(num_heads) * double(qkv.shape()[1]) * double(qkv.shape()[1]);
  if (const Tensor x = low_on_gpu(qkv); fusable(x, D, dropout_p, scores))
    return pcp::apply<Attention>({x}, sc, causal, num_heads, reserve_dropout(dropout_p, scores));
  // Under autocast the products read the heads in the low type: one cast of the packed
  // projection rather than one strided cast per head view.
  const std::optional<DType> low = autocast_dtype();
  auto [q, k, v] = split_qkv(low && qkv.dtype() == DType::Float32 ? astype(qkv, *low) : qkv, num_heads);
  return merge_heads(scaled_dot_product_attention(q, k, v, causal, sc, dropout_p));
}

namespace {
// Plan files make these again by name (ops/primitive.h).
// The packed (B, T, 3 H D) input or q, k, v; for the gradient also o, the log-sum-exp, o's
// gradient and the dropout mask.
void check_attention(const NodeCheck& c) {
  const auto& in = c.in;
  const int64_t heads = attr_int(c.op, c.attrs, "packed_heads");
  const size_t n_qkv = heads ? 1 : 3;
  Shape q_shape;  // q's (B, H, T, D)
  if (heads) {
    c.require(c.ndim(0) == 3 && heads > 0 && in[0].shape[2] % (3 * heads) == 0, "a packed input (B, T, 3 H D)");
    const Shape& x = in[0].shape;
    q_shape = {x[0], heads, x[1], x[2] / 3 / heads};
  } else {
    c.require(in.size() >= 3 && c.ndim(0) == 4 && c.ndim(1) == 4 && c.ndim(2) == 4, "q, k, v must be 4-D");
    c.same_shapes(0, 1);  // self-attention: the kernels take T from q
    c.same_shapes(1, 2);
    q_shape = in[0].shape;
  }
  const Shape lse_shape{q_shape[0], q_shape[1], q_shape[2]};  // the per-row statistics (B, H, T)
  for (size_t i = 1; i < n_qkv; ++i) c.require(in[i].dtype == in[0].dtype, "q, k and v differ in dtype");
  c.require(in[0].device.is_gpu() || in[0].dtype == DType::Float32, "the CPU kernels take float32");
  const bool backward = c.op == "attention_backward";
  c.require(in.size() == (backward ? n_qkv + 4 : n_qkv), "inputs that do not fit packed_heads");
  if (backward) {  // (q, k, v | qkv), o, lse, g, mask
    const Shape o_shape = heads ? Shape{q_shape[0], q_shape[2], q_shape[1] * q_shape[3]} : q_shape;
    const TensorSpec &o = in[n_qkv], &lse = in[n_qkv + 1], &g = in[n_qkv + 2];
    c.require(o.shape == o_shape && g.shape == o_shape && o.dtype == in[0].dtype && g.dtype == in[0].dtype,
              "o or its gradient does not match q");
    c.require(lse.shape == lse_shape && lse.dtype == DType::Float32, "the log-sum-exp is not one per row");
    c.require(in[n_qkv + 3].dtype == DType::Int32, "the dropout mask is not int32");
  }
}

const bool registered = register_primitive("attention", {.make = [](const std::string& n, const Attributes& a,
                                                            const SharedState& s) {
  const double p = attr_double(n, a, "dropout_p");
  return std::shared_ptr<Primitive>(std::make_shared<Attention>(
      attr_double(n, a, "scale"), attr_bool(n, a, "causal"), attr_int(n, a, "packed_heads"),
      WeightDropout{p, p != 0.0 ? shared_draw(n, s, 0) : nullptr}));
}, .inputs = {1, 3}, .check = check_attention, .gpu = true}) && register_primitive("attention_backward", {.make = [](const std::string& n, const Attributes& a,
                                                                          const SharedState&) {
  return std::shared_ptr<Primitive>(std::make_shared<AttentionBackward>(
      attr_double(n, a, "scale"), attr_bool(n, a, "causal"), attr_int(n, a, "packed_heads"),
      gpu::AttentionDropout{attr_double(n, a, "dropout_p"), 0, 0}));  // the backward reads the forward's mask
}, .inputs = {5, 7}, .check = check_attention, .gpu = true});
}  // namespace

}  // namespace pcp
