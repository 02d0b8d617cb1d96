#include "pcp/autograd/engine.h"

#include <unordered_map>
#include <unordered_set>

#include "pcp/core/grad_mode.h"
#include "pcp/ops/node.h"
#include "pcp/ops/autocast.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"

namespace pcp {
namespace {

// Nodes reachable from `root`, in reverse topological order (root first).
std::vector<Node*> reverse_topo(Node* root) {
  std::vector<Node*> order;
  std::unordered_set<Node*> seen{root};
  std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const Tensor& in = node->inputs[next++];
      Node* child = in.defined() ? in.grad_fn().get() : nullptr;
      if (child && seen.insert(child).second) stack.push_back({child, 0});
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return {order.rbegin(), order.rend()};
}

void accumulate(Tensor& slot, const Tensor& g) { slot = slot.defined() ? add(slot, g) : g; }

// Shapes and casts a VJP result to its input.
Tensor fit_gradient(const Tensor& g, const Tensor& input, const char* op) {
  Tensor r = g;
  if (r.shape() != input.shape()) r = sum_to(r, input.shape());
  if (r.shape() != input.shape())
    fail<ValueError>(op, ": gradient of shape ", shape_str(g.shape()), " does not fit input of shape ",
                     shape_str(input.shape()));
  if (r.dtype() != input.dtype()) r = astype(r, input.dtype());
  return r;
}

// A VJP that reads a tensor written in place since the forward pass saved it would return a
// wrong gradient without a word: refuse, as PyTorch does.
void check_saved_versions(const Node& node) {
  auto check = [&](const Tensor& t, uint64_t saved, const char* what) {
    if (!t.defined() || t.storage()->version() == saved) return;
    fail<RuntimeError>("backward: ", what, " of ", node.name(), " (shape ", shape_str(t.shape()), ", ",
                       dtype_name(t.dtype()), ") was modified in place after the forward pass saved it (version ",
                       t.storage()->version(), ", saved at ", saved,
                       "); its gradient would be wrong. Modify a copy, or run the forward pass again after the change");
  };
  if (node.prim->vjp_reads_inputs())
    for (size_t i = 0; i < node.inputs.size(); ++i) check(node.inputs[i], node.versions[i], "an input");
  if (node.prim->vjp_reads_output())
    for (size_t i = 0; i < node.outputs.size(); ++i)
      check(node.outputs[i], node.versions[node.inputs.size() + i], node.outputs.size() > 1 ? "an output" : "the output");
}

Tensor seed_gradient(const Tensor& root, const Tensor& grad) {
  if (grad.defined()) {
    if (grad.shape() != root.shape())
      fail<ValueError>("backward: gradient of shape ", shape_str(grad.shape()), " does not match output of shape ",
                       shape_str(root.shape()));
    return grad.dtype() == root.dtype() ? grad : astype(grad, root.dtype());
  }
  if (root.numel() != 1)
    fail<ValueError>("backward: grad can be implicitly created only for a one-element output, got shape ",
                     shape_str(root.shape()), "; pass a gradient of that shape");
  return ones_like(root);
}

// Gradients accumulated by a backward pass: of leaves, by TensorImpl, and of nodes' outputs,
// one slot per output.
struct Gradients {
  std::unordered_map<const TensorImpl*, Tensor> leaves;
  std::vector<Tensor> leaf_refs;  // the leaves themselves: a node released since may have held the last reference
  std::unordered_map<const Node*, std::vector<Tensor>> nodes;

  void add_to(const Tensor& t, const Tensor& g) {
    if (Node* fn = t.grad_fn().get()) {
      std::vector<Tensor>& slots = nodes[fn];
      slots.resize(fn->outputs.size());
      accumulate(slots[t.output_nr()], g);
    } else {
      auto [it, added] = leaves.try_emplace(t.impl());
      if (added) leaf_refs.push_back(t);
      accumulate(it->second, g);
    }
  }
  // The gradient of `t`, or an undefined tensor if none reached it.
  Tensor of(const Tensor& t) const {
    if (const Node* fn = t.grad_fn().get()) {
      auto it = nodes.find(fn);
      return it == nodes.end() ? Tensor() : it->second[t.output_nr()];
    }
    auto it = leaves.find(t.impl());
    return it == leaves.end() ? Tensor() : it->second;
  }
};

// The outputs a VJP sees under create_graph: VJPs that reuse an output must see it connected
// to the graph: the live output tensor if it still exists, else the op applied again.
std::vector<Tensor> connected_outputs(const Node& node) {
  std::vector<Tensor> out(node.outputs.size()), again;
  for (size_t i = 0; i < out.size(); ++i) {
    if (auto owner = node.owners[i].lock()) {
      out[i] = Tensor(owner);
    } else {
      if (again.empty()) again = apply_all(node.prim, node.inputs);
      out[i] = again[i];
    }
  }
  return out;
}

// Runs the backward pass. Nodes' gradients are dropped once used, except for the nodes in
// `keep`: their memory goes back as the pass proceeds, and a leaf's gradient is not kept
// alive by a view of it.
Gradients run_backward(const Tensor& root, const Tensor& grad, bool create_graph, bool retain_graph,
                       const std::unordered_set<const Node*>& keep = {}) {
  if (!root.requires_grad())
    fail<ValueError>("backward: the output does not require grad (no input had requires_grad=True, "
                     "or it was computed under no_grad)");
  GradModeGuard mode(create_graph);
  AutocastGuard no_autocast(std::nullopt);  // VJPs compute in the dtypes the forward pass saved
  Gradients grads;
  grads.add_to(root, seed_gradient(root, grad));
  Node* root_node = root.grad_fn().get();
  if (!root_node) return grads;  // the root is itself a leaf
  for (Node* node : reverse_topo(root_node)) {
    auto it = grads.nodes.find(node);
    if (it == grads.nodes.end()) continue;
    if (node->released)
      fail<RuntimeError>("backward: the graph through ", node->name(), " was already gone through by a backward pass "
                         "that freed the values it saved; pass retain_graph=True to the first backward() (or "
                         "grad()) to go through it again, or run the forward pass again");
    std::vector<Tensor> gs;
    if (keep.count(node)) {
      gs = it->second;
    } else {
      gs = std::move(it->second);
      grads.nodes.erase(it);
    }
    for (size_t i = 0; i < gs.size(); ++i) {
      auto owner = node->owners[i].lock();
      if (!gs[i].defined() || !owner || !owner->retains_grad) continue;
      Tensor gd = gs[i].detach();
      owner->grad = owner->grad ? add(Tensor(owner->grad), gd).impl_ptr() : gd.impl_ptr();
    }
    for (size_t i = 0; i < gs.size(); ++i)  // outputs no gradient reached contribute zeros
      if (!gs[i].defined() && node->prim->differentiable_output(i) && is_floating(node->outputs[i].dtype()))
        gs[i] = zeros_like(node->outputs[i]);
    check_saved_versions(*node);
    std::vector<Tensor> connected;
    if (create_graph) connected = connected_outputs(*node);
    const std::vector<Tensor>& outputs = create_graph ? connected : node->outputs;
    std::vector<Tensor> in_grads = node->prim->vjp(node->inputs, outputs, gs, node->needs);
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      if (!node->needs[i] || i >= in_grads.size() || !in_grads[i].defined()) continue;
      grads.add_to(node->inputs[i], fit_gradient(in_grads[i], node->inputs[i], node->name()));
    }
    if (!retain_graph) node->release();  // its saved activations go now, not when the graph dies
  }
  return grads;
}

}  // namespace

void backward(const Tensor& root, const Tensor& grad, bool create_graph, std::optional<bool> retain_graph) {
  Gradients grads = run_backward(root, grad, create_graph, retain_graph.value_or(create_graph));
  GradModeGuard mode(create_graph);
  for (auto& [key, value] : grads.leaves) {
    TensorImpl* leaf = const_cast<TensorImpl*>(key);
    if (!leaf->requires_grad) continue;
    Tensor g = create_graph ? value : value.detach();
    // A new .grad owns contiguous memory (as in PyTorch): VJPs may hand one tensor to several
    // inputs, or return broadcast views, and in-place updates of .grad (clipping) must touch
    // only this leaf. Here the map entry and g hold two references to the storage; a third
    // means another leaf's gradient (or a retained one) shares it.
    if (!leaf->grad && (!g.is_contiguous() || g.storage().use_count() > 2)) g = copy(g);
    leaf->grad = leaf->grad ? add(Tensor(leaf->grad), g).impl_ptr() : g.impl_ptr();
  }
}

std::vector<Tensor> grad(const Tensor& root, const std::vector<Tensor>& wrt, const Tensor& grad_out,
                         bool create_graph, std::optional<bool> retain_graph) {
  std::unordered_set<const Node*> keep;
  for (const Tensor& x : wrt)
    if (x.grad_fn()) keep.insert(x.grad_fn().get());
  Gradients grads = run_backward(root, grad_out, create_graph, retain_graph.value_or(create_graph), keep);
  std::vector<Tensor> out;
  for (const Tensor& x : wrt) {
    Tensor g = grads.of(x);
    out.push_back(!g.defined() ? zeros_like(x) : create_graph ? g : g.detach());
  }
  return out;
}

}  // namespace pcp
