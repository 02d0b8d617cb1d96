// Batched layer norm weight sums (passes.h): each layer norm gradient on a GPU writes its
// one-pass kernel's partial rows, and one sum_rows_multi node sums those of many layer norms
// where their weight gradients are first needed: one dispatch where each took its own.
#include <algorithm>
#include <map>

#include "pcp/plan/passes.h"

namespace pcp::plan {
namespace {

constexpr int64_t kShortRow = 2048;    // the one-pass kernel's longest row (backend/gpu/nn.cpp)
constexpr int64_t kMaxPartials = 1024;  // its workgroups for a layer norm gradient (ditto)

struct Gradient {
  size_t node;
  size_t hi;  // its sums must run before node hi (the first reader of dw or db)
};

}  // namespace

int batch_layer_norm_sums(Plan& plan) {
  const size_t count = plan.nodes.size();
  std::vector<size_t> first_read(plan.values.size(), count);
  for (size_t k = count; k-- > 0;)
    for (int id : plan.nodes[k].inputs)
      if (id >= 0) first_read[size_t(id)] = k;
  std::vector<Gradient> grads;
  for (size_t k = 0; k < count; ++k) {
    const Node& n = plan.nodes[k];
    if (std::string(n.prim->name()) != "layer_norm_backward" || n.prim->attributes().count("partial_rows") ||
        n.outputs.size() < 3 || n.inputs.empty() || n.inputs[0] < 0)
      continue;
    const TensorSpec& x = plan.values[size_t(n.inputs[0])];
    const int64_t cols = x.shape.empty() ? 0 : x.shape.back();
    if (!x.device.is_gpu() || x.dtype != DType::Float32 || cols < 1 || cols > kShortRow || numel(x.shape) == 0) continue;
    grads.push_back({k, std::min(first_read[size_t(n.outputs[1])], first_read[size_t(n.outputs[2])])});
  }
  // Fewest groups (interval stabbing, as batch_casts): the gradient whose window closes first
  // sets the group's position; every later one made before it joins.
  std::sort(grads.begin(), grads.end(), [](const Gradient& a, const Gradient& b) { return a.hi < b.hi; });
  std::vector<bool> taken(grads.size(), false);
  std::multimap<size_t, std::vector<size_t>> groups;  // position -> the gradients' nodes summed there
  for (size_t i = 0; i < grads.size(); ++i) {
    if (taken[i]) continue;
    std::vector<size_t> group;
    for (size_t j = i; j < grads.size(); ++j)
      if (!taken[j] && grads[j].node < grads[i].hi &&
          plan.values[size_t(plan.nodes[grads[j].node].inputs[0])].device ==
              plan.values[size_t(plan.nodes[grads[i].node].inputs[0])].device) {
        taken[j] = true;
        group.push_back(grads[j].node);
      }
    if (group.size() > 1) groups.insert({grads[i].hi, group});
  }
  if (groups.empty()) return 0;
  const auto add_value = [&](TensorSpec s) {
    plan.values.push_back(std::move(s));
    return int(plan.values.size() - 1);
  };
  // Each gradient writes partial rows; the sums and the views of dw and db come where the group runs.
  std::map<size_t, std::vector<Node>> inserted;  // position -> nodes to run before it
  int batched = 0;
  for (const auto& [at, group] : groups) {
    Node sum;
    sum.prim = make_primitive("sum_rows_multi", {}, {});
    std::vector<Node> views;
    for (size_t k : group) {
      Node& n = plan.nodes[k];
      const TensorSpec x = plan.values[size_t(n.inputs[0])];  // a copy: values grow below
      const int64_t cols = x.shape.back(), rows = numel(x.shape) / cols;
      const int64_t partial_rows = std::min((rows + 7) / 8, kMaxPartials);
      Attributes attrs = n.prim->attributes();
      attrs["partial_rows"] = partial_rows;
      n.prim = make_primitive("layer_norm_backward", attrs, {});
      const int part = add_value({{partial_rows, 2 * cols}, DType::Float32, x.device});
      const int sums = add_value({{2 * cols}, DType::Float32, x.device});
      const int dw = n.outputs[1], db = n.outputs[2];
      n.outputs.erase(n.outputs.begin() + 1, n.outputs.begin() + 3);
      n.outputs.insert(n.outputs.begin() + 1, part);
      sum.inputs.push_back(part);
      sum.outputs.push_back(sums);
      for (const auto& [out, offset] : {std::pair{dw, int64_t(0)}, std::pair{db, cols}}) {
        Node view;
        view.prim = make_primitive("alias", {{"shape", Shape{cols}}, {"strides", Strides{1}}, {"offset", offset},
                                             {"base_strides", Strides{1}}}, {});
        view.inputs = {sums};
        view.outputs = {out};
        views.push_back(std::move(view));
      }
      ++batched;
    }
    std::vector<Node>& here = inserted[at];
    here.push_back(std::move(sum));
    for (Node& v : views) here.push_back(std::move(v));
  }
  std::vector<Node> nodes;
  for (size_t k = 0; k <= count; ++k) {
    if (auto it = inserted.find(k); it != inserted.end())
      for (Node& n : it->second) nodes.push_back(std::move(n));
    if (k < count) nodes.push_back(std::move(plan.nodes[k]));
  }
  plan.nodes = std::move(nodes);
  return batched;
}

}  // namespace pcp::plan
