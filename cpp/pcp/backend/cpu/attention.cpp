// CPU host code of fused attention (ops/attention.cpp): one (batch, head) per task of the
// thread pool, each running the flash kernel (backend/cpu/kernels/attention.cpp).
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"

namespace pcp::cpu {
namespace {

// Element (b, h, t, d) of a set of heads at p[b * sb + h * sh + t * st + d * sd].
struct Heads {
  float* p;
  int64_t sb, sh, st, sd;
  float* head(int64_t b, int64_t h) const { return p + b * sb + h * sh; }
  AttnView at(int64_t b, int64_t h) const { return {head(b, h), st, sd}; }
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

// Runs the flash kernel over every (batch, head); o is a (B, T, H, D) contiguous buffer.
void flash_forward(const Heads& q, const Heads& k, const Heads& v, int64_t B, int64_t H, int64_t T, int64_t D,
                   double scale, bool causal, float* o, float* lse) {
  const auto& kt = kernels();
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
  const auto& kt = kernels();
  parallel_for(B * H, 1, [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) {
      const int64_t b = t / H, h = t % H;
      kt.attention_backward(T, D, float(scale), causal, q.at(b, h), k.at(b, h), v.at(b, h), o.at(b, h), g.at(b, h),
                            lse + t * T, dq.head(b, h), dk.head(b, h), dv.head(b, h), dq.st);
    }
  });
}

}  // namespace

void attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse, double scale,
               bool causal) {
  const Shape& s = q.shape();  // (B, H, T, D)
  flash_forward(heads_of(q), heads_of(k), heads_of(v), s[0], s[1], s[2], s[3], scale, causal, o.data<float>(),
                lse.data<float>());
}

void qkv_attention(const Tensor& qkv, int64_t H, const Tensor& o, const Tensor& lse, double scale, bool causal) {
  const int64_t B = qkv.shape()[0], T = qkv.shape()[1], D = qkv.shape()[2] / 3 / H;
  flash_forward(packed_heads(qkv, H, D, 0), packed_heads(qkv, H, D, 1), packed_heads(qkv, H, D, 2), B, H, T, D, scale,
                causal, o.data<float>(), lse.data<float>());
}

void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                        const Tensor& g, const Tensor& dq, const Tensor& dk, const Tensor& dv, double scale,
                        bool causal) {
  const Shape& s = q.shape();
  flash_backward(heads_of(q), heads_of(k), heads_of(v), heads_of(o), heads_of(g), lse.data<float>(), s[0], s[1], s[2],
                 s[3], scale, causal, heads_of(dq), heads_of(dk), heads_of(dv));
}

void qkv_attention_backward(const Tensor& qkv, int64_t H, const Tensor& o, const Tensor& lse, const Tensor& g,
                            const Tensor& dqkv, double scale, bool causal) {
  const int64_t B = qkv.shape()[0], T = qkv.shape()[1], D = qkv.shape()[2] / 3 / H;
  flash_backward(packed_heads(qkv, H, D, 0), packed_heads(qkv, H, D, 1), packed_heads(qkv, H, D, 2),
                 packed_heads(o, H, D, 0), packed_heads(g, H, D, 0), lse.data<float>(), B, H, T, D, scale, causal,
                 packed_heads(dqkv, H, D, 0), packed_heads(dqkv, H, D, 1), packed_heads(dqkv, H, D, 2));
}

}  // namespace pcp::cpu
