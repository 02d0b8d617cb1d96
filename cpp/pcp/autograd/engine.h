// Reverse-mode autodiff over the recorded graph.
#pragma once
#include <optional>
#include <vector>

#include "pcp/core/tensor.h"

namespace pcp {

// Accumulates d(root)/d(leaf) into every leaf's .grad that requires grad.
// `grad` may be undefined only for a one-element root (it defaults to ones).
// With create_graph the backward pass is itself recorded (higher-order gradients).
// Without retain_graph (by default: create_graph) each node lets go of the values it saved once
// its VJP ran, as PyTorch does: activations are freed as the pass goes; a later pass through
// such a node raises.
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool create_graph = false,
              std::optional<bool> retain_graph = std::nullopt);

// Returns d(root)/d(x) for each x in `wrt` without touching any .grad
// (zeros for an x the root does not depend on). retain_graph as for backward().
std::vector<Tensor> grad(const Tensor& root, const std::vector<Tensor>& wrt, const Tensor& grad = Tensor(),
                         bool create_graph = false, std::optional<bool> retain_graph = std::nullopt);

}  // namespace pcp
