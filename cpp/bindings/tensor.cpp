// The Tensor class: properties, operators, indexing, autograd entry points.
#include "convert.h"
#include "pcp/autograd/engine.h"
#include "pcp/autograd/node.h"
#include "pcp/core/error.h"

namespace pcp::bindings {

py::array to_numpy(const Tensor& t);

namespace {

// Through NumPy's own tolist/item, so Python gets exact ints, floats and bools.
py::object to_list(const Tensor& t) {
  Tensor c = t.dtype() == DType::BFloat16 ? astype(t, DType::Float32) : t;
  return to_numpy(c).attr("tolist")();
}

py::object item(const Tensor& t) {
  if (t.numel() != 1)
    fail<ValueError>("item: only a tensor with one element can be converted to a Python scalar, got shape ",
                     shape_str(t.shape()));
  Tensor c = t.dtype() == DType::BFloat16 ? astype(t, DType::Float32) : t;
  return to_numpy(reshape(c, {})).attr("item")();
}

}  // namespace

// The other operand of an operator: NumPy arrays and lists move to the tensor's device (Python
// scalars are folded into the kernels wherever the tensor lives).
static Tensor operand(py::handle obj, const Tensor& like, const char* op) {
  Tensor t = to_tensor(obj, op);
  const bool number = py::isinstance<py::bool_>(obj) || py::isinstance<py::int_>(obj) || py::isinstance<py::float_>(obj);
  return py::isinstance<Tensor>(obj) || number ? t : to_device(t, like.device());
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", "An n-dimensional array with automatic differentiation");
  cls.def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("size", &Tensor::numel, "Number of elements")
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", [](const Tensor& t) { return t.device().str(); })
      .def("to", [](const Tensor& t, const std::string& device) { return to_device(t, parse_device(device)); },
           py::arg("device"), "This tensor on `device` ('cpu', 'gpu', 'vulkan:0'): a differentiable copy, or itself")
      .def_property_readonly("strides", [](const Tensor& t) { return shape_tuple(t.strides()); },
                             "Strides in elements")
      .def_property_readonly("itemsize", &Tensor::itemsize)
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.numel() * int64_t(t.itemsize()); })
      .def_property("requires_grad", &Tensor::requires_grad,
                    [](Tensor& t, bool r) { t.set_requires_grad(r); })
      .def_property(
          "grad", [](const Tensor& t) -> py::object {
            Tensor g = t.grad();
            return g.defined() ? py::cast(g) : py::none();
          },
          [](Tensor& t, py::object g) { t.set_grad(g.is_none() ? Tensor() : g.cast<Tensor>()); })
      .def_property_readonly("is_leaf", &Tensor::is_leaf)
      .def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
        return t.grad_fn() ? py::str(t.grad_fn()->name()) : py::object(py::none());
      }, "Name of the op that produced this tensor in the graph, or None")
      .def("requires_grad_", [](Tensor& t, bool r) { t.set_requires_grad(r); return t; },
           py::arg("requires_grad") = true)
      .def("retain_grad", &Tensor::retain_grad)
      .def("detach", &Tensor::detach, "A tensor sharing storage, cut off from the graph")
      .def(
          "backward",
          [](const Tensor& t, py::object grad, bool create_graph) {
            pcp::backward(t, to_tensor_or_none(grad, "backward"), create_graph);
          },
          py::arg("grad") = py::none(), py::arg("create_graph") = false,
          "Accumulates gradients of this tensor into the .grad of every leaf that requires grad")
      .def("item", &item)
      .def("tolist", &to_list)
      .def("numpy", &to_numpy, "A NumPy array sharing this tensor's memory")
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("contiguous", &contiguous)
      .def("astype", [](const Tensor& t, py::object dt) { return astype(t, to_dtype(dt)); }, py::arg("dtype"))
      .def("to", [](const Tensor& t, py::object target) {
        if (py::isinstance<py::str>(target)) {
          parse_device(target.cast<std::string>());
          return t;
        }
        return astype(t, to_dtype(target));
      }, py::arg("device_or_dtype"), "Moves to a device ('cpu') or converts to a dtype")
      .def("__repr__", &Tensor::repr)
      .def("__len__", [](const Tensor& t) {
        if (t.ndim() == 0) fail<TypeError>("len() of a 0-d tensor");
        return t.shape()[0];
      })
      .def("__bool__", [](const Tensor& t) {
        if (t.numel() != 1)
          fail<ValueError>("bool: the truth value of a tensor with ", t.numel(),
                           " elements is ambiguous; use .any() or .all()");
        return t.item_double() != 0;
      })
      .def("__float__", [](const Tensor& t) { return t.item_double(); })
      .def("__int__", [](const Tensor& t) { return t.item_int(); })
      .def("__index__", [](const Tensor& t) {
        if (!is_integral(t.dtype()) || t.numel() != 1)
          fail<TypeError>("only one-element integer tensors can be used as an index");
        return t.item_int();
      })
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<intptr_t>(t.impl()); })
      .def("__getitem__", [](const Tensor& t, py::handle key) { return index(t, to_index(key)); })
      .def("__setitem__", [](const Tensor& t, py::handle key, py::handle value) {
        index_assign(t, to_index(key), to_tensor(value, "index_assign"));
      })
      .def_property_readonly("T", [](const Tensor& t) { return transpose(t); })
      .def_property_readonly("mT", [](const Tensor& t) { return swapaxes(t, -1, -2); });

  // Operators with Python scalars, NumPy arrays and lists on either side.
#define PCP_BINOP(py_name, fn) \
  cls.def(py_name, [](const Tensor& a, py::handle b) { return fn(a, operand(b, a, #fn)); }, py::is_operator())
#define PCP_RBINOP(py_name, fn) \
  cls.def(py_name, [](const Tensor& a, py::handle b) { return fn(operand(b, a, #fn), a); }, py::is_operator())
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
  PCP_BINOP("__and__", logical_and);
  PCP_BINOP("__or__", logical_or);
#undef PCP_BINOP
#undef PCP_RBINOP
  cls.def("__neg__", [](const Tensor& a) { return neg(a); });
  cls.def("__abs__", [](const Tensor& a) { return abs(a); });
  cls.def("__invert__", [](const Tensor& a) { return logical_not(a); });
}

}  // namespace pcp::bindings
