// Caching CPU allocator: 64-byte aligned blocks, rounded to size classes, kept in
// per-size free lists so that training loops reuse memory instead of calling malloc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace pcp {

struct MemoryStats {
  int64_t active_bytes = 0;  // bytes in blocks handed out and not yet returned
  int64_t peak_bytes = 0;    // high-water mark of active_bytes since start (or reset)
  int64_t cached_bytes = 0;  // bytes held in free lists for reuse
  int64_t num_allocs = 0;    // calls to allocate()
  int64_t num_cache_hits = 0;
};

class CpuAllocator {
 public:
  static constexpr size_t kAlignment = 64;
  static CpuAllocator& instance();

  void* allocate(size_t nbytes);
  void deallocate(void* ptr, size_t nbytes);
  MemoryStats stats() const;
  void reset_peak();
  void clear_cache();  // returns every cached block to the system
  static size_t round_size(size_t nbytes);

 private:
  CpuAllocator() = default;
  ~CpuAllocator();
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;  // size class -> free blocks
  MemoryStats stats_;
  static constexpr int64_t kMaxCachedBytes = int64_t(4) << 30;
};

}  // namespace pcp
