// A fixed pool of worker threads for data-parallel loops. The caller takes part in the work;
// a parallel_for issued from inside a worker runs inline (no nested parallelism).
#pragma once
#include <cstdint>
#include <functional>

namespace pcp {

int get_num_threads();
// n <= 0 restores the default (PCP_NUM_THREADS, else the number of cores).
void set_num_threads(int64_t n);

// Runs fn(begin, end) over [0, n) in chunks of at least `grain` elements.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace pcp
