// Fused, in-place optimizer updates over lists of parameters (no autograd: they run under
// no_grad on leaf parameters). Each validates every tensor before touching memory.
#pragma once
#include <memory>
#include <vector>

#include "pcp/core/tensor.h"
#include "pcp/ops/primitive.h"

namespace pcp {

struct AdamConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool decoupled = true;  // AdamW (decay the weights) vs Adam (decay added to the gradient)
};

// One step for every (param, grad, exp_avg, exp_avg_sq); `step` counts from 1.
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avg,
               const std::vector<Tensor>& exp_avg_sq, int64_t step, const AdamConfig& cfg);
// The same with the step count and cfg.lr read from host scalars when the step runs.
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avg,
               const std::vector<Tensor>& exp_avg_sq, HostScalarPtr step, HostScalarPtr lr, const AdamConfig& cfg);

struct SgdConfig {
  double lr = 1e-2, momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
};

// One step; `momentum_buffers` may be empty when momentum is 0.
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              const std::vector<Tensor>& momentum_buffers, bool first_step, const SgdConfig& cfg);
// The same with first_step (nonzero: true) and cfg.lr read from host scalars when the step runs.
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              const std::vector<Tensor>& momentum_buffers, HostScalarPtr first_step, HostScalarPtr lr,
              const SgdConfig& cfg);

// Scales every gradient in place by max_norm / (norm + eps) when their global L2 norm exceeds
// max_norm; returns the norm before clipping as a 0-d tensor on the gradients' device (as
// torch.nn.utils.clip_grad_norm_; float64 on the CPU, float32 on a GPU, where nothing waits).
Tensor clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double eps = 1e-6);

}  // namespace pcp
