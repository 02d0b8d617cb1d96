#include "pcp/plan/passes.h"

#include <algorithm>

namespace pcp::plan {

int fold_constants(Plan& plan, const std::vector<Tensor>& traced, const std::vector<bool>& constant_in) {
  std::vector<bool> constant = constant_in;
  for (const Node& n : plan.nodes)  // what a step writes is state, whoever made it
    if (n.prim->writes_inputs())
      for (int id : n.inputs)
        if (id >= 0) constant[id] = false;
  std::vector<Node> kept;
  int folded = 0;
  for (Node& n : plan.nodes) {
    bool foldable = !n.prim->writes_inputs() && !n.prim->draws_random() && !n.outputs.empty();
    for (int id : n.inputs) foldable = foldable && (id < 0 || constant[id]);
    if (!foldable) {
      kept.push_back(std::move(n));
      continue;
    }
    for (int id : n.outputs) {
      constant[id] = true;
      plan.captured.push_back({id, traced[id]});
    }
    ++folded;
  }
  plan.nodes = std::move(kept);
  return folded;
}

int eliminate_dead_code(Plan& plan) {
  std::vector<bool> read(plan.values.size(), false);
  for (int id : plan.outputs) read[id] = true;
  for (const auto& g : plan.grads)
    if (g.second >= 0) read[g.second] = true;
  std::vector<Node> kept;
  int removed = 0;
  for (auto it = plan.nodes.rbegin(); it != plan.nodes.rend(); ++it) {
    bool live = it->prim->writes_inputs();
    for (int id : it->outputs) live = live || read[id];
    if (!live) {
      ++removed;
      continue;
    }
    for (int id : it->inputs)
      if (id >= 0) read[id] = true;
    kept.push_back(std::move(*it));
  }
  std::reverse(kept.begin(), kept.end());
  plan.nodes = std::move(kept);
  auto unread = [&](const std::pair<int, Tensor>& c) { return !read[c.first]; };
  plan.captured.erase(std::remove_if(plan.captured.begin(), plan.captured.end(), unread), plan.captured.end());
  return removed;
}

}  // namespace pcp::plan
