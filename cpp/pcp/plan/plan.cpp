#include "pcp/plan/plan.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"
#include "pcp/ops/fused.h"
#include "pcp/ops/ops.h"
#include "pcp/plan/command_replay.h"

namespace pcp::plan {

struct Plan::Replayer {
  std::mutex mu;
  bool made = false;
  std::unique_ptr<CommandReplay> replay;
  std::string why;  // when there is none
  int64_t commands = -1;  // GPU commands of the last run (-1: none yet, or no GPU)
};

std::shared_ptr<Plan::Replayer> Plan::new_replayer() { return std::make_shared<Replayer>(); }

int64_t Plan::last_commands() const {
  std::lock_guard<std::mutex> g(replayer->mu);
  return replayer->commands;
}

std::vector<TensorSpec> AliasView::infer(const std::vector<TensorSpec>& in) const {
  return {{shape_, in[0].dtype, in[0].device}};
}

std::vector<Tensor> AliasView::forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) {
  // A traced view lies in its memory by construction; one from a plan file is checked.
  const Tensor& x = in[0];
  int64_t lo, hi;
  const bool fits = view_span(shape_, strides_, x.offset() + offset_, &lo, &hi);
  const int64_t items = int64_t(x.storage()->nbytes() / x.itemsize());
  if (numel(shape_) && (!fits || lo < 0 || hi >= items))
    fail<ValueError>("plan: a view ", shape_str(shape_), " with strides ", shape_str(strides_), " at offset ", offset_,
                     " reaches outside its tensor's memory");
  return {x.alias(shape_, strides_, x.offset() + offset_)};
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
  // The GPU's commands during the run (another thread's work on it would count too).
  auto gpu = std::find_if(values.begin(), values.end(), [](const TensorSpec& v) { return v.device.is_gpu(); });
  const int device = gpu == values.end() ? -1 : gpu->device.index;
  const uint64_t commands_before = device >= 0 ? gpu::rt().commands(device) : 0;
  {
    std::lock_guard<std::mutex> g(replayer->mu);  // a replay's lists and buffers serve one call at a time
    if (!replayer->made) {
      replayer->made = true;
      replayer->replay = CommandReplay::make(*this, &replayer->why);
    }
    if (replayer->replay) replayer->replay->run(*this, slots);
  }
  if (!replayer->replay)
    for (size_t k = 0; k < nodes.size(); ++k) run_node(k, slots);
  if (device >= 0) {
    std::lock_guard<std::mutex> g(replayer->mu);
    replayer->commands = int64_t(gpu::rt().commands(device) - commands_before);
  }
  for (const auto& [t, id] : grads) t.impl()->grad = id < 0 ? nullptr : slots[id].impl_ptr();
  std::vector<Tensor> out;
  out.reserve(outputs.size());
  for (int id : outputs) out.push_back(slots[id]);
  return out;
}

void Plan::run_node(size_t k, std::vector<Tensor>& slots) const {
  const Node& n = nodes[k];
  std::vector<Tensor> ins;
  std::vector<TensorSpec> specs;
  for (int id : n.inputs) ins.push_back(id < 0 ? Tensor() : slots[id]);
  if (from_file && !n.prim->output_views_input() && !n.prim->writes_inputs())
    for (Tensor& t : ins)
      if (t.defined() && !t.is_contiguous()) t = contiguous(t);
  for (int id : n.outputs) specs.push_back(values[id]);
  std::vector<Tensor> outs = run_primitive(*n.prim, ins, specs);
  for (size_t j = 0; j < outs.size(); ++j) slots[n.outputs[j]] = std::move(outs[j]);
  for (int id : release_after[k]) slots[id] = Tensor();
}

std::string Plan::replay_mode() const {
  std::lock_guard<std::mutex> g(replayer->mu);
  if (!replayer->made) return "not run yet";
  return replayer->replay ? replayer->replay->describe() : "node by node (" + replayer->why + ")";
}

void Plan::check() const {
  std::vector<bool> ready(values.size(), false);  // made (or given) by this point of the run
  for (int id : args) ready[size_t(id)] = true;
  for (const auto& c : captured) ready[size_t(c.first)] = true;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    for (int id : n.inputs)
      if (id >= 0 && !ready[size_t(id)])
        fail<ValueError>("plan: node ", k, " (", n.prim->name(), ") reads %", id, " before any node makes it");
    for (int id : n.outputs) ready[size_t(id)] = true;
    std::vector<TensorSpec> in;
    for (int id : n.inputs) in.push_back(id < 0 ? TensorSpec{{}, DType::Float32, cpu_device(), false} : values[id]);
    if (in.empty() && !n.prim->writes_inputs())
      fail<ValueError>("plan: node ", k, " (", n.prim->name(), ") has no inputs");
    const std::vector<TensorSpec> out = n.prim->infer(in);
    bool ok = out.size() == n.outputs.size();
    for (size_t j = 0; ok && j < out.size(); ++j) ok = out[j] == values[n.outputs[j]];
    if (!ok) {
      std::string got, want;
      for (const TensorSpec& o : out) got += " " + describe(o);
      for (int id : n.outputs) want += " " + describe(values[id]);
      fail<ValueError>("plan: node ", k, " (", n.prim->name(), ") infers", got, " but the plan records", want);
    }
  }
  for (int id : outputs)
    if (!ready[size_t(id)]) fail<ValueError>("plan: returns %", id, ", which no node makes");
  for (const auto& g : grads)
    if (g.second >= 0 && !ready[size_t(g.second)]) fail<ValueError>("plan: sets a .grad to %", g.second, ", which no node makes");
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

namespace {
const bool registered = register_primitive("alias", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
  return std::shared_ptr<Primitive>(
      std::make_shared<AliasView>(attr_ints(n, a, "shape"), attr_ints(n, a, "strides"), attr_int(n, a, "offset"),
                                  a.count("base_strides") ? attr_ints(n, a, "base_strides") : Strides{}));
}, .inputs = {1}, .check = [](const NodeCheck& c) {
  c.require(attr_ints(c.op, c.attrs, "strides").size() == c.dims("shape").size(), "strides do not match shape");
}, .gpu = true});

// Whether a node has as many inputs as its primitive's record takes (and none left out where it
// needs one), so that a plan file cannot make infer() or forward() read past its inputs.
bool inputs_fit(const NodeRecord& n) {
  const PrimitiveRecord* r = primitive_record(n.op);
  if (!r) return true;  // making it names the unknown primitive
  const size_t k = n.inputs.size();
  for (size_t i = 0; i < k; ++i)
    if (n.inputs[i] < 0 && std::find(r->optional_inputs.begin(), r->optional_inputs.end(), i) == r->optional_inputs.end())
      return false;
  return r->inputs.empty() || std::find(r->inputs.begin(), r->inputs.end(), k) != r->inputs.end();
}

template <class T>
int index_in(std::vector<std::shared_ptr<T>>& all, const std::shared_ptr<T>& x) {
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == x) return int(i);
  all.push_back(x);
  return int(all.size() - 1);
}
}  // namespace

PlanRecord record_of(const Plan& plan) {
  PlanRecord r;
  r.values = plan.values, r.args = plan.args, r.arg_strides = plan.arg_strides, r.captured = plan.captured;
  r.constants = plan.constants, r.outputs = plan.outputs, r.traced_nodes = plan.traced_nodes;
  std::vector<RandomDrawPtr> draws = plan.draws;  // in the order the plan draws them
  for (const Node& n : plan.nodes) {
    NodeRecord nr{n.prim->name(), n.prim->attributes(), n.inputs, n.outputs, {}, {}};
    const SharedState shared = n.prim->shared_state();
    for (const HostScalarPtr& h : shared.scalars) nr.scalars.push_back(index_in(r.scalars, h));
    for (const RandomDrawPtr& d : shared.draws) nr.draws.push_back(index_in(draws, d));
    r.nodes.push_back(std::move(nr));
  }
  for (const RandomDrawPtr& d : draws) r.draws.push_back(d->n);
  for (const auto& [t, id] : plan.grads) {
    int k = -1;
    for (size_t i = 0; i < plan.captured.size() && k < 0; ++i)
      if (plan.captured[i].second.is_same(t)) k = int(i);
    if (k < 0) fail<ValueError>("plan: a .grad effect on a tensor the plan does not hold cannot be saved");
    r.grads.push_back({k, id});
  }
  return r;
}

std::shared_ptr<Plan> plan_from(const PlanRecord& r) {
  auto p = std::make_shared<Plan>();
  const int n = int(r.values.size());
  auto check_id = [&](int id, bool optional) {
    if (id < (optional ? -1 : 0) || id >= n) fail<ValueError>("plan: value ", id, " is out of range (", n, " values)");
  };
  for (const TensorSpec& v : r.values) check_shape(v.shape, "plan", itemsize(v.dtype));  // dims >= 0, sizes fit
  p->values = r.values, p->args = r.args, p->arg_strides = r.arg_strides, p->captured = r.captured;
  p->outputs = r.outputs, p->traced_nodes = r.traced_nodes;
  if (r.arg_strides.size() != r.args.size()) fail<ValueError>("plan: ", r.args.size(), " arguments but ",
                                                               r.arg_strides.size(), " stride lists");
  for (int id : r.args) check_id(id, false);
  for (int id : r.outputs) check_id(id, false);
  for (const auto& [id, t] : r.captured) {
    check_id(id, false);
    if (!t.defined() || !(spec_of(t) == r.values[id]))
      fail<ValueError>("plan: captured tensor for value ", id, " does not match its spec");
  }
  for (int id : r.constants)
    if (std::none_of(r.captured.begin(), r.captured.end(), [&](const auto& c) { return c.first == id; }))
      fail<ValueError>("plan: constant ", id, " is not a captured value");
  p->constants = r.constants;
  for (uint64_t count : r.draws) p->draws.push_back(std::make_shared<RandomDraw>(RandomDraw{count, 0, 0}));
  for (const NodeRecord& nr : r.nodes) {
    SharedState shared;
    for (int i : nr.scalars) {
      if (i < 0 || size_t(i) >= r.scalars.size()) fail<ValueError>("plan: ", nr.op, " refers to host scalar ", i);
      shared.scalars.push_back(r.scalars[i]);
    }
    for (int i : nr.draws) {
      if (i < 0 || size_t(i) >= p->draws.size()) fail<ValueError>("plan: ", nr.op, " refers to random draw ", i);
      shared.draws.push_back(p->draws[i]);
    }
    for (int id : nr.inputs) check_id(id, true);
    for (int id : nr.outputs) check_id(id, false);
    if (!inputs_fit(nr)) fail<ValueError>("plan: ", nr.op, " cannot take ", nr.inputs.size(), " inputs");
    std::vector<TensorSpec> in;
    for (int id : nr.inputs) in.push_back(id < 0 ? TensorSpec{{}, DType::Float32, cpu_device(), false} : r.values[size_t(id)]);
    check_node_record(nr, in);
    p->nodes.push_back({make_primitive(nr.op, nr.attrs, shared), nr.inputs, nr.outputs});
  }
  for (const auto& [k, id] : r.grads) {
    if (k < 0 || size_t(k) >= r.captured.size()) fail<ValueError>("plan: a .grad effect on captured tensor ", k);
    check_id(id, true);
    p->grads.push_back({r.captured[k].second, id});
  }
  p->check();
  p->plan_releases();
  p->from_file = true;
  return p;
}

}  // namespace pcp::plan
