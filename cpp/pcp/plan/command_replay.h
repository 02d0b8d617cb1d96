// Command-list replay of a plan on a GPU: the command buffer recorded once and resubmitted.
//
// The plan's nodes are cut into stretches. A captured stretch's commands are recorded once into a
// command list (gpu::Runtime::begin_capture) and later calls resubmit the list without running
// any host code for its nodes. A live node runs on every call, as in Plan::run, because what it
// records depends on the host at that time: an optimizer step reads the step count and learning
// rate, dropout draws new masks, and a node with inputs on the host reads them.
//
// A list writes the buffers it was recorded with, so the replay owns them:
//  - values made inside a stretch come from a gpu::ListBuffers that keeps every buffer;
//  - a stretch's inputs from outside (the arguments, live nodes' outputs) are copied into
//    buffers of its own before it runs;
//  - captured tensors (parameters, optimizer state) are used in place (a tensor's memory never
//    moves: loading a state dict writes into it);
//  - outputs and .grad handed to the caller are copies, so the next call cannot overwrite them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pcp/core/tensor.h"

namespace pcp::plan {

struct Plan;

class CommandReplay {
 public:
  // The replay of `plan`, or nullptr with *why set when the plan cannot run as command lists
  // (not asked for, not on a Vulkan GPU, ...).
  static std::unique_ptr<CommandReplay> make(const Plan& plan, std::string* why);
  ~CommandReplay();

  // Runs every node of `plan` on `slots` (arguments and captured tensors filled in, as Plan::run
  // fills them): records on the first call, replays afterwards. Leaves the outputs and .grad
  // values in `slots`, as copies where they are the replay's own buffers. If recording fails
  // (a node reads device memory on the host), the rest runs node by node and the plan stops
  // using lists: disabled() then says why.
  void run(const Plan& plan, std::vector<Tensor>& slots);
  bool disabled() const { return !why_disabled_.empty(); }
  // "3 command lists (241 nodes), 2 live nodes", or why lists are not used.
  std::string describe() const;

 private:
  struct Stretch;
  CommandReplay(const Plan& plan, int device);
  void record(const Plan& plan, std::vector<Tensor>& slots);
  void replay(const Plan& plan, std::vector<Tensor>& slots);
  void reset();

  int device_;
  std::vector<Stretch> stretches_;            // in node order, live nodes as stretches of one
  std::vector<bool> owned_;                   // per value: lives in a buffer of the replay
  std::shared_ptr<void> buffers_;             // the gpu::ListBuffers of the recording
  bool recorded_ = false;
  std::string why_disabled_;
};

}  // namespace pcp::plan
