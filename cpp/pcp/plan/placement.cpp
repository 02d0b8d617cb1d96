// Placing a plan record on another device (plan.h): how one plan file runs on a CPU worker and
// on a GPU worker alike.
#include <algorithm>

#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/plan/plan.h"

namespace pcp::plan {

namespace {
// The device the plan computes on: its first captured tensor's (a parameter), else its first
// floating argument's, else the CPU.
Device compute_device(const PlanRecord& r) {
  if (!r.captured.empty()) return r.values.at(size_t(r.captured.front().first)).device;
  for (int id : r.args)
    if (is_floating(r.values.at(size_t(id)).dtype)) return r.values[size_t(id)].device;
  return cpu_device();
}
}  // namespace

PlanRecord placed_on(PlanRecord r, Device to) {
  const Device from = compute_device(r);
  if (from == to) return r;
  const auto n = r.values.size();
  const auto check = [&](int id) {
    if (id < 0 || size_t(id) >= n) fail<ValueError>("plan: value ", id, " is out of range (", n, " values)");
  };
  // Inputs: what was on the compute device moves; integer arguments on the CPU stay there (token
  // ids and targets, host metadata to the ops that read them).
  for (int id : r.args) {
    check(id);
    TensorSpec& v = r.values[size_t(id)];
    if (v.device == from && !(!v.device.is_gpu() && !is_floating(v.dtype))) v.device = to;
  }
  for (auto& [id, t] : r.captured) {
    check(id);
    if (r.values[size_t(id)].device == from) {
      r.values[size_t(id)].device = to;
      t = to_device(t, to);
    }
  }
  // Nodes: a device attribute naming the compute device follows it; every output's spec is
  // inferred again from its inputs' (plan_from checks them all once more).
  const std::string from_name = from.str();
  for (NodeRecord& node : r.nodes) {
    for (auto& [key, value] : node.attrs)
      if (key == "device" && std::holds_alternative<std::string>(value) && std::get<std::string>(value) == from_name)
        value = to.str();
    std::vector<TensorSpec> in;
    for (int id : node.inputs) {
      if (id >= 0) check(id);
      in.push_back(id < 0 ? TensorSpec{{}, DType::Float32, cpu_device(), false} : r.values[size_t(id)]);
    }
    check_node_record(node, in);
    SharedState shared;
    for (int i : node.scalars)
      if (i >= 0 && size_t(i) < r.scalars.size()) shared.scalars.push_back(r.scalars[size_t(i)]);
    for (int i : node.draws) shared.draws.push_back(std::make_shared<RandomDraw>(RandomDraw{r.draws.at(size_t(i)), 0, 0}));
    const std::vector<TensorSpec> out = make_primitive(node.op, node.attrs, shared)->infer(in);
    if (out.size() != node.outputs.size())
      fail<ValueError>("plan: ", node.op, " gives ", out.size(), " outputs where the record has ", node.outputs.size());
    for (size_t j = 0; j < out.size(); ++j) {
      check(node.outputs[j]);
      r.values[size_t(node.outputs[j])] = out[j];
    }
  }
  return r;
}

}  // namespace pcp::plan
