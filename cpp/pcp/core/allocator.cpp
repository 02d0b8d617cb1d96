#include "pcp/core/allocator.h"

#include <cstdlib>
#include <new>

#include "pcp/core/error.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pcp {

constexpr size_t kPageAlignFrom = size_t(64) << 10;
constexpr size_t kHugePagesFrom = size_t(4) << 20;

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

// Large blocks start on a page. Streaming kernels read inputs and write outputs at the same
// index; when an output sits a few bytes above an input modulo 4 KiB (a 64-byte aligned block
// beside NumPy's 16-byte offset arrays), each load waits on the store before it (4K aliasing):
// add of 1M floats took 1.4x longer. Very large blocks ask for transparent huge pages, as
// NumPy does, to save TLB misses on streaming passes.
static void* system_allocate(size_t size) {
  if (size < kPageAlignFrom) return std::aligned_alloc(CpuAllocator::kAlignment, size);
  void* p = std::aligned_alloc(4096, size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p && size >= kHugePagesFrom) madvise(p, size, MADV_HUGEPAGE);  // advice only: failure is fine
#endif
  return p;
}

// Larger requests cannot be satisfied by any machine (and would overflow round_size).
constexpr size_t kMaxBytes = size_t(1) << 56;

[[noreturn]] static void out_of_memory(size_t nbytes) {
  fail<MemoryError>("out of memory: cannot allocate ", nbytes, " bytes (", double(nbytes) / double(1 << 30),
                    " GiB) on the CPU");
}

void* CpuAllocator::allocate(size_t nbytes) {
  if (nbytes > kMaxBytes) out_of_memory(nbytes);
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
  void* p = system_allocate(size);
  if (!p) {
    clear_cache();  // give cached memory back and try once more
    p = system_allocate(size);
    if (!p) out_of_memory(nbytes);
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
#if defined(__GLIBC__)
  // free() keeps blocks below the mmap threshold (which glibc raises up to 32 MiB as large blocks
  // come and go) in its heap; trimming hands their pages back to the operating system.
  malloc_trim(0);
#endif
}

}  // namespace pcp
