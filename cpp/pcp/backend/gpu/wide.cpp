// float64 and int64 on the GPU (metal/wide/), where the device has both (DeviceInfo::wide): the
// ops of elementwise.cpp, transfer.cpp, reduce.cpp, linalg.cpp and index.cpp call these for
// 64-bit tensors. Values that only move (copies, fills, where, gathers) go through the 32-bit
// kernels on a view of each element as two words; arithmetic through 64-bit kernels.
#include "pcp/backend/gpu/wide.h"

#include <cstring>

#include "pcp/backend/gpu/launch.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

bool is_wide(const Tensor& t) { return t.defined() && (t.dtype() == DType::Float64 || t.dtype() == DType::Int64); }

bool has_wide(Device device) { return rt().device_info(device.index).wide; }

void require_wide(const char* op, const Tensor& t) {
  const DeviceInfo info = rt().device_info(t.device().index);
  if (!info.wide)
    fail<NotImplementedError>(op, ": ", dtype_name(t.dtype()), " is not supported on ", t.device().str(), " (",
                              info.name, "): the device lacks ", info.wide_missing);
}

namespace {

// A 64-bit tensor as int32 words: shape + (2,), strides doubled + (1,).
Tensor words(const Tensor& t, const Shape& shape, const Strides& strides) {
  Shape s = shape;
  Strides st = strides;
  for (int64_t& v : st) v *= 2;
  s.push_back(2);
  st.push_back(1);
  return Tensor::view_of(t.storage(), s, st, t.offset() * 2, DType::Int32);
}
Tensor words(const Tensor& t) { return words(t, t.shape(), t.strides()); }

uint32_t wide_code(const Tensor& t) {
  switch (t.dtype()) {
    case DType::Float64: return 6;
    case DType::Int64: return 5;
    default: return type_code("astype", t);
  }
}

Tensor converted(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor c = Tensor::empty(t.shape(), dtype, t.device());
  cast(t, c);
  return c;
}

// Runs `kernel` into out, or into a stand-in of `dtype` that is then cast into out.
template <class Kernel>
void into(const Tensor& out, DType dtype, Kernel kernel) {
  if (out.dtype() == dtype) return kernel(out);
  Tensor stand_in = Tensor::empty(out.shape(), dtype, out.device());
  kernel(stand_in);
  cast(stand_in, out);
}

struct Elementwise {
  uint32_t n, ndim, x_off, out_off, op, shape[kMaxDims];
  int32_t strides[kMaxDims];
};
struct Pairwise {
  uint32_t n, ndim, a_off, b_off, out_off, op, shape[kMaxDims];
  int32_t a_strides[kMaxDims], b_strides[kMaxDims];
};

}  // namespace

namespace wide {

void copy(const Tensor& x, const Tensor& out) { gpu::copy(words(x), words(out)); }

void fill(const Tensor& out, double value) {
  if (!out.numel()) return;
  uint64_t bits;
  if (out.dtype() == DType::Float64) std::memcpy(&bits, &value, 8);
  else bits = uint64_t(int64_t(value));
  Tensor one = Tensor::empty({1}, out.dtype(), out.device());
  rt().upload(out.device().index, buffer_of(one), one.offset() * 8, &bits, 8);
  gpu::copy(words(one, out.shape(), Strides(out.shape().size(), 0)), words(out));
}

void cast(const Tensor& x, const Tensor& out) {
  require_wide("astype", is_wide(x) ? x : out);
  if (!out.numel()) return;
  if (out.dtype() == DType::Bool) return into(out, DType::Int32, [&](const Tensor& o) {
      Layout l = layout("astype", x.shape(), {x.strides(), o.strides()});
      struct {
        uint32_t n, ndim, in_off, out_off, src, dst, shape[kMaxDims];
        int32_t in_strides[kMaxDims], out_strides[kMaxDims];
      } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(o.offset(), "offset"), wide_code(x), 2, {}, {}, {}};
      put_dims(l, p.shape, {p.in_strides, p.out_strides});
      launch(x, "cast_wide", {buffer_of(x), buffer_of(o)}, p, x.numel());
    });
  if (is_half(out)) return into(out, DType::Float32, [&](const Tensor& o) { cast(x, o); });
  if (!is_wide(out) && !is_wide(x)) return gpu::cast(x, out);
  Layout l = layout("astype", x.shape(), {x.strides(), out.strides()});
  struct {
    uint32_t n, ndim, in_off, out_off, src, dst, shape[kMaxDims];
    int32_t in_strides[kMaxDims], out_strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), wide_code(x),
      wide_code(out), {}, {}, {}};
  put_dims(l, p.shape, {p.in_strides, p.out_strides});
  launch(x, "cast_wide", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

// The 64-bit type an op computes in: its result's, or its wide operand's for a narrower result.
DType wide_type(const Tensor& out, const Tensor& x) {
  return is_wide(out) ? out.dtype() : is_wide(x) ? x.dtype() : DType::Float64;
}

void unary(UnaryOp op, const Tensor& x_in, const Tensor& out) {
  const DType type = wide_type(out, x_in);
  require_wide("unary op", is_wide(out) ? out : x_in);
  const Tensor x = converted(x_in, type);
  if (!out.numel()) return;
  into(out, type, [&](const Tensor& o) {
    Layout l = layout("unary op", x.shape(), {x.strides()});
    Elementwise p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(o.offset(), "offset"),
                  uint32_t(op), {}, {}};
    put_dims(l, p.shape, {p.strides});
    launch(x, type == DType::Float64 ? "unary_f64" : "unary_i64", {buffer_of(x), buffer_of(o)}, p, x.numel());
  });
}

void binary(BinaryOp op, const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  const DType type = wide_type(out, is_wide(a_in) ? a_in : b_in);
  require_wide("binary op", is_wide(out) ? out : is_wide(a_in) ? a_in : b_in);
  const Tensor a = converted(a_in, type), b = converted(b_in, type);
  if (!out.numel()) return;
  into(out, type, [&](const Tensor& o) {
    Layout l = layout("binary op", o.shape(), {broadcast_strides(a, o.shape()), broadcast_strides(b, o.shape())});
    Pairwise p{u32(o.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
               u32(o.offset(), "offset"), uint32_t(op), {}, {}, {}};
    put_dims(l, p.shape, {p.a_strides, p.b_strides});
    launch(a, type == DType::Float64 ? "binary_f64" : "binary_i64", {buffer_of(a), buffer_of(b), buffer_of(o)}, p,
           o.numel());
  });
}

void compare(BinaryOp op, const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  // Both operands in one type: float64 when either is a float, else int64 (as NumPy promotes).
  const bool floats = a_in.dtype() == DType::Float64 || b_in.dtype() == DType::Float64 ||
                      is_floating(a_in.dtype()) || is_floating(b_in.dtype());
  const DType common = floats ? DType::Float64 : DType::Int64;
  require_wide("comparison", is_wide(a_in) ? a_in : b_in);
  const Tensor a = converted(a_in, common), b = converted(b_in, common);
  if (!out.numel()) return;
  if (!word_aligned(out)) {  // the kernel writes whole words
    Tensor whole = Tensor::empty(out.shape(), DType::Bool, out.device());
    compare(op, a, b, whole);
    return gpu::cast(whole, out);
  }
  Layout l = layout("comparison", out.shape(), {broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())});
  struct {
    uint32_t n, ndim, a_off, b_off, out_word, op, type, shape[kMaxDims];
    int32_t a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
      u32(out.offset() / 4, "offset"), uint32_t(op), wide_code(a), {}, {}, {}};
  put_dims(l, p.shape, {p.a_strides, p.b_strides});
  launch(a, "compare_wide", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, (out.numel() + 3) / 4);
}

void where(const Tensor& cond, const Tensor& a_in, const Tensor& b_in, const Tensor& out) {
  require_wide("where", out);
  const Tensor a = converted(a_in, out.dtype()), b = converted(b_in, out.dtype());
  const Shape& s = out.shape();
  Strides cs = broadcast_strides(cond, s);
  Shape s2 = s;
  s2.push_back(2);
  cs.push_back(0);  // one condition for both words of an element
  gpu::where(Tensor::view_of(cond.storage(), s2, cs, cond.offset(), DType::Bool), words(a, s, broadcast_strides(a, s)),
             words(b, s, broadcast_strides(b, s)), words(out));
}

void reduce(ReduceOp op, const Tensor& x_in, int64_t O, int64_t R, int64_t I, const Tensor& out) {
  require_wide("reduction", is_wide(x_in) ? x_in : out);
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  // int32 and bool reduce as int64 (a sum of them is int64, as NumPy's).
  const DType type = x_in.dtype() == DType::Float64 ? DType::Float64 : DType::Int64;
  const Tensor x = converted(x_in, type);
  if (O * I == 0) return;
  const uint32_t code = op == ReduceOp::Sum ? 0 : op == ReduceOp::Max ? 1 : op == ReduceOp::Min ? 2
                        : op == ReduceOp::ArgMax ? 3 : 4;
  into(out, type, [&](const Tensor& o) {
    struct { uint32_t O, R, I, x_off, out_off, op; } p{u32(O, "size"), u32(R, "size"), u32(I, "size"),
                                                       u32(x.offset(), "offset"), u32(o.offset(), "offset"), code};
    rt().dispatch(x.device().index, type == DType::Float64 ? "reduce_f64" : "reduce_i64", {buffer_of(x), buffer_of(o)},
                  &p, sizeof p, uint32_t(std::min<int64_t>(O * I, 65535)));
  });
}

void matmul(const Tensor& a_in, const Tensor& b_in, const Tensor& out, int64_t M, int64_t N, int64_t K,
            const MatmulBatch& bt, float alpha) {
  const DType type = out.dtype() == DType::Float64 ? DType::Float64 : DType::Int64;
  require_wide("matmul", a_in.dtype() == DType::Float64 || out.dtype() == DType::Float64 ? out : a_in);
  const Tensor a = converted(a_in, type), b = converted(b_in, type);
  if (!out.numel()) return;
  into(out, type, [&](const Tensor& o) {
    if (K == 0) return fill(o, 0.0);
    const int64_t batch = bt.outer * bt.inner, tiles_n = (N + 15) / 16;
    const MatmulParams p = matmul_params(a, b, o, M, N, K, bt, tiles_n, alpha);
    rt().dispatch(a.device().index, type == DType::Float64 ? "matmul_f64" : "matmul_i64",
                  {buffer_of(a), buffer_of(b), buffer_of(o)}, &p, sizeof p,
                  uint32_t(std::min<int64_t>(((M + 15) / 16) * tiles_n * batch, 65535)));
  });
}

void gather(const Tensor& x, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  // (O, N, I) of 64-bit elements is (O, N, 2 I) of words.
  const Tensor xw = Tensor::view_of(x.storage(), {x.numel() * 2}, {1}, x.offset() * 2, DType::Int32);
  const Tensor ow = Tensor::view_of(out.storage(), {out.numel() * 2}, {1}, out.offset() * 2, DType::Int32);
  gpu::gather(xw, idx, N, 2 * I, ow);
}

}  // namespace wide
}  // namespace pcp::gpu
