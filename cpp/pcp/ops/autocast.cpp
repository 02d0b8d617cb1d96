#include "pcp/ops/autocast.h"

#include "pcp/core/error.h"
#include "pcp/ops/ops.h"

namespace pcp {

// A plain enum value (no optional<> in thread-local storage); Float32 means "off".
static thread_local DType g_autocast = DType::Float32;

std::optional<DType> autocast_dtype() {
  if (g_autocast == DType::Float32) return std::nullopt;
  return g_autocast;
}

void set_autocast_dtype(std::optional<DType> dtype) {
  if (dtype && *dtype != DType::BFloat16 && *dtype != DType::Float16)
    fail<ValueError>("autocast: dtype must be bfloat16 or float16, got ", dtype_name(*dtype));
  g_autocast = dtype.value_or(DType::Float32);
}

std::vector<Tensor> autocast_inputs(CastPolicy policy, std::vector<Tensor> inputs) {
  if (policy == CastPolicy::Keep || g_autocast == DType::Float32) return inputs;
  for (Tensor& t : inputs) {
    if (!t.defined() || t.weak()) continue;
    const DType dt = t.dtype();
    const bool half = dt == DType::BFloat16 || dt == DType::Float16;
    if (policy == CastPolicy::Low && (dt == DType::Float32 || (half && dt != g_autocast))) t = astype(t, g_autocast);
    if (policy == CastPolicy::Float32 && half) t = astype(t, DType::Float32);
  }
  return inputs;
}

}  // namespace pcp
