// A Vulkan device seen from CUDA (internal to gpu/vendor/): its context, one stream, the imported
// timeline semaphore, and the device addresses of PCP's buffers.
#pragma once
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/backend/gpu/vendor/cuda_api.h"
#include "pcp/backend/gpu/vendor/library.h"
#include "pcp/core/tensor.h"

namespace pcp::gpu::vendor {

struct CudaFns {
  PCP_CUDA_FNS(PCP_DECLARE_FN_)
};
// The driver's entry points; only called once a CudaDevice exists (so libcuda has loaded).
const CudaFns& cu();
// A RuntimeError naming `what` and the driver's message, unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);

// Makes a context current on this thread for a scope, as it found it after.
class ContextScope {
 public:
  explicit ContextScope(CUcontext ctx);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

class CudaDevice {
 public:
  // The CUDA device with the Vulkan device's UUID; throws RuntimeError where there is none.
  CudaDevice(int index, const DeviceInfo& info);
  ~CudaDevice();
  // Takes the runtime's timeline semaphore (after Runtime::share).
  void import_timeline();

  int index() const { return index_; }
  CUcontext context() const { return ctx_; }
  CUstream stream() const { return stream_; }
  int compute_capability() const { return cc_; }  // 90 for Hopper
  CUdeviceptr workspace() const { return workspace_; }
  size_t workspace_bytes() const { return kWorkspaceBytes; }

  // The device address of t's first element: its buffer imported into CUDA on first use.
  CUdeviceptr address(const Tensor& t);
  // The addresses of several tensors; false (with a warning, once) when one cannot be imported,
  // and the caller runs PCP's own kernels instead.
  bool addresses(std::initializer_list<const Tensor*> ts, std::initializer_list<CUdeviceptr*> out);
  // Test hook (pcp._core._vendor_fail_imports): the next n imports fail as a refused import does.
  static void fail_imports(int n);
  // Runs `work` (which queues on the stream it is given) in order with the device's Vulkan
  // commands; timed under `name` while GPU profiling is on.
  void run(const char* name, const std::function<void(CUstream)>& work);

  // The runtime's side of the sharing (Runtime::Foreign).
  Runtime::Foreign foreign();

 private:
  struct Timed {
    const char* name;
    CUevent start, end;
  };
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLASLt's on Hopper, as PyTorch's
  int index_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  CUexternalSemaphore timeline_ = nullptr;
  CUdeviceptr workspace_ = 0;
  int cc_ = 0;
  std::mutex events_mu_;
  std::vector<Timed> timed_;      // recorded, not yet read (profiling)
  std::vector<CUevent> events_;   // free
  CUevent event();
  bool signal(uint64_t value);
  std::vector<Runtime::KernelTime> times();
};

}  // namespace pcp::gpu::vendor
