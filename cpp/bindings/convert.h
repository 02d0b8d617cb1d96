// Argument conversion between Python objects and pcp types (the only logic the bindings hold).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "pcp/core/tensor.h"
#include "pcp/ops/ops.h"

namespace py = pybind11;

namespace pcp::bindings {

// A Python int argument (int, NumPy integer, anything with __index__) of any size. It converts
// to int64_t inside the call, so a value out of range raises an OverflowError naming the op
// instead of failing pybind11's overload resolution with a list of signatures.
struct Int {
  int64_t value = 0;
  std::string too_big;  // the value's text when it does not fit in int64
  operator int64_t() const;
  int64_t clamped() const;  // to int64's range (where NumPy accepts any int: tril's k, split points)
};
// A Python str argument, and only a str: pybind11 turns bytes into std::string as well, so a
// name given as b'high' would pass unseen (NumPy and PyTorch refuse it); a TypeError instead.
struct Str {
  std::string value;
  operator const std::string&() const { return value; }
};
inline std::optional<int64_t> opt(const std::optional<Int>& v) {
  return v ? std::optional<int64_t>(int64_t(*v)) : std::nullopt;
}
// Whether h is an integer for shapes, axes and indices: int or __index__, not bool or float.
bool is_int_like(py::handle h);
// h (is_int_like) as int64; an OverflowError naming `what` when it does not fit.
int64_t int_of(py::handle h, const char* what);
int64_t int_clamped(py::handle h);

// Tensor, Python scalar (weak), NumPy array, or (nested) list -> Tensor.
Tensor to_tensor(py::handle obj, const char* op);
// Like to_tensor, but None -> undefined Tensor.
Tensor to_tensor_or_none(py::handle obj, const char* op);
// DType, "float32", numpy dtype or Python type -> DType.
DType to_dtype(py::handle obj);
std::optional<DType> to_dtype_opt(py::handle obj);
// None | int | sequence of ints -> Axes.
Axes to_axes(py::handle obj);
// int, sequence of ints, or varargs of ints -> Shape.
Shape to_shape(py::handle obj);
Shape shape_from_args(const py::args& args);
// NumPy array copied into a new tensor (cast to dtype when given).
Tensor from_numpy_copy(py::array arr, std::optional<DType> dtype, const char* op);
// Data for a tensor of `dtype` (pcp.tensor(data, dtype)): lists and scalars convert straight to
// it, so float64 and int64 keep every bit (no float32 on the way).
Tensor to_tensor_as(py::handle data, DType dtype, const char* op);
// The other operand of an operator or the value of t[...] = value: lists of floats become t's
// floating dtype (float32 otherwise), NumPy arrays keep theirs; both move to t's device.
Tensor to_tensor_like(py::handle obj, const Tensor& like, const char* op);
py::tuple shape_tuple(const Shape& s);
std::vector<IndexItem> to_index(py::handle key);

void register_errors();
// Each binds its part of pcp._core; the op functions that NumPy and PyTorch also have as array
// methods are bound as Tensor methods in the same place, from the same code.
py::class_<Tensor> bind_tensor(py::module_& m);
void bind_ops(py::module_& m, py::class_<Tensor>& cls);
void bind_interop(py::module_& m, py::class_<Tensor>& cls);
void bind_optim(py::module_& m);
void bind_plan(py::module_& m);

}  // namespace pcp::bindings

namespace pybind11::detail {
template <>
struct type_caster<pcp::bindings::Int> {
  PYBIND11_TYPE_CASTER(pcp::bindings::Int, const_name("int"));
  bool load(handle src, bool) {
    if (!pcp::bindings::is_int_like(src)) return false;
    object i = reinterpret_steal<object>(PyNumber_Index(src.ptr()));
    if (!i) {
      PyErr_Clear();
      return false;
    }
    int overflow = 0;
    value.value = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow) value.too_big = std::string(str(i));
    return true;
  }
  static handle cast(const pcp::bindings::Int& v, return_value_policy, handle) { return PyLong_FromLongLong(v.value); }
};
}  // namespace pybind11::detail

namespace pybind11::detail {
template <>
struct type_caster<pcp::bindings::Str> {
  PYBIND11_TYPE_CASTER(pcp::bindings::Str, const_name("str"));
  bool load(handle src, bool) {
    if (!src || !PyUnicode_Check(src.ptr())) return false;
    value.value = src.cast<std::string>();
    return true;
  }
  static handle cast(const pcp::bindings::Str& s, return_value_policy, handle) {
    return PyUnicode_FromStringAndSize(s.value.data(), Py_ssize_t(s.value.size()));
  }
};
}  // namespace pybind11::detail
