#include "pcp/ops/optim.h"

#include <algorithm>
#include <cmath>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"

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
void bump_versions(const char* op, std::initializer_list<const std::vector<Tensor>*> lists) {
  for (auto* l : lists)
    for (const Tensor& t : *l)
      if (t.defined()) report_inplace_write(t, op);
  for (auto* l : lists)
    for (const Tensor& t : *l)
      if (t.defined()) t.storage()->bump_version();
}

// Input k of n-element lists given as one list.
std::vector<Tensor> part(const std::vector<Tensor>& in, size_t k, size_t n) {
  return {in.begin() + std::ptrdiff_t(k * n), in.begin() + std::ptrdiff_t((k + 1) * n)};
}

// The updates are primitives with no outputs that write their inputs in place, so a traced
// training step records them and its plan redoes them; the step count and learning rate are
// host scalars, read as they run.
class AdamStep : public Primitive {
 public:
  AdamStep(AdamConfig cfg, HostScalarPtr step, HostScalarPtr lr) : cfg_(cfg), step_(std::move(step)), lr_(std::move(lr)) {}
  const char* name() const override { return cfg_.decoupled ? "adamw_step" : "adam_step"; }
  Attributes attributes() const override { return {{"beta1", cfg_.beta1}, {"beta2", cfg_.beta2}, {"eps", cfg_.eps}, {"weight_decay", cfg_.weight_decay}}; }
  SharedState shared_state() const override { return {{step_, lr_}, {}}; }
  bool writes_inputs() const override { return true; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>&) const override { return {}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    const size_t n = in.size() / 4;
    const std::vector<Tensor> params = part(in, 0, n), grads = part(in, 1, n), m = part(in, 2, n), v = part(in, 3, n);
    const double step = step_->value;
    if (!(step >= 1)) fail<ValueError>(name(), ": step counts from 1, got ", step);
    bump_versions(name(), {&params, &m, &v});
    const float lr = float(lr_->value);
    const float bc1 = float(1.0 - std::pow(cfg_.beta1, step)), bc2 = float(1.0 - std::pow(cfg_.beta2, step));
    if (n)
      backend::adam(params, grads, m, v, lr, cfg_.beta1, cfg_.beta2, float(cfg_.eps), float(cfg_.weight_decay), bc1,
                    bc2, cfg_.decoupled);
    return {};
  }

 private:
  AdamConfig cfg_;
  HostScalarPtr step_, lr_;
};

class SgdStep : public Primitive {
 public:
  SgdStep(SgdConfig cfg, HostScalarPtr first_step, HostScalarPtr lr)
      : cfg_(cfg), first_(std::move(first_step)), lr_(std::move(lr)) {}
  const char* name() const override { return "sgd_step"; }
  Attributes attributes() const override { return {{"momentum", cfg_.momentum}, {"dampening", cfg_.dampening}, {"weight_decay", cfg_.weight_decay}, {"nesterov", cfg_.nesterov}}; }
  SharedState shared_state() const override { return {{first_, lr_}, {}}; }
  bool writes_inputs() const override { return true; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>&) const override { return {}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    const bool momentum = cfg_.momentum != 0.0;
    const size_t n = in.size() / (momentum ? 3 : 2);
    const std::vector<Tensor> params = part(in, 0, n), grads = part(in, 1, n);
    const std::vector<Tensor> bufs = momentum ? part(in, 2, n) : std::vector<Tensor>{};
    bump_versions(name(), {&params, &bufs});
    const float lr = float(lr_->value);
    const bool first = first_->value != 0;
    if (n)
      backend::sgd(params, grads, bufs, lr, float(cfg_.momentum), float(cfg_.dampening), float(cfg_.weight_decay),
                   cfg_.nesterov, first);
    return {};
  }

 private:
  SgdConfig cfg_;
  HostScalarPtr first_, lr_;
};

// Scales the gradients (its inputs) in place; output: the norm before, float64 on the CPU,
// float32 on a GPU (where nothing waits for it).
class ClipGradNorm : public Primitive {
 public:
  ClipGradNorm(double max_norm, double eps) : max_norm_(max_norm), eps_(eps) {}
  const char* name() const override { return "clip_grad_norm"; }
  Attributes attributes() const override { return {{"max_norm", max_norm_}, {"eps", eps_}}; }
  bool writes_inputs() const override { return true; }
  bool differentiable_output(size_t) const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const bool gpu = !in.empty() && in[0].device.is_gpu();
    return {{{}, gpu ? DType::Float32 : DType::Float64, in.empty() ? cpu_device() : in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& grads, const std::vector<TensorSpec>&) override {
    bump_versions(name(), {&grads});
    if (!grads.empty() && grads[0].device().is_gpu()) return {gpu::clip_grad_norm(grads, max_norm_, eps_)};
    const double norm = std::sqrt(cpu::sum_squares(grads)), scale = max_norm_ / (norm + eps_);
    if (scale < 1.0) cpu::scale_in_place(grads, float(scale));
    return {scalar(norm, DType::Float64)};
  }

 private:
  double max_norm_, eps_;
};

// Each device's parameters in a step of their own (a primitive's inputs share one device).
template <class Step>
void per_device(const std::vector<Tensor>& params, std::initializer_list<const std::vector<Tensor>*> lists, Step step) {
  std::vector<Device> devices;
  for (const Tensor& p : params)
    if (std::find(devices.begin(), devices.end(), p.device()) == devices.end()) devices.push_back(p.device());
  for (const Device& d : devices) {
    std::vector<Tensor> in;
    for (auto* l : lists)
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i].device() == d) in.push_back((*l)[i]);
    step(std::move(in));
  }
}

}  // namespace

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& m,
               const std::vector<Tensor>& v, HostScalarPtr step, HostScalarPtr lr, const AdamConfig& c) {
  const char* op = c.decoupled ? "adamw_step" : "adam_step";
  check_lists(op, params, {&grads, &m, &v});
  if (!(step->value >= 1)) fail<ValueError>(op, ": step counts from 1, got ", step->value);
  for (size_t i = 0; i < params.size(); ++i) {
    check_state(op, "parameter", i, params[i], params[i]);
    check_state(op, "gradient", i, params[i], grads[i]);
    check_state(op, "exp_avg", i, params[i], m[i]);
    check_state(op, "exp_avg_sq", i, params[i], v[i]);
  }
  per_device(params, {&params, &grads, &m, &v},
             [&](std::vector<Tensor> in) { pcp::apply_all<AdamStep>(std::move(in), c, step, lr); });
}

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& m,
               const std::vector<Tensor>& v, int64_t step, const AdamConfig& c) {
  adam_step(params, grads, m, v, std::make_shared<HostScalar>(double(step)), std::make_shared<HostScalar>(c.lr), c);
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
              HostScalarPtr first_step, HostScalarPtr lr, const SgdConfig& c) {
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
  auto apply = [&](std::vector<Tensor> in) { pcp::apply_all<SgdStep>(std::move(in), c, first_step, lr); };
  if (momentum) per_device(params, {&params, &grads, &bufs}, apply);
  else per_device(params, {&params, &grads}, apply);
}

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
              bool first_step, const SgdConfig& c) {
  sgd_step(params, grads, bufs, std::make_shared<HostScalar>(first_step ? 1.0 : 0.0), std::make_shared<HostScalar>(c.lr),
           c);
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
  if (grads.empty()) return scalar(0.0, DType::Float64);
  return pcp::apply<ClipGradNorm>(grads, max_norm, eps);
}

namespace {
// Plan files make these again by name (ops/primitive.h): the step count and learning rate (SGD:
// its first-step flag and learning rate) are the plan's host scalars.
AdamConfig adam_config(const std::string& n, const Attributes& a) {
  AdamConfig c;
  c.beta1 = attr_double(n, a, "beta1"), c.beta2 = attr_double(n, a, "beta2"), c.eps = attr_double(n, a, "eps");
  c.weight_decay = attr_double(n, a, "weight_decay"), c.decoupled = n == "adamw_step";
  return c;
}

// Whole parameter groups (param, grad, m, v for Adam; param, grad and, with momentum, a buffer
// for SGD), float32, each tensor its parameter's shape.
void check_step(const NodeCheck& c) {
  const size_t k = c.op == "sgd_step" ? (attr_double(c.op, c.attrs, "momentum") != 0.0 ? 3 : 2) : 4;
  c.require(!c.in.empty() && c.in.size() % k == 0, "inputs are not whole parameter groups");
  const size_t n = c.in.size() / k;
  for (size_t i = 0; i < c.in.size(); ++i)
    c.require(c.in[i].dtype == DType::Float32 && c.in[i].shape == c.in[i % n].shape,
              "state that does not match its parameter");
}

const bool registered = [] {
  for (const char* name : {"adam_step", "adamw_step"})
    register_primitive(name, {.make = [](const std::string& n, const Attributes& a, const SharedState& s) {
      return std::shared_ptr<Primitive>(
          std::make_shared<AdamStep>(adam_config(n, a), shared_scalar(n, s, 0), shared_scalar(n, s, 1)));
    }, .inputs = {}, .check = check_step, .gpu = true});
  register_primitive("sgd_step", {.make = [](const std::string& n, const Attributes& a, const SharedState& s) {
    SgdConfig c;
    c.momentum = attr_double(n, a, "momentum"), c.dampening = attr_double(n, a, "dampening");
    c.weight_decay = attr_double(n, a, "weight_decay"), c.nesterov = attr_bool(n, a, "nesterov");
    return std::shared_ptr<Primitive>(std::make_shared<SgdStep>(c, shared_scalar(n, s, 0), shared_scalar(n, s, 1)));
  }, .inputs = {}, .check = check_step, .gpu = true});
  register_primitive("clip_grad_norm", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<ClipGradNorm>(attr_double(n, a, "max_norm"), attr_double(n, a, "eps")));
  }, .inputs = {}, .check = [](const NodeCheck& c) {
    for (const TensorSpec& s : c.in) c.require(s.dtype == DType::Float32, "gradients must be float32");
  }, .gpu = true});
  return true;
}();
}  // namespace

}  // namespace pcp
