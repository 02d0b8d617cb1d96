// Automatic mixed precision (like torch.autocast): inside an autocast scope, apply() casts the
// floating inputs of each primitive by the primitive's policy before it runs. Products (matmul,
// attention) compute in the scope's 16-bit type with float32 accumulation; numerically touchy
// ops (softmax, layer norm, cross-entropy, sums, exp, log) compute in float32. The casts are
// ordinary ops, so gradients flow back through them to float32 parameters (master weights), and
// a product's inputs are saved for backward in the 16-bit type. Thread-local, as grad mode.
#pragma once
#include <optional>
#include <vector>

#include "pcp/core/tensor.h"

namespace pcp {

enum class CastPolicy {
  Keep,     // inputs as they are (the default: views, elementwise arithmetic, casts)
  Low,      // float32 inputs to the autocast type (float16 or bfloat16)
  Float32,  // float16 and bfloat16 inputs to float32
};

// The autocast type, or nullopt outside an autocast scope.
std::optional<DType> autocast_dtype();
// Sets the autocast type (float16 or bfloat16; nullopt turns autocast off). A ValueError for
// any other type.
void set_autocast_dtype(std::optional<DType> dtype);

// RAII: sets the autocast type for a scope and restores the previous one (backward passes run
// with autocast off: their products follow the dtypes saved in the forward pass).
class AutocastGuard {
 public:
  explicit AutocastGuard(std::optional<DType> dtype) : prev_(autocast_dtype()) { set_autocast_dtype(dtype); }
  ~AutocastGuard() { set_autocast_dtype(prev_); }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  std::optional<DType> prev_;
};

// The inputs as `policy` casts them under the current autocast type. Only float32, float16 and
// bfloat16 tensors are cast (float64 and integers are left alone, as in PyTorch), and never
// weak scalars (Python numbers), which adopt the other operand's type anyway.
std::vector<Tensor> autocast_inputs(CastPolicy policy, std::vector<Tensor> inputs);

}  // namespace pcp
