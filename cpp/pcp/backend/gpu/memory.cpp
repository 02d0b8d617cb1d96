#include "pcp/backend/gpu/memory.h"

#include <map>
#include <mutex>
#include <vector>

#include "pcp/core/device.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

struct Pool {
  std::mutex mu;
  std::multimap<size_t, Buffer*> free;  // size class -> cached buffers
  MemoryStats stats;
};

Pool& pool(int device) {
  static std::mutex mu;
  static std::map<int, Pool> pools;
  std::lock_guard<std::mutex> g(mu);
  return pools[device];
}

thread_local ListBuffers* recording_list = nullptr;  // ListBuffers::start()

// Hands every cached buffer back to the runtime; the pool's lock is held.
void release_cached(Pool& p, int device) {
  if (p.free.empty()) return;
  rt().synchronize(device);
  for (auto& [size, b] : p.free) rt().release(device, b);
  p.free.clear();
  p.stats.cached_bytes = 0;
}

}  // namespace

Buffer* allocate(int device, size_t nbytes) {
  if (nbytes > (size_t(1) << 56))
    fail<MemoryError>("out of memory: cannot allocate ", nbytes, " bytes on ", pcp::gpu_device(device).str());
  const size_t size = CpuAllocator::round_size(nbytes);
  Pool& p = pool(device);
  std::lock_guard<std::mutex> g(p.mu);
  p.stats.num_allocs++;
  if (ListBuffers* l = recording_list; l && l->device_ == device) {
    auto it = l->free_.find(size);
    if (it != l->free_.end()) {  // still counted active
      Buffer* b = it->second;
      l->free_.erase(it);
      p.stats.num_cache_hits++;
      return b;
    }
  }
  Buffer* b = nullptr;
  auto it = p.free.find(size);
  if (it != p.free.end()) {
    b = it->second;
    p.free.erase(it);
    p.stats.cached_bytes -= int64_t(size);
    p.stats.num_cache_hits++;
  } else {
    try {
      b = rt().allocate(device, size);
    } catch (const MemoryError&) {  // give the cached buffers back and try once more
      release_cached(p, device);
      try {
        b = rt().allocate(device, size);
      } catch (const MemoryError& e) {
        fail<MemoryError>("out of memory on ", pcp::gpu_device(device).str(), ": ", e.what());
      }
    }
  }
  p.stats.active_bytes += int64_t(size);
  p.stats.peak_bytes = std::max(p.stats.peak_bytes, p.stats.active_bytes);
  return b;
}

void deallocate(int device, Buffer* b, size_t nbytes) {
  const size_t size = CpuAllocator::round_size(nbytes);
  if (ListBuffers* l = recording_list; l && l->device_ == device) return void(l->free_.emplace(size, b));
  Pool& p = pool(device);
  std::lock_guard<std::mutex> g(p.mu);
  p.free.emplace(size, b);
  p.stats.active_bytes -= int64_t(size);
  p.stats.cached_bytes += int64_t(size);
}

MemoryStats memory_stats(int device) {
  Pool& p = pool(device);
  std::lock_guard<std::mutex> g(p.mu);
  return p.stats;
}

void reset_peak_memory_stats(int device) {
  Pool& p = pool(device);
  std::lock_guard<std::mutex> g(p.mu);
  p.stats.peak_bytes = p.stats.active_bytes;
}

void clear_cache(int device) {
  Pool& p = pool(device);
  std::lock_guard<std::mutex> g(p.mu);
  release_cached(p, device);
}

void ListBuffers::start() {
  if (recording_list) fail<ValueError>("gpu: a plan is already recording a command list on this thread");
  recording_list = this;
}

void ListBuffers::stop() {
  if (recording_list == this) recording_list = nullptr;
}

ListBuffers::~ListBuffers() {
  stop();
  Pool& p = pool(device_);
  std::lock_guard<std::mutex> g(p.mu);
  for (auto& [size, b] : free_) {
    p.free.emplace(size, b);
    p.stats.active_bytes -= int64_t(size);
    p.stats.cached_bytes += int64_t(size);
  }
}

}  // namespace pcp::gpu
