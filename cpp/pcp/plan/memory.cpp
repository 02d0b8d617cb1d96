#include "pcp/plan/memory.h"

#include <algorithm>
#include <climits>

namespace pcp::plan {

MemoryPlan plan_memory(const Plan& plan) {
  // Each value belongs to a buffer: its own, or (a view's) its first input's.
  const size_t n_values = plan.values.size();
  std::vector<int> buffer(n_values, -1);
  std::vector<int64_t> bytes;    // per buffer (0: the caller's)
  std::vector<int> made_at;      // per buffer: the node making it
  std::vector<int> freed_after;  // per buffer: the node after which its last value is released
  const auto new_buffer = [&](int64_t b, int node) {
    bytes.push_back(b);
    made_at.push_back(node);
    freed_after.push_back(-1);
    return int(bytes.size()) - 1;
  };
  for (int id : plan.args) buffer[size_t(id)] = new_buffer(0, -1);
  for (const auto& c : plan.captured) buffer[size_t(c.first)] = new_buffer(0, -1);
  MemoryPlan m;
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    const Node& n = plan.nodes[k];
    const bool view = n.prim->output_views_input() && !n.inputs.empty() && n.inputs[0] >= 0;
    for (int id : n.outputs) {
      if (view) {
        buffer[size_t(id)] = buffer[size_t(n.inputs[0])];
        continue;
      }
      const TensorSpec& s = plan.values[size_t(id)];
      const int64_t b = numel(s.shape) * int64_t(itemsize(s.dtype));
      buffer[size_t(id)] = new_buffer(b, int(k));
      m.allocated_bytes += b;
      ++m.allocations;
    }
  }
  // A buffer lives until its last value is released; values never released (outputs, .grad)
  // live to the end.
  std::vector<bool> released(n_values, false);
  for (size_t k = 0; k < plan.release_after.size(); ++k)
    for (int id : plan.release_after[k]) {
      released[size_t(id)] = true;
      int& f = freed_after[size_t(buffer[size_t(id)])];
      f = std::max(f, int(k));
    }
  for (size_t id = 0; id < n_values; ++id)
    if (buffer[id] >= 0 && !released[id]) freed_after[size_t(buffer[id])] = INT_MAX;
  std::vector<std::vector<int>> made(plan.nodes.size()), freed(plan.nodes.size());
  for (size_t b = 0; b < bytes.size(); ++b) {
    if (made_at[b] < 0) continue;
    made[size_t(made_at[b])].push_back(int(b));
    if (freed_after[b] != INT_MAX) freed[size_t(std::max(freed_after[b], made_at[b]))].push_back(int(b));
  }
  int64_t live = 0;
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    for (int b : made[k]) live += bytes[size_t(b)];
    if (live > m.peak_bytes) m.peak_bytes = live, m.peak_node = int(k);
    for (int b : freed[k]) live -= bytes[size_t(b)];
  }
  return m;
}

}  // namespace pcp::plan
