// A chain of elementwise ops run as one: what a plan's fusion pass (plan/passes.h) makes of
// unary and binary ops whose intermediate values nothing else reads. On the CPU it runs in
// blocks that stay in cache (one pass over memory instead of one per op).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "pcp/core/fused_program.h"
#include "pcp/core/op_kinds.h"
#include "pcp/ops/primitive.h"

namespace pcp {

class FusedElementwise : public Primitive {
 public:
  explicit FusedElementwise(FusedProgram program);
  const char* name() const override { return "fused_elementwise"; }
  Attributes attributes() const override;
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override;
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override;
  const FusedProgram& program() const { return program_; }

 private:
  FusedProgram program_;
};

// The primitives' names of the elementwise ops ("exp", "add", ...), and the op a name is.
const char* unary_name(UnaryOp op);
const char* binary_name(BinaryOp op);
std::optional<UnaryOp> unary_op_named(const std::string& name);
std::optional<BinaryOp> binary_op_named(const std::string& name);

// Whether a plan may fuse this op (float32 unary math and binary arithmetic).
bool fusable_unary(UnaryOp op);
bool fusable_binary(BinaryOp op);

}  // namespace pcp
