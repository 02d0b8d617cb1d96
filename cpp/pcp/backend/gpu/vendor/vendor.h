// NVIDIA's libraries for PCP's products and attention: on the CUDA runtime (backend/cuda/),
// matmuls run through cuBLASLt and attention through cuDNN's fused flash attention, on PCP's
// buffers, in the stream its own kernels run on. The libraries load at run time from NVIDIA's pip
// wheels (pcp[cuda]) or the system; where one is missing, PCP's own kernels run instead. No CUDA
// toolkit at build time.
#pragma once
#include <string>

#include "pcp/backend/gpu/ops.h"
#include "pcp/core/tensor.h"

namespace pcp::gpu::vendor {

// What the vendor path does on a device, for pcp.gpu_info().
struct Status {
  bool matmul = false, attention = false;  // the ops that take it
  std::string cublaslt, cudnn;             // the libraries loaded: their files and versions, or ""
  std::string note;                        // why it is off (or partly off), where it is
};
Status status(int device);

// Turns the vendor path off and on again at run time (on by default where it loaded), so that
// tests and benchmarks compare it with PCP's own kernels in one process.
void set_enabled(bool enabled);

// float32 matmuls compute in TF32 on tensor cores when allowed (PyTorch's allow_tf32; the
// default is no), on the vendor path only: PCP's own kernels compute float32 exactly.
void set_allow_tf32(bool allow);
bool allow_tf32();

// gpu::matmul through cuBLASLt: false when the vendor path does not take it (the caller runs
// PCP's kernels instead).
bool matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Shape& batch, float alpha = 1.0f);
// gpu::matmul_epilogue through cuBLASLt's GELU epilogues: false when not taken.
bool matmul_epilogue(MatmulEpilogue e, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& aux,
                     float alpha);

// Whether cuDNN's attention takes heads of this dtype on this device.
bool attention_available(DType dtype, int device);
// gpu::attention and gpu::attention_backward through cuDNN: false when not taken (no cuDNN,
// dropout, a layout it does not read).
bool attention(const AttentionHeads& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
               const Tensor& lse, double scale, bool causal, const AttentionDropout& drop);
bool attention_backward(const AttentionHeads& a, const AttentionHeads& grads, const Tensor& q, const Tensor& k,
                        const Tensor& v, const Tensor& o, const Tensor& go, const Tensor& lse, const Tensor& dq,
                        const Tensor& dk, const Tensor& dv, double scale, bool causal, const AttentionDropout& drop);

}  // namespace pcp::gpu::vendor
