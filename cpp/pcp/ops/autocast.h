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
// Sets the autocast type (float16 or bfloat16; nullopt turns autocast off and ends the scope:
// its cached weight casts are dropped). A ValueError for any other type.
void set_autocast_dtype(std::optional<DType> dtype);

// RAII: sets the autocast type for a stretch of work inside a scope and restores the previous
// one, keeping the scope's cached casts (backward passes run with autocast off: their products
// follow the dtypes saved in the forward pass).
class AutocastGuard {
 public:
  explicit AutocastGuard(std::optional<DType> dtype);  // (the type is one set_autocast_dtype takes)
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DType prev_;
};

// The inputs as `policy` casts them under the current autocast type. Only float32, float16 and
// bfloat16 tensors are cast (float64 and integers are left alone, as in PyTorch), and never
// weak scalars (Python numbers), which adopt the other operand's type anyway. A parameter's cast
// to the low type is made once per scope and reused (a cache emptied when autocast goes off).
std::vector<Tensor> autocast_inputs(CastPolicy policy, std::vector<Tensor> inputs);
// t in dt: from the scope's weight-cast cache where dt is the autocast type and t a float32
// parameter or a view of one (ops that cast their operands themselves, such as matmul).
Tensor autocast_cast(const Tensor& t, DType dt);

}  // namespace pcp
