// Cast folding (passes.h): astype nodes between float32 and float16 / bfloat16 taken into the
// ops that make or read their values.
#include <algorithm>

#include "pcp/plan/passes.h"

namespace pcp::plan {
namespace {


// Node k's input specs.
std::vector<TensorSpec> input_specs(const Plan& plan, const Node& n) {
  std::vector<TensorSpec> in;
  for (int id : n.inputs) in.push_back(id < 0 ? TensorSpec{{}, DType::Float32, {}, false} : plan.values[size_t(id)]);
  return in;
}

}  // namespace

int fold_casts(Plan& plan) {
  std::vector<bool> kept(plan.values.size(), false);  // read after the run
  for (int id : plan.outputs) kept[size_t(id)] = true;
  for (const auto& g : plan.grads)
    if (g.second >= 0) kept[size_t(g.second)] = true;
  int folded = 0;
  for (size_t c = 0; c < plan.nodes.size(); ++c) {
    const Node& cast = plan.nodes[c];
    if (std::string(cast.prim->name()) != "astype" || cast.inputs.size() != 1 || cast.outputs.size() != 1) continue;
    const int x = cast.inputs[0], y = cast.outputs[0];
    if (x < 0 || kept[size_t(y)]) continue;
    const DType from = plan.values[size_t(x)].dtype, to = plan.values[size_t(y)].dtype;
    // Who reads x and y, and who makes x (the graph changes as casts fold: looked up each time).
    std::vector<std::pair<size_t, size_t>> y_readers;  // (node, input)
    size_t x_reads = 0;
    int maker = -1, maker_output = -1;
    for (size_t k = 0; k < plan.nodes.size(); ++k) {
      const Node& n = plan.nodes[k];
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i] == y) y_readers.push_back({k, i});
        if (n.inputs[i] == x) ++x_reads;
      }
      for (size_t o = 0; o < n.outputs.size(); ++o)
        if (n.outputs[o] == x) maker = int(k), maker_output = int(o);
    }
    if (is_half_float(from) && to == DType::Float32) {
      // Widening: every reader of y takes x as it is.
      std::vector<std::shared_ptr<Primitive>> taken;
      for (const auto& [k, i] : y_readers) {
        auto p = plan.nodes[k].prim->with_input_dtype(input_specs(plan, plan.nodes[k]), i, from);
        if (!p) break;
        taken.push_back(std::move(p));
      }
      if (y_readers.empty() || taken.size() != y_readers.size()) continue;
      for (size_t r = 0; r < y_readers.size(); ++r) {
        Node& n = plan.nodes[y_readers[r].first];
        n.prim = taken[r];
        n.inputs[y_readers[r].second] = x;
      }
      ++folded;  // the cast, read by nothing now, goes with dead-code elimination
    } else if (from == DType::Float32 && is_half_float(to) && maker >= 0 && x_reads == 1 && !kept[size_t(x)]) {
      // Narrowing: x's maker writes it in the 16-bit type, and y's readers read x.
      Node& m = plan.nodes[size_t(maker)];
      auto p = m.prim->with_output_dtype(input_specs(plan, m), size_t(maker_output), to);
      if (!p) continue;
      m.prim = std::move(p);
      plan.values[size_t(x)].dtype = to;
      for (const auto& [k, i] : y_readers) plan.nodes[k].inputs[i] = x;
      plan.nodes[c].inputs.clear();  // the cast, read by nothing now, goes with dead-code elimination
      plan.nodes[c].outputs.clear();
      ++folded;
    } else if (from == DType::Float32 && is_half_float(to) && maker >= 0) {
      // Narrowing a value others read too: its maker writes the 16-bit copy as well.
      Node& m = plan.nodes[size_t(maker)];
      auto p = m.prim->with_extra_output(input_specs(plan, m), size_t(maker_output), to);
      if (!p) continue;
      m.prim = std::move(p);
      m.outputs.push_back(y);
      plan.nodes[c].inputs.clear();  // the cast: y is its maker's now
      plan.nodes[c].outputs.clear();
      ++folded;
    }
  }
  if (folded) eliminate_dead_code(plan);
  return folded;
}

}  // namespace pcp::plan
