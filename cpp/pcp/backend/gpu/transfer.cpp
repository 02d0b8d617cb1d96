// GPU transfers and layout changes: host <-> device copies, fills, strided copies and casts.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/multi_tensor.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

namespace {
// x itself when contiguous, else a contiguous host copy.
Tensor contiguous_host(const Tensor& x) {
  if (x.is_contiguous()) return x;
  Tensor c = Tensor::empty(x.shape(), x.dtype());
  cpu::cast_copy(x, c);
  return c;
}
}  // namespace

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  if (!x.device().is_gpu()) {  // host -> device
    Tensor src = contiguous_host(x);
    Tensor out = Tensor::empty(x.shape(), x.dtype(), device);
    rt().upload(device.index, buffer_of(out), 0, src.raw_data(), size_t(src.numel()) * src.itemsize());
    return out;
  }
  Tensor host = contiguous_host(x.host_copy());  // device -> host (then on to another device, if asked)
  return device.is_gpu() ? gpu::to_device(host, device) : host;
}

void fill(const Tensor& out, double value) {
  if (is_wide(out)) {
    require_wide("full", out);
    return wide::fill(out, value);
  }
  if (out.dtype() == DType::Bool || is_half(out)) {  // sub-word elements: through a cast
    Tensor full = Tensor::empty(out.shape(), out.dtype() == DType::Bool ? DType::Int32 : DType::Float32, out.device());
    fill(full, out.dtype() == DType::Bool ? double(value != 0) : value);
    return cast(full, out);
  }
  uint32_t bits;
  if (out.dtype() == DType::Float32) {
    float f = float(value);
    std::memcpy(&bits, &f, 4);
  } else if (out.dtype() == DType::Int32) {
    bits = uint32_t(int32_t(value));
  } else {
    fail<NotImplementedError>("full: ", dtype_name(out.dtype()), " tensors cannot be created on ", out.device().str(),
                              " yet (float32, float16, bfloat16, int32 and bool only)");
  }
  struct { uint32_t n, offset, value; } p{u32(out.numel(), "size"), u32(out.offset(), "offset"), bits};
  if (out.numel()) launch(out, "fill", {buffer_of(out)}, p, out.numel());
}

namespace {

// The layout of a cast or copy from x into out in units of 4 elements, when both are float32,
// float16 or bfloat16 with their innermost (merged) dimension contiguous and a multiple of 4,
// and every other stride and both offsets multiples of 4 (cast4s.comp); nullopt otherwise.
std::optional<Layout> layout4(const char* op, const Tensor& x, const Tensor& out) {
  if (!wide_io(x) || !wide_io(out) || x.offset() % 4 || out.offset() % 4) return std::nullopt;
  Layout l = layout(op, x.shape(), {x.strides(), out.strides()});
  if (l.ndim == 0) return std::nullopt;
  const uint32_t last = l.ndim - 1;
  if (l.strides[0][last] != 1 || l.strides[1][last] != 1 || l.shape[last] % 4) return std::nullopt;
  for (uint32_t d = 0; d < last; ++d)
    for (int k = 0; k < 2; ++k) {
      if (l.strides[k][d] % 4) return std::nullopt;
      l.strides[k][d] /= 4;
    }
  l.shape[last] /= 4;
  return l;
}

}  // namespace

void copy(const Tensor& x, const Tensor& out) {
  if (is_wide(x) && x.dtype() == out.dtype()) {
    require_wide("copy", x);
    return wide::copy(x, out);
  }
  if (x.dtype() != out.dtype() || (x.itemsize() != 4 && x.itemsize() != 2 && x.dtype() != DType::Bool))
    fail<NotImplementedError>("copy: ", dtype_name(x.dtype()), " copies are not supported on ", x.device().str(),
                              " yet (32-bit, 16-bit and bool only)");
  if (!out.numel()) return;
  const int64_t w = per_word(x);  // elements per 32-bit word; copy4 moves 4 words at a time
  if (x.is_contiguous() && out.is_contiguous() && x.offset() % (4 * w) == 0 && out.offset() % (4 * w) == 0 &&
      out.numel() % (4 * w) == 0) {
    struct { uint32_t n4, in_off4, out_off4; } p{u32(out.numel() / (4 * w), "size"), u32(x.offset() / (4 * w), "offset"),
                                               u32(out.offset() / (4 * w), "offset")};
    return launch(x, "copy4", {buffer_of(x), buffer_of(out)}, p, out.numel() / (4 * w));
  }
  // Sub-word elements are merged into their words; float32 rows go 4 elements at a time.
  if (w > 1 || layout4("copy", x, out)) return cast(x, out);
  Layout l = layout("copy", x.shape(), {x.strides(), out.strides()});
  struct {
    uint32_t n, ndim, in_off, out_off, shape[kMaxDims];
    int32_t in_strides[kMaxDims], out_strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), {}, {}, {}};
  put_dims(l, p.shape, {p.in_strides, p.out_strides});
  launch(x, "copy", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

void cast(const Tensor& x, const Tensor& out) {
  if ((is_wide(x) || is_wide(out)) && has_wide(x.device())) return wide::cast(x, out);
  // Without the 64-bit kernels, int64 lives on the GPU as storage only; casting it to a
  // computing type is how it gets used (a PyTorch user's int64 targets moved to the GPU).
  if (is_wide(out)) require_wide("astype", out);
  const uint32_t src = x.dtype() == DType::Int64 ? 5 : type_code("astype", x), dst = type_code("astype", out);
  if (!out.numel()) return;
  if (wide_io(x) && wide_io(out) && vec4_aligned(x, out)) {
    struct { uint32_t n4, in_off4, out_off4, src, dst; } p{
        u32(out.numel() / 4, "size"), u32(x.offset() / 4, "offset"), u32(out.offset() / 4, "offset"), src, dst};
    return launch(x, "cast4", {buffer_of(x), buffer_of(out)}, p, out.numel() / 4);
  }
  if (const std::optional<Layout> l4 = layout4("astype", x, out)) {
    struct {
      uint32_t n4, ndim, in_off4, out_off4, src, dst, shape[kMaxDims];
      int32_t in_strides[kMaxDims], out_strides[kMaxDims];
    } p{u32(out.numel() / 4, "size"), l4->ndim, u32(x.offset() / 4, "offset"), u32(out.offset() / 4, "offset"),
        src, dst, {}, {}, {}};
    put_dims(*l4, p.shape, {p.in_strides, p.out_strides});
    return launch(x, "cast4s", {buffer_of(x), buffer_of(out)}, p, out.numel() / 4);
  }
  const bool packed = word_aligned(out);
  Layout l = layout("astype", x.shape(), {x.strides(), out.strides()});
  struct {
    uint32_t n, ndim, in_off, out_off, src, dst, packed, shape[kMaxDims];
    int32_t in_strides[kMaxDims], out_strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), src, dst, packed,
      {}, {}, {}};
  put_dims(l, p.shape, {p.in_strides, p.out_strides});
  launch(x, "cast", {buffer_of(x), buffer_of(out)}, p, packed ? (x.numel() + 3) / 4 : x.numel());
}

void cast_multi(const std::vector<Tensor>& xs, const std::vector<Tensor>& outs) {
  if (xs.empty()) return;
  // The kernel steps two elements at a time: 16-bit tensors as whole words.
  const auto words = [](const Tensor& t) { return !is_half(t) || t.offset() % 2 == 0; };
  std::vector<Row> rows;
  std::vector<size_t> alone;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor &x = xs[i], &y = outs[i];
    const bool fits = x.is_contiguous() && y.is_contiguous() && x.numel() % 2 == 0 && words(x) && words(y);
    if (fits) rows.push_back({&x, &y, nullptr, nullptr});
    else alone.push_back(i);
  }
  const Device dev = xs[0].device();
  if (!rows.empty() && tabled(dev, rows)) {
    const Table t = table(dev, rows);
    if (t.count) {
      struct { uint32_t count, chunks, src, dst; } p{t.count, t.chunks, type_code("astype", xs[0]),
                                                     type_code("astype", outs[0])};
      launch_table(dev, "cast_multi", t, p);
    }
  } else {
    alone.clear();
    for (size_t i = 0; i < xs.size(); ++i) alone.push_back(i);
  }
  for (size_t i : alone) cast(xs[i], outs[i]);
}

}  // namespace pcp::gpu
