#include "pcp/core/allocator.h"

#include <cstdlib>
#include <new>

namespace pcp {

CpuAllocator& CpuAllocator::instance() {
  // Leaked on purpose: tensors held by Python may be released after static destructors run.
  static CpuAllocator* a = new CpuAllocator();
  return *a;
}

CpuAllocator::~CpuAllocator() { clear_cache(); }

size_t CpuAllocator::round_size(size_t n) {
  if (n <= 4096) return (n + kAlignment - 1) / kAlignment * kAlignment + (n == 0 ? kAlignment : 0);
  // Above 4 KiB: four size classes per power of two (at most 25% waste).
  size_t p = 1;
  while (p < n) p <<= 1;
  size_t step = p / 8;  // p/2 < n <= p: classes p/2 + k*p/8
  return (n + step - 1) / step * step;
}

void* CpuAllocator::allocate(size_t nbytes) {
  size_t size = round_size(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.num_allocs++;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= int64_t(size);
      stats_.active_bytes += int64_t(size);
      stats_.num_cache_hits++;
      if (stats_.active_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.active_bytes;
      return p;
    }
  }
  void* p = std::aligned_alloc(kAlignment, size);
  if (!p) {
    clear_cache();  // give cached memory back and try once more
    p = std::aligned_alloc(kAlignment, size);
    if (!p) throw std::bad_alloc();
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.active_bytes += int64_t(size);
  if (stats_.active_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.active_bytes;
  return p;
}

void CpuAllocator::deallocate(void* ptr, size_t nbytes) {
  if (!ptr) return;
  size_t size = round_size(nbytes);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.active_bytes -= int64_t(size);
  if (stats_.cached_bytes + int64_t(size) > kMaxCachedBytes) {
    std::free(ptr);
    return;
  }
  free_[size].push_back(ptr);
  stats_.cached_bytes += int64_t(size);
}

MemoryStats CpuAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CpuAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes = stats_.active_bytes;
}

void CpuAllocator::clear_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, blocks] : free_)
    for (void* p : blocks) std::free(p);
  free_.clear();
  stats_.cached_bytes = 0;
}

}  // namespace pcp
