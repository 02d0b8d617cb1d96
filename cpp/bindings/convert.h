// Argument conversion between Python objects and pcp types (the only logic the bindings hold).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "pcp/core/tensor.h"
#include "pcp/ops/ops.h"

namespace py = pybind11;

namespace pcp::bindings {

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
// NumPy array copied into a new tensor.
Tensor from_numpy_copy(py::array arr, std::optional<DType> dtype);
py::tuple shape_tuple(const Shape& s);
std::vector<IndexItem> to_index(py::handle key);

void bind_tensor(py::module_& m);
void bind_ops(py::module_& m);
void bind_interop(py::module_& m);
void bind_optim(py::module_& m);

}  // namespace pcp::bindings
