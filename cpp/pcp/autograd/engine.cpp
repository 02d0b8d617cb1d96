#include "pcp/autograd/engine.h"

#include <unordered_map>
#include <unordered_set>

#include "pcp/autograd/grad_mode.h"
#include "pcp/autograd/node.h"
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

void accumulate(std::unordered_map<const void*, Tensor>& acc, const void* key, const Tensor& g) {
  auto it = acc.find(key);
  if (it == acc.end())
    acc.emplace(key, g);
  else
    it->second = add(it->second, g);
}

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
  if (node.prim->vjp_reads_output()) check(node.output, node.versions.back(), "the output");
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

// Runs the backward pass; returns accumulated gradients keyed by leaf TensorImpl* and, for the
// non-leaves in `keep`, by Node*. Other nodes' gradients are dropped once used: their memory
// goes back as the pass proceeds, and a leaf's gradient is not kept alive by a view of it.
std::unordered_map<const void*, Tensor> run_backward(const Tensor& root, const Tensor& grad, bool create_graph,
                                                     const std::unordered_set<const void*>& keep = {}) {
  if (!root.requires_grad())
    fail<ValueError>("backward: the output does not require grad (no input had requires_grad=True, "
                     "or it was computed under no_grad)");
  GradModeGuard mode(create_graph);
  std::unordered_map<const void*, Tensor> grads;
  Tensor seed = seed_gradient(root, grad);
  Node* root_node = root.grad_fn().get();
  if (!root_node) {  // the root is itself a leaf
    grads.emplace(root.impl(), seed);
    return grads;
  }
  grads.emplace(root_node, seed);
  for (Node* node : reverse_topo(root_node)) {
    auto it = grads.find(node);
    if (it == grads.end()) continue;
    Tensor g = it->second;
    if (!keep.count(node)) grads.erase(it);
    if (auto owner = node->owner.lock(); owner && owner->retains_grad) {
      Tensor gd = g.detach();
      owner->grad = owner->grad ? add(Tensor(owner->grad), gd).impl_ptr() : gd.impl_ptr();
    }
    // With create_graph, VJPs that reuse the output must see it connected to the graph:
    // the live output tensor if it still exists, else the op applied again.
    Tensor output = node->output;
    if (create_graph) {
      if (auto owner = node->owner.lock()) output = Tensor(owner);
      else output = apply(node->prim, node->inputs);
    }
    check_saved_versions(*node);
    std::vector<Tensor> in_grads = node->prim->vjp(node->inputs, output, g, node->needs);
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      if (!node->needs[i] || i >= in_grads.size() || !in_grads[i].defined()) continue;
      const Tensor& in = node->inputs[i];
      Tensor gi = fit_gradient(in_grads[i], in, node->name());
      if (in.grad_fn())
        accumulate(grads, in.grad_fn().get(), gi);
      else
        accumulate(grads, in.impl(), gi);
    }
  }
  return grads;
}

}  // namespace

void backward(const Tensor& root, const Tensor& grad, bool create_graph) {
  auto grads = run_backward(root, grad, create_graph);
  // Leaves: every key that is a TensorImpl whose requires_grad is set. Walk them through the
  // graph's inputs to find the impls (keys alone do not say whether they are leaves or nodes).
  std::unordered_set<TensorImpl*> leaves;
  if (!root.grad_fn()) leaves.insert(root.impl());
  else
    for (Node* node : reverse_topo(root.grad_fn().get()))
      for (const Tensor& in : node->inputs)
        if (in.defined() && !in.grad_fn() && in.requires_grad()) leaves.insert(in.impl());
  GradModeGuard mode(create_graph);
  for (TensorImpl* leaf : leaves) {
    auto it = grads.find(leaf);
    if (it == grads.end()) continue;
    Tensor g = create_graph ? it->second : it->second.detach();
    // A new .grad owns contiguous memory (as in PyTorch): VJPs may hand one tensor to several
    // inputs, or return broadcast views, and in-place updates of .grad (clipping) must touch
    // only this leaf. Here the map entry and g hold two references to the storage; a third
    // means another leaf's gradient (or a retained one) shares it.
    if (!leaf->grad && (!g.is_contiguous() || g.storage().use_count() > 2)) g = copy(g);
    leaf->grad = leaf->grad ? add(Tensor(leaf->grad), g).impl_ptr() : g.impl_ptr();
  }
}

std::vector<Tensor> grad(const Tensor& root, const std::vector<Tensor>& wrt, const Tensor& grad_out,
                         bool create_graph) {
  std::unordered_set<const void*> keep;
  for (const Tensor& x : wrt)
    if (x.grad_fn()) keep.insert(x.grad_fn().get());
  auto grads = run_backward(root, grad_out, create_graph, keep);
  std::vector<Tensor> out;
  for (const Tensor& x : wrt) {
    const void* key = x.grad_fn() ? static_cast<const void*>(x.grad_fn().get()) : x.impl();
    auto it = grads.find(key);
    if (it != grads.end())
      out.push_back(create_graph ? it->second : it->second.detach());
    else
      out.push_back(zeros_like(x));
  }
  return out;
}

}  // namespace pcp
