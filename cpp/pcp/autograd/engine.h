// Reverse-mode autodiff over the recorded graph.
#pragma once
#include <vector>

#include "pcp/core/tensor.h"

namespace pcp {

// Accumulates d(root)/d(leaf) into every leaf's .grad that requires grad.
// `grad` may be undefined only for a one-element root (it defaults to ones).
// With create_graph the backward pass is itself recorded (higher-order gradients).
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool create_graph = false);

// Returns d(root)/d(x) for each x in `wrt` without touching any .grad
// (zeros for an x the root does not depend on).
std::vector<Tensor> grad(const Tensor& root, const std::vector<Tensor>& wrt, const Tensor& grad = Tensor(),
                         bool create_graph = false);

}  // namespace pcp
