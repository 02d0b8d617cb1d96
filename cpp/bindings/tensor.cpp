// The Tensor class: properties, operators, indexing, autograd entry points.
#include <cmath>
#include <complex>

#include <pybind11/complex.h>

#include "convert.h"
#include "named.h"
#include "pcp/autograd/engine.h"
#include "pcp/ops/node.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"

namespace pcp::bindings {

py::array to_numpy(const Tensor& t);

namespace {

// Through NumPy's own tolist/item, so Python gets exact ints, floats and bools.
py::object to_list(const Tensor& t) {
  report_host_read(t, "tolist()");
  Tensor c = t.dtype() == DType::BFloat16 ? astype(t, DType::Float32) : t;
  return to_numpy(c).attr("tolist")();
}

py::object item(const Tensor& t) {
  report_host_read(t, "item()");
  if (t.numel() != 1)
    fail<ValueError>("item: only a tensor with one element can be converted to a Python scalar, got shape ",
                     shape_str(t.shape()));
  Tensor c = t.dtype() == DType::BFloat16 ? astype(t, DType::Float32) : t;
  return to_numpy(reshape(c, {})).attr("item")();
}

}  // namespace

// t.grad = g: a tensor like t (shape, dtype, device) or None, as PyTorch requires.
void set_grad(Tensor& t, py::object g) {
  if (g.is_none()) return t.set_grad(Tensor());
  if (!py::isinstance<Tensor>(g))
    fail<TypeError>("grad: expected a Tensor or None, got ", std::string(py::str(py::type::of(g).attr("__name__"))));
  Tensor gt = g.cast<Tensor>();
  if (gt.shape() != t.shape())
    fail<ValueError>("grad: a gradient of shape ", shape_str(gt.shape()), " cannot be assigned to a tensor of shape ",
                     shape_str(t.shape()));
  if (gt.dtype() != t.dtype())
    fail<TypeError>("grad: a ", dtype_name(gt.dtype()), " gradient cannot be assigned to a ", dtype_name(t.dtype()),
                    " tensor");
  if (gt.device() != t.device())
    fail<ValueError>("grad: a gradient on ", gt.device().str(), " cannot be assigned to a tensor on ", t.device().str());
  t.set_grad(gt);
}

// int(t): floats truncate through Python's own conversion (ValueError for NaN, OverflowError
// for inf; exact for large values), integers and bools are exact.
py::object to_int(const Tensor& t) {
  report_host_read(t, "int()");
  if (!is_floating(t.dtype())) return py::int_(t.item_int());
  PyObject* r = PyLong_FromDouble(t.item_double());
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

py::class_<Tensor> bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", op_doc("Tensor"));
  auto doc = [](const char* name) { return py::doc(tensor_doc(name)); };
  cls.def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); }, doc("shape"))
      .def_property_readonly("ndim", &Tensor::ndim, doc("ndim"))
      .def_property_readonly("size", &Tensor::numel, doc("size"))
      .def_property_readonly("dtype", &Tensor::dtype, doc("dtype"))
      .def_property_readonly("device", [](const Tensor& t) { return t.device().str(); }, doc("device"))
      .def_property_readonly("strides", [](const Tensor& t) { return shape_tuple(t.strides()); }, doc("strides"))
      .def_property_readonly("itemsize", &Tensor::itemsize, doc("itemsize"))
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.numel() * int64_t(t.itemsize()); },
                             doc("nbytes"))
      .def_property("requires_grad", &Tensor::requires_grad,
                    named("requires_grad", [](Tensor& t, bool r) { t.set_requires_grad(r); }), doc("requires_grad"))
      .def_property(
          "grad", [](const Tensor& t) -> py::object {
            Tensor g = t.grad();
            return g.defined() ? py::cast(g) : py::none();
          },
          named("grad", set_grad), doc("grad"))
      .def_property_readonly("is_leaf", &Tensor::is_leaf, doc("is_leaf"))
      .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
        return t.grad_fn() ? py::str(t.grad_fn()->name()) : py::object(py::none());
      }, doc("grad_fn"))
      .def("requires_grad_", named("requires_grad_", [](Tensor& t, bool r) { t.set_requires_grad(r); return t; }),
           py::arg("requires_grad") = true, doc("requires_grad_"))
      .def("retain_grad", &Tensor::retain_grad, doc("retain_grad"))
      .def("detach", &Tensor::detach, doc("detach"))
      .def("backward",
           named("backward", [](const Tensor& t, py::object grad, bool create_graph, std::optional<bool> retain_graph) {
             Tensor g = to_tensor_or_none(grad, "backward");
             // A NumPy (or list) cotangent is made where the output is, as a weak scalar would be.
             if (g.defined() && !py::isinstance<Tensor>(grad)) g = pcp::to_device(g, t.device());
             py::gil_scoped_release release;
             pcp::backward(t, g, create_graph, retain_graph);
           }),
           py::arg("grad") = py::none(), py::arg("create_graph") = false, py::arg("retain_graph") = py::none(),
           doc("backward"))
      .def("item", named("item", item), doc("item"))
      .def("tolist", named("tolist", to_list), doc("tolist"))
      .def("numpy", named("numpy", [](const Tensor& t) {
        report_host_read(t, "numpy()");
        return to_numpy(t);
      }), doc("numpy"))
      .def("is_contiguous", &Tensor::is_contiguous, doc("is_contiguous"))
      .def("contiguous", named("contiguous", contiguous), doc("contiguous"))
      .def("astype", named("astype", [](const Tensor& t, py::object dt) { return astype(t, to_dtype(dt)); }),
           py::arg("dtype"), doc("astype"))
      .def("to", named("to", [](const Tensor& t, py::object a, py::object b, py::object device, py::object dtype) {
        // As PyTorch: t.to("gpu"), t.to(pcp.float16), t.to("gpu", pcp.float16), t.to(device=..., dtype=...).
        for (const py::object& target : {a, b}) {
          if (target.is_none()) continue;
          py::object& slot = py::isinstance<py::str>(target) ? device : dtype;
          if (!slot.is_none())
            fail<TypeError>("to: got two ", py::isinstance<py::str>(target) ? "devices" : "dtypes", " (",
                            std::string(py::str(slot)), " and ", std::string(py::str(target)), ")");
          slot = target;
        }
        // The cast runs on the CPU side of a move (the GPU lacks float64).
        const std::optional<Device> d = device.is_none() ? std::nullopt : std::optional(parse_device(py::str(device)));
        Tensor out = d && !d->is_gpu() ? to_device(t, *d) : t;
        if (!dtype.is_none()) out = astype(out, to_dtype(dtype));
        return d && d->is_gpu() ? to_device(out, *d) : out;
      }), py::arg("device_or_dtype") = py::none(), py::arg("dtype_or_device") = py::none(), py::kw_only(),
           py::arg("device") = py::none(), py::arg("dtype") = py::none(),
           doc("to"))
      .def("__repr__", named("repr", [](const Tensor& t) {
        report_host_read(t, "repr() (printing a tensor)");
        return t.repr();
      }), doc("__repr__"))
      .def("__len__", named("len", [](const Tensor& t) {
        if (t.ndim() == 0) fail<TypeError>("len() of a 0-d tensor");
        return t.shape()[0];
      }), doc("__len__"))
      .def("__bool__", named("bool", [](const Tensor& t) {
        if (t.numel() != 1)
          fail<ValueError>("bool: the truth value of a tensor with ", t.numel(),
                           " elements is ambiguous; use .any() or .all()");
        report_host_read(t, "bool() (an if or while on a tensor)");
        return t.item_double() != 0;
      }), doc("__bool__"))
      .def("__float__", named("float", [](const Tensor& t) {
        report_host_read(t, "float()");
        return t.item_double();
      }), doc("__float__"))
      .def("__complex__", named("complex", [](const Tensor& t) {
        report_host_read(t, "complex()");
        return std::complex<double>(t.item_double(), 0.0);
      }), doc("__complex__"))
      .def("__int__", named("int", to_int), doc("__int__"))
      .def("__index__", named("index", [](const Tensor& t) {
        if (!is_integral(t.dtype()) || t.numel() != 1)
          fail<TypeError>("only one-element integer tensors can be used as an index, got a ", dtype_name(t.dtype()),
                          " tensor of shape ", shape_str(t.shape()));
        return t.item_int();
      }), doc("__index__"))
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<intptr_t>(t.impl()); }, doc("__hash__"))
      .def("__getitem__", named("index", [](const Tensor& t, py::handle key) { return index(t, to_index(key)); }),
           py::arg("key"), doc("__getitem__"))
      .def("__setitem__", named("index_assign", [](const Tensor& t, py::handle key, py::handle value) {
        index_assign(t, to_index(key), to_tensor_like(value, t, "index_assign"));
      }), py::arg("key"), py::arg("value"), doc("__setitem__"))
      .def_property_readonly("T", named("transpose", [](const Tensor& t) { return transpose(t); }), doc("T"))
      .def_property_readonly("mT", named("mT", [](const Tensor& t) { return swapaxes(t, -1, -2); }), doc("mT"));

  // Operators with Python scalars, NumPy arrays and lists on either side.
#define PCP_BINOP(py_name, fn)                                                                            \
  cls.def(py_name, named(#fn, [](const Tensor& a, py::handle b) { return fn(a, to_tensor_like(b, a, #fn)); }), \
          py::arg("other"), py::is_operator(), doc(py_name))
#define PCP_RBINOP(py_name, fn)                                                                           \
  cls.def(py_name, named(#fn, [](const Tensor& a, py::handle b) { return fn(to_tensor_like(b, a, #fn), a); }), \
          py::arg("other"), py::is_operator(), doc(py_name))
  PCP_BINOP("__add__", add);
  PCP_RBINOP("__radd__", add);
  PCP_BINOP("__sub__", sub);
  PCP_RBINOP("__rsub__", sub);
  PCP_BINOP("__mul__", mul);
  PCP_RBINOP("__rmul__", mul);
  PCP_BINOP("__truediv__", div);
  PCP_RBINOP("__rtruediv__", div);
  PCP_BINOP("__pow__", pow);
  PCP_RBINOP("__rpow__", pow);
  PCP_BINOP("__matmul__", matmul);
  PCP_RBINOP("__rmatmul__", matmul);
  PCP_BINOP("__eq__", eq);
  PCP_BINOP("__ne__", ne);
  PCP_BINOP("__lt__", lt);
  PCP_BINOP("__le__", le);
  PCP_BINOP("__gt__", gt);
  PCP_BINOP("__ge__", ge);
  PCP_BINOP("__and__", bitwise_and);
  PCP_RBINOP("__rand__", bitwise_and);
  PCP_BINOP("__or__", bitwise_or);
  PCP_RBINOP("__ror__", bitwise_or);
  PCP_BINOP("__xor__", bitwise_xor);
  PCP_RBINOP("__rxor__", bitwise_xor);
  PCP_BINOP("__floordiv__", floor_divide);
  PCP_RBINOP("__rfloordiv__", floor_divide);
  PCP_BINOP("__mod__", remainder);
  PCP_RBINOP("__rmod__", remainder);
  PCP_BINOP("__lshift__", bitwise_left_shift);
  PCP_RBINOP("__rlshift__", bitwise_left_shift);
  PCP_BINOP("__rshift__", bitwise_right_shift);
  PCP_RBINOP("__rrshift__", bitwise_right_shift);
#undef PCP_BINOP
#undef PCP_RBINOP
  cls.def("__neg__", named("neg", [](const Tensor& a) { return neg(a); }), doc("__neg__"));
  cls.def("__pos__", named("positive", [](const Tensor& a) { return copy(a); }), doc("__pos__"));
  // The Array API standard's entry points (pcp.array_api is its namespace, in Python).
  cls.def("__array_namespace__", [](const Tensor&, py::object api_version) {
        if (!api_version.is_none() && std::string(py::str(api_version)) != "2024.12")
          fail<ValueError>("__array_namespace__: PCP implements the 2024.12 standard, not ",
                           std::string(py::str(api_version)));
        return py::object(py::module_::import("pcp.array_api"));
      }, py::kw_only(), py::arg("api_version") = py::none(), doc("__array_namespace__"));
  cls.def("to_device", [](py::object self, py::object device, py::object stream) {
        if (!stream.is_none()) fail<ValueError>("to_device: PCP has no streams to name; pass stream=None");
        const Tensor& t = self.cast<const Tensor&>();
        const Device d = parse_device(py::str(device));
        return d == t.device() ? self : py::cast(to_device(t, d));  // the same object when it is there
      }, py::arg("device"), py::kw_only(), py::arg("stream") = py::none(), doc("to_device"));
  cls.def("__abs__", named("abs", [](const Tensor& a) { return abs(a); }), doc("__abs__"));
  cls.def("__invert__", named("bitwise_not", [](const Tensor& a) { return bitwise_not(a); }), doc("__invert__"));
  return cls;
}

}  // namespace pcp::bindings
