#include "pcp/plan/plan.h"

#include <sstream>

#include "pcp/core/error.h"

namespace pcp::plan {

std::vector<TensorSpec> AliasView::infer(const std::vector<TensorSpec>& in) const {
  return {{shape_, in[0].dtype, in[0].device}};
}

std::vector<Tensor> AliasView::forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) {
  return {in[0].alias(shape_, strides_, in[0].offset() + offset_)};
}

static std::string describe(const TensorSpec& s) {
  return shape_str(s.shape) + " " + dtype_name(s.dtype) + " on " + s.device.str();
}

std::vector<Tensor> Plan::run(const std::vector<Tensor>& given) const {
  if (given.size() != args.size())
    fail<ValueError>("plan: takes ", args.size(), " tensor arguments, got ", given.size());
  std::vector<Tensor> slots(values.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorSpec want = values[args[i]];
    if (!given[i].defined() || !(spec_of(given[i]) == want))
      fail<ValueError>("plan: argument ", i, " is ", given[i].defined() ? describe(spec_of(given[i])) : "undefined",
                       " but the plan was traced for ", describe(want));
    if (given[i].strides() != arg_strides[i])
      fail<ValueError>("plan: argument ", i, " has strides ", shape_str(given[i].strides()),
                       " but the plan was traced for ", shape_str(arg_strides[i]));
    slots[args[i]] = given[i];
  }
  for (const auto& [id, t] : captured) slots[id] = t;
  for (const RandomDrawPtr& d : draws) Generator::global().redraw(*d);
  std::vector<Tensor> ins;
  std::vector<TensorSpec> specs;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    ins.clear();
    specs.clear();
    for (int id : n.inputs) ins.push_back(id < 0 ? Tensor() : slots[id]);
    for (int id : n.outputs) specs.push_back(values[id]);
    std::vector<Tensor> outs = run_primitive(*n.prim, ins, specs);
    for (size_t j = 0; j < outs.size(); ++j) slots[n.outputs[j]] = std::move(outs[j]);
    for (int id : release_after[k]) slots[id] = Tensor();
  }
  for (const auto& [t, id] : grads) t.impl()->grad = id < 0 ? nullptr : slots[id].impl_ptr();
  std::vector<Tensor> out;
  out.reserve(outputs.size());
  for (int id : outputs) out.push_back(slots[id]);
  return out;
}

void Plan::check() const {
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    std::vector<TensorSpec> in;
    for (int id : n.inputs) in.push_back(id < 0 ? TensorSpec{{}, DType::Float32, cpu_device(), false} : values[id]);
    const std::vector<TensorSpec> out = n.prim->infer(in);
    bool ok = out.size() == n.outputs.size();
    for (size_t j = 0; ok && j < out.size(); ++j) ok = out[j] == values[n.outputs[j]];
    if (!ok)
      fail<RuntimeError>("plan: node ", k, " (", n.prim->name(), ") infers outputs that differ from the recorded ones");
  }
}

void Plan::plan_releases() {
  std::vector<int> last(values.size(), -1);  // the last node reading a value (or making it)
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (int id : nodes[k].inputs)
      if (id >= 0) last[id] = int(k);
    for (int id : nodes[k].outputs)
      if (last[id] < 0) last[id] = int(k);
  }
  std::vector<bool> kept(values.size(), false);  // outputs and captured tensors live on
  for (int id : outputs) kept[id] = true;
  for (const auto& c : captured) kept[c.first] = true;
  for (int id : args) kept[id] = true;
  for (const auto& g : grads)
    if (g.second >= 0) kept[g.second] = true;
  release_after.assign(nodes.size(), {});
  for (size_t id = 0; id < values.size(); ++id)
    if (!kept[id] && last[id] >= 0) release_after[last[id]].push_back(int(id));
}

std::string Plan::str() const {
  std::ostringstream os;
  for (size_t i = 0; i < args.size(); ++i) os << "%" << args[i] << " = argument " << i << "  " << describe(values[args[i]]) << "\n";
  for (const auto& [id, t] : captured) os << "%" << id << " = captured  " << describe(values[id]) << "\n";
  for (const Node& n : nodes) {
    for (size_t j = 0; j < n.outputs.size(); ++j) os << (j ? ", " : "") << "%" << n.outputs[j];
    os << " = " << n.prim->name() << "(";
    for (size_t j = 0; j < n.inputs.size(); ++j) os << (j ? ", " : "") << (n.inputs[j] < 0 ? std::string("none") : "%" + std::to_string(n.inputs[j]));
    os << ")";
    for (int id : n.outputs) os << "  " << describe(values[id]);
    os << "\n";
  }
  if (!draws.empty()) os << draws.size() << " random draws, drawn again on each run\n";
  for (const auto& [t, id] : grads) os << "set .grad of a captured " << shape_str(t.shape()) << " to " << (id < 0 ? std::string("none") : "%" + std::to_string(id)) << "\n";
  os << "return";
  for (size_t j = 0; j < outputs.size(); ++j) os << (j ? ", %" : " %") << outputs[j];
  return os.str();
}

}  // namespace pcp::plan
