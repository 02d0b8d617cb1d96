// Caching allocator for GPU buffers, per device: freed buffers wait in size-class free lists and
// are handed out again by later allocations. Reuse is safe without waiting because commands that
// use the same buffer run in recording order (runtime.h).
#pragma once
#include <cstddef>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/allocator.h"

namespace pcp::gpu {

Buffer* allocate(int device, size_t nbytes);
void deallocate(int device, Buffer* buffer, size_t nbytes);
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
void clear_cache(int device);  // waits for the device, then frees every cached buffer

}  // namespace pcp::gpu
