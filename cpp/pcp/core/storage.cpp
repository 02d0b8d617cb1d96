#include "pcp/core/storage.h"

#include "pcp/core/allocator.h"
#include "pcp/core/error.h"

namespace pcp {

Device parse_device(const std::string& name) {
  if (name == "cpu" || name == "cpu:0") return cpu_device();
  fail<ValueError>("unknown device '", name, "': this build has only 'cpu'");
}

Storage::Storage(size_t nbytes, Device device)
    : data_(CpuAllocator::instance().allocate(nbytes)), nbytes_(nbytes), device_(device) {}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (release_)
    release_();
  else
    CpuAllocator::instance().deallocate(data_, nbytes_);
}

}  // namespace pcp
