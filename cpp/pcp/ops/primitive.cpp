#include "pcp/ops/primitive.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "pcp/autograd/grad_mode.h"
#include "pcp/autograd/node.h"
#include "pcp/core/error.h"

namespace pcp {

std::vector<Tensor> Primitive::vjp(const std::vector<Tensor>&, const Tensor&, const Tensor&,
                                   const std::vector<bool>&) {
  fail<NotImplementedError>(name(), ": gradient is not defined for this op");
}

namespace {
std::atomic<bool> g_profiling{false};
std::mutex g_profile_mu;
std::unordered_map<std::string, OpProfile> g_profile;
}  // namespace

void set_profiling(bool on) { g_profiling = on; }

void reset_profile() {
  std::lock_guard<std::mutex> lock(g_profile_mu);
  g_profile.clear();
}

std::vector<std::pair<std::string, OpProfile>> profile_results() {
  std::lock_guard<std::mutex> lock(g_profile_mu);
  std::vector<std::pair<std::string, OpProfile>> out(g_profile.begin(), g_profile.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  return out;
}

static Tensor run_forward(Primitive& prim, const std::vector<Tensor>& inputs) {
  if (!g_profiling) return prim.forward(inputs);
  auto t0 = std::chrono::steady_clock::now();
  Tensor out = prim.forward(inputs);
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(g_profile_mu);
  OpProfile& p = g_profile[prim.name()];
  p.calls++;
  p.seconds += dt;
  return out;
}

Tensor apply(std::shared_ptr<Primitive> prim, std::vector<Tensor> inputs) {
  for (size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[0].defined() && inputs[i].device() != inputs[0].device())
      fail<ValueError>(prim->name(), ": inputs are on different devices (", inputs[0].device().str(),
                       " and ", inputs[i].device().str(), ")");
  for (const Tensor& in : inputs)
    if (in.defined() && in.device().is_gpu() && !prim->runs_on_gpu())
      fail<NotImplementedError>(prim->name(), ": not implemented on ", in.device().str(),
                                " yet; move the inputs with .to('cpu')");
  Tensor out = run_forward(*prim, inputs);
  for (const Tensor& in : inputs)  // the output must be a fresh handle, never an input's
    if (out.is_same(in)) out = out.detach();
  if (!grad_enabled() || !is_floating(out.dtype())) return out;
  std::vector<bool> needs(inputs.size());
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    needs[i] = inputs[i].defined() && inputs[i].requires_grad();
    any = any || needs[i];
  }
  if (!any) return out;
  auto node = std::make_shared<Node>();
  node->prim = std::move(prim);
  node->inputs = std::move(inputs);
  node->output = out.detach();
  node->needs = std::move(needs);
  node->owner = out.impl_ptr();
  out.impl()->grad_fn = std::move(node);
  out.impl()->requires_grad = true;
  return out;
}

}  // namespace pcp
