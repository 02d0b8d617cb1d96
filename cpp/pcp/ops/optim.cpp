#include "pcp/ops/optim.h"

#include <cmath>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/ops/ops.h"
#include "pcp/core/error.h"

namespace pcp {
namespace {

void check_state(const char* op, const char* what, size_t i, const Tensor& p, const Tensor& t) {
  if (!t.defined()) fail<ValueError>(op, ": ", what, " ", i, " is missing");
  if (t.dtype() != DType::Float32 || !t.is_contiguous())
    fail<TypeError>(op, ": ", what, " ", i, " must be a contiguous float32 tensor, got ", dtype_name(t.dtype()),
                    t.is_contiguous() ? "" : " (non-contiguous)");
  if (t.shape() != p.shape())
    fail<ValueError>(op, ": ", what, " ", i, " has shape ", shape_str(t.shape()), " but its parameter has shape ",
                     shape_str(p.shape()));
  if (t.device() != p.device())
    fail<ValueError>(op, ": ", what, " ", i, " is on ", t.device().str(), " but its parameter is on ",
                     p.device().str());
}

void check_lists(const char* op, const std::vector<Tensor>& params, std::initializer_list<const std::vector<Tensor>*> lists) {
  for (auto* l : lists)
    if (l->size() != params.size())
      fail<ValueError>(op, ": got ", params.size(), " parameters but a list of ", l->size(), " state tensors");
}

// The steps write in place: tensors that a graph saved must not be read by its backward.
void bump_versions(std::initializer_list<const std::vector<Tensor>*> lists) {
  for (auto* l : lists)
    for (const Tensor& t : *l)
      if (t.defined()) t.storage()->bump_version();
}

}  // namespace

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& m,
               const std::vector<Tensor>& v, int64_t step, const AdamConfig& c) {
  const char* op = c.decoupled ? "adamw_step" : "adam_step";
  check_lists(op, params, {&grads, &m, &v});
  if (step < 1) fail<ValueError>(op, ": step counts from 1, got ", step);
  for (size_t i = 0; i < params.size(); ++i) {
    check_state(op, "parameter", i, params[i], params[i]);
    check_state(op, "gradient", i, params[i], grads[i]);
    check_state(op, "exp_avg", i, params[i], m[i]);
    check_state(op, "exp_avg_sq", i, params[i], v[i]);
  }
  bump_versions({&params, &m, &v});
  const float bc1 = float(1.0 - std::pow(c.beta1, double(step))), bc2 = float(1.0 - std::pow(c.beta2, double(step)));
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].device().is_gpu())
      gpu::adam(params[i], grads[i], m[i], v[i], float(c.lr), c.beta1, c.beta2, float(c.eps),
                float(c.weight_decay), bc1, bc2, c.decoupled);
  cpu::adam(params, grads, m, v, float(c.lr), c.beta1, c.beta2, float(c.eps), float(c.weight_decay), bc1, bc2,
            c.decoupled);
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
              bool first_step, const SgdConfig& c) {
  const char* op = "sgd_step";
  const bool momentum = c.momentum != 0.0;
  check_lists(op, params, {&grads});
  if (momentum) check_lists(op, params, {&bufs});
  if (c.nesterov && (!momentum || c.dampening != 0.0))
    fail<ValueError>(op, ": Nesterov momentum requires a momentum and zero dampening");
  for (size_t i = 0; i < params.size(); ++i) {
    check_state(op, "parameter", i, params[i], params[i]);
    check_state(op, "gradient", i, params[i], grads[i]);
    if (momentum) check_state(op, "momentum buffer", i, params[i], bufs[i]);
  }
  bump_versions({&params, &bufs});
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].device().is_gpu())
      gpu::sgd(params[i], grads[i], momentum ? bufs[i] : Tensor(), float(c.lr), float(c.momentum),
               float(c.dampening), float(c.weight_decay), c.nesterov, first_step);
  cpu::sgd(params, grads, momentum ? bufs : std::vector<Tensor>{}, float(c.lr), float(c.momentum), float(c.dampening),
           float(c.weight_decay), c.nesterov, first_step);
}

// On a GPU the norm and the scale stay on the device (no wait): the gradients are multiplied by
// min(1, max_norm / (norm + eps)) in place.
Tensor clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double eps) {
  const char* op = "clip_grad_norm";
  if (!(max_norm > 0)) fail<ValueError>(op, ": max_norm must be positive, got ", max_norm);
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) fail<ValueError>(op, ": gradient ", i, " is missing");
    if (grads[i].dtype() != DType::Float32 || !grads[i].is_contiguous())
      fail<TypeError>(op, ": gradient ", i, " must be a contiguous float32 tensor, got ", dtype_name(grads[i].dtype()),
                      grads[i].is_contiguous() ? "" : " (non-contiguous)");
    if (grads[i].device() != grads[0].device())
      fail<ValueError>(op, ": gradients are on different devices (", grads[0].device().str(), " and ",
                       grads[i].device().str(), ")");
  }
  bump_versions({&grads});
  if (!grads.empty() && grads[0].device().is_gpu()) return gpu::clip_grad_norm(grads, max_norm, eps);
  const double norm = std::sqrt(cpu::sum_squares(grads)), scale = max_norm / (norm + eps);
  if (scale < 1.0) cpu::scale_in_place(grads, float(scale));
  return scalar(norm, DType::Float64);
}

}  // namespace pcp
