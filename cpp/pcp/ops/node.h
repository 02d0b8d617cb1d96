// A recorded application of a primitive (the autograd graph's node): what backward() needs to call
// its VJP. It lives with the primitives, which record it; autograd/ walks it.
#pragma once
#include <memory>
#include <vector>

#include "pcp/core/tensor.h"
#include "pcp/ops/primitive.h"

namespace pcp {

struct Node {
  std::shared_ptr<Primitive> prim;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;         // detached aliases of the outputs (no cycle back to this node)
  std::vector<std::weak_ptr<TensorImpl>> owners;  // the output tensors, for retain_grad() and create_graph
  std::vector<bool> needs;             // which inputs need a gradient
  std::vector<uint64_t> versions;      // the inputs' storage versions when saved, then the outputs'
  bool saves_inputs = false, saves_output = false;  // what the VJP reads (counted in Storage::saved_count)
  bool released = false;  // a backward pass without retain_graph went through it: see release()

  // Records the versions and marks what the VJP reads as saved; the destructor unmarks it.
  void save_for_backward();
  void release_saved();
  // After its VJP ran in a pass that does not retain the graph: lets go of every value it holds
  // (its inputs and outputs become shape-only stand-ins that keep the graph's edges).
  void release();
  const char* name() const { return prim->name(); }

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Releases the chain of nodes this one alone keeps alive with a loop, not recursion: a graph
  // of 100,000 chained ops would otherwise overflow the stack when its last tensor goes.
  ~Node();
};

}  // namespace pcp
