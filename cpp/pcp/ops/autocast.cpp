#include "pcp/ops/autocast.h"

#include <map>

#include "pcp/core/grad_mode.h"
#include "pcp/ops/node.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {

// A plain enum value (no optional<> in thread-local storage); Float32 means "off".
static thread_local DType g_autocast = DType::Float32;

namespace {
// The weight-cast cache, as PyTorch's autocast keeps one: within a scope each parameter (a leaf
// that requires grad) is cast to the low type once, however often it is used before a backward
// pass goes through the cast (tied weights, repeated layers), and the gradients of every use
// flow back through that one cast. An entry holds its parameter (so its address stays its own) and is used only
// while the parameter's storage is at the version it was cast at. Emptied when a scope ends
// (set_autocast_dtype(nullopt), not the AutocastGuard of a backward pass or composed op).
struct CachedCast {
  Tensor param, low;
  uint64_t version;
};
thread_local std::map<std::pair<const void*, DType>, CachedCast> g_weight_casts;

bool is_parameter(const Tensor& t) { return t.is_leaf() && t.requires_grad(); }

Tensor low_cast(const Tensor& t, DType low) {
  if (!t.requires_grad() || !grad_enabled() || trace_hooks().host_read)  // (a trace's plan dedupes casts)
    return astype(t, low);
  if (is_parameter(t)) {
    const auto key = std::make_pair(static_cast<const void*>(t.impl_ptr().get()), low);
    auto it = g_weight_casts.find(key);
    // (A backward pass that went through the cast released it: a new step casts again.)
    if (it != g_weight_casts.end() && it->second.version == t.storage()->version() && it->second.low.grad_fn() &&
        !it->second.low.grad_fn()->released)
      return it->second.low;
    Tensor cast = astype(t, low);
    g_weight_casts[key] = {t, cast, t.storage()->version()};
    return cast;
  }
  // A view of a parameter (Linear's weight.T): the same view of the parameter's cast.
  const std::shared_ptr<Node>& view = t.grad_fn();
  if (view && view->prim->output_views_input() && view->inputs.size() == 1 && view->outputs.size() == 1 &&
      is_parameter(view->inputs[0]))
    return pcp::apply(view->prim, {low_cast(view->inputs[0], low)});
  return astype(t, low);
}
}  // namespace

Tensor autocast_cast(const Tensor& t, DType dt) {
  const bool low = g_autocast != DType::Float32 && g_autocast == dt;  // (Float32: autocast off)
  return low && t.dtype() == DType::Float32 ? low_cast(t, dt) : astype(t, dt);
}

std::optional<DType> autocast_dtype() {
  if (g_autocast == DType::Float32) return std::nullopt;
  return g_autocast;
}

void set_autocast_dtype(std::optional<DType> dtype) {
  if (dtype && *dtype != DType::BFloat16 && *dtype != DType::Float16)
    fail<ValueError>("autocast: dtype must be bfloat16 or float16, got ", dtype_name(*dtype));
  g_autocast = dtype.value_or(DType::Float32);
  if (!dtype) g_weight_casts.clear();
}

AutocastGuard::AutocastGuard(std::optional<DType> dtype) : prev_(g_autocast) {
  g_autocast = dtype.value_or(DType::Float32);
}
AutocastGuard::~AutocastGuard() { g_autocast = prev_; }

std::vector<Tensor> autocast_inputs(CastPolicy policy, std::vector<Tensor> inputs) {
  if (policy == CastPolicy::Keep || g_autocast == DType::Float32) return inputs;
  for (Tensor& t : inputs) {
    if (!t.defined() || t.weak()) continue;
    const DType dt = t.dtype();
    const bool half = dt == DType::BFloat16 || dt == DType::Float16;
    if (policy == CastPolicy::Low && (dt == DType::Float32 || (half && dt != g_autocast))) t = low_cast(t, g_autocast);
    if (policy == CastPolicy::Float32 && half) t = astype(t, DType::Float32);
  }
  return inputs;
}

}  // namespace pcp
