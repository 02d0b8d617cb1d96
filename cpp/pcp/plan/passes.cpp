#include "pcp/plan/passes.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>

namespace pcp::plan {

int fold_constants(Plan& plan, const std::vector<Tensor>& traced, std::vector<bool>& constant) {
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

namespace {
// The primitive's name and attributes and the node's inputs, as one string.
std::string node_key(const Node& n) {
  std::string key = n.prim->name();
  for (const auto& [name, value] : n.prim->attributes()) {
    key += "|" + name + "=";
    std::visit([&](const auto& v) {
      using V = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<V, std::string>) key += v;
      else if constexpr (std::is_same_v<V, std::vector<int64_t>>) for (int64_t x : v) key += std::to_string(x) + ",";
      else if constexpr (std::is_same_v<V, double>) key += std::to_string(std::bit_cast<uint64_t>(v));
      else key += std::to_string(v);
    }, value);
  }
  key += "|in";
  for (int id : n.inputs) key += "," + std::to_string(id);
  return key;
}
}  // namespace

int eliminate_common_subexpressions(Plan& plan) {
  std::vector<int> same(plan.values.size());  // value -> the value it is the same as
  for (size_t i = 0; i < same.size(); ++i) same[i] = int(i);
  auto remap = [&](std::vector<int>& ids) {
    for (int& id : ids)
      if (id >= 0) id = same[id];
  };
  std::map<std::string, size_t> seen;  // key -> index in kept
  std::vector<Node> kept;
  int merged = 0;
  for (Node& n : plan.nodes) {
    remap(n.inputs);
    if (n.prim->writes_inputs()) seen.clear();  // what was computed before may read what it writes
    if (n.prim->writes_inputs() || n.prim->draws_random() || !n.prim->shared_state().scalars.empty()) {
      kept.push_back(std::move(n));
      continue;
    }
    const std::string key = node_key(n);
    if (auto it = seen.find(key); it != seen.end() && kept[it->second].outputs.size() == n.outputs.size()) {
      for (size_t j = 0; j < n.outputs.size(); ++j) same[n.outputs[j]] = kept[it->second].outputs[j];
      ++merged;
      continue;
    }
    seen[key] = kept.size();
    kept.push_back(std::move(n));
  }
  plan.nodes = std::move(kept);
  remap(plan.outputs);
  for (auto& g : plan.grads)
    if (g.second >= 0) g.second = same[g.second];
  return merged;
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
