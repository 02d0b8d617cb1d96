// Buffer planning by liveness: what a plan's run holds in memory, from its graph alone. A run
// frees each value after the last node that reads it (Plan::release_after), so the caching
// allocator hands that memory to later values; this says how much is live at once.
#pragma once
#include <cstdint>

#include "pcp/plan/plan.h"

namespace pcp::plan {

struct MemoryPlan {
  int64_t peak_bytes = 0;       // the most bytes of values made by the run alive at once
  int peak_node = -1;           // the node at which that peak is reached
  int64_t allocated_bytes = 0;  // the bytes of every value the run makes (its memory without reuse)
  int allocations = 0;          // values that get memory of their own (views share their input's)
};

// Views (reshape, permute, slice, ...: Primitive::output_views_input) share their input's
// memory; arguments and captured tensors are the caller's and not counted. Buffers the kernels
// use inside a node are not seen.
MemoryPlan plan_memory(const Plan& plan);

}  // namespace pcp::plan
