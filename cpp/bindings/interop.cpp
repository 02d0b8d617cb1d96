// Zero-copy exchange with NumPy (buffer views) and DLPack (PyTorch, NumPy, JAX, ...).
#include <cstring>

#include "convert.h"
#include "named.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"

namespace pcp::bindings {
namespace {

// DLPack ABI (dlpack.h v0.8, unversioned DLManagedTensor, as every consumer accepts).
struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
constexpr int32_t kDLCPU = 1;
enum : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

DLDataType to_dl(DType dt) {
  switch (dt) {
    case DType::Bool: return {kDLBool, 8, 1};
    case DType::Int32: return {kDLInt, 32, 1};
    case DType::Int64: return {kDLInt, 64, 1};
    case DType::Float16: return {kDLFloat, 16, 1};
    case DType::BFloat16: return {kDLBfloat, 16, 1};
    case DType::Float32: return {kDLFloat, 32, 1};
    case DType::Float64: return {kDLFloat, 64, 1};
  }
  return {};
}

DType from_dl(DLDataType t) {
  if (t.lanes != 1) fail<TypeError>("from_dlpack: vector dtypes (lanes=", t.lanes, ") are not supported");
  if ((t.code == kDLBool || t.code == kDLUInt) && t.bits == 8 && t.code == kDLBool) return DType::Bool;
  if (t.code == kDLInt && t.bits == 32) return DType::Int32;
  if (t.code == kDLInt && t.bits == 64) return DType::Int64;
  if (t.code == kDLFloat && t.bits == 16) return DType::Float16;
  if (t.code == kDLBfloat && t.bits == 16) return DType::BFloat16;
  if (t.code == kDLFloat && t.bits == 32) return DType::Float32;
  if (t.code == kDLFloat && t.bits == 64) return DType::Float64;
  fail<TypeError>("from_dlpack: unsupported dtype (code ", int(t.code), ", bits ", int(t.bits), ")");
}

struct ExportCtx {
  Tensor tensor;  // keeps the storage alive
  Shape shape;
  Strides strides;
};

py::capsule to_dlpack(const Tensor& t_in) {
  if (t_in.device().is_gpu())
    fail<BufferError>("__dlpack__: the tensor lives on ", t_in.device().str(),
                      ", whose memory no DLPack consumer can read; move it first with .to('cpu')");
  // A consumer may write through the capsule, which the version counter cannot see: a tensor
  // that a graph saved for backward is exported as a copy.
  const Tensor t = t_in.storage()->saved_count() > 0 ? copy(t_in.detach()) : t_in;
  auto* ctx = new ExportCtx{t.detach(), t.shape(), t.strides()};
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = t.storage()->data();
  m->dl_tensor.byte_offset = uint64_t(t.offset()) * t.itemsize();
  m->dl_tensor.device = {kDLCPU, 0};
  m->dl_tensor.ndim = t.ndim();
  m->dl_tensor.dtype = to_dl(t.dtype());
  m->dl_tensor.shape = ctx->shape.data();
  m->dl_tensor.strides = ctx->strides.data();
  m->manager_ctx = ctx;
  m->deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportCtx*>(self->manager_ctx);
    delete self;
  };
  // A consumer renames the capsule to "used_dltensor" and calls the deleter itself.
  return py::capsule(m, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (mt && mt->deleter) mt->deleter(mt);
    }
  });
}

Tensor from_dlpack(py::object obj) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>().detach();  // ours, on any device: shared as it is
  py::object cap_obj = obj;
  if (py::hasattr(obj, "__dlpack__")) {
    if (py::hasattr(obj, "__dlpack_device__")) {
      py::tuple dev = obj.attr("__dlpack_device__")();
      if (dev[0].cast<int>() != kDLCPU)
        fail<BufferError>("from_dlpack: only CPU tensors can be imported, got DLPack device type ", dev[0].cast<int>(),
                          " (copy it to the CPU first)");
    }
    cap_obj = obj.attr("__dlpack__")();
  }
  PyObject* cap = cap_obj.ptr();
  if (!PyCapsule_IsValid(cap, "dltensor"))
    fail<TypeError>("from_dlpack: expected an object with __dlpack__ or an unused 'dltensor' capsule");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
  const DLTensor& dl = m->dl_tensor;
  if (dl.device.device_type != kDLCPU)
    fail<BufferError>("from_dlpack: only CPU tensors can be imported, got DLPack device type ", dl.device.device_type);
  if (dl.ndim < 0 || (dl.ndim > 0 && !dl.shape)) fail<ValueError>("from_dlpack: malformed tensor (ndim ", dl.ndim, ")");
  DType dt = from_dl(dl.dtype);
  Shape shape(dl.shape, dl.shape + dl.ndim);
  check_shape(shape, "from_dlpack");
  Strides strides = dl.strides ? Strides(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  const size_t isz = itemsize(dt);
  if (dl.byte_offset % isz != 0) fail<ValueError>("from_dlpack: byte_offset is not a multiple of the item size");
  PyCapsule_SetName(cap, "used_dltensor");
  auto storage = std::make_shared<Storage>(dl.data, 0, cpu_device(), [m] {
    if (m->deleter) m->deleter(m);
  });
  return Tensor::view_of(storage, shape, strides, int64_t(dl.byte_offset / isz), dt);
}

const char* numpy_name(DType dt) {
  if (dt == DType::BFloat16)
    fail<TypeError>("numpy: NumPy has no bfloat16; convert first with .astype(pcp.float32)");
  return dtype_name(dt);
}

}  // namespace

// A NumPy array viewing t's memory; the capsule base keeps the storage alive.
py::array to_numpy(const Tensor& t_in) {
  Tensor t = t_in;
  if (t_in.device().is_gpu()) {  // a host copy (no sharing across devices); other threads run while it waits for the GPU
    py::gil_scoped_release release;
    t = t_in.host_copy();
  }
  const size_t isz = t.itemsize();
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(py::ssize_t(s * int64_t(isz)));
  auto* keep = new Tensor(t.detach());
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  py::array out(py::dtype(numpy_name(t.dtype())), shape, strides, t.raw_data(), base);
  // Writes through NumPy bypass the version counter: while a graph saved this memory for
  // backward, the view is read-only (NumPy then refuses the write with a clear error).
  if (t.storage()->saved_count() > 0) out.attr("flags").attr("writeable") = false;
  return out;
}

Tensor from_numpy_shared(py::object obj) {
  if (!py::isinstance<py::array>(obj))
    fail<TypeError>("from_numpy: expected a NumPy array, got ", std::string(py::str(py::type::of(obj).attr("__name__"))));
  py::array arr = py::reinterpret_borrow<py::array>(obj);
  // PCP tensors are writable: a read-only array (np.frombuffer of bytes, a read-only memmap) is
  // copied, as is one in non-native byte order or not aligned to its items; NumPy's warning
  // tells the user their writes will not reach the array.
  const bool writeable = arr.attr("flags").attr("writeable").cast<bool>();
  const bool aligned = arr.attr("flags").attr("aligned").cast<bool>();
  if (!writeable || !aligned || !arr.dtype().attr("isnative").cast<bool>()) {
    PyErr_WarnEx(PyExc_UserWarning,
                 !writeable ? "from_numpy: the array is read-only, so PCP copied it (writes to the tensor will not reach it)"
                            : "from_numpy: the array is unaligned or not in native byte order, so PCP copied it",
                 1);
    return from_numpy_copy(arr, std::nullopt, "from_numpy");
  }
  py::dtype dt = arr.dtype();
  DType d;
  try {
    d = to_dtype(dt);
  } catch (const pcp::Error&) {
    fail<TypeError>("from_numpy: unsupported dtype '", std::string(py::str(dt)),
                    "' (expected bool, int32, int64, float16, float32 or float64)");
  }
  const size_t isz = itemsize(d);
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  Strides strides;
  for (int i = 0; i < arr.ndim(); ++i) {
    if (arr.strides()[i] % py::ssize_t(isz) != 0)
      fail<ValueError>("from_numpy: strides ", arr.strides()[i], " are not a multiple of the item size ", isz);
    strides.push_back(arr.strides()[i] / py::ssize_t(isz));
  }
  py::object owner = arr;
  auto storage = std::make_shared<Storage>(arr.mutable_data(), 0, cpu_device(), [owner]() mutable {
    py::gil_scoped_acquire gil;
    owner = py::object();
  });
  return Tensor::view_of(storage, shape, strides, 0, d);
}

void bind_interop(py::module_& m, py::class_<Tensor>& cls) {
  def(m, "from_numpy", from_numpy_shared, py::arg("array"));  
  def(m, "from_dlpack", from_dlpack, py::arg("obj"));

  // NumPy's and DLPack's protocols.
  cls.attr("__array_priority__") = 1000;  // NumPy defers binary operators to Tensor
  cls.def("__array__", named("__array__", [](const Tensor& t, py::object dtype, py::object copy) -> py::object {
    report_host_read(t, "numpy.asarray()");
    py::object a = to_numpy(t.dtype() == DType::BFloat16 ? astype(t, DType::Float32) : t);  // NumPy has no bfloat16
    if (!dtype.is_none()) a = a.attr("astype")(dtype, py::arg("copy") = false);
    return !copy.is_none() && copy.cast<bool>() ? a.attr("copy")() : a;
  }), py::arg("dtype") = py::none(), py::arg("copy") = py::none(), py::doc(tensor_doc("__array__")));
  cls.def("__dlpack__", named("__dlpack__", [](const Tensor& t, py::object, py::object, py::object, py::object copy) {
    report_host_read(t, "__dlpack__ (sharing its memory)");
    // Negative strides are legal in DLPack but some consumers abort on them (PyTorch): such
    // views are exported as a copy.
    bool negative = false;
    for (int64_t s : t.strides()) negative = negative || s < 0;
    const bool want_copy = !copy.is_none() && copy.cast<bool>();
    return to_dlpack(want_copy || negative ? pcp::copy(t.detach()) : t);
  }), py::arg("stream") = py::none(), py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
      py::arg("copy") = py::none(), py::doc(tensor_doc("__dlpack__")));
  cls.def("__dlpack_device__", [](const Tensor& t) {
    // kDLVulkan (kDLMetal on macOS): consumers see a device they cannot read and refuse it.
    if (!t.device().is_gpu()) return py::make_tuple(1, 0);  // kDLCPU
    const bool metal = t.device().str().rfind("metal", 0) == 0;
    return py::make_tuple(metal ? 8 : 7, t.device().index);
  }, py::doc(tensor_doc("__dlpack_device__")));
}

}  // namespace pcp::bindings
