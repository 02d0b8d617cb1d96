// Elementwise fusion (passes.h): groups of unary and binary ops and casts in float32, float16
// and bfloat16 become one fused_elementwise node each (on a GPU, groups within its fused
// kernel's limits).
#include <algorithm>
#include <map>
#include <optional>

#include "pcp/ops/fused.h"
#include "pcp/plan/passes.h"

namespace pcp::plan {
namespace {


// The instruction a node would be in a fused program (registers left to fill), if it may fuse:
// unary and binary math and casts between float32, float16 and bfloat16 (each computed in
// float32 and rounded to its result's type, as the ops alone are).
std::optional<FusedProgram::Instr> as_instruction(const Plan& plan, const Node& n) {
  if (n.outputs.size() != 1) return std::nullopt;
  for (int id : n.inputs)
    if (id < 0 || !is_compute_float(plan.values[size_t(id)].dtype)) return std::nullopt;
  const DType type = plan.values[size_t(n.outputs[0])].dtype;
  if (!is_compute_float(type)) return std::nullopt;
  const std::string name = n.prim->name();
  if (name == "astype" && n.inputs.size() == 1) return FusedProgram::Instr{false, FusedProgram::kConvert, 0, 0, type};
  if (auto u = unary_op_named(name); u && n.inputs.size() == 1 && fusable_unary(*u))
    return FusedProgram::Instr{false, int(*u), 0, 0, type};
  if (auto b = binary_op_named(name); b && n.inputs.size() == 2 && fusable_binary(*b))
    return FusedProgram::Instr{true, int(*b), 0, 0, type};
  return std::nullopt;
}

}  // namespace

int fuse_elementwise(Plan& plan, const std::vector<bool>& constant) {
  const size_t n_nodes = plan.nodes.size();
  // Constant scalars the plan captured: immediates of a program, not inputs (a 16-bit one's
  // value is exact in float32, as an input's would be widened).
  std::map<int, float> scalar;
  for (const auto& [id, t] : plan.captured)
    if (size_t(id) < constant.size() && constant[size_t(id)] && t.numel() == 1 && t.ndim() == 0 &&
        is_compute_float(t.dtype()))
      scalar[id] = float(t.item_double());
  std::vector<std::vector<int>> readers(plan.values.size());
  for (size_t k = 0; k < n_nodes; ++k)
    for (int id : plan.nodes[k].inputs)
      if (id >= 0) readers[size_t(id)].push_back(int(k));
  std::vector<bool> kept(plan.values.size(), false);  // read after the run
  for (int id : plan.outputs) kept[size_t(id)] = true;
  for (const auto& g : plan.grads)
    if (g.second >= 0) kept[size_t(g.second)] = true;

  // Groups, in node order: a node joins the group that makes one of its inputs when that group
  // has its shape and nothing outside it has read the group's values yet (the fused node runs
  // where its last member ran) and no in-place write happened since the group began.
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of_value(plan.values.size(), -1), group_of_node(n_nodes, -1);
  std::vector<std::optional<FusedProgram::Instr>> instr(n_nodes);
  int last_write = -1;
  // On a GPU, whether groups a and b (-1: none) and node k together stay within the fused
  // kernel's inputs and instructions (metal/fused.comp).
  const auto fits_gpu = [&](int a, int b, int k) {
    std::vector<int> members{k};
    for (int g : {a, b})
      if (g >= 0) members.insert(members.end(), groups[size_t(g)].begin(), groups[size_t(g)].end());
    std::vector<int> made, inputs, immediates;
    for (int m : members) made.push_back(plan.nodes[size_t(m)].outputs[0]);
    for (int m : members)
      for (int id : plan.nodes[size_t(m)].inputs) {
        std::vector<int>& to = scalar.count(id) ? immediates : inputs;
        if (std::find(made.begin(), made.end(), id) == made.end() && std::find(to.begin(), to.end(), id) == to.end())
          to.push_back(id);
      }
    // Outputs: values read outside the members (as far as is known now) or after the run.
    int outputs = 0;
    for (int m : members) {
      const int v = plan.nodes[size_t(m)].outputs[0];
      bool outside = kept[size_t(v)];
      for (int r : readers[size_t(v)]) outside = outside || std::find(members.begin(), members.end(), r) == members.end();
      outputs += outside;
    }
    return int(members.size()) <= kGpuFusedCode && int(inputs.size()) <= kGpuFusedInputs &&
           int(immediates.size()) <= kGpuFusedImmediates && outputs <= kGpuFusedOutputs;
  };
  for (size_t k = 0; k < n_nodes; ++k) {
    const Node& n = plan.nodes[k];
    if (n.prim->writes_inputs()) last_write = int(k);
    instr[k] = as_instruction(plan, n);
    if (!instr[k]) continue;
    const Shape& shape = plan.values[size_t(n.outputs[0])].shape;
    const bool shape_gpu = plan.values[size_t(n.outputs[0])].device.is_gpu();
    // Every group making one of its inputs, or reading one of them (a sibling: the input is read
    // once), that it may join: they merge, with it, into one.
    std::vector<int> candidates;
    for (int id : n.inputs) candidates.push_back(id >= 0 ? group_of_value[size_t(id)] : -1);
    for (int id : n.inputs)
      if (id >= 0 && !scalar.count(id))
        for (int r : readers[size_t(id)])
          if (r < int(k)) candidates.push_back(group_of_node[size_t(r)]);
    int join = -1;
    for (int g : candidates) {
      if (g < 0 || g == join || groups[size_t(g)].empty() || groups[size_t(g)].front() <= last_write) continue;
      if (plan.values[size_t(plan.nodes[size_t(groups[size_t(g)].front())].outputs[0])].shape != shape) continue;
      bool read_outside = false;
      for (int m : groups[size_t(g)])
        for (int r : readers[size_t(plan.nodes[size_t(m)].outputs[0])])
          read_outside = read_outside || (r < int(k) && (group_of_node[size_t(r)] < 0 ||
                                                         (group_of_node[size_t(r)] != g && group_of_node[size_t(r)] != join)));
      if (read_outside) continue;
      if (shape_gpu && !fits_gpu(join, g, int(k))) continue;
      if (join < 0) {
        join = g;
        continue;
      }
      for (int m : groups[size_t(g)]) {  // merge g into join
        group_of_node[size_t(m)] = join;
        group_of_value[size_t(plan.nodes[size_t(m)].outputs[0])] = join;
        groups[size_t(join)].push_back(m);
      }
      groups[size_t(g)].clear();
      std::sort(groups[size_t(join)].begin(), groups[size_t(join)].end());
    }
    if (join < 0) {
      join = int(groups.size());
      groups.emplace_back();
    }
    groups[size_t(join)].push_back(int(k));
    group_of_node[k] = join;
    group_of_value[size_t(n.outputs[0])] = join;
  }

  // Each group of two or more: one node where its last member was.
  std::map<int, Node> fused_at;  // last member -> the fused node
  int fused = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int>& members = groups[g];
    if (members.size() < 2) continue;
    FusedProgram p;
    p.shape = plan.values[size_t(plan.nodes[size_t(members.back())].outputs[0])].shape;
    std::map<int, int> reg;  // value -> register
    std::vector<int> inputs, immediates, outputs;
    for (int m : members)
      for (int id : plan.nodes[size_t(m)].inputs)
        if (group_of_value[size_t(id)] != int(g) && !reg.count(id)) {
          reg[id] = 0;
          (scalar.count(id) ? immediates : inputs).push_back(id);
        }
    if (inputs.empty()) {  // the op takes at least one input (its device)
      inputs.push_back(immediates.back());
      immediates.pop_back();
    }
    for (size_t i = 0; i < inputs.size(); ++i) reg[inputs[i]] = int(i);
    for (size_t j = 0; j < immediates.size(); ++j) {
      reg[immediates[j]] = int(inputs.size() + j);
      p.immediates.push_back(scalar.at(immediates[j]));
    }
    p.n_inputs = int(inputs.size());
    for (int id : inputs) p.input_types.push_back(plan.values[size_t(id)].dtype);
    const bool gpu = plan.values[size_t(inputs[0])].device.is_gpu();
    bool fits = !gpu || (p.n_inputs <= kGpuFusedInputs && int(p.immediates.size()) <= kGpuFusedImmediates);
    for (int id : inputs) fits = fits && (!gpu || gpu_fused_input(plan.values[size_t(id)].shape, p.shape));
    for (int m : members) {
      const Node& n = plan.nodes[size_t(m)];
      FusedProgram::Instr c = *instr[size_t(m)];
      c.a = reg.at(n.inputs[0]);
      c.b = n.inputs.size() > 1 ? reg.at(n.inputs[1]) : 0;
      const int out = n.outputs[0];
      reg[out] = p.first_result() + int(p.code.size());
      p.code.push_back(c);
      bool outside = kept[size_t(out)];
      for (int r : readers[size_t(out)]) outside = outside || group_of_node[size_t(r)] != int(g);
      if (outside) {
        p.outputs.push_back(reg[out]);
        outputs.push_back(out);
      }
    }
    // The GPU kernel writes a 16-bit output in whole words: an even number of elements.
    bool odd_16bit = false;
    for (int id : outputs) odd_16bit = odd_16bit || (plan.values[size_t(id)].dtype != DType::Float32 && numel(p.shape) % 2);
    if (!fits || (gpu && (int(outputs.size()) > kGpuFusedOutputs || odd_16bit))) {  // beyond the GPU kernel: left as they are
      for (int m : members) group_of_node[size_t(m)] = -1;
      continue;
    }
    fused_at[members.back()] = Node{std::make_shared<FusedElementwise>(std::move(p)), inputs, outputs};
    ++fused;
  }
  if (!fused) return 0;
  std::vector<Node> nodes;
  for (size_t k = 0; k < n_nodes; ++k) {
    if (auto it = fused_at.find(int(k)); it != fused_at.end()) nodes.push_back(std::move(it->second));
    else if (group_of_node[k] < 0 || groups[size_t(group_of_node[k])].size() < 2) nodes.push_back(std::move(plan.nodes[k]));
  }
  plan.nodes = std::move(nodes);
  return fused;
}

}  // namespace pcp::plan
