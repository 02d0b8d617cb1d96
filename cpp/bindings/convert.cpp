#include "convert.h"

#include <cstring>

#include "pcp/core/error.h"

namespace pcp::bindings {

static std::optional<DType> numpy_kind_to_dtype(const py::dtype& dt) {
  char kind = dt.kind();
  size_t size = dt.itemsize();
  if (kind == 'b') return DType::Bool;
  if (kind == 'f') {
    if (size == 2) return DType::Float16;
    if (size == 4) return DType::Float32;
    if (size == 8) return DType::Float64;
  }
  if (kind == 'i' && size == 4) return DType::Int32;
  if (kind == 'i' && size == 8) return DType::Int64;
  return std::nullopt;
}

Tensor from_numpy_copy(py::array arr, std::optional<DType> dtype) {
  auto native = numpy_kind_to_dtype(arr.dtype());
  if (!native) {
    char kind = arr.dtype().kind();
    if (kind == 'i' || kind == 'u') {
      arr = py::array::ensure(arr.attr("astype")("int64"));
      native = DType::Int64;
    } else {
      fail<TypeError>("tensor: unsupported NumPy dtype '", std::string(py::str(arr.dtype())),
                      "' (expected bool, int32, int64, float16, float32 or float64)");
    }
  }
  py::array c = py::array::ensure(arr, py::array::c_style | py::array::forcecast);
  Shape shape(c.shape(), c.shape() + c.ndim());
  Tensor t = Tensor::empty(shape, *native);
  if (t.numel()) std::memcpy(t.raw_data(), c.data(), size_t(t.numel()) * t.itemsize());
  return dtype && *dtype != *native ? astype(t, *dtype) : t;
}

Tensor to_tensor(py::handle obj, const char* op) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::isinstance<py::bool_>(obj)) return weak_scalar_bool(obj.cast<bool>());
  if (py::isinstance<py::int_>(obj)) {
    try {
      return weak_scalar_int(obj.cast<int64_t>());
    } catch (const py::cast_error&) {
      fail<ValueError>(op, ": Python integer ", std::string(py::str(obj)), " does not fit in int64");
    }
  }
  if (py::isinstance<py::float_>(obj)) return weak_scalar(obj.cast<double>());
  if (py::isinstance<py::array>(obj)) return from_numpy_copy(py::reinterpret_borrow<py::array>(obj), std::nullopt);
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::array a = py::module_::import("numpy").attr("asarray")(obj);
    // Python floats become float32 (the default float), as in PyTorch.
    if (a.dtype().kind() == 'f') return from_numpy_copy(a, kDefaultFloat);
    return from_numpy_copy(a, std::nullopt);
  }
  if (py::hasattr(obj, "__array__") || py::hasattr(obj, "__dlpack__")) {
    py::array a = py::module_::import("numpy").attr("asarray")(obj);
    return from_numpy_copy(a, std::nullopt);
  }
  fail<TypeError>(op, ": expected a Tensor, a Python number, a NumPy array or a list, got ",
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Tensor to_tensor_or_none(py::handle obj, const char* op) {
  if (obj.is_none()) return Tensor();
  return to_tensor(obj, op);
}

DType to_dtype(py::handle obj) {
  if (py::isinstance<DType>(obj)) return obj.cast<DType>();
  if (py::isinstance<py::str>(obj)) return dtype_from_name(obj.cast<std::string>());
  if (obj.ptr() == (PyObject*)&PyFloat_Type) return kDefaultFloat;
  if (obj.ptr() == (PyObject*)&PyLong_Type) return kDefaultInt;
  if (obj.ptr() == (PyObject*)&PyBool_Type) return DType::Bool;
  try {
    py::dtype dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(obj));
    if (auto d = numpy_kind_to_dtype(dt)) return *d;
  } catch (const py::error_already_set&) {
  }
  fail<TypeError>("unsupported dtype ", std::string(py::repr(obj)),
                  " (expected pcp.float32, 'float32', a NumPy dtype, float, int or bool)");
}

std::optional<DType> to_dtype_opt(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return to_dtype(obj);
}

Axes to_axes(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (py::isinstance<py::int_>(obj)) return std::vector<int64_t>{obj.cast<int64_t>()};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    std::vector<int64_t> out;
    for (py::handle h : obj) {
      if (!py::isinstance<py::int_>(h))
        fail<TypeError>("axis must be an int or a tuple of ints, got an element of type ",
                        std::string(py::str(py::type::of(h).attr("__name__"))));
      out.push_back(h.cast<int64_t>());
    }
    return out;
  }
  fail<TypeError>("axis must be None, an int or a tuple of ints, got ",
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Shape to_shape(py::handle obj) {
  if (py::isinstance<py::int_>(obj)) return {obj.cast<int64_t>()};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    Shape s;
    for (py::handle h : obj) {
      if (!py::isinstance<py::int_>(h))
        fail<TypeError>("shape must be a sequence of ints, got an element of type ",
                        std::string(py::str(py::type::of(h).attr("__name__"))));
      s.push_back(h.cast<int64_t>());
    }
    return s;
  }
  fail<TypeError>("shape must be an int or a sequence of ints, got ",
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Shape shape_from_args(const py::args& args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) return to_shape(args[0]);
  return to_shape(args);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

static IndexItem to_index_item(py::handle h) {
  IndexItem it{IndexItem::Slice, 0, {}, {}};
  if (h.is_none()) {
    it.kind = IndexItem::NewAxis;
  } else if (h.ptr() == Py_Ellipsis) {
    it.kind = IndexItem::Ellipsis;
  } else if (py::isinstance<py::bool_>(h)) {
    fail<IndexError>("index: a Python bool is not a valid index; use a boolean tensor");
  } else if (py::isinstance<py::int_>(h)) {
    it.kind = IndexItem::Int;
    it.index = h.cast<int64_t>();
  } else if (py::isinstance<py::slice>(h)) {
    auto get = [&](const char* name) -> std::optional<int64_t> {
      py::object v = h.attr(name);
      if (v.is_none()) return std::nullopt;
      if (!py::isinstance<py::int_>(v) && !py::hasattr(v, "__index__"))
        fail<TypeError>("index: slice indices must be integers or None");
      return v.cast<int64_t>();
    };
    it.slice.start = get("start");
    it.slice.stop = get("stop");
    it.slice.step = get("step").value_or(1);
  } else {
    it.kind = IndexItem::Array;
    it.array = to_tensor(h, "index");
  }
  return it;
}

std::vector<IndexItem> to_index(py::handle key) {
  std::vector<IndexItem> items;
  if (py::isinstance<py::tuple>(key))
    for (py::handle h : key) items.push_back(to_index_item(h));
  else
    items.push_back(to_index_item(key));
  return items;
}

}  // namespace pcp::bindings
