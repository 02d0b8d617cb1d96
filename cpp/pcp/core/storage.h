// A refcounted block of memory. Tensors (and their views) share one through shared_ptr;
// the last reference returns it to the allocator or runs the external owner's release.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "pcp/core/device.h"

namespace pcp {

class Storage {
 public:
  // Owned memory from the device's allocator (core/device_memory.h). On a GPU, data() is the
  // backend's handle of a buffer, not host memory.
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
  // Counts in-place writes (index assignment, optimizer steps): the autograd graph records it
  // when it saves a tensor, and backward refuses a tensor changed since (every view shares it).
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // How many live graph nodes will read this memory in backward; while any do, NumPy views
  // of it are read-only (a write through them would go unnoticed by the version counter).
  int64_t saved_count() const { return saved_.load(std::memory_order_relaxed); }
  void add_saved(int64_t delta) { saved_.fetch_add(delta, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  std::function<void()> release_;
  std::atomic<uint64_t> version_{0};
  std::atomic<int64_t> saved_{0};
};

}  // namespace pcp
