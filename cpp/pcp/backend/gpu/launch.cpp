#include "pcp/backend/gpu/launch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

Buffer* buffer_of(const Tensor& t) { return static_cast<Buffer*>(t.storage()->data()); }

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > int64_t(std::numeric_limits<uint32_t>::max()))
    fail<NotImplementedError>("gpu: ", what, " ", v, " does not fit the kernels' 32-bit indexing");
  return uint32_t(v);
}

uint32_t max_groups() {
  const char* env = std::getenv("PCP_GPU_MAX_GROUPS");
  const long v = env ? std::strtol(env, nullptr, 10) : 65535;
  return uint32_t(v >= 1 && v <= 65535 ? v : 65535);
}

uint32_t groups(int64_t n) { return uint32_t(std::min<int64_t>((n + kGroup - 1) / kGroup, max_groups())); }

void require_f32(const char* op, const Tensor& t) {
  if (t.dtype() != DType::Float32)
    fail<NotImplementedError>(op, ": ", dtype_name(t.dtype()), " is not supported on ", t.device().str(),
                              " yet (float32 only)");
}

uint32_t type_code(const char* op, const Tensor& t) {
  switch (t.dtype()) {
    case DType::Float32: return 0;
    case DType::Int32: return 1;
    case DType::Bool: return 2;
    case DType::Float16: return 3;
    case DType::BFloat16: return 4;
    default:
      fail<NotImplementedError>(op, ": ", dtype_name(t.dtype()), " is not supported on ", t.device().str(),
                                " yet (float32, float16, bfloat16, int32 and bool)");
  }
}

int64_t per_word(const Tensor& t) { return 4 / int64_t(t.itemsize()); }

bool word_aligned(const Tensor& out) { return out.is_contiguous() && out.offset() % per_word(out) == 0; }

bool is_half(const Tensor& t) { return t.defined() && (t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16); }
bool wide_io(const Tensor& t) { return t.dtype() == DType::Float32 || is_half(t); }

Tensor bool_as_int32(const Tensor& t) {
  if (!t.defined() || t.dtype() != DType::Bool) return t;
  Tensor i = Tensor::empty(t.shape(), DType::Int32, t.device());
  cast(t, i);
  return i;
}

Tensor widened(const Tensor& t) {
  if (!is_half(t)) return t;
  Tensor f = Tensor::empty(t.shape(), DType::Float32, t.device());
  cast(t, f);
  return f;
}



Layout layout(const char* op, const Shape& shape, const std::vector<Strides>& strides) {
  std::vector<int64_t> s;
  std::vector<std::vector<int64_t>> st(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !s.empty();
    for (size_t k = 0; k < strides.size() && merge; ++k) merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      s.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) st[k].back() = strides[k][d];
    } else {
      s.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) st[k].push_back(strides[k][d]);
    }
  }
  if (s.size() > size_t(kMaxDims))
    fail<NotImplementedError>(op, ": more than ", kMaxDims, " non-mergeable dimensions on the GPU");
  Layout l;
  l.ndim = uint32_t(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    l.shape[d] = u32(s[d], "dimension");
    for (size_t k = 0; k < strides.size(); ++k) l.strides[k][d] = int32_t(st[k][d]);
  }
  return l;
}

void put_dims(const Layout& l, uint32_t* shape, std::initializer_list<int32_t*> strides) {
  std::memcpy(shape, l.shape, sizeof l.shape);
  int k = 0;
  for (int32_t* st : strides) std::memcpy(st, l.strides[k++], sizeof l.strides[0]);
}

int64_t vec4_period(const Tensor& t, const Shape& shape) {
  if (t.numel() == 1) return 0;
  if (!t.is_contiguous() || t.offset() % 4 || t.numel() % 4) return -1;
  const Shape& s = t.shape();
  size_t lead = 0;
  while (lead < s.size() && s[lead] == 1) ++lead;
  const size_t k = s.size() - lead;
  if (k > shape.size()) return -1;
  for (size_t i = 0; i < k; ++i)
    if (s[lead + i] != shape[shape.size() - k + i]) return -1;
  return t.numel() / 4;
}

bool vec4_aligned(const Tensor& x, const Tensor& out) {
  return x.is_contiguous() && out.is_contiguous() && x.offset() % 4 == 0 && out.offset() % 4 == 0 &&
         out.numel() % 4 == 0;
}


void launch_rows(const Tensor& any, const char* kernel, const std::vector<Buffer*>& bufs, const void* push,
                 size_t bytes, int64_t rows) {
  if (rows > 0) rt().dispatch(any.device().index, kernel, bufs, push, bytes, uint32_t(std::min<int64_t>(rows, max_groups())));
}

Tensor upload_ints(const std::vector<int32_t>& v, Device device) {
  Tensor t = Tensor::empty({int64_t(v.size())}, DType::Int32, device);
  if (!v.empty()) rt().upload(device.index, buffer_of(t), 0, v.data(), v.size() * 4);
  return t;
}

Tensor upload_indices(const Tensor& idx, Device device) {
  const int64_t* p = idx.data<int64_t>();
  std::vector<int32_t> v(size_t(idx.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = int32_t(p[i]);
  return upload_ints(v.empty() ? std::vector<int32_t>{0} : v, device);
}

}  // namespace pcp::gpu
