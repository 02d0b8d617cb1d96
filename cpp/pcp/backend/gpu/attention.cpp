// GPU host code of fused attention (ops/attention.cpp): cuDNN's on the CUDA runtime where it
// loaded (gpu/vendor/), else the flash kernels, on tensor cores for 16-bit heads where the device has them (metal/coop/attention_cm2.glsl with
// VK_NV_cooperative_matrix2, else metal/coop/attention_coop.glsl), else with scalar float32 math
// (metal/attention*.comp).
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/vendor/vendor.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

struct Params {  // metal/attention.glsl
  uint32_t B, H, T, D, causal, in_type, out_type;
  float scale;
  uint32_t q_off, k_off, v_off;
  int32_t sb, sh, st;
  uint32_t g_off, g2_off;
  float drop, drop_scale;
};

Params params(const AttentionHeads& a, const Tensor& x, double scale, bool causal, const AttentionDropout& drop) {
  const auto i32 = [](int64_t v, const char* what) { return int32_t(u32(v, what)); };
  const uint32_t type = type_code("attention", x);
  return {u32(a.B, "batch"), u32(a.H, "heads"), u32(a.T, "sequence length"), u32(a.D, "head size"),
          uint32_t(causal), type, type, float(scale), u32(a.q_off, "offset"), u32(a.k_off, "offset"),
          u32(a.v_off, "offset"), i32(a.sb, "stride"), i32(a.sh, "stride"), i32(a.st, "stride"), 0, 0,
          float(drop.p), drop.p != 0.0 ? float(1.0 / (1.0 - drop.p)) : 1.0f};
}

// One workgroup per 64 rows of each (batch, head), up to the dispatch limit (the kernels loop).
uint32_t row_blocks(const AttentionHeads& a) {
  return uint32_t(std::min<int64_t>(a.B * a.H * ((a.T + 63) / 64), 65535));
}

// The suffix of the tensor-core kernels for heads of `dtype` on this device ("_cm2_bf16",
// "_coop_f16", ...), or "" for the scalar ones. PCP_ATTENTION_KERNEL=coop keeps a device with
// VK_NV_cooperative_matrix2 on the VK_KHR_cooperative_matrix kernels (to compare them).
std::string tensor_core_suffix(DType dtype, int device) {
  const char* kernel = std::getenv("PCP_ATTENTION_KERNEL");  // read per call: the tests switch it
  const bool khr_only = kernel && std::strcmp(kernel, "coop") == 0;
  if (dtype != DType::BFloat16 && dtype != DType::Float16) return "";
  const DeviceInfo info = rt().device_info(device);
  const std::string type = dtype == DType::BFloat16 ? "bf16" : "f16";
  if (!(dtype == DType::BFloat16 ? info.tensor_core_bf16 : info.tensor_core_f16)) return "";
  if (info.coopmat2 && !khr_only && find_kernel("attention_cm2_" + type)) return "_cm2_" + type;
  return find_kernel("attention_coop_" + type) ? "_coop_" + type : "";
}

}  // namespace

bool attention_on_tensor_cores(DType dtype, int device, double dropout_p) {
  if (!runtime() || device >= rt().device_count()) return false;
  if (vendor::attention_available(dtype, device)) return dropout_p == 0.0;  // cuDNN's, without dropout
  return !tensor_core_suffix(dtype, device).empty();
}

bool attention_fits(int64_t D, DType dtype) {
  return D > 0 && D <= 64 && D % 2 == 0 &&
         (dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16);
}

int64_t attention_mask_words(const AttentionHeads& a, double dropout_p) {
  return dropout_p != 0.0 ? std::max<int64_t>(1, (a.B * a.H * a.T * a.T + 31) / 32) : 1;
}

void attention(const AttentionHeads& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
               const Tensor& lse, const Tensor& mask, double scale, bool causal, const AttentionDropout& drop) {
  if (a.B * a.H * a.T == 0) return;
  if (vendor::attention(a, q, k, v, o, lse, scale, causal, drop)) return;  // cuDNN, on the CUDA runtime
  Params p = params(a, q, scale, causal, drop);
  if (drop.p != 0.0) {  // the mask's bits, once: the backward kernels read them too
    struct {
      uint32_t n, key_lo, key_hi, start_lo, start_hi;
      float prob;
    } mp{u32(a.B * a.H * a.T * a.T, "dropout mask"), uint32_t(drop.key), uint32_t(drop.key >> 32),
         uint32_t(drop.start), uint32_t(drop.start >> 32), float(drop.p)};
    launch(mask, "attention_mask", {buffer_of(mask)}, mp, attention_mask_words(a, drop.p));
  }
  p.g_off = u32(o.offset(), "offset");
  const std::string suffix = tensor_core_suffix(q.dtype(), q.device().index);
  rt().dispatch(q.device().index, "attention" + suffix,
                {buffer_of(q), buffer_of(k), buffer_of(v), buffer_of(o), buffer_of(lse), buffer_of(mask)},
                &p, sizeof p, row_blocks(a));
}

void attention_backward(const AttentionHeads& a, const AttentionHeads& grads, const Tensor& q, const Tensor& k,
                        const Tensor& v, const Tensor& o, const Tensor& go, const Tensor& lse, const Tensor& mask,
                        const Tensor& dq, const Tensor& dk, const Tensor& dv, double scale, bool causal,
                        const AttentionDropout& drop) {
  if (a.B * a.H * a.T == 0) return;
  if (vendor::attention_backward(a, grads, q, k, v, o, go, lse, dq, dk, dv, scale, causal, drop)) return;
  Tensor delta = Tensor::empty({a.B, a.H, a.T}, DType::Float32, q.device());
  Params p = params(a, q, scale, causal, drop);
  p.g_off = u32(grads.q_off, "offset");
  const std::string suffix = tensor_core_suffix(q.dtype(), q.device().index);
  rt().dispatch(q.device().index, "attention_dq" + suffix,
                {buffer_of(q), buffer_of(k), buffer_of(v), buffer_of(o), buffer_of(go), buffer_of(lse),
                 buffer_of(delta), buffer_of(dq), buffer_of(mask)},
                &p, sizeof p, row_blocks(a));
  p.g_off = u32(grads.k_off, "offset");
  p.g2_off = u32(grads.v_off, "offset");
  rt().dispatch(q.device().index, "attention_dkv" + suffix,
                {buffer_of(q), buffer_of(k), buffer_of(v), buffer_of(go), buffer_of(lse), buffer_of(delta),
                 buffer_of(dk), buffer_of(dv), buffer_of(mask)},
                &p, sizeof p, row_blocks(a));
}

}  // namespace pcp::gpu
