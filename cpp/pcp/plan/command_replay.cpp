#include "pcp/plan/command_replay.h"

#include <algorithm>
#include <exception>

#include "pcp/backend/gpu/faults.h"
#include "pcp/backend/gpu/memory.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/plan/plan.h"

namespace pcp::plan {

struct CommandReplay::Stretch {
  size_t begin = 0, end = 0;  // its nodes
  bool live = false;          // one node, run on every call
  // Values made before it that it reads (but captured tensors); of those, what arguments and
  // live nodes make, which it reads from buffers of its own.
  std::vector<int> reads, inputs;
  std::vector<Tensor> bound;
  // Values it makes that later nodes, the outputs or .grad read, and their buffers.
  std::vector<int> kept;
  std::vector<Tensor> held;
  gpu::Runtime::CommandList* list = nullptr;
};

namespace {

// Whether a node must run on every call: it reads host scalars or random draws, or works on
// anything but the plan's GPU.
bool is_live(const Plan& plan, const Node& n, Device gpu) {
  const SharedState s = n.prim->shared_state();
  if (!s.scalars.empty() || !s.draws.empty() || n.prim->draws_random()) return true;
  for (int id : n.inputs)
    if (id >= 0 && plan.values[id].device != gpu) return true;
  for (int id : n.outputs)
    if (plan.values[id].device != gpu) return true;
  return false;
}

}  // namespace

std::unique_ptr<CommandReplay> CommandReplay::make(const Plan& plan, std::string* why) {
  auto on_gpu = std::find_if(plan.values.begin(), plan.values.end(), [](const TensorSpec& v) { return v.device.is_gpu(); });
  if (on_gpu == plan.values.end()) return *why = "not on a GPU", nullptr;
  const Device gpu = on_gpu->device;  // nodes on other devices run live
  if (!plan.command_lists) return *why = "command lists not asked for", nullptr;
  gpu::Runtime* rt = gpu::runtime();
  if (!rt || std::string(rt->api()) != "vulkan") return *why = "command lists are Vulkan's", nullptr;
  for (size_t i = 0; i < plan.args.size(); ++i)  // lists read the GPU's from contiguous copies
    if (plan.values[plan.args[i]].device == gpu && plan.arg_strides[i] != contiguous_strides(plan.values[plan.args[i]].shape))
      return *why = "argument " + std::to_string(i) + " is not contiguous", nullptr;
  std::unique_ptr<CommandReplay> r(new CommandReplay(plan, gpu.index));
  size_t captured_nodes = 0;
  for (const Stretch& s : r->stretches_) captured_nodes += s.live ? 0 : s.end - s.begin;
  if (captured_nodes == 0) return *why = "every node runs on the host's say", nullptr;
  return r;
}

CommandReplay::CommandReplay(const Plan& plan, int device) : device_(device) {
  const Device gpu = gpu_device(device);
  const size_t nv = plan.values.size();
  std::vector<int> made_by(nv, -1);  // the stretch that makes each value
  std::vector<bool> captured(nv, false);
  for (const auto& c : plan.captured) captured[c.first] = true;
  // What arguments and live nodes give a list is copied into buffers of its own.
  const auto from_outside = [&](int id) { return !captured[id] && (made_by[id] < 0 || stretches_[made_by[id]].live); };
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    const Node& n = plan.nodes[k];
    bool live = is_live(plan, n, gpu);
    // A list would write its copy of such a value, not the value later nodes read.
    for (int id : n.inputs) live = live || (n.prim->writes_inputs() && id >= 0 && from_outside(id));
    if (live || stretches_.empty() || stretches_.back().live) stretches_.push_back({k, k + 1, live});
    else stretches_.back().end = k + 1;
    Stretch& s = stretches_.back();
    for (int id : n.inputs) {
      if (live || id < 0 || captured[id] || made_by[id] == int(stretches_.size() - 1)) continue;
      if (std::find(s.reads.begin(), s.reads.end(), id) == s.reads.end()) s.reads.push_back(id);
      if (from_outside(id) && std::find(s.inputs.begin(), s.inputs.end(), id) == s.inputs.end()) s.inputs.push_back(id);
    }
    for (int id : n.outputs) made_by[id] = int(stretches_.size() - 1);
  }
  // A list keeps the values it makes that live nodes, the outputs or .grad read. What only later
  // lists read needs no tensor on a replay: its memory is baked into them, and freed into the
  // ListBuffers after its last reader, for later lists to reuse.
  std::vector<bool> read_later(nv, false);
  for (int id : plan.outputs) read_later[id] = true;
  for (const auto& g : plan.grads)
    if (g.second >= 0) read_later[g.second] = true;
  for (const Stretch& s : stretches_)
    for (size_t k = s.begin; s.live && k < s.end; ++k)
      for (int id : plan.nodes[k].inputs)
        if (id >= 0) read_later[id] = true;
  owned_.assign(nv, false);
  for (size_t id = 0; id < nv; ++id) {
    if (made_by[id] < 0 || stretches_[made_by[id]].live) continue;
    owned_[id] = true;
    if (read_later[id]) stretches_[made_by[id]].kept.push_back(int(id));
  }
}

CommandReplay::~CommandReplay() { reset(); }

void CommandReplay::reset() {
  gpu::Runtime* rt = gpu::runtime();
  for (Stretch& s : stretches_) {
    if (s.list && rt) rt->free_list(device_, s.list);  // freed once the work recorded so far completes
    s.list = nullptr;
    s.bound.clear();
    s.held.clear();
  }
  buffers_.reset();  // after the lists: their buffers go back to the device's cache
  recorded_ = false;
}

// Nodes [begin, end) of the plan, one by one, freeing values after their last use.
static void run_nodes(const Plan& plan, std::vector<Tensor>& slots, size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k) plan.run_node(k, slots);
}

void CommandReplay::run(const Plan& plan, std::vector<Tensor>& slots) {
  if (disabled()) return run_nodes(plan, slots, 0, plan.nodes.size());
  if (recorded_) replay(plan, slots);
  else record(plan, slots);
  // The caller gets copies of what lives in the replay's buffers, which the next call rewrites.
  std::vector<bool> copied(owned_.size(), false);
  const auto hand_out = [&](int id) {
    if (id < 0 || !owned_[id] || copied[id] || !slots[id].defined()) return;
    slots[id] = copy(slots[id]);
    copied[id] = true;
  };
  for (int id : plan.outputs) hand_out(id);
  for (const auto& g : plan.grads) hand_out(g.second);
}

void CommandReplay::record(const Plan& plan, std::vector<Tensor>& slots) {
  gpu::Runtime& rt = gpu::rt();
  auto buffers = std::make_shared<gpu::ListBuffers>(device_);
  buffers_ = buffers;
  gpu::fault_buffer(device_);  // made now: its first upload is not part of a list
  for (size_t si = 0; si < stretches_.size(); ++si) {
    Stretch& s = stretches_[si];
    if (s.live) {
      run_nodes(plan, slots, s.begin, s.end);
      continue;
    }
    std::vector<Tensor> before(slots.size());  // to run the stretch node by node if it cannot be recorded
    for (int id : s.reads) before[id] = slots[id];
    try {
      for (int id : s.inputs) {
        const Tensor& x = slots[id];
        if (!x.is_contiguous()) fail<ValueError>("a live node's output %", id, " is not contiguous");
        s.bound.push_back(Tensor::empty(x.shape(), x.dtype(), x.device()));
        gpu::copy(x, s.bound.back());
        slots[id] = s.bound.back();
      }
      buffers->start();
      if (!rt.begin_capture(device_)) fail<ValueError>(rt.api(), " records no command lists");
      try {
        run_nodes(plan, slots, s.begin, s.end);
      } catch (...) {
        rt.abort_capture(device_);
        throw;
      }
      s.list = rt.end_capture(device_);
      for (int id : s.reads)  // what earlier lists made and this one read last goes to the lists' buffers
        if (std::find(s.inputs.begin(), s.inputs.end(), id) == s.inputs.end()) before[id] = Tensor();
      buffers->stop();
    } catch (const std::exception& e) {
      buffers->stop();
      why_disabled_ = std::string("recording node ") + std::to_string(s.begin) + "..: " + e.what();
      for (size_t k = s.begin; k < s.end; ++k)
        for (int id : plan.nodes[k].outputs) slots[id] = Tensor();
      for (int id : s.reads) slots[id] = before[id];
      run_nodes(plan, slots, s.begin, plan.nodes.size());
      reset();
      return;
    }
    for (int id : s.kept) s.held.push_back(slots[id]);
    for (size_t i = 0; i < s.inputs.size(); ++i) slots[s.inputs[i]] = before[s.inputs[i]];  // the caller's again
  }
  recorded_ = true;
}

void CommandReplay::replay(const Plan& plan, std::vector<Tensor>& slots) {
  gpu::Runtime& rt = gpu::rt();
  for (Stretch& s : stretches_) {
    if (s.live) {
      run_nodes(plan, slots, s.begin, s.end);
      continue;
    }
    for (size_t i = 0; i < s.inputs.size(); ++i) gpu::copy(slots[s.inputs[i]], s.bound[i]);
    rt.replay(device_, s.list);
    gpu::fault_buffer(device_);  // arms the check of what the list's kernels found
    for (size_t i = 0; i < s.kept.size(); ++i) slots[s.kept[i]] = s.held[i];
    for (size_t k = s.begin; k < s.end; ++k)
      for (int id : plan.release_after[k]) slots[id] = Tensor();
  }
}

std::string CommandReplay::describe() const {
  if (disabled()) return "node by node (" + why_disabled_ + ")";
  size_t lists = 0, captured = 0, live = 0;
  for (const Stretch& s : stretches_) {
    if (s.live) ++live;
    else ++lists, captured += s.end - s.begin;
  }
  const auto count = [](size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  return count(lists, "command list") + " (" + count(captured, "node") + "), " + count(live, "live node");
}

}  // namespace pcp::plan
