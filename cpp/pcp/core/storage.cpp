#include "pcp/core/storage.h"

#include "pcp/core/trace_hooks.h"

#include "pcp/core/device_memory.h"

namespace pcp {

Storage::Storage(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  report_storage_created(this);
  data_ = memory_of(device).allocate(device.index, nbytes);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (release_)
    release_();
  else
    memory_of(device_).deallocate(device_.index, data_, nbytes_);
}

}  // namespace pcp
