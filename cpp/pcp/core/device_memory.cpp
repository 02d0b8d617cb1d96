#include "pcp/core/device_memory.h"

#include <cstring>

#include "pcp/core/error.h"

namespace pcp {
namespace {

class CpuMemory : public DeviceMemory {
 public:
  void* allocate(int, size_t nbytes) override { return CpuAllocator::instance().allocate(nbytes); }
  void deallocate(int, void* p, size_t nbytes) override { CpuAllocator::instance().deallocate(p, nbytes); }
  void read(int, const void* p, size_t offset, void* dst, size_t nbytes) override {
    if (nbytes) std::memcpy(dst, static_cast<const char*>(p) + offset, nbytes);
  }
  void synchronize(int) override {}
  MemoryStats stats(int) override { return CpuAllocator::instance().stats(); }
  void reset_peak(int) override { CpuAllocator::instance().reset_peak(); }
  void clear_cache(int) override { CpuAllocator::instance().clear_cache(); }
};

}  // namespace

DeviceMemory& memory_of(Device device) {
  static CpuMemory cpu;
  if (!device.is_gpu()) return cpu;
  GpuBackend* gpu = gpu_backend();
  if (!gpu) fail<ValueError>("device gpu:", device.index, ": no GPU is available (", gpu_unavailable_reason(), ")");
  return *gpu;
}

}  // namespace pcp
