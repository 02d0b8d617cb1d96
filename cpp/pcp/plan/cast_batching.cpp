// Cast batching (passes.h): the casts a plan still has after folding and fusion, between
// float32, float16 and bfloat16 on a GPU, run as few cast_multi nodes as their order allows.
#include <algorithm>
#include <map>
#include <tuple>

#include "pcp/plan/passes.h"

namespace pcp::plan {
namespace {

bool float_type(DType t) { return t == DType::Float32 || is_half_float(t); }

// A cast that may move: where it may run, as positions "before node k" of the original order,
// with the views its input is taken through (a transposed weight), which move with it.
struct Movable {
  size_t node;
  std::vector<size_t> views, views_after;  // in order: of its input, of its output
  size_t lo, hi;  // lo <= position <= hi
  std::tuple<DType, DType, int, int> kind;  // from, to, device: casts of one kind share a node
};

}  // namespace

int batch_casts(Plan& plan) {
  const size_t count = plan.nodes.size();
  std::vector<int> maker(plan.values.size(), -1);  // node making each value (-1: an input)
  std::vector<std::vector<size_t>> readers(plan.values.size());
  std::vector<size_t> writers;  // nodes that write their inputs
  for (size_t k = 0; k < count; ++k) {
    const Node& n = plan.nodes[k];
    for (int id : n.outputs) maker[size_t(id)] = int(k);
    for (int id : n.inputs)
      if (id >= 0 && (readers[size_t(id)].empty() || readers[size_t(id)].back() != k)) readers[size_t(id)].push_back(k);
    if (n.prim->writes_inputs()) writers.push_back(k);
  }
  const auto first_read = [&](int id, size_t except) {  // count: none
    for (size_t k : readers[size_t(id)])
      if (k != except) return k;
    return count;
  };
  const auto is_cast = [&](size_t k) {
    const Node& n = plan.nodes[k];
    return std::string(n.prim->name()) == "astype" && n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] >= 0;
  };
  const auto is_view = [&](int k) {
    const Node& n = plan.nodes[size_t(k)];
    return n.prim->output_views_input() && n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] >= 0;
  };
  std::vector<Movable> casts;
  std::vector<bool> in_view_chain(count, false);
  for (size_t k = 0; k < count; ++k) {
    if (!is_cast(k)) continue;
    const int x = plan.nodes[k].inputs[0], y = plan.nodes[k].outputs[0];
    const TensorSpec &xs = plan.values[size_t(x)], &ys = plan.values[size_t(y)];
    if (!xs.device.is_gpu() || !float_type(xs.dtype) || !float_type(ys.dtype)) continue;
    Movable c{k, {}, {}, 0, count, {xs.dtype, ys.dtype, int(xs.device.type), xs.device.index}};
    // Up the views the input is taken through, each read by nothing else before the cast runs.
    int m = maker[size_t(x)], next = int(k);
    while (m >= 0 && is_view(m) && !in_view_chain[size_t(m)]) {
      c.hi = std::min(c.hi, first_read(plan.nodes[size_t(m)].outputs[0], size_t(next)));
      c.views.insert(c.views.begin(), size_t(m));
      next = m;
      m = maker[size_t(plan.nodes[size_t(m)].inputs[0])];
    }
    c.lo = size_t(m + 1);
    // Down the views its output is first read through (a gradient handed back transposed).
    int out = y;
    while (!readers[size_t(out)].empty()) {
      const size_t r = readers[size_t(out)][0];
      if (!is_view(int(r)) || in_view_chain[r]) break;
      c.hi = std::min(c.hi, first_read(out, r));
      c.views_after.push_back(r);
      out = plan.nodes[r].outputs[0];
    }
    c.hi = std::min(c.hi, first_read(out, count));
    // Casts of casts stay where they are: moving both could reorder them.
    if ((m >= 0 && is_cast(size_t(m))) || (c.hi < count && is_cast(c.hi))) continue;
    for (size_t w : writers) {  // no move across a node that may write what the cast reads
      if (w < k) c.lo = std::max(c.lo, w + 1);
      if (w > k) c.hi = std::min(c.hi, w);
    }
    if (c.lo > c.hi) continue;
    for (size_t v : c.views) in_view_chain[v] = true;
    for (size_t v : c.views_after) in_view_chain[v] = true;
    casts.push_back(c);
  }
  // Fewest groups (interval stabbing): take the cast whose window closes first, run it at its
  // window's end with every cast of its kind whose window holds that position.
  std::sort(casts.begin(), casts.end(), [](const Movable& a, const Movable& b) { return a.hi < b.hi; });
  std::vector<bool> taken(casts.size(), false);
  std::multimap<size_t, std::vector<size_t>> groups;  // position -> the casts (indices in casts) run there
  for (size_t i = 0; i < casts.size(); ++i) {
    if (taken[i]) continue;
    std::vector<size_t> group;
    for (size_t j = i; j < casts.size(); ++j)
      if (!taken[j] && casts[j].kind == casts[i].kind && casts[j].lo <= casts[i].hi) {
        taken[j] = true;
        group.push_back(j);
      }
    if (group.size() > 1) groups.insert({casts[i].hi, group});
  }
  if (groups.empty()) return 0;
  std::vector<bool> moved(count, false);
  int batched = 0;
  for (const auto& [at, group] : groups) {
    for (size_t j : group) {
      moved[casts[j].node] = true;
      for (size_t v : casts[j].views) moved[v] = true;
      for (size_t v : casts[j].views_after) moved[v] = true;
    }
    batched += int(group.size());
  }
  std::vector<Node> nodes;
  auto emit = [&](size_t at) {
    for (auto [it, end] = groups.equal_range(at); it != end; ++it) {
      Node batch;
      const TensorSpec& to = plan.values[size_t(plan.nodes[casts[it->second[0]].node].outputs[0])];
      batch.prim = make_primitive("cast_multi", {{"dtype", std::string(dtype_name(to.dtype))}}, {});
      for (size_t j : it->second) {
        for (size_t v : casts[j].views) nodes.push_back(plan.nodes[v]);
        batch.inputs.push_back(plan.nodes[casts[j].node].inputs[0]);
        batch.outputs.push_back(plan.nodes[casts[j].node].outputs[0]);
      }
      nodes.push_back(std::move(batch));
      for (size_t j : it->second)
        for (size_t v : casts[j].views_after) nodes.push_back(plan.nodes[v]);
    }
  };
  for (size_t k = 0; k < count; ++k) {
    emit(k);
    if (!moved[k]) nodes.push_back(std::move(plan.nodes[k]));
  }
  emit(count);
  plan.nodes = std::move(nodes);
  return batched;
}

}  // namespace pcp::plan
