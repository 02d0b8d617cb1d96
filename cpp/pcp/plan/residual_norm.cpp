// The residual add before a layer norm folded into it (passes.h): on a GPU one pass adds, writes
// the sum and normalizes it, where an add and a layer norm read the stream twice (the CPU adds,
// then normalizes).
#include <algorithm>

#include "pcp/plan/passes.h"

namespace pcp::plan {
namespace {

bool register_type(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16; }

}  // namespace

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
    if (s0.dtype != DType::Float32 || !register_type(s1.dtype) || s0.shape != xs.shape || s1.shape != xs.shape) continue;
    Attributes attrs = norm.prim->attributes();
    attrs["residual"] = true;
    norm.prim = make_primitive("layer_norm", attrs, {});
    norm.inputs = {ops[0], norm.inputs[1], norm.inputs[2], ops[1]};
    norm.outputs.push_back(x);
    plan.nodes[a].inputs.clear();  // the add: gone with dead-code elimination
    plan.nodes[a].outputs.clear();
    ++fused;
  }
  if (fused) eliminate_dead_code(plan);
  return fused;
}

}  // namespace pcp::plan
