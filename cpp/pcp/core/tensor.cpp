#include "pcp/core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <utility>
#include <vector>

#include "pcp/core/error.h"
#include "pcp/core/half.h"
#include "pcp/core/device_memory.h"
#include "pcp/core/trace_hooks.h"

namespace pcp {

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  const int64_t nbytes = checked_nbytes(shape, pcp::itemsize(dtype), "empty");
  auto impl = std::make_shared<TensorImpl>();
  try {
    impl->storage = std::make_shared<Storage>(size_t(nbytes), device);
  } catch (const MemoryError& e) {
    fail<MemoryError>(e.what(), " for a tensor of shape ", shape_str(shape), " and dtype ", dtype_name(dtype));
  }
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                       int64_t offset, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

void Tensor::not_on_host() const {
  fail<NotImplementedError>("tensor of shape ", shape_str(shape()), " lives on ", device().str(),
                            ": this operation needs it on the CPU (use .to('cpu'))");
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int i = ndim() - 1; i >= 0; --i) {
    if (shape()[i] == 1) continue;
    if (strides()[i] != expected) return false;
    expected *= shape()[i];
  }
  return true;
}

bool Tensor::one_value() const {
  for (int i = 0; i < ndim(); ++i)
    if (shape()[i] > 1 && strides()[i] != 0) return false;
  return true;
}

bool Tensor::is_dense() const {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the axes longer than 1
  for (int i = 0; i < ndim(); ++i)
    if (shape()[i] > 1) dims.emplace_back(strides()[i], shape()[i]);
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

void Tensor::set_requires_grad(bool r) {
  if (r && !is_floating(dtype()))
    fail<TypeError>("requires_grad: only floating-point tensors can require gradients, got ",
                    dtype_name(dtype()));
  if (!r && !is_leaf())
    fail<ValueError>("requires_grad: cannot turn off gradients of a non-leaf tensor; use detach()");
  impl_->requires_grad = r;
}

Tensor Tensor::detach() const { return alias(shape(), strides(), offset()); }

Tensor Tensor::alias(const Shape& shape, const Strides& strides, int64_t offset) const {
  Tensor t = view_of(impl_->storage, shape, strides, offset, impl_->dtype);
  t.impl_->weak = impl_->weak;
  return t;
}

static double read_as_double(const void* p, DType dt) {
  switch (dt) {
    case DType::Bool: return *static_cast<const bool*>(p) ? 1.0 : 0.0;
    case DType::Int32: return *static_cast<const int32_t*>(p);
    case DType::Int64: return double(*static_cast<const int64_t*>(p));
    case DType::Float16: return half_to_float(*static_cast<const Half*>(p));
    case DType::BFloat16: return bf16_to_float(*static_cast<const BFloat16*>(p));
    case DType::Float32: return *static_cast<const float*>(p);
    case DType::Float64: return *static_cast<const double*>(p);
  }
  return 0;
}

// Integers exactly (int64 values above 2**53 do not survive a double).
static long long read_as_int(const void* p, DType dt) {
  if (dt == DType::Int64) return *static_cast<const int64_t*>(p);
  if (dt == DType::Int32) return *static_cast<const int32_t*>(p);
  return (long long)read_as_double(p, dt);
}

Tensor Tensor::host_copy() const {
  report_host_read(*this, "a read of its values on the host");
  if (!device().is_gpu()) return *this;
  // Download the span of storage this view touches, and view it with the same strides.
  int64_t lo = offset(), hi = offset();
  if (numel() > 0) view_span(shape(), strides(), offset(), &lo, &hi);
  const int64_t span = numel() > 0 ? hi - lo + 1 : 0;
  auto host = std::make_shared<Storage>(size_t(span) * itemsize(), cpu_device());
  memory_of(device()).read(device().index, storage()->data(), size_t(lo) * itemsize(), host->data(),
                           size_t(span) * itemsize());
  return view_of(host, shape(), strides(), offset() - lo, dtype());
}

double Tensor::item_double() const {
  if (!weak()) report_host_read(*this, "item()");
  if (device().is_gpu()) return host_copy().item_double();
  if (numel() != 1)
    fail<ValueError>("item: only a tensor with one element can be converted to a Python scalar, got shape ",
                     shape_str(shape()));
  return read_as_double(raw_data(), dtype());
}

int64_t Tensor::item_int() const {
  if (!weak()) report_host_read(*this, "item()");
  if (device().is_gpu()) return host_copy().item_int();
  if (numel() != 1)
    fail<ValueError>("item: only a tensor with one element can be converted to a Python scalar, got shape ",
                     shape_str(shape()));
  if (!is_floating(dtype())) return read_as_int(raw_data(), dtype());
  const double v = read_as_double(raw_data(), dtype());
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))  // NaN too
    fail<ValueError>("item: cannot convert ", v, " to an integer");
  return int64_t(v);
}

// %g without losing the decimal point ("1." rather than "1"), as NumPy prints floats.
static void format_float(char* buf, size_t n, double v, const char* fmt) {
  std::snprintf(buf, n, fmt, v);
  if (!std::strpbrk(buf, ".eni")) std::strncat(buf, ".", n - std::strlen(buf) - 1);
}

// repr: nested lists like NumPy, abbreviated for big tensors.
static void format_rec(std::ostringstream& os, const Tensor& t, int dim, int64_t offset, int indent) {
  const int64_t n = t.shape()[dim];
  const int64_t edge = 3;
  bool abbreviate = t.numel() > 1000 && n > 2 * edge;
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (abbreviate && i == edge) {
      os << "...";
      i = n - edge - 1;
      os << (dim + 1 == t.ndim() ? ", " : ",\n" + std::string(indent + 1, ' '));
      continue;
    }
    int64_t off = offset + i * t.strides()[dim];
    if (dim + 1 == t.ndim()) {
      const char* p = static_cast<const char*>(t.storage()->data()) + off * int64_t(t.itemsize());
      double v = read_as_double(p, t.dtype());
      char buf[64];
      if (t.dtype() == DType::Bool)
        std::snprintf(buf, sizeof buf, "%s", v ? "True" : "False");
      else if (!is_floating(t.dtype()))
        std::snprintf(buf, sizeof buf, "%lld", read_as_int(p, t.dtype()));
      else
        format_float(buf, sizeof buf, v, "%.4g");
      os << buf;
    } else {
      format_rec(os, t, dim + 1, off, indent + 1);
    }
    if (i + 1 < n) os << (dim + 1 == t.ndim() ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  os << "]";
}

std::string Tensor::repr() const {
  if (!defined()) return "tensor(undefined)";
  if (device().is_gpu()) {
    std::string r = host_copy().repr();
    return r.substr(0, r.size() - 1) + ", device=" + device().str() + ")";
  }
  std::ostringstream os;
  os << "tensor(";
  if (ndim() == 0) {
    const char* p = static_cast<const char*>(storage()->data()) + offset() * int64_t(itemsize());
    double v = read_as_double(p, dtype());
    if (dtype() == DType::Bool) os << (v ? "True" : "False");
    else if (!is_floating(dtype())) os << read_as_int(p, dtype());
    else { char buf[64]; format_float(buf, sizeof buf, v, "%.6g"); os << buf; }
  } else if (numel() == 0) {
    os << "[], shape=" << shape_str(shape());
  } else {
    format_rec(os, *this, 0, offset(), 7);
  }
  os << ", dtype=" << dtype_name(dtype());
  if (impl_->grad_fn) os << ", grad_fn=" << node_name(*impl_->grad_fn);
  else if (requires_grad()) os << ", requires_grad=True";
  os << ")";
  return os.str();
}

Strides broadcast_strides(const Tensor& x, const Shape& shape) {
  Strides st(shape.size(), 0);
  size_t off = shape.size() - size_t(x.ndim());
  for (int i = 0; i < x.ndim(); ++i) st[off + i] = x.shape()[i] == 1 ? 0 : x.strides()[i];
  return st;
}

}  // namespace pcp
