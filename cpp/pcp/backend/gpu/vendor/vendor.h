// NVIDIA's libraries on PCP's own GPU memory: on a Vulkan device that is an NVIDIA GPU, products
// run through cuBLASLt and attention through cuDNN, on the Vulkan buffers themselves (exported
// and imported into CUDA once per allocator block), ordered against the Vulkan commands by one
// shared timeline semaphore (Runtime::share). Optional and automatic: the libraries load at run
// time from NVIDIA's pip wheels (pcp[cuda]) or the system, and where they are missing, or
// PCP_GPU_VENDOR=0, the Vulkan kernels run as before. No CUDA toolkit at build time.
#pragma once
#include <string>

#include "pcp/backend/gpu/ops.h"
#include "pcp/core/tensor.h"

namespace pcp::gpu::vendor {

// What the vendor path does on a device, for pcp.gpu_info().
struct Status {
  bool matmul = false, attention = false;  // the ops that take it
  std::string cuda, cublaslt, cudnn;       // the libraries loaded: their files and versions, or ""
  std::string note;                        // why it is off (or partly off), where it is
};
Status status(int device);

// Called before the device's first allocation (gpu/memory.cpp; status() too), once: loads the
// libraries and makes the device's memory shareable where the vendor path can run there.
void prepare(int device);

// Turns the vendor path off and on again at run time (on by default where it loaded), so that
// tests and benchmarks compare it with PCP's own kernels in one process.
void set_enabled(bool enabled);
// Test hook: the next n imports of a buffer into CUDA fail, as a refused import would.
void fail_imports(int n);

// float32 matmuls compute in TF32 on tensor cores when allowed (PyTorch's allow_tf32; the
// default is no), on the vendor path only: PCP's own kernels compute float32 exactly.
void set_allow_tf32(bool allow);
bool allow_tf32();

// gpu::matmul through cuBLASLt: false when the vendor path does not take it (the caller runs the
// Vulkan kernels instead).
bool matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Shape& batch);

// gpu::attention and gpu::attention_backward through cuDNN's fused flash attention: false when
// not taken (no cuDNN, dropout, a layout it does not read).
bool attention(const AttentionHeads& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
               const Tensor& lse, double scale, bool causal, const AttentionDropout& drop);
bool attention_backward(const AttentionHeads& a, const AttentionHeads& grads, const Tensor& q, const Tensor& k,
                        const Tensor& v, const Tensor& o, const Tensor& go, const Tensor& lse, const Tensor& dq,
                        const Tensor& dk, const Tensor& dv, double scale, bool causal, const AttentionDropout& drop);

}  // namespace pcp::gpu::vendor
