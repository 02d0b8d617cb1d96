// GPU host code of fused attention (ops/attention.cpp): the flash kernels metal/attention*.comp.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>

#include "pcp/backend/gpu/launch.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

struct Params {  // metal/attention.glsl
  uint32_t B, H, T, D, causal, in_type, out_type;
  float scale;
  uint32_t q_off, k_off, v_off;
  int32_t sb, sh, st;
  uint32_t g_off, g2_off;
};

Params params(const AttentionHeads& a, const Tensor& x, double scale, bool causal) {
  const auto i32 = [](int64_t v, const char* what) { return int32_t(u32(v, what)); };
  const uint32_t type = type_code("attention", x);
  return {u32(a.B, "batch"), u32(a.H, "heads"), u32(a.T, "sequence length"), u32(a.D, "head size"),
          uint32_t(causal), type, type, float(scale), u32(a.q_off, "offset"), u32(a.k_off, "offset"),
          u32(a.v_off, "offset"), i32(a.sb, "stride"), i32(a.sh, "stride"), i32(a.st, "stride"), 0, 0};
}

// One workgroup of 64 invocations per 64 rows of each (batch, head), up to the dispatch limit.
uint32_t row_blocks(const AttentionHeads& a) {
  return uint32_t(std::min<int64_t>(a.B * a.H * ((a.T + 63) / 64), 65535));
}

}  // namespace

bool attention_fits(int64_t D, DType dtype) {
  return D > 0 && D <= 64 && D % 2 == 0 &&
         (dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16);
}

void attention(const AttentionHeads& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
               const Tensor& lse, double scale, bool causal) {
  if (a.B * a.H * a.T == 0) return;
  Params p = params(a, q, scale, causal);
  p.g_off = u32(o.offset(), "offset");
  rt().dispatch(q.device().index, "attention", {buffer_of(q), buffer_of(k), buffer_of(v), buffer_of(o), buffer_of(lse)},
                &p, sizeof p, row_blocks(a));
}

void attention_backward(const AttentionHeads& a, const AttentionHeads& grads, const Tensor& q, const Tensor& k,
                        const Tensor& v, const Tensor& o, const Tensor& go, const Tensor& lse, const Tensor& dq,
                        const Tensor& dk, const Tensor& dv, double scale, bool causal) {
  if (a.B * a.H * a.T == 0) return;
  Tensor delta = Tensor::empty({a.B, a.H, a.T}, DType::Float32, q.device());
  Params p = params(a, q, scale, causal);
  p.g_off = u32(grads.q_off, "offset");
  rt().dispatch(q.device().index, "attention_dq",
                {buffer_of(q), buffer_of(k), buffer_of(v), buffer_of(o), buffer_of(go), buffer_of(lse),
                 buffer_of(delta), buffer_of(dq)},
                &p, sizeof p, row_blocks(a));
  p.g_off = u32(grads.k_off, "offset");
  p.g2_off = u32(grads.v_off, "offset");
  rt().dispatch(q.device().index, "attention_dkv",
                {buffer_of(q), buffer_of(k), buffer_of(v), buffer_of(go), buffer_of(lse), buffer_of(delta),
                 buffer_of(dk), buffer_of(dv)},
                &p, sizeof p, row_blocks(a));
}

}  // namespace pcp::gpu
