#include "pcp/core/storage.h"

#include "pcp/backend/gpu/memory.h"
#include "pcp/core/allocator.h"
#include "pcp/core/error.h"

namespace pcp {

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  data_ = device.is_gpu() ? static_cast<void*>(gpu::allocate(device.index, nbytes))
                          : CpuAllocator::instance().allocate(nbytes);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (release_)
    release_();
  else if (device_.is_gpu())
    gpu::deallocate(device_.index, static_cast<gpu::Buffer*>(data_), nbytes_);
  else
    CpuAllocator::instance().deallocate(data_, nbytes_);
}

}  // namespace pcp
