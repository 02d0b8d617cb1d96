#include "pcp/autograd/node.h"

namespace pcp {

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

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  take_sole_nodes(inputs, pending);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    take_sole_nodes(node->inputs, pending);
    // `node` is destroyed here with no inputs left, so its destructor does not recurse.
  }
}

}  // namespace pcp
