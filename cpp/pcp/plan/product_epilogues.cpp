// Products' epilogues (passes.h): a tanh GELU of a product becomes the product's gelu_tanh
// epilogue, and the GELU's gradient of a product (the next layer's input gradient) its
// dgelu_tanh epilogue, where cuBLASLt then runs one call instead of a product and a kernel.
#include <algorithm>
#include <string>

#include "pcp/plan/passes.h"

namespace pcp::plan {
namespace {

struct Graph {
  Plan& plan;
  std::vector<int> maker;    // value -> the node that makes it, -1 for arguments and captured tensors
  std::vector<int> readers;  // value -> how often nodes read it, the plan's outputs and .grad effects counted

  explicit Graph(Plan& p) : plan(p), maker(p.values.size(), -1), readers(p.values.size(), 0) {
    for (size_t k = 0; k < p.nodes.size(); ++k) {
      for (int id : p.nodes[k].outputs) maker[size_t(id)] = int(k);
      for (int id : p.nodes[k].inputs)
        if (id >= 0) ++readers[size_t(id)];
    }
    for (int id : p.outputs) ++readers[size_t(id)];
    for (const auto& g : p.grads)
      if (g.second >= 0) ++readers[size_t(g.second)];
  }
  const TensorSpec& spec(int id) const { return plan.values[size_t(id)]; }
  bool made_by(int id, const char* name) const {
    return maker[size_t(id)] >= 0 && std::string(plan.nodes[size_t(maker[size_t(id)])].prim->name()) == name;
  }
  // The node making id when it is a 2-D product without an epilogue: -1 otherwise.
  int plain_product(int id) const {
    if (!made_by(id, "matmul")) return -1;
    const Node& n = plan.nodes[size_t(maker[size_t(id)])];
    const Attributes a = n.prim->attributes();
    if (a.count("epilogue") || n.inputs.size() != 2 || n.outputs.size() != 1 || spec(n.inputs[0]).shape.size() != 2 ||
        spec(n.inputs[1]).shape.size() != 2)
      return -1;
    return maker[size_t(id)];
  }
  // id, or the value a reshape made id from: elementwise ops commute with reshapes.
  int unreshaped(int id) const { return made_by(id, "reshape") ? plan.nodes[size_t(maker[size_t(id)])].inputs[0] : id; }
  void add_epilogue(Node& product, const char* name) const {
    Attributes a = product.prim->attributes();
    a["epilogue"] = std::string(name);
    product.prim = make_primitive("matmul", a, {});
  }
  // Node n becomes a reshape of `from` into its output's shape.
  void make_reshape(Node& n, int from) const {
    n.prim = make_primitive("reshape", {{"shape", spec(n.outputs[0]).shape}}, {});
    n.inputs = {from};
  }
};

bool named(const Node& n, const char* name) { return std::string(n.prim->name()) == name; }

}  // namespace

int fuse_product_epilogues(Plan& plan) {
  int fused = 0;
  // Forward: y = gelu_tanh(h), h a product (or a reshape of one): the product writes y and h.
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    Graph g(plan);
    Node& gelu = plan.nodes[k];
    if (!named(gelu, "gelu_tanh") || gelu.inputs.size() != 1 || gelu.outputs.size() != 1) continue;
    const int v = gelu.inputs[0], h = g.unreshaped(v), y = gelu.outputs[0];
    const int m = g.plain_product(h);
    if (m < 0 || g.spec(y).dtype != g.spec(h).dtype) continue;
    Node& product = plan.nodes[size_t(m)];
    g.add_epilogue(product, "gelu_tanh");
    if (v == h) {
      product.outputs = {y, h};
      gelu.inputs.clear(), gelu.outputs.clear();  // gone with dead-code elimination
    } else {  // the GELU of the product's rows, regrouped as the reshape did
      const int y2 = int(plan.values.size());
      plan.values.push_back(g.spec(h));
      product.outputs = {y2, h};
      g.make_reshape(gelu, y2);
    }
    ++fused;
  }
  // Backward: dh = gelu_tanh_grad(x, d), d a product read by nothing else (or a reshape of one)
  // and x the GELU's input h (or a reshape of it): the product reads h and writes dh.
  for (size_t k = 0; k < plan.nodes.size(); ++k) {
    Graph g(plan);
    Node& grad = plan.nodes[k];
    if (!named(grad, "gelu_tanh_grad") || grad.inputs.size() != 2 || grad.outputs.size() != 1) continue;
    const int x = grad.inputs[0], d = grad.inputs[1], dh = grad.outputs[0];
    if (x < 0 || d < 0 || g.readers[size_t(d)] != 1) continue;
    const int p = g.unreshaped(d);
    const int m = g.plain_product(p);
    if (m < 0 || (p != d && g.readers[size_t(p)] != 1)) continue;
    const TensorSpec& ps = g.spec(p);
    int aux = g.spec(x).shape == ps.shape ? x : g.unreshaped(x);
    if (g.spec(aux).shape != ps.shape || g.spec(x).shape != g.spec(d).shape) continue;
    if (g.spec(aux).dtype != ps.dtype || g.spec(x).dtype != ps.dtype || g.spec(dh).dtype != ps.dtype) continue;
    if (g.maker[size_t(aux)] >= m) continue;  // h must exist when the product runs
    Node& product = plan.nodes[size_t(m)];
    g.add_epilogue(product, "dgelu_tanh");
    product.inputs.push_back(aux);
    if (p == d) {
      product.outputs = {dh};
      grad.inputs.clear(), grad.outputs.clear();
    } else {
      g.make_reshape(grad, p);  // the reshape that made d: gone with dead-code elimination
    }
    ++fused;
  }
  if (fused) eliminate_dead_code(plan);
  return fused;
}

}  // namespace pcp::plan
