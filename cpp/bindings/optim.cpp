// Fused optimizer steps (in place).
#include "convert.h"
#include "named.h"
#include "pcp/ops/optim.h"

namespace pcp::bindings {

void bind_optim(py::module_& m) {
  using py::arg;
  m.def("adam_step",  // not named(): its errors say adam_step or adamw_step, as the step the user runs
        [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avg,
           const std::vector<Tensor>& exp_avg_sq, Int step, double lr, double beta1, double beta2, double eps,
           double weight_decay, bool decoupled) {
          py::gil_scoped_release release;
          adam_step(params, grads, exp_avg, exp_avg_sq, step, AdamConfig{lr, beta1, beta2, eps, weight_decay, decoupled});
        },
        arg("params"), arg("grads"), arg("exp_avg"), arg("exp_avg_sq"), arg("step"), arg("lr"), arg("beta1"),
        arg("beta2"), arg("eps"), arg("weight_decay"), arg("decoupled"),
        "One fused Adam/AdamW step over every parameter, updating params and state in place");
  def(m, "sgd_step",
        [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
           bool first_step, double lr, double momentum, double dampening, double weight_decay, bool nesterov) {
          py::gil_scoped_release release;
          sgd_step(params, grads, bufs, first_step, SgdConfig{lr, momentum, dampening, weight_decay, nesterov});
        },
        arg("params"), arg("grads"), arg("momentum_buffers"), arg("first_step"), arg("lr"), arg("momentum"),
        arg("dampening"), arg("weight_decay"), arg("nesterov"),
        "One fused SGD step (momentum, Nesterov, weight decay) over every parameter, in place");
  def(m, "clip_grad_norm",
        [](const std::vector<Tensor>& grads, double max_norm, double eps) {
          py::gil_scoped_release release;
          return clip_grad_norm(grads, max_norm, eps);
        },
        arg("grads"), arg("max_norm"), arg("eps") = 1e-6,
        "Scales float32 gradients in place so their global L2 norm is at most max_norm; returns the norm before, a 0-d tensor on their device");
}

}  // namespace pcp::bindings
