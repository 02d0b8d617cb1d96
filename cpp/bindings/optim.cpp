// Fused optimizer steps (in place).
#include "convert.h"
#include "named.h"
#include "pcp/core/error.h"
#include "pcp/ops/optim.h"

namespace pcp::bindings {

namespace {
// A number, or a HostScalar a plan reads when it replays the step.
HostScalarPtr host_scalar(py::handle v, const char* op, const char* what) {
  if (py::isinstance<HostScalar>(v)) return v.cast<HostScalarPtr>();
  if (!PyFloat_Check(v.ptr()) && !PyLong_Check(v.ptr()))
    fail<TypeError>(op, ": ", what, " must be a number or a HostScalar, got ",
                    std::string(py::str(py::type::of(v).attr("__name__"))));
  return std::make_shared<HostScalar>(v.cast<double>());
}
}  // namespace

void bind_optim(py::module_& m) {
  using py::arg;
  py::class_<HostScalar, HostScalarPtr>(m, "HostScalar",
                                        "A number an optimizer step reads when it runs; a traced step's plan reads it "
                                        "on each replay (the step count, the learning rate)")
      .def(py::init<double>(), arg("value"))
      .def_readwrite("value", &HostScalar::value, "The number");
  m.def("adam_step",  // not named(): its errors say adam_step or adamw_step, as the step the user runs
        [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avg,
           const std::vector<Tensor>& exp_avg_sq, py::object step, py::object lr, double beta1, double beta2,
           double eps, double weight_decay, bool decoupled) {
          const char* op = decoupled ? "adamw_step" : "adam_step";
          HostScalarPtr s = host_scalar(step, op, "step"), l = host_scalar(lr, op, "lr");
          py::gil_scoped_release release;
          adam_step(params, grads, exp_avg, exp_avg_sq, s, l,
                    AdamConfig{l->value, beta1, beta2, eps, weight_decay, decoupled});
        },
        arg("params"), arg("grads"), arg("exp_avg"), arg("exp_avg_sq"), arg("step"), arg("lr"), arg("beta1"),
        arg("beta2"), arg("eps"), arg("weight_decay"), arg("decoupled"),
        "One fused Adam/AdamW step over every parameter, updating params and state in place; step and lr may be "
        "HostScalars");
  def(m, "sgd_step",
        [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
           py::object first_step, py::object lr, double momentum, double dampening, double weight_decay,
           bool nesterov) {
          HostScalarPtr f = host_scalar(first_step, "sgd_step", "first_step"), l = host_scalar(lr, "sgd_step", "lr");
          py::gil_scoped_release release;
          sgd_step(params, grads, bufs, f, l, SgdConfig{l->value, momentum, dampening, weight_decay, nesterov});
        },
        arg("params"), arg("grads"), arg("momentum_buffers"), arg("first_step"), arg("lr"), arg("momentum"),
        arg("dampening"), arg("weight_decay"), arg("nesterov"),
        "One fused SGD step (momentum, Nesterov, weight decay) over every parameter, in place; first_step and lr "
        "may be HostScalars");
  def(m, "clip_grad_norm",
        [](const std::vector<Tensor>& grads, double max_norm, double eps) {
          py::gil_scoped_release release;
          return clip_grad_norm(grads, max_norm, eps);
        },
        arg("grads"), arg("max_norm"), arg("eps") = 1e-6,
        "Scales float32 gradients in place so their global L2 norm is at most max_norm; returns the norm before, a 0-d tensor on their device");
}

}  // namespace pcp::bindings
