// A plan: a function's computation captured once as a graph of primitives (trace.h makes one),
// replayed on new arguments of the same signature without the code that made it. Every node
// holds the specs (shape, dtype, device) of its outputs, so a plan can be checked against new
// argument specs before any kernel runs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pcp/core/random.h"
#include "pcp/ops/primitive.h"

namespace pcp::plan {

// One primitive applied to values of the plan (indices into Plan::values; -1 for an input left
// out), producing values.
struct Node {
  std::shared_ptr<Primitive> prim;
  std::vector<int> inputs;
  std::vector<int> outputs;
};

// A view of a value with its own shape and strides, starting `offset` elements past the
// value's own offset: how a plan refers to a tensor the traced code made from another without
// an op (detach(), .data, a Python-side view of the same memory). base_strides: the value's own
// strides when traced, which say which of its elements the view reads (the StableHLO exporter
// needs them; running the view does not).
class AliasView : public Primitive {
 public:
  AliasView(Shape shape, Strides strides, int64_t offset, Strides base_strides)
      : shape_(std::move(shape)), strides_(std::move(strides)), offset_(offset), base_strides_(std::move(base_strides)) {}
  const char* name() const override { return "alias"; }
  bool output_views_input() const override { return true; }
  Attributes attributes() const override {
    return {{"shape", shape_}, {"strides", strides_}, {"offset", offset_}, {"base_strides", base_strides_}};
  }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override;
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override;

 private:
  Shape shape_;
  Strides strides_;
  int64_t offset_;
  Strides base_strides_;
};

struct Plan {
  std::vector<TensorSpec> values;  // every value's spec
  std::vector<int> args;           // the values the caller passes, in order
  std::vector<Strides> arg_strides;  // their strides when traced (aliases of them depend on it)
  // Tensors the traced code read that are not arguments (parameters, constants it made), held by
  // reference: a replay reads what they hold then, so a parameter updated between calls is seen.
  std::vector<std::pair<int, Tensor>> captured;
  // The captured values the traced code made itself (an arange, a Python number, a folded
  // constant, optimizer state it created): an export embeds those no node writes.
  std::vector<int> constants;
  std::vector<Node> nodes;
  std::vector<int> outputs;
  // .grad the traced code left on captured tensors (backward() in a training step): a replay
  // sets each tensor's .grad to the value (none for -1) after its nodes ran.
  std::vector<std::pair<Tensor, int>> grads;
  // Random draws of the traced code (dropout masks), in order: a replay draws each again from
  // the global generator before its nodes run, so it gets fresh masks, the ones an eager run
  // from the same generator state would get.
  std::vector<RandomDrawPtr> draws;
  std::vector<std::vector<int>> release_after;  // per node: values no later node or output reads
  int traced_nodes = 0;  // nodes as traced, before the passes (plan/passes.h)
  // Made from a file (plan_from): its views' layouts are the file's word, so a run hands every
  // node but views and in-place steps contiguous inputs (a traced plan knows its layouts).
  bool from_file = false;
  // Whether run() may replay as command lists on a Vulkan GPU (plan/command_replay.h); set
  // before the first run. The replay is made by the first run (none where the plan cannot use one).
  bool command_lists = false;
  struct Replayer;
  static std::shared_ptr<Replayer> new_replayer();
  std::shared_ptr<Replayer> replayer = new_replayer();

  // Runs every node in order on `args`, whose specs must be the traced ones (ValueError naming
  // the argument otherwise), and returns the outputs. Values are freed after their last use.
  // With command_lists on a Vulkan GPU, runs of nodes are recorded into command lists on the
  // first call and resubmitted on later ones (plan/command_replay.h).
  std::vector<Tensor> run(const std::vector<Tensor>& args) const;
  // Node k on the values in `slots`, then frees the values it read last.
  void run_node(size_t k, std::vector<Tensor>& slots) const;
  // How run() replays: "3 command lists (241 nodes), 2 live nodes", or "node by node (why)".
  std::string replay_mode() const;
  // The GPU commands (kernels, copies, transfers) the last run recorded; -1 before a run or for
  // a plan with no GPU values.
  int64_t last_commands() const;
  // Checks that every node reads only values made before it (and the outputs are made), infers
  // every node's outputs again from its inputs' specs and compares them with the recorded ones
  // (no kernel runs); ValueError naming the node otherwise.
  void check() const;
  // Fills release_after from the nodes and outputs (after the graph changes).
  void plan_releases();
  // One line per node: "%5 = matmul(%2, %4)  (64, 128) float32 on cpu".
  std::string str() const;
};

// A plan as plain data, what a plan file holds (python/pcp/_compile.py writes it as JSON beside
// the captured tensors in one safetensors file): each node's primitive by name and attributes,
// the host scalars and random draws it shares by index into the plan-wide lists.
struct NodeRecord {
  std::string op;
  Attributes attrs;
  std::vector<int> inputs, outputs, scalars, draws;
};
struct PlanRecord {
  std::vector<TensorSpec> values;
  std::vector<int> args;
  std::vector<Strides> arg_strides;
  std::vector<std::pair<int, Tensor>> captured;
  std::vector<int> constants;  // value ids, each a captured one
  std::vector<NodeRecord> nodes;
  std::vector<int> outputs;
  std::vector<std::pair<int, int>> grads;  // (index into captured, value; -1: none)
  std::vector<HostScalarPtr> scalars;      // their values when saved
  std::vector<uint64_t> draws;             // each draw's count
  int traced_nodes = 0;
};
PlanRecord record_of(const Plan& plan);
// The plan a record describes, its primitives made by name (ops/primitive.h), each node's
// attributes checked against its inputs' specs (check_node_record), the whole by Plan::check();
// ValueError naming what does not fit.
std::shared_ptr<Plan> plan_from(const PlanRecord& record);
// The record placed on `to` (plan/placement.cpp): the values on the device it computes on (its
// parameters') move there, captured tensors copied, integer arguments on the CPU left there (host
// token ids and targets), device attributes rewritten, and every node's outputs inferred again.
// ValueError naming a node that does not fit.
PlanRecord placed_on(PlanRecord record, Device to);
// ValueError when a node's attributes do not fit its inputs (plan/validate.cpp).
void check_node_record(const NodeRecord& node, const std::vector<TensorSpec>& inputs);

}  // namespace pcp::plan
