// scaled_dot_product_attention and qkv_attention: a fused float32 CPU kernel for (B, H, T, D)
// self-attention shapes, composed from ops otherwise (other dtypes, broadcast batches,
// cross-attention shapes, GPUs, dropout on the attention weights).
//
// The fused path is flash-style (backend/cpu/kernels/attention.cpp): one (batch, head) at a
// time, scores in blocks, online softmax, no T x T matrix; it keeps each row's log-sum-exp for
// the backward pass. Its output lives in (B, T, H, D) memory, returned as a (B, H, T, D) view,
// so the usual `y.transpose(0, 2, 1, 3).reshape(B, T, C)` that merges heads costs no copy.
// qkv_attention takes GPT-2's packed projection (B, T, 3C) directly and returns (B, T, C): its
// gradient is one (B, T, 3C) tensor, with no split, transposes or slice scatters around it.
#include <array>
#include <cmath>
#include <vector>

#include "pcp/autograd/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

Tensor S(double v) { return weak_scalar(v); }

// Element (b, h, t, d) of a set of heads at p[b * sb + h * sh + t * st + d * sd].
struct Heads {
  float* p;
  int64_t sb, sh, st, sd;
  float* head(int64_t b, int64_t h) const { return p + b * sb + h * sh; }
  cpu::AttnView at(int64_t b, int64_t h) const { return {head(b, h), st, sd}; }
};
Heads heads_of(const Tensor& t) {  // a (B, H, T, D) tensor
  const Strides& s = t.strides();
  return {t.data<float>(), s[0], s[1], s[2], s[3]};
}
// Part `part` of a (B, T, parts * H * D) tensor as heads: q, k, v are parts 0, 1, 2 of qkv.
Heads packed_heads(const Tensor& t, int64_t H, int64_t D, int64_t part) {
  const Strides& s = t.strides();
  return {t.data<float>() + part * H * D * s[2], s[0], D * s[2], s[1], s[2]};
}

// (B, H, T, D) view of a (B, T, H, D) contiguous buffer.
Tensor heads_view(const Tensor& buf) {
  const Shape& s = buf.shape();  // (B, T, H, D)
  return buf.alias({s[0], s[2], s[1], s[3]}, {s[1] * s[2] * s[3], s[3], s[2] * s[3], 1}, buf.offset());
}

// Runs the flash kernel over every (batch, head); o is a (B, T, H, D) contiguous buffer.
void flash_forward(const Heads& q, const Heads& k, const Heads& v, int64_t B, int64_t H, int64_t T, int64_t D,
                   double scale, bool causal, float* o, float* lse) {
  const auto& kt = cpu::kernels();
  parallel_for(B * H, 1, [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t b = t / H, h = t % H;
      kt.attention_forward(T, D, float(scale), causal, q.at(b, h), k.at(b, h), v.at(b, h), o + (b * T * H + h) * D,
                           H * D, lse + t * T);
    }
  });
}

// dq, dk, dv share a row stride and have unit column stride.
void flash_backward(const Heads& q, const Heads& k, const Heads& v, const Heads& o, const Heads& g, const float* lse,
                    int64_t B, int64_t H, int64_t T, int64_t D, double scale, bool causal, const Heads& dq,
                    const Heads& dk, const Heads& dv) {
  const auto& kt = cpu::kernels();
  parallel_for(B * H, 1, [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t b = t / H, h = t % H;
      kt.attention_backward(T, D, float(scale), causal, q.at(b, h), k.at(b, h), v.at(b, h), o.at(b, h), g.at(b, h),
                            lse + t * T, dq.head(b, h), dk.head(b, h), dv.head(b, h), dq.st);
    }
  });
}

// softmax(scale q k^T) with the causal mask, composed from ops (differentiable to any order).
Tensor attention_weights(const Tensor& q, const Tensor& k, double scale, bool causal) {
  Tensor scores = mul(matmul(q, swapaxes(k, -1, -2)), S(scale));
  return causal ? causal_softmax(scores) : softmax(scores, -1);
}

// The attention VJP in ops, so that the gradient is itself differentiable (create_graph).
std::array<Tensor, 3> attention_vjp_ops(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
                                        double scale, bool causal) {
  Tensor p = attention_weights(q, k, scale, causal);
  Tensor dv = matmul(swapaxes(p, -1, -2), g);
  Tensor dp = matmul(g, swapaxes(v, -1, -2));
  Tensor ds = mul(mul(p, sub(dp, sum(mul(dp, p), std::vector<int64_t>{-1}, true))), S(scale));
  return {matmul(ds, k), matmul(swapaxes(ds, -1, -2), q), dv};
}

// (B, H, T, D) heads of a packed (B, T, 3C) projection, and their merge back, in ops.
std::array<Tensor, 3> split_qkv(const Tensor& qkv, int64_t H) {
  const int64_t B = qkv.shape()[0], T = qkv.shape()[1], C = qkv.shape()[2] / 3;
  std::array<Tensor, 3> out;
  for (int64_t i = 0; i < 3; ++i)
    out[size_t(i)] = swapaxes(reshape(slice(qkv, 2, i * C, (i + 1) * C), {B, T, H, C / H}), 1, 2);
  return out;
}
Tensor merge_heads(const Tensor& x) {  // (B, H, T, D) -> (B, T, H * D)
  const Shape& s = x.shape();
  return reshape(swapaxes(x, 1, 2), {s[0], s[2], s[1] * s[3]});
}

// The fused backward. Inputs (q, k, v, o, lse, g) with 4-D heads, or (qkv, o, lse, g) when
// packed. Output: dq, dk, dv packed as (3, B, T, H, D), or d(qkv) as (B, T, 3C).
class AttentionBackward : public Primitive {
 public:
  AttentionBackward(double scale, bool causal, int64_t packed_heads)
      : scale_(scale), causal_(causal), packed_heads_(packed_heads) {}
  const char* name() const override { return "attention_backward"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const int64_t H = packed_heads_;
    if (H) {
      const Tensor &qkv = in[0], &o = in[1], &lse = in[2], &g = in[3];
      const int64_t B = qkv.shape()[0], T = qkv.shape()[1], D = qkv.shape()[2] / 3 / H;
      Tensor out = Tensor::empty(qkv.shape(), DType::Float32);
      flash_backward(packed_heads(qkv, H, D, 0), packed_heads(qkv, H, D, 1), packed_heads(qkv, H, D, 2),
                     packed_heads(o, H, D, 0), packed_heads(g, H, D, 0), lse.data<float>(), B, H, T, D, scale_, causal_,
                     packed_heads(out, H, D, 0), packed_heads(out, H, D, 1), packed_heads(out, H, D, 2));
      return out;
    }
    const Tensor &q = in[0], &o = in[3], &lse = in[4], &g = in[5];
    const int64_t B = q.shape()[0], Hh = q.shape()[1], T = q.shape()[2], D = q.shape()[3];
    Tensor out = Tensor::empty({3, B, T, Hh, D}, DType::Float32);
    const Heads dq{out.data<float>(), T * Hh * D, D, Hh * D, 1};
    Heads dk = dq, dv = dq;
    dk.p += B * T * Hh * D, dv.p += 2 * B * T * Hh * D;
    flash_backward(heads_of(q), heads_of(in[1]), heads_of(in[2]), heads_of(o), heads_of(g), lse.data<float>(), B, Hh,
                   T, D, scale_, causal_, dq, dk, dv);
    return out;
  }

 private:
  double scale_;
  bool causal_;
  int64_t packed_heads_;
};

// Fused attention over (q, k, v) heads, or over one packed qkv when packed_heads (H) is set.
class Attention : public Primitive {
 public:
  Attention(double scale, bool causal, int64_t packed_heads = 0)
      : scale_(scale), causal_(causal), packed_heads_(packed_heads) {}
  const char* name() const override { return "attention"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const int64_t H = packed_heads_ ? packed_heads_ : in[0].shape()[1];
    const int64_t B = in[0].shape()[0], T = in[0].shape()[packed_heads_ ? 1 : 2];
    const int64_t D = packed_heads_ ? in[0].shape()[2] / 3 / H : in[0].shape()[3];
    Tensor out = Tensor::empty({B, T, H, D}, DType::Float32);
    lse_ = Tensor::empty({B, H, T}, DType::Float32);  // kept for backward
    if (packed_heads_)
      flash_forward(packed_heads(in[0], H, D, 0), packed_heads(in[0], H, D, 1), packed_heads(in[0], H, D, 2), B, H,
                    T, D, scale_, causal_, out.data<float>(), lse_.data<float>());
    else
      flash_forward(heads_of(in[0]), heads_of(in[1]), heads_of(in[2]), B, H, T, D, scale_, causal_,
                    out.data<float>(), lse_.data<float>());
    return packed_heads_ ? out.alias({B, T, H * D}, {T * H * D, H * D, 1}, out.offset()) : heads_view(out);
  }

  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const Tensor& output, const Tensor& g,
                          const std::vector<bool>&) override {
    if (packed_heads_) {
      if (!grad_enabled())
        return {pcp::apply<AttentionBackward>({in[0], output, lse_, astype(g, DType::Float32)}, scale_, causal_,
                                              packed_heads_)};
      auto [q, k, v] = split_qkv(in[0], packed_heads_);
      Tensor g4 = swapaxes(reshape(g, {q.shape()[0], q.shape()[2], q.shape()[1], q.shape()[3]}), 1, 2);
      auto d = attention_vjp_ops(q, k, v, g4, scale_, causal_);
      return {concatenate({merge_heads(d[0]), merge_heads(d[1]), merge_heads(d[2])}, 2)};
    }
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    if (grad_enabled()) {
      auto d = attention_vjp_ops(q, k, v, g, scale_, causal_);
      return {d[0], d[1], d[2]};
    }
    Tensor packed =
        pcp::apply<AttentionBackward>({q, k, v, output, lse_, astype(g, DType::Float32)}, scale_, causal_, 0);
    const Shape& s = q.shape();
    auto part = [&](int64_t i) { return heads_view(reshape(slice(packed, 0, i, i + 1), {s[0], s[2], s[1], s[3]})); };
    return {part(0), part(1), part(2)};
  }

 private:
  double scale_;
  bool causal_;
  int64_t packed_heads_;
  Tensor lse_;
};

bool fusable(const Tensor& t, double dropout_p) {
  return t.dtype() == DType::Float32 && !t.device().is_gpu() && dropout_p == 0.0 && t.numel() > 0;
}

void check_dropout(const char* op, double dropout_p) {
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) fail<ValueError>(op, ": dropout_p must be in [0, 1], got ", dropout_p);
}

}  // namespace

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
  if (q.ndim() == 4 && q.shape() == k.shape() && q.shape() == v.shape() && fusable(q, dropout_p) &&
      fusable(k, dropout_p) && fusable(v, dropout_p))
    return pcp::apply<Attention>({q, k, v}, sc, causal);
  return matmul(dropout(attention_weights(q, k, sc, causal), dropout_p), v);
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
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(qkv.shape()[2] / 3 / num_heads));
  if (fusable(qkv, dropout_p)) return pcp::apply<Attention>({qkv}, sc, causal, num_heads);
  auto [q, k, v] = split_qkv(qkv, num_heads);
  return merge_heads(scaled_dot_product_attention(q, k, v, causal, sc, dropout_p));
}

}  // namespace pcp
