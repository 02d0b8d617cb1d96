#include "pcp/backend/gpu/ops.h"

#include <cstring>
#include <limits>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

constexpr int kMaxDims = 6;     // MAX_DIMS in metal/common.glsl
constexpr uint32_t kGroup = 256;  // local_size_x of every kernel

Runtime& rt() {
  Runtime* r = runtime();
  if (!r) fail<ValueError>("gpu: no GPU is available (", unavailable_reason(), ")");
  return *r;
}

Buffer* buffer_of(const Tensor& t) { return static_cast<Buffer*>(t.storage()->data()); }

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > int64_t(std::numeric_limits<uint32_t>::max()))
    fail<NotImplementedError>("gpu: ", what, " ", v, " does not fit the kernels' 32-bit indexing");
  return uint32_t(v);
}

uint32_t groups(int64_t n) { return uint32_t(std::min<int64_t>((n + kGroup - 1) / kGroup, 65535)); }

void require_f32(const char* op, const Tensor& t) {
  if (t.dtype() != DType::Float32)
    fail<NotImplementedError>(op, ": ", dtype_name(t.dtype()), " is not supported on ", t.device().str(),
                              " yet (float32 only)");
}

// Shape and per-operand strides with unit dims dropped and mergeable neighbours merged.
struct Layout {
  uint32_t ndim = 0;
  uint32_t shape[kMaxDims] = {};
  int32_t strides[3][kMaxDims] = {};
};

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

template <class P>
void launch(const Tensor& any, const char* kernel, const std::vector<Buffer*>& bufs, const P& push, int64_t work) {
  static_assert(sizeof(P) <= kMaxPushBytes);
  rt().dispatch(any.device().index, kernel, bufs, &push, sizeof(P), groups(work));
}

}  // namespace

Tensor to_device(const Tensor& x, Device device) {
  if (x.device() == device) return x;
  if (!x.device().is_gpu()) {  // host -> device
    Tensor src = x.is_contiguous() ? x : contiguous(x);
    Tensor out = Tensor::empty(x.shape(), x.dtype(), device);
    rt().upload(device.index, buffer_of(out), 0, src.raw_data(), size_t(src.numel()) * src.itemsize());
    return out;
  }
  Tensor host = x.host_copy();  // device -> host (then on to another device, if asked)
  if (!host.is_contiguous()) {
    Tensor c = Tensor::empty(host.shape(), host.dtype());
    cpu::cast_copy(host, c);
    host = c;
  }
  return device.is_gpu() ? gpu::to_device(host, device) : host;
}

void fill(const Tensor& out, double value) {
  uint32_t bits;
  if (out.dtype() == DType::Float32) {
    float f = float(value);
    std::memcpy(&bits, &f, 4);
  } else if (out.dtype() == DType::Int32) {
    bits = uint32_t(int32_t(value));
  } else {
    fail<NotImplementedError>("full: ", dtype_name(out.dtype()), " tensors cannot be created on ", out.device().str(),
                              " yet (float32 and int32 only)");
  }
  struct { uint32_t n, offset, value; } p{u32(out.numel(), "size"), u32(out.offset(), "offset"), bits};
  if (out.numel()) launch(out, "fill", {buffer_of(out)}, p, out.numel());
}

void copy(const Tensor& x, const Tensor& out) {
  if (x.itemsize() != 4 || x.dtype() != out.dtype())
    fail<NotImplementedError>("copy: ", dtype_name(x.dtype()), " copies are not supported on ", x.device().str(),
                              " yet (32-bit types only)");
  if (!out.numel()) return;
  Layout l = layout("copy", x.shape(), {x.strides()});
  struct {
    uint32_t n, ndim, in_off, out_off, shape[kMaxDims];
    int32_t strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), {}, {}};
  std::memcpy(p.shape, l.shape, sizeof p.shape);
  std::memcpy(p.strides, l.strides[0], sizeof p.strides);
  launch(x, "copy", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

void unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  require_f32("unary op", x);
  if (op == UnaryOp::LogicalNot) fail<NotImplementedError>("logical_not: not supported on the GPU yet");
  if (!out.numel()) return;
  Layout l = layout("unary op", x.shape(), {x.strides()});
  struct {
    uint32_t n, ndim, x_off, out_off, op, shape[kMaxDims];
    int32_t strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), uint32_t(op), {}, {}};
  std::memcpy(p.shape, l.shape, sizeof p.shape);
  std::memcpy(p.strides, l.strides[0], sizeof p.strides);
  launch(x, "unary", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  require_f32("binary op", a);
  if (op >= BinaryOp::Eq) fail<NotImplementedError>("comparisons are not supported on the GPU yet");
  if (!out.numel()) return;
  Layout l = layout("binary op", out.shape(),
                    {cpu::broadcast_strides(a, out.shape()), cpu::broadcast_strides(b, out.shape())});
  struct {
    uint32_t n, ndim, a_off, b_off, out_off, op, shape[kMaxDims];
    int32_t a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
      u32(out.offset(), "offset"), uint32_t(op), {}, {}, {}};
  std::memcpy(p.shape, l.shape, sizeof p.shape);
  std::memcpy(p.a_strides, l.strides[0], sizeof p.a_strides);
  std::memcpy(p.b_strides, l.strides[1], sizeof p.b_strides);
  launch(a, "binary", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel());
}

void reduce(cpu::ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out) {
  require_f32("reduction", x);
  if (op != cpu::ReduceOp::Sum && op != cpu::ReduceOp::Max && op != cpu::ReduceOp::Min)
    fail<NotImplementedError>("argmax/argmin: not supported on the GPU yet");
  if (O * I == 0) return;
  struct { uint32_t O, R, I, x_off, out_off, op; } p{
      u32(O, "size"), u32(R, "size"), u32(I, "size"), u32(x.offset(), "offset"), u32(out.offset(), "offset"),
      uint32_t(op == cpu::ReduceOp::Sum ? 0 : op == cpu::ReduceOp::Max ? 1 : 2)};
  rt().dispatch(x.device().index, "reduce", {buffer_of(x), buffer_of(out)}, &p, sizeof p,
                uint32_t(std::min<int64_t>(O * I, 65535)));
}

void matmul(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K, int64_t batch,
            int64_t a_batch, int64_t b_batch) {
  require_f32("matmul", a);
  if (out.numel() == 0) return;
  if (K == 0) return fill(out, 0.0);
  const int64_t tiles_n = (N + 63) / 64, tiles = ((M + 63) / 64) * tiles_n * batch;
  const Strides &sa = a.strides(), &sb = b.strides();
  struct {
    uint32_t M, N, K, batch, a_off, b_off, c_off, tiles_n;
    int32_t rsa, csa, rsb, csb, a_batch, b_batch;
  } p{u32(M, "size"), u32(N, "size"), u32(K, "size"), u32(batch, "batch"), u32(a.offset(), "offset"),
      u32(b.offset(), "offset"), u32(out.offset(), "offset"), u32(tiles_n, "tiles"),
      int32_t(sa[sa.size() - 2]), int32_t(sa.back()), int32_t(sb[sb.size() - 2]), int32_t(sb.back()),
      int32_t(a_batch), int32_t(b_batch)};
  rt().dispatch(a.device().index, "matmul", {buffer_of(a), buffer_of(b), buffer_of(out)}, &p, sizeof p,
                uint32_t(std::min<int64_t>(tiles, 65535)));
}

}  // namespace pcp::gpu
