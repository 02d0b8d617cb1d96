// The GPU backend as core sees it (core/device_memory.h): the runtime's devices, the caching
// allocator's memory, reads and waits that raise the faults the kernels recorded.
#include "pcp/backend/gpu/faults.h"
#include "pcp/backend/gpu/memory.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/device_memory.h"

namespace pcp {
namespace {

class Backend : public GpuBackend {
 public:
  explicit Backend(gpu::Runtime& rt) : rt_(rt) {}
  const char* api() const override { return rt_.api(); }
  int device_count() const override { return rt_.device_count(); }
  void* allocate(int index, size_t nbytes) override { return gpu::allocate(index, nbytes); }
  void deallocate(int index, void* p, size_t nbytes) override {
    gpu::deallocate(index, static_cast<gpu::Buffer*>(p), nbytes);
  }
  void read(int index, const void* p, size_t offset, void* dst, size_t nbytes) override {
    gpu::download(index, static_cast<const gpu::Buffer*>(p), offset, dst, nbytes);
  }
  void synchronize(int index) override { gpu::synchronize(index); }
  MemoryStats stats(int index) override { return gpu::memory_stats(index); }
  void reset_peak(int index) override { gpu::reset_peak_memory_stats(index); }
  void clear_cache(int index) override { gpu::clear_cache(index); }

 private:
  gpu::Runtime& rt_;
};

}  // namespace

GpuBackend* gpu_backend() {
  static Backend* backend = gpu::runtime() ? new Backend(*gpu::runtime()) : nullptr;  // lives for the process
  return backend;
}

std::string gpu_unavailable_reason() { return gpu_backend() ? std::string() : gpu::unavailable_reason(); }

}  // namespace pcp
