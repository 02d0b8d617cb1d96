#include "pcp/ops/optim.h"

#include <algorithm>
#include <cmath>

#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/backend/cpu/thread_pool.h"
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

template <class F>
void for_chunks(int64_t n, F f) {
  parallel_for(n, 32768, [&](int64_t b, int64_t e) { f(b, e - b); });
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
  const auto& k = cpu::kernels();
  const float bc1 = float(1.0 - std::pow(c.beta1, double(step))), bc2 = float(1.0 - std::pow(c.beta2, double(step)));
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].device().is_gpu()) {
      gpu::adam(params[i], grads[i], m[i], v[i], float(c.lr), c.beta1, c.beta2, float(c.eps),
                float(c.weight_decay), bc1, bc2, c.decoupled);
      continue;
    }
    float *p = params[i].data<float>(), *mi = m[i].data<float>(), *vi = v[i].data<float>();
    const float* g = grads[i].data<float>();
    for_chunks(params[i].numel(), [&](int64_t b, int64_t n) {
      k.adam_update(p + b, g + b, mi + b, vi + b, n, float(c.lr), float(c.beta1), float(c.beta2),
                    float(1.0 - c.beta1), float(1.0 - c.beta2), float(c.eps), float(c.weight_decay), bc1, bc2,
                    c.decoupled);
    });
  }
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
  const auto& k = cpu::kernels();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].device().is_gpu()) {
      gpu::sgd(params[i], grads[i], momentum ? bufs[i] : Tensor(), float(c.lr), float(c.momentum),
               float(c.dampening), float(c.weight_decay), c.nesterov, first_step);
      continue;
    }
    float* p = params[i].data<float>();
    const float* g = grads[i].data<float>();
    float* b = momentum ? bufs[i].data<float>() : nullptr;
    for_chunks(params[i].numel(), [&](int64_t s, int64_t n) {
      k.sgd_update(p + s, g + s, b ? b + s : nullptr, n, float(c.lr), float(c.momentum), float(c.dampening),
                   float(c.weight_decay), c.nesterov, first_step);
    });
  }
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
  if (!grads.empty() && grads[0].device().is_gpu()) {
    Tensor total = zeros({}, DType::Float32, grads[0].device());
    for (const Tensor& g : grads) total = add(total, sum(square(g)));
    Tensor norm = sqrt(total);
    Tensor scale = minimum(div(weak_scalar(max_norm), add(norm, weak_scalar(eps))), weak_scalar(1.0));
    for (const Tensor& g : grads) gpu::binary(BinaryOp::Mul, g, scale, g);
    return norm;
  }
  const auto& k = cpu::kernels();
  // Per-chunk partial sums, added in chunk order: the same result for the same thread count.
  double total = 0;
  for (const Tensor& g : grads) {
    const float* x = g.data<float>();
    const int64_t n = g.numel(), chunks = std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, n / 32768));
    std::vector<double> part(size_t(chunks), 0.0);
    parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) part[c] = k.sum_squares(x + n * c / chunks, n * (c + 1) / chunks - n * c / chunks);
    });
    for (double p : part) total += p;
  }
  const double norm = std::sqrt(total), scale = max_norm / (norm + eps);
  if (scale < 1.0) {
    const float s = float(scale);  // g *= s in place: the binary kernel with a broadcast operand
    const char* ps = reinterpret_cast<const char*>(&s);
    for (const Tensor& g : grads)
      for_chunks(g.numel(), [&, x = reinterpret_cast<char*>(g.data<float>())](int64_t b, int64_t n) {
        k.binary(BinaryOp::Mul, DType::Float32, n, x + b * 4, 1, x + b * 4, 1, ps, 0);
      });
  }
  return scalar(norm, DType::Float64);
}

}  // namespace pcp
