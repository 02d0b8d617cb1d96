// A refcounted block of memory. Tensors (and their views) share one through shared_ptr;
// the last reference returns it to the allocator or runs the external owner's release.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "pcp/core/device.h"

namespace pcp {

class Storage {
 public:
  // Owned memory from the device's caching allocator. On a GPU, data() is the runtime's
  // gpu::Buffer*, not host memory.
  Storage(size_t nbytes, Device device);
  // Borrowed memory (NumPy array, DLPack tensor): `release` runs when the last reference goes.
  Storage(void* data, size_t nbytes, Device device, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool owned() const { return !release_; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void()> release_;
};

}  // namespace pcp
