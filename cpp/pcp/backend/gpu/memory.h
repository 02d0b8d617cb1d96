// Caching allocator for GPU buffers, per device: freed buffers wait in size-class free lists and
// are handed out again by later allocations. Reuse is safe without waiting because commands that
// use the same buffer run in recording order (runtime.h).
#pragma once
#include <cstddef>
#include <map>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/allocator.h"

namespace pcp::gpu {

Buffer* allocate(int device, size_t nbytes);
void deallocate(int device, Buffer* buffer, size_t nbytes);
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
void clear_cache(int device);  // waits for the device, then frees every cached buffer

// The buffers of a plan's command lists (plan/command_replay.h). A list replays with the buffers
// it was recorded with, so none of them may go to other code while it lives: between start()
// and stop(), the buffers this thread frees on the device wait here instead of in the device's
// cache (still counted active), and this thread's allocations take them first. The destructor
// hands them to the device's cache; free the lists that use them first.
class ListBuffers {
 public:
  explicit ListBuffers(int device) : device_(device) {}
  ~ListBuffers();
  ListBuffers(const ListBuffers&) = delete;
  ListBuffers& operator=(const ListBuffers&) = delete;
  void start();
  void stop();

 private:
  friend Buffer* allocate(int, size_t);
  friend void deallocate(int, Buffer*, size_t);
  int device_;
  std::multimap<size_t, Buffer*> free_;  // size class -> buffer
};

}  // namespace pcp::gpu
