#include "pcp/ops/node.h"

namespace pcp {

const char* node_name(const Node& node) { return node.name(); }

namespace {
// Moves out of `inputs` the nodes that only they keep alive, so that destroying the inputs
// does not recurse into them; the caller destroys those nodes one by one.
void take_sole_nodes(std::vector<Tensor>& inputs, std::vector<std::shared_ptr<Node>>& out) {
  for (Tensor& t : inputs) {
    if (!t.defined() || t.impl_ptr().use_count() != 1) continue;
    std::shared_ptr<Node>& fn = t.impl()->grad_fn;
    if (fn && fn.use_count() == 1) out.push_back(std::move(fn));
  }
  inputs.clear();
}
}  // namespace

void Node::save_for_backward() {
  saves_inputs = prim->vjp_reads_inputs();
  saves_output = prim->vjp_reads_output();
  for (const Tensor& in : inputs) {
    versions.push_back(in.defined() ? in.storage()->version() : 0);
    if (saves_inputs && in.defined()) in.storage()->add_saved(1);
  }
  for (const Tensor& out : outputs) {
    versions.push_back(out.storage()->version());
    if (saves_output) out.storage()->add_saved(1);
  }
}

void Node::release_saved() {
  if (saves_inputs)
    for (const Tensor& in : inputs)
      if (in.defined()) in.storage()->add_saved(-1);
  if (saves_output)
    for (const Tensor& out : outputs) out.storage()->add_saved(-1);
  saves_inputs = saves_output = false;
}

namespace {
// A tensor's place in the graph without its values: shape, dtype and the edge to its grad_fn.
Tensor edge_only(const Tensor& t) {
  if (!t.defined()) return t;
  auto stand_in = std::make_shared<TensorImpl>();
  stand_in->shape = t.shape();
  stand_in->dtype = t.dtype();
  stand_in->requires_grad = t.impl()->requires_grad;
  stand_in->grad_fn = t.impl()->grad_fn;
  stand_in->output_nr = t.impl()->output_nr;
  return Tensor(stand_in);
}
}  // namespace

void Node::release() {
  release_saved();
  for (Tensor& in : inputs) in = edge_only(in);
  for (Tensor& out : outputs) out = edge_only(out);
  released = true;
}

Node::~Node() {
  release_saved();
  std::vector<std::shared_ptr<Node>> pending;
  take_sole_nodes(inputs, pending);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    node->release_saved();
    take_sole_nodes(node->inputs, pending);
    // `node` is destroyed here with no inputs left, so its destructor does not recurse.
  }
}

}  // namespace pcp
