// The residual adds around layer norms folded into them (passes.h): on a GPU one pass adds,
// writes the sum and normalizes it, where an add and a layer norm read the stream twice (the
// CPU adds each block of rows as it normalizes it); and a layer norm's gradient adds the
// residual's gradient to its own as it writes it.
#include <algorithm>

#include "pcp/plan/passes.h"

namespace pcp::plan {

int fuse_residual_layer_norm(Plan& plan) {
  int fused = 0;
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    Node& norm = plan.nodes[k];
    if (std::string(norm.prim->name()) != "layer_norm" || norm.inputs.size() != 3) continue;
    const int x = norm.inputs[0];
    const TensorSpec& xs = plan.values[size_t(x)];
    if (xs.dtype != DType::Float32) continue;
    // The add that makes x, with no reader of x between it and the layer norm (x is made later now).
    size_t a = k;
    for (size_t j = 0; j < k; ++j)
      if (std::find(plan.nodes[j].outputs.begin(), plan.nodes[j].outputs.end(), x) != plan.nodes[j].outputs.end())
        a = j;
    if (a == k || std::string(plan.nodes[a].prim->name()) != "add" || plan.nodes[a].outputs.size() != 1) continue;
    bool read_between = false;
    for (size_t j = a + 1; j < k; ++j)
      read_between = read_between || std::count(plan.nodes[j].inputs.begin(), plan.nodes[j].inputs.end(), x);
    // Operands of x's shape: the float32 one is the stream, the other (any register type) the residual.
    std::vector<int> ops = plan.nodes[a].inputs;
    if (read_between || ops.size() != 2 || ops[0] < 0 || ops[1] < 0) continue;
    if (plan.values[size_t(ops[0])].dtype != DType::Float32) std::swap(ops[0], ops[1]);
    const TensorSpec &s0 = plan.values[size_t(ops[0])], &s1 = plan.values[size_t(ops[1])];
    if (s0.dtype != DType::Float32 || !is_compute_float(s1.dtype) || s0.shape != xs.shape || s1.shape != xs.shape) continue;
    Attributes attrs = norm.prim->attributes();
    attrs["residual"] = true;
    norm.prim = make_primitive("layer_norm", attrs, {});
    norm.inputs = {ops[0], norm.inputs[1], norm.inputs[2], ops[1]};
    norm.outputs.push_back(x);
    plan.nodes[a].inputs.clear();  // the add: gone with dead-code elimination
    plan.nodes[a].outputs.clear();
    ++fused;
  }
  // Backward: an add of a layer norm gradient's gx (read by nothing else) and another float32
  // gradient of x's shape made before it: the layer norm's gradient writes the sum.
  std::vector<bool> kept(plan.values.size(), false);
  for (int id : plan.outputs) kept[size_t(id)] = true;
  for (const auto& g : plan.grads)
    if (g.second >= 0) kept[size_t(g.second)] = true;
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    Node& add = plan.nodes[k];
    if (std::string(add.prim->name()) != "add" || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    const TensorSpec& out = plan.values[size_t(add.outputs[0])];
    for (size_t side = 0; side < 2; ++side) {
      const int gx = add.inputs[side], other = add.inputs[1 - side];
      if (gx < 0 || other < 0 || kept[size_t(gx)]) continue;
      int made = -1, other_made = -1, reads = 0;
      for (size_t j = 0; j < plan.nodes.size(); ++j) {
        const Node& n = plan.nodes[j];
        if (!n.outputs.empty() && n.outputs[0] == gx) made = int(j);
        if (std::find(n.outputs.begin(), n.outputs.end(), other) != n.outputs.end()) other_made = int(j);
        reads += int(std::count(n.inputs.begin(), n.inputs.end(), gx));
      }
      if (made < 0 || reads != 1 || other_made >= made) continue;  // (the other gradient must exist by then)
      Node& norm = plan.nodes[size_t(made)];
      if (std::string(norm.prim->name()) != "layer_norm_backward" || norm.inputs.size() != 5) continue;
      const TensorSpec& o = plan.values[size_t(other)];
      if (out.dtype != DType::Float32 || o.dtype != DType::Float32 || o.shape != out.shape ||
          plan.values[size_t(gx)].shape != out.shape)
        continue;
      Attributes attrs = norm.prim->attributes();
      attrs["accumulate"] = true;
      norm.prim = make_primitive("layer_norm_backward", attrs, {});
      norm.inputs.push_back(other);
      norm.outputs[0] = add.outputs[0];
      add.inputs.clear();  // gone with dead-code elimination
      add.outputs.clear();
      ++fused;
      break;
    }
  }
  if (fused) eliminate_dead_code(plan);
  return fused;
}

}  // namespace pcp::plan
