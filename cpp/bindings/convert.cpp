#include "convert.h"

#include <cstring>

#include "pcp/core/error.h"

namespace pcp::bindings {

Int::operator int64_t() const {
  if (!too_big.empty()) fail<OverflowError>("Python integer ", too_big, " does not fit in int64");
  return value;
}

int64_t Int::clamped() const {
  if (too_big.empty()) return value;
  return too_big[0] == '-' ? INT64_MIN : INT64_MAX;
}

int64_t int_clamped(py::handle h) {
  const Py_ssize_t i = PyNumber_AsSsize_t(h.ptr(), nullptr);  // clamps on overflow
  if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
  return int64_t(i);
}

bool is_int_like(py::handle h) {
  PyObject* p = h.ptr();  // NumPy arrays have __index__ too (for one element): they are arrays here
  return p && !PyBool_Check(p) && !PyFloat_Check(p) && PyIndex_Check(p) && !py::isinstance<py::array>(h);
}

int64_t int_of(py::handle h, const char* what) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) fail<OverflowError>(what, " ", std::string(py::str(i)), " does not fit in int64");
  return v;
}

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

// arr in native byte order with a dtype PCP stores: other integer widths widen to int64
// exactly (uint64 values above int64's range raise OverflowError); big-endian data is swapped.
static py::array storable(py::array arr, DType* native, const char* op) {
  const char kind = arr.dtype().kind();
  if (kind == 'u' && arr.dtype().itemsize() == 8 && arr.size() > 0 &&
      py::int_(arr.attr("max")()).cast<unsigned long long>() > uint64_t(INT64_MAX))
    fail<OverflowError>(op, ": uint64 value ", std::string(py::str(arr.attr("max")())), " does not fit in int64");
  if (auto d = numpy_kind_to_dtype(arr.dtype())) {
    *native = *d;
  } else if (kind == 'i' || kind == 'u') {
    *native = DType::Int64;
    return py::array::ensure(arr.attr("astype")("int64"));
  } else {
    fail<TypeError>(op, ": unsupported NumPy dtype '", std::string(py::str(arr.dtype())),
                    "' (expected bool, integers, float16, float32 or float64)");
  }
  if (!arr.dtype().attr("isnative").cast<bool>())
    return py::array::ensure(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
  return arr;
}

Tensor from_numpy_copy(py::array arr, std::optional<DType> dtype, const char* op) {
  DType native;
  py::array c = py::array::ensure(storable(arr, &native, op), py::array::c_style);
  Shape shape(c.shape(), c.shape() + c.ndim());
  Tensor t = Tensor::empty(shape, native);
  if (t.numel()) {
    py::gil_scoped_release release;  // c stays alive; other threads run while a large array is copied
    std::memcpy(t.raw_data(), c.data(), size_t(t.numel()) * t.itemsize());
  }
  return dtype && *dtype != native ? astype(t, *dtype) : t;
}

// A list or tuple through NumPy's conversion (ints int64, floats float64, bools bool); ints too
// large for int64 (an object array) raise OverflowError.
static py::array list_to_array(py::handle obj, const char* op) {
  py::array a;
  try {
    a = py::module_::import("numpy").attr("asarray")(obj);
  } catch (py::error_already_set& e) {  // ragged lists
    if (!e.matches(PyExc_ValueError)) throw;
    fail<ValueError>(op, ": ", std::string(py::str(e.value())));
  }
  // NumPy turns ints beyond int64 into float64 ([1, 2**63]) or objects: refuse them instead.
  const char kind = a.dtype().kind();
  const bool huge = kind == 'f' && a.size() > 0 &&
                    (py::float_(a.attr("max")()).cast<double>() >= 9.2e18 || py::float_(a.attr("min")()).cast<double>() < -9.2e18);
  if (huge || kind == 'O') {
    py::array objs = py::module_::import("numpy").attr("asarray")(obj, "object");
    for (py::handle item : objs.attr("ravel")())
      if (is_int_like(item)) int_of(item, "Python integer");
  }
  if (kind == 'O') {
    fail<TypeError>(op, ": cannot convert a list of non-numeric or ragged values (expected numbers, or nested "
                    "lists of one length)");
  }
  return a;
}

static bool is_python_number(py::handle obj) {
  return py::isinstance<py::bool_>(obj) || py::isinstance<py::int_>(obj) || py::isinstance<py::float_>(obj);
}

Tensor to_tensor(py::handle obj, const char* op) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::isinstance<py::bool_>(obj)) return weak_scalar_bool(obj.cast<bool>());
  if (py::isinstance<py::int_>(obj)) return weak_scalar_int(int_of(obj, "Python integer"));
  if (py::isinstance<py::float_>(obj)) return weak_scalar(obj.cast<double>());
  if (py::isinstance<py::array>(obj))
    return from_numpy_copy(py::reinterpret_borrow<py::array>(obj), std::nullopt, op);
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::array a = list_to_array(obj, op);
    // Python floats become float32 (the default float), as in PyTorch.
    return from_numpy_copy(a, a.dtype().kind() == 'f' ? std::optional<DType>(kDefaultFloat) : std::nullopt, op);
  }
  if (py::hasattr(obj, "__array__") || py::hasattr(obj, "__dlpack__")) {
    py::array a = py::module_::import("numpy").attr("asarray")(obj);
    return from_numpy_copy(a, std::nullopt, op);
  }
  fail<TypeError>(op, ": expected a Tensor, a Python number, a NumPy array or a list, got ",
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Tensor to_tensor_as(py::handle data, DType dtype, const char* op) {
  const bool numpy_scalar = py::isinstance(data, py::module_::import("numpy").attr("generic"));
  if (!is_python_number(data) && !numpy_scalar && !py::isinstance<py::list>(data) && !py::isinstance<py::tuple>(data))
    return astype(to_tensor(data, op), dtype);
  // NumPy converts straight to the type and raises for what does not fit (OverflowError for
  // 2**40 into int32, ValueError for NaN into an integer); bfloat16 goes through float64.
  const char* np_name = dtype == DType::BFloat16 ? "float64" : dtype_name(dtype);
  py::array a;
  try {
    a = py::module_::import("numpy").attr("asarray")(data, np_name);
  } catch (py::error_already_set& e) {
    const std::string what = py::str(e.value());
    if (e.matches(PyExc_OverflowError)) fail<OverflowError>(op, ": ", what);
    if (e.matches(PyExc_ValueError)) fail<ValueError>(op, ": ", what);
    if (e.matches(PyExc_TypeError)) fail<TypeError>(op, ": ", what);
    throw;
  }
  return from_numpy_copy(a, dtype, op);
}

Tensor to_tensor_like(py::handle obj, const Tensor& like, const char* op) {
  if (py::isinstance<Tensor>(obj) || is_python_number(obj)) return to_tensor(obj, op);
  Tensor t;
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::array a = list_to_array(obj, op);
    const bool floats = a.dtype().kind() == 'f';
    t = from_numpy_copy(a, floats ? std::optional<DType>(is_floating(like.dtype()) ? like.dtype() : kDefaultFloat)
                                  : std::nullopt, op);
  } else {
    t = to_tensor(obj, op);
  }
  return to_device(t, like.device());
}

Tensor to_tensor_or_none(py::handle obj, const char* op) {
  if (obj.is_none()) return Tensor();
  return to_tensor(obj, op);
}

DType to_dtype(py::handle obj) {
  if (obj.is_none()) fail<TypeError>("expected a dtype, got None");  // NumPy would read it as float64
  if (py::isinstance<DType>(obj)) {
    const DType d = obj.cast<DType>();  // pybind11 enums can be made from any int
    if (int(d) < 0 || int(d) >= kNumDTypes) fail<TypeError>("unknown dtype ", std::string(py::repr(obj)));
    return d;
  }
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
  if (is_int_like(obj)) return std::vector<int64_t>{int_of(obj, "axis")};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    std::vector<int64_t> out;
    for (py::handle h : obj) {
      if (!is_int_like(h))
        fail<TypeError>("axis must be an int or a tuple of ints, got an element of type ",
                        std::string(py::str(py::type::of(h).attr("__name__"))));
      out.push_back(int_of(h, "axis"));
    }
    return out;
  }
  fail<TypeError>("axis must be None, an int or a tuple of ints, got ",
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Shape to_shape(py::handle obj) {
  if (is_int_like(obj)) return {int_of(obj, "dimension")};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    Shape s;
    for (py::handle h : obj) {
      if (!is_int_like(h))
        fail<TypeError>("shape must be a sequence of ints, got an element of type ",
                        std::string(py::str(py::type::of(h).attr("__name__"))));
      s.push_back(int_of(h, "dimension"));
    }
    return s;
  }
  fail<TypeError>("shape must be an int or a sequence of ints, got ",
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Shape shape_from_args(const py::args& args) {
  if (args.size() == 1 && !is_int_like(args[0])) return to_shape(args[0]);
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
  } else if (is_int_like(h) && !py::isinstance<Tensor>(h)) {
    it.kind = IndexItem::Int;
    try {
      it.index = int_of(h, "index");
    } catch (const OverflowError&) {
      fail<IndexError>("index: index ", std::string(py::str(h)), " is out of bounds");
    }
  } else if (py::isinstance<py::slice>(h)) {
    auto get = [&](const char* name) -> std::optional<int64_t> {
      py::object v = h.attr(name);
      if (v.is_none()) return std::nullopt;
      if (!is_int_like(v)) fail<TypeError>("index: slice indices must be integers or None");
      return int_clamped(v);  // huge bounds clamp, as NumPy's slices
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
