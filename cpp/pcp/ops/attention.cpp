// scaled_dot_product_attention: a fused float32 CPU kernel for (B, H, T, D) self-attention shapes,
// composed from ops otherwise (other dtypes, broadcast batches, cross-attention shapes, GPUs,
// dropout on the attention weights).
//
// The fused path works one (batch, head) at a time: scores = scale q k^T into a T x T block,
// the causal mask and softmax applied row by row, then out = p v, all with the packed GEMM.
// Its output lives in (B, T, H, D) memory and is returned as a (B, H, T, D) view, so the usual
// `y.transpose(0, 2, 1, 3).reshape(B, T, C)` that merges heads costs no copy. The gradients
// come from one fused backward pass in the same layout.
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

// Row-major view of head (b, h) of a 4-D tensor: element (i, j) at base + i * rs + j * cs.
struct Head {
  float* base;
  int64_t rs, cs;
};
Head head_of(const Tensor& t, int64_t b, int64_t h) {
  const Strides& st = t.strides();
  return {t.data<float>() + b * st[0] + h * st[1], st[2], st[3]};
}

// (B, H, T, D) view of a (B, T, H, D) contiguous buffer.
Tensor heads_view(const Tensor& buf) {
  const Shape& s = buf.shape();  // (B, T, H, D)
  return buf.alias({s[0], s[2], s[1], s[3]}, {s[1] * s[2] * s[3], s[3], s[2] * s[3], 1}, buf.offset());
}

// softmax(scale q k^T) with the causal mask, composed from ops (differentiable to any order).
Tensor attention_weights(const Tensor& q, const Tensor& k, double scale, bool causal) {
  Tensor scores = mul(matmul(q, swapaxes(k, -1, -2)), S(scale));
  return causal ? causal_softmax(scores) : softmax(scores, -1);
}

// Row i of a causal score block keeps columns 0..i: softmax over them, zeros after.
void softmax_block(float* p, int64_t T, int64_t S, bool causal) {
  const auto& k = cpu::kernels();
  if (!causal) return k.softmax_rows(DType::Float32, reinterpret_cast<const char*>(p), reinterpret_cast<char*>(p), T, S, false);
  for (int64_t i = 0; i < T; ++i) {
    float* row = p + i * S;
    const int64_t keep = std::min(S, i + 1);
    k.softmax_rows(DType::Float32, reinterpret_cast<const char*>(row), reinterpret_cast<char*>(row), 1, keep, false);
    std::fill(row + keep, row + S, 0.0f);
  }
}

// First-order backward of the fused attention. Inputs (q, k, v, p, g); the output packs dq, dk,
// dv as (3, B, T, H, D) (each in the forward output's layout).
class AttentionBackward : public Primitive {
 public:
  explicit AttentionBackward(double scale) : scale_(scale) {}
  const char* name() const override { return "attention_backward"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor &q = in[0], &k = in[1], &v = in[2], &p = in[3], &g = in[4];
    const int64_t B = q.shape()[0], H = q.shape()[1], T = q.shape()[2], D = q.shape()[3];
    Tensor out = Tensor::empty({3, B, T, H, D}, DType::Float32);
    const int64_t ld = H * D, part = B * T * H * D;
    float* po = out.data<float>();
    const auto& kt = cpu::kernels();
    parallel_for(B * H, 1, [&](int64_t s, int64_t e) {
      std::vector<float> dp(size_t(T * T));
      for (int64_t t = s; t < e; ++t) {
        const int64_t b = t / H, h = t % H;
        const Head hq = head_of(q, b, h), hk = head_of(k, b, h), hv = head_of(v, b, h), hg = head_of(g, b, h);
        const float* pb = p.data<float>() + t * T * T;
        float *dq = po + b * T * ld + h * D, *dk = dq + part, *dv = dk + part;
        // dv = p^T g; dp = g v^T; ds = p (dp - rowsum(dp p)) scale; dq = ds k; dk = ds^T q.
        cpu::gemm_f32(T, D, T, pb, 1, T, hg.base, hg.rs, hg.cs, dv, ld);
        cpu::gemm_f32(T, T, D, hg.base, hg.rs, hg.cs, hv.base, hv.cs, hv.rs, dp.data(), T);
        kt.softmax_backward_rows(DType::Float32, reinterpret_cast<const char*>(pb),
                                 reinterpret_cast<const char*>(dp.data()), reinterpret_cast<char*>(dp.data()), T, T,
                                 false);
        for (float& x : dp) x *= float(scale_);
        cpu::gemm_f32(T, D, T, dp.data(), T, 1, hk.base, hk.rs, hk.cs, dq, ld);
        cpu::gemm_f32(T, D, T, dp.data(), 1, T, hq.base, hq.rs, hq.cs, dk, ld);
      }
    });
    return out;
  }

 private:
  double scale_;
};

class Attention : public Primitive {
 public:
  Attention(double scale, bool causal) : scale_(scale), causal_(causal) {}
  const char* name() const override { return "attention"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    const int64_t B = q.shape()[0], H = q.shape()[1], T = q.shape()[2], D = q.shape()[3];
    Tensor out = Tensor::empty({B, T, H, D}, DType::Float32);
    p_ = Tensor::empty({B, H, T, T}, DType::Float32);  // the attention weights, kept for backward
    const int64_t ld = H * D;
    parallel_for(B * H, 1, [&](int64_t s, int64_t e) {
      for (int64_t t = s; t < e; ++t) {
        const int64_t b = t / H, h = t % H;
        const Head hq = head_of(q, b, h), hk = head_of(k, b, h), hv = head_of(v, b, h);
        float* pb = p_.data<float>() + t * T * T;
        cpu::gemm_f32(T, T, D, hq.base, hq.rs, hq.cs, hk.base, hk.cs, hk.rs, pb, T);
        for (int64_t i = 0; i < T * T; ++i) pb[i] *= float(scale_);
        softmax_block(pb, T, T, causal_);
        cpu::gemm_f32(T, D, T, pb, T, 1, hv.base, hv.rs, hv.cs, out.data<float>() + b * T * ld + h * D, ld);
      }
    });
    return heads_view(out);
  }

  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const Tensor&, const Tensor& g,
                          const std::vector<bool>&) override {
    const Tensor &q = in[0], &k = in[1], &v = in[2];
    if (!grad_enabled()) {
      Tensor packed = pcp::apply<AttentionBackward>({q, k, v, p_, astype(g, DType::Float32)}, scale_);
      const Shape& s = q.shape();
      auto part = [&](int64_t i) { return heads_view(reshape(slice(packed, 0, i, i + 1), {s[0], s[2], s[1], s[3]})); };
      return {part(0), part(1), part(2)};
    }
    // Higher order: the same formulas in ops, so the gradient is itself differentiable.
    Tensor p = attention_weights(q, k, scale_, causal_);
    Tensor dv = matmul(swapaxes(p, -1, -2), g);
    Tensor dp = matmul(g, swapaxes(v, -1, -2));
    Tensor ds = mul(mul(p, sub(dp, sum(mul(dp, p), std::vector<int64_t>{-1}, true))), S(scale_));
    return {matmul(ds, k), matmul(swapaxes(ds, -1, -2), q), dv};
  }

 private:
  double scale_;
  bool causal_;
  Tensor p_;
};

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                                    std::optional<double> scale, double dropout_p) {
  const char* op = "scaled_dot_product_attention";
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) fail<ValueError>(op, ": dropout_p must be in [0, 1], got ", dropout_p);
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
  const bool fusable = q.ndim() == 4 && q.shape() == k.shape() && q.shape() == v.shape() && q.numel() > 0 &&
                       q.dtype() == DType::Float32 && k.dtype() == DType::Float32 && v.dtype() == DType::Float32 &&
                       !q.device().is_gpu() && dropout_p == 0.0;
  if (fusable) return pcp::apply<Attention>({q, k, v}, sc, causal);
  return matmul(dropout(attention_weights(q, k, sc, causal), dropout_p), v);
}

}  // namespace pcp
