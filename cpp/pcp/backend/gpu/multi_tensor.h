// Multi-tensor dispatches (metal/addr/): many tensors in one dispatch through a table of their
// device addresses, where the runtime has buffer addresses (Vulkan 1.2, CUDA; not Metal).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "pcp/backend/gpu/launch.h"

namespace pcp::gpu {

constexpr int64_t kChunk = 4096;  // CHUNK in metal/addr/tensors.glsl

// The tensors of one multi-tensor dispatch (Entry in metal/addr/tensors.glsl): per tensor the
// device addresses of up to four tensors of its length (a parameter, its gradient, its state;
// a cast's source and destination), numbered in chunks of kChunk elements. Empty tensors are
// left out.
struct Table {
  Tensor entries;                // on the device
  std::vector<Buffer*> buffers;  // the buffers the kernel reaches through it
  uint32_t count = 0, chunks = 0;
};

using Row = std::array<const Tensor*, 4>;  // nullptr: not used by the kernel

// Whether `rows` can go through one table: the runtime has buffer addresses, every length fits
// the kernels' 32-bit chunk arithmetic, and the chunks number fewer than 2^32.
// PCP_GPU_MULTI_TENSOR=0 takes the one-dispatch-per-tensor kernels (the tests compare the two).
bool tabled(Device dev, const std::vector<Row>& rows);

// The table of `rows` on the device (kept by content: a training loop's tables are uploaded once).
Table table(Device dev, const std::vector<Row>& rows);
// The same with each row's work counted by the kernel: units[i] pieces of row i (Table::chunks
// then counts those), and extra[i] the entry's pad0 word.
Table table(Device dev, const std::vector<Row>& rows, const std::vector<uint32_t>& units,
            const std::vector<uint32_t>& extra);

// One launch of a metal/addr/ kernel over a table, the table bound first, `more` after it.
template <class P>
void launch_table(Device dev, const char* kernel, const Table& t, const P& push, std::vector<Buffer*> more = {}) {
  static_assert(sizeof(P) <= kMaxPushBytes);
  more.insert(more.begin(), buffer_of(t.entries));
  rt().dispatch(dev.index, kernel, more, &push, sizeof(P), std::min(t.chunks, max_groups()), {}, t.buffers);
}

}  // namespace pcp::gpu
