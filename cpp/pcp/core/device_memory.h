// Memory of a device as core sees it: storage allocates through it, host copies read through it,
// and memory statistics come from it. The CPU's is core's caching allocator; the GPU's is the
// GPU backend's, declared here and defined in backend/gpu/device_backend.cpp, so that core
// includes nothing above it.
#pragma once
#include <cstddef>
#include <string>

#include "pcp/core/allocator.h"
#include "pcp/core/device.h"

namespace pcp {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual void* allocate(int index, size_t nbytes) = 0;
  virtual void deallocate(int index, void* p, size_t nbytes) = 0;
  // Copies nbytes from byte `offset` of allocation p into host memory, after the work recorded
  // for the device (raising the errors its kernels found).
  virtual void read(int index, const void* p, size_t offset, void* dst, size_t nbytes) = 0;
  // Waits until the work recorded for the device is done (nothing to wait for on the CPU).
  virtual void synchronize(int index) = 0;
  virtual MemoryStats stats(int index) = 0;
  virtual void reset_peak(int index) = 0;
  virtual void clear_cache(int index) = 0;  // returns cached memory to the system (or driver)
};

// The GPUs: their memory, and what parsing and printing a device needs.
class GpuBackend : public DeviceMemory {
 public:
  virtual const char* api() const = 0;  // "vulkan", "metal"
  virtual int device_count() const = 0;
};

// The GPU backend of this build and machine, or nullptr when there is none (then
// gpu_unavailable_reason() says why). Defined by the backend, never throws.
GpuBackend* gpu_backend();
std::string gpu_unavailable_reason();

// The memory of `device`: the CPU's caching allocator, or the GPU backend's (a ValueError
// naming the device when there is no GPU).
DeviceMemory& memory_of(Device device);

}  // namespace pcp
