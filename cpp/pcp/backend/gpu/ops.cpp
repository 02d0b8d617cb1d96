#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/faults.h"
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

// Element type codes of the mixed-dtype kernels (T_* in metal/common.glsl).
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

// Elements of `t` per 32-bit word: 4 bools, 2 float16/bfloat16, 1 otherwise.
int64_t per_word(const Tensor& t) { return 4 / int64_t(t.itemsize()); }

// Whether a result fills whole 32-bit words, as the kernels that write bools whole words need.
bool word_aligned(const Tensor& out) { return out.is_contiguous() && out.offset() % per_word(out) == 0; }

// float16 and bfloat16 run the float32 kernels, as the CPU does: inputs are widened into float32
// copies, the kernel computes in float32 and the result is rounded once into the 16-bit output.
bool is_half(const Tensor& t) { return t.defined() && (t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16); }

Tensor widened(const Tensor& t) {
  if (!is_half(t)) return t;
  Tensor f = Tensor::empty(t.shape(), DType::Float32, t.device());
  cast(t, f);
  return f;
}

// Runs `kernel` into a float32 stand-in for a 16-bit result (into the result itself otherwise),
// then rounds the stand-in into the result.
template <class Kernel>
void into_float32(const Tensor& out, Kernel kernel) {
  if (!is_half(out)) return kernel(out);
  Tensor f32 = Tensor::empty(out.shape(), DType::Float32, out.device());
  kernel(f32);
  cast(f32, out);
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

// Copies a layout's shape and per-operand strides into a kernel's push-constant arrays.
void put_dims(const Layout& l, uint32_t* shape, std::initializer_list<int32_t*> strides) {
  std::memcpy(shape, l.shape, sizeof l.shape);
  int k = 0;
  for (int32_t* st : strides) std::memcpy(st, l.strides[k++], sizeof l.strides[0]);
}

// How binary4.comp reads an operand of a result of `shape`: 0 for one broadcast scalar; its
// length in vec4s when it is contiguous, on a 16-byte boundary and repeated only along leading
// dimensions of the result (the same shape, or a bias row); -1 when neither.
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

// Whether x and out can be read and written as vec4s from the same positions.
bool vec4_aligned(const Tensor& x, const Tensor& out) {
  return x.is_contiguous() && out.is_contiguous() && x.offset() % 4 == 0 && out.offset() % 4 == 0 &&
         out.numel() % 4 == 0;
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

void copy(const Tensor& x, const Tensor& out) {
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
  if (w > 1) return cast(x, out);  // sub-word elements: merged into their words
  Layout l = layout("copy", x.shape(), {x.strides(), out.strides()});
  struct {
    uint32_t n, ndim, in_off, out_off, shape[kMaxDims];
    int32_t in_strides[kMaxDims], out_strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), {}, {}, {}};
  put_dims(l, p.shape, {p.in_strides, p.out_strides});
  launch(x, "copy", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

void unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { unary(op, widened(x), o); });
  }
  require_f32("unary op", x);
  if (op == UnaryOp::LogicalNot) fail<NotImplementedError>("logical_not: not supported on the GPU yet");
  if (!out.numel()) return;
  if (vec4_aligned(x, out)) {
    struct { uint32_t n4, op, x_off4, out_off4; } p{
        u32(out.numel() / 4, "size"), uint32_t(op), u32(x.offset() / 4, "offset"), u32(out.offset() / 4, "offset")};
    return launch(x, "unary4", {buffer_of(x), buffer_of(out)}, p, out.numel() / 4);
  }
  Layout l = layout("unary op", x.shape(), {x.strides()});
  struct {
    uint32_t n, ndim, x_off, out_off, op, shape[kMaxDims];
    int32_t strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), uint32_t(op), {}, {}};
  put_dims(l, p.shape, {p.strides});
  launch(x, "unary", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.dtype() == DType::Bool) return compare(op, a, b, out);
  if (is_half(a) || is_half(b)) {
    return into_float32(out, [&](const Tensor& o) { binary(op, widened(a), widened(b), o); });
  }
  require_f32("binary op", a);
  if (!out.numel()) return;
  const int64_t pa = vec4_period(a, out.shape()), pb = vec4_period(b, out.shape());
  if (pa >= 0 && pb >= 0 && out.is_contiguous() && out.offset() % 4 == 0 && out.numel() % 4 == 0) {
    struct { uint32_t n4, op, out_off4, a_off, a_period, b_off, b_period; } p{
        u32(out.numel() / 4, "size"), uint32_t(op), u32(out.offset() / 4, "offset"), u32(a.offset(), "offset"),
        uint32_t(pa), u32(b.offset(), "offset"), uint32_t(pb)};
    return launch(a, "binary4", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel() / 4);
  }
  Layout l = layout("binary op", out.shape(),
                    {cpu::broadcast_strides(a, out.shape()), cpu::broadcast_strides(b, out.shape())});
  struct {
    uint32_t n, ndim, a_off, b_off, out_off, op, shape[kMaxDims];
    int32_t a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
      u32(out.offset(), "offset"), uint32_t(op), {}, {}, {}};
  put_dims(l, p.shape, {p.a_strides, p.b_strides});
  launch(a, "binary", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel());
}

void compare(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (is_half(a) || is_half(b)) return compare(op, widened(a), widened(b), out);
  const uint32_t type = type_code("comparison", a);
  if (!out.numel()) return;
  if (!word_aligned(out)) {  // the kernel writes whole words: compare into one, then copy
    Tensor words = Tensor::empty(out.shape(), DType::Bool, out.device());
    compare(op, a, b, words);
    return cast(words, out);
  }
  Layout l = layout("comparison", out.shape(),
                    {cpu::broadcast_strides(a, out.shape()), cpu::broadcast_strides(b, out.shape())});
  struct {
    uint32_t n, ndim, a_off, b_off, out_word, op, type, shape[kMaxDims];
    int32_t a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
      u32(out.offset() / 4, "offset"), uint32_t(op), type, {}, {}, {}};
  put_dims(l, p.shape, {p.a_strides, p.b_strides});
  launch(a, "compare", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, (out.numel() + 3) / 4);
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (is_half(out)) {
    return into_float32(out, [&](const Tensor& o) { where(cond, widened(a), widened(b), o); });
  }
  if (cond.dtype() != DType::Bool || a.itemsize() != 4)
    fail<NotImplementedError>("where: ", dtype_name(a.dtype()), " values are not supported on ", a.device().str(),
                              " yet (32-bit types only)");
  if (!out.numel()) return;
  const Shape& s = out.shape();
  Layout l = layout("where", s, {cpu::broadcast_strides(cond, s), cpu::broadcast_strides(a, s),
                                 cpu::broadcast_strides(b, s)});
  struct {
    uint32_t n, ndim, c_off, a_off, b_off, out_off, shape[kMaxDims];
    int32_t c_strides[kMaxDims], a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(cond.offset(), "offset"), u32(a.offset(), "offset"),
      u32(b.offset(), "offset"), u32(out.offset(), "offset"), {}, {}, {}, {}};
  put_dims(l, p.shape, {p.c_strides, p.a_strides, p.b_strides});
  launch(a, "where", {buffer_of(cond), buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel());
}

void cast(const Tensor& x, const Tensor& out) {
  // int64 lives on the GPU as storage only; casting it to a computing type is how it gets used
  // (a PyTorch user's int64 targets moved to the GPU).
  const uint32_t src = x.dtype() == DType::Int64 ? 5 : type_code("astype", x), dst = type_code("astype", out);
  if (!out.numel()) return;
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

void reduce(cpu::ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out) {
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { gpu::reduce(op, widened(x), O, R, I, o); });
  }
  require_f32("reduction", x);
  const bool arg = op == cpu::ReduceOp::ArgMax || op == cpu::ReduceOp::ArgMin;
  if (arg && out.dtype() != DType::Int64) fail<ValueError>("argmax/argmin: the result must be int64");
  if (O * I == 0) return;
  const uint32_t code = op == cpu::ReduceOp::Sum ? 0 : op == cpu::ReduceOp::Max ? 1 : op == cpu::ReduceOp::Min ? 2
                        : op == cpu::ReduceOp::ArgMax ? 3 : 4;
  // Wide results read coalesced column blocks; a reduction with few workgroups is cut into
  // chunks of rows whose partial results a second pass combines (in a fixed order).
  const bool cols = I >= 16;
  const char* kernel = cols ? "reduce_cols" : "reduce";
  auto workgroups = [&](int64_t o, int64_t chunks, int64_t i) { return o * chunks * (cols ? (i + 63) / 64 : i); };
  int64_t chunks = 1;
  constexpr int64_t kFill = 1024, kMinRows = 2048;  // enough workgroups for a large GPU; rows per chunk
  if (!arg && R >= 2 * kMinRows && workgroups(O, 1, I) < kFill)
    chunks = std::min((kFill + workgroups(O, 1, I) - 1) / workgroups(O, 1, I), R / kMinRows);
  const int64_t rows = (R + chunks - 1) / chunks;
  chunks = (R + rows - 1) / rows;
  struct { uint32_t O, R, I, chunks, rows, x_off, out_off, op; } p{
      u32(O, "size"), u32(R, "size"), u32(I, "size"), uint32_t(chunks), u32(rows, "size"), u32(x.offset(), "offset"),
      0, code};
  auto run = [&](const Tensor& in, const Tensor& res, uint32_t out_off) {
    p.x_off = u32(in.offset(), "offset");
    p.out_off = out_off;
    rt().dispatch(x.device().index, kernel, {buffer_of(in), buffer_of(res)}, &p, sizeof p,
                  uint32_t(std::min<int64_t>(workgroups(p.O, p.chunks, p.I), 65535)));
  };
  // The kernels write 32-bit words; an int64 result element is two of them.
  const uint32_t out_off = u32(out.offset() * (arg ? 2 : 1), "offset");
  if (chunks == 1) return run(x, out, out_off);
  Tensor partial = Tensor::empty({O * chunks * I}, DType::Float32, x.device());
  run(x, partial, 0);
  p.R = uint32_t(chunks), p.chunks = 1, p.rows = uint32_t(chunks);
  run(partial, out, out_off);
}

bool tensor_core_matmul(const Tensor& a, const Tensor& out, int64_t N) {
  if (!is_half(a) || N % 2 || out.offset() % 2) return false;  // the kernels write pairs of results
  const DeviceInfo info = rt().device_info(a.device().index);
  return a.dtype() == DType::Float16 ? info.tensor_core_f16 : info.tensor_core_bf16;
}

void matmul(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K,
            const MatmulBatch& bt) {
  if (is_half(a) && !tensor_core_matmul(a, out, N))
    fail<NotImplementedError>("matmul: ", dtype_name(a.dtype()), " needs tensor-core kernels on ", a.device().str(),
                              " (widen to float32 where tensor_core_matmul() is false)");
  if (!is_half(a)) require_f32("matmul", a);
  if (out.numel() == 0) return;
  if (K == 0) return fill(out, 0.0);
  // 128 x 128 tiles (matmul128.comp) pay off only with many tiles and a deep K (measured on an
  // H200 at GPT shapes); otherwise 64 x 64 (matmul.comp) keeps more workgroups busy.
  const int64_t batch = bt.outer * bt.inner;
  const int64_t tile = is_half(a) || (((M + 127) / 128) * ((N + 127) / 128) * batch >= 1024 && K >= 256) ? 128 : 64;
  const int64_t tiles_n = (N + tile - 1) / tile;
  const int64_t tiles = ((M + tile - 1) / tile) * tiles_n * batch;
  const Strides &sa = a.strides(), &sb = b.strides();
  // Few output tiles over a long K (a weight gradient, X^T @ dY) leave most of the GPU idle: split
  // K into S equal slices computed as a batch of S products, then sum them in a fixed order.
  constexpr int64_t kFillTiles = 512, kMinSlice = 512;
  if (!is_half(a) && batch == 1 && tiles < kFillTiles / 2 && K >= 2 * kMinSlice) {
    int64_t S = std::min((kFillTiles + tiles - 1) / tiles, K / kMinSlice);
    while (S > 1 && K % S) --S;
    if (S > 1) {
      const int64_t slice = K / S;
      Tensor partial = Tensor::empty({S, M, N}, DType::Float32, out.device());
      MatmulBatch split;
      split.inner = S, split.a_inner = slice * sa.back(), split.b_inner = slice * sb[sb.size() - 2];
      matmul(a, b, partial, M, N, slice, split);
      return gpu::reduce(cpu::ReduceOp::Sum, partial, 1, S, M * N, out);
    }
  }
  struct {
    uint32_t M, N, K, batch, a_off, b_off, c_off, tiles_n;
    int32_t rsa, csa, rsb, csb, a_batch, b_batch;
    uint32_t inner;
    int32_t a_outer, b_outer;
  } p{u32(M, "size"), u32(N, "size"), u32(K, "size"), u32(batch, "batch"), u32(a.offset(), "offset"),
      u32(b.offset(), "offset"), u32(out.offset(), "offset"), u32(tiles_n, "tiles"),
      int32_t(sa[sa.size() - 2]), int32_t(sa.back()), int32_t(sb[sb.size() - 2]), int32_t(sb.back()),
      int32_t(bt.a_inner), int32_t(bt.b_inner), u32(bt.inner, "batch"), int32_t(bt.a_outer), int32_t(bt.b_outer)};
  const char* kernel = a.dtype() == DType::Float16    ? "matmul_coop_f16"
                       : a.dtype() == DType::BFloat16 ? "matmul_coop_bf16"
                       : tile == 128                  ? "matmul128"
                                                      : "matmul";
  rt().dispatch(a.device().index, kernel, {buffer_of(a), buffer_of(b), buffer_of(out)}, &p, sizeof p,
                uint32_t(std::min<int64_t>(tiles, 65535)));
}

namespace {

int64_t rows_of(const Tensor& x) { return x.ndim() == 0 ? 1 : x.numel() / std::max<int64_t>(x.shape().back(), 1); }

// One workgroup per row, up to the dispatch limit (the kernels loop over the rest).
void launch_rows(const Tensor& any, const char* kernel, const std::vector<Buffer*>& bufs, const void* push,
                 size_t bytes, int64_t rows) {
  if (rows > 0) rt().dispatch(any.device().index, kernel, bufs, push, bytes, uint32_t(std::min<int64_t>(rows, 65535)));
}

// Host int32 values in a new tensor on `device` (uploads are recorded in stream order).
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

// Cross-entropy targets as int32 on `device`: a contiguous int32 GPU tensor as is (the kernels
// check its values), host int64 (checked by the caller) uploaded.
Tensor class_indices(const Tensor& targets, Device device) {
  if (targets.device().is_gpu()) {
    if (targets.dtype() != DType::Int32 || !targets.is_contiguous())
      fail<ValueError>("cross_entropy: GPU targets must be contiguous int32, got ", dtype_name(targets.dtype()));
    return targets;
  }
  return upload_indices(targets, device);
}

}  // namespace

void softmax(const Tensor& x, const Tensor& y, bool log, int64_t causal_T) {
  if (is_half(x)) {
    return into_float32(y, [&](const Tensor& o) { softmax(widened(x), o, log, causal_T); });
  }
  require_f32("softmax", x);
  const int64_t n = x.shape().back(), rows = rows_of(x);
  struct { uint32_t rows, n, x_off, y_off, log, causal, T; } p{
      u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"), u32(y.offset(), "offset"), log,
      causal_T > 0, u32(std::max<int64_t>(causal_T, 1), "size")};
  launch_rows(x, "softmax", {buffer_of(x), buffer_of(y)}, &p, sizeof p, rows);
}

void softmax_backward(const Tensor& y, const Tensor& g, const Tensor& gx, bool log) {
  if (is_half(y)) {
    return into_float32(gx, [&](const Tensor& o) { softmax_backward(widened(y), widened(g), o, log); });
  }
  require_f32("softmax_backward", y);
  const int64_t n = y.shape().back(), rows = rows_of(y);
  struct { uint32_t rows, n, y_off, g_off, gx_off, log; } p{
      u32(rows, "rows"), u32(n, "size"), u32(y.offset(), "offset"), u32(g.offset(), "offset"),
      u32(gx.offset(), "offset"), log};
  launch_rows(y, "softmax_backward", {buffer_of(y), buffer_of(g), buffer_of(gx)}, &p, sizeof p, rows);
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Tensor& mean,
                const Tensor& rstd, double eps) {
  if (is_half(x)) {
    return into_float32(y, [&](const Tensor& o) { layer_norm(widened(x), widened(w), widened(b), o, mean, rstd, eps); });
  }
  require_f32("layer_norm", x);
  const int64_t n = x.shape().back(), rows = rows_of(x);
  struct {
    uint32_t rows, n, x_off, w_off, b_off, y_off, has_w, has_b;
    float eps;
  } p{u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"), w.defined() ? u32(w.offset(), "offset") : 0,
      b.defined() ? u32(b.offset(), "offset") : 0, u32(y.offset(), "offset"), w.defined(), b.defined(), float(eps)};
  Buffer* xb = buffer_of(x);
  launch_rows(x, "layer_norm",
              {xb, w.defined() ? buffer_of(w) : xb, b.defined() ? buffer_of(b) : xb, buffer_of(y), buffer_of(mean),
               buffer_of(rstd)},
              &p, sizeof p, rows);
}

void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& g, const Tensor& mean, const Tensor& rstd,
                         const Tensor& packed) {
  if (is_half(x)) {
    return into_float32(packed, [&](const Tensor& o) {
      layer_norm_backward(widened(x), widened(w), widened(g), mean, rstd, o);
    });
  }
  require_f32("layer_norm_backward", x);
  const int64_t n = x.shape().back(), rows = rows_of(x);
  Buffer* xb = buffer_of(x);
  struct { uint32_t rows, n, x_off, w_off, g_off, gx_off, has_w; } p{
      u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"), w.defined() ? u32(w.offset(), "offset") : 0,
      u32(g.offset(), "offset"), u32(packed.offset(), "offset"), w.defined()};
  launch_rows(x, "layer_norm_backward",
              {xb, w.defined() ? buffer_of(w) : xb, buffer_of(g), buffer_of(mean), buffer_of(rstd), buffer_of(packed)},
              &p, sizeof p, rows);
  // dw, db: per-chunk column sums (enough chunks to fill the GPU), then a sum over the chunks.
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(rows, 65536 / std::max<int64_t>(n, 1)));
  Tensor partial = Tensor::empty({chunks, 2 * n}, DType::Float32, x.device());
  struct { uint32_t rows, n, x_off, g_off, chunks; } q{u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"),
                                                       u32(g.offset(), "offset"), u32(chunks, "chunks")};
  launch(x, "layer_norm_param_grad", {xb, buffer_of(g), buffer_of(mean), buffer_of(rstd), buffer_of(partial)}, q,
         chunks * n);
  gpu::reduce(cpu::ReduceOp::Sum, partial, 1, chunks, 2 * n, packed.alias({2 * n}, {1}, packed.offset() + rows * n));
}

void cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& loss, const Tensor& lse) {
  if (is_half(logits)) {
    return into_float32(loss, [&](const Tensor& o) { cross_entropy(widened(logits), targets, ignore, o, lse); });
  }
  require_f32("cross_entropy", logits);
  const int64_t C = logits.shape().back(), rows = rows_of(logits);
  Tensor t = class_indices(targets, logits.device());
  struct { uint32_t rows, C, x_off, loss_off, t_off; int32_t ignore; } p{
      u32(rows, "rows"), u32(C, "size"), u32(logits.offset(), "offset"), u32(loss.offset(), "offset"),
      u32(t.offset(), "offset"), int32_t(std::clamp<int64_t>(ignore, INT32_MIN, INT32_MAX))};
  launch_rows(logits, "cross_entropy",
              {buffer_of(logits), buffer_of(t), buffer_of(loss), buffer_of(lse), fault_buffer(logits.device().index)},
              &p, sizeof p, rows);
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& lse,
                            const Tensor& g, const Tensor& gx) {
  if (is_half(logits)) {
    return into_float32(gx, [&](const Tensor& o) {
      cross_entropy_backward(widened(logits), targets, ignore, lse, widened(g), o);
    });
  }
  require_f32("cross_entropy_backward", logits);
  const int64_t C = logits.shape().back();
  Tensor t = class_indices(targets, logits.device());
  struct { uint32_t n, C, x_off, g_off, gx_off, t_off; int32_t ignore; } p{
      u32(logits.numel(), "size"), u32(C, "size"), u32(logits.offset(), "offset"), u32(g.offset(), "offset"),
      u32(gx.offset(), "offset"), u32(t.offset(), "offset"), int32_t(std::clamp<int64_t>(ignore, INT32_MIN, INT32_MAX))};
  if (logits.numel())
    launch(logits, "cross_entropy_backward",
           {buffer_of(logits), buffer_of(t), buffer_of(lse), buffer_of(g), buffer_of(gx)}, p, logits.numel());
}

void gather(const Tensor& x, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { gather(widened(x), idx, N, I, o); });
  }
  if (x.itemsize() != 4)
    fail<NotImplementedError>("take: ", dtype_name(x.dtype()), " is not supported on ", x.device().str(),
                              " yet (32-bit types only)");
  if (!out.numel()) return;
  Tensor i32 = upload_indices(idx, x.device());
  struct { uint32_t n, N, P, I, x_off, out_off; } p{u32(out.numel(), "size"), u32(N, "size"), u32(idx.numel(), "size"),
                                                    u32(I, "size"), u32(x.offset(), "offset"),
                                                    u32(out.offset(), "offset")};
  launch(x, "gather", {buffer_of(x), buffer_of(i32), buffer_of(out)}, p, out.numel());
}

void scatter_add(const Tensor& src, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  if (is_half(src)) {
    return into_float32(out, [&](const Tensor& o) { scatter_add(widened(src), idx, N, I, o); });
  }
  require_f32("scatter_add", src);
  if (!out.numel()) return;
  // Counting sort of the positions by index: plan = [segment starts (N + 1) | positions].
  const int64_t P = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  std::vector<int32_t> plan(size_t(N + 1 + P), 0);
  for (int64_t k = 0; k < P; ++k) ++plan[size_t(ip[k] + 1)];
  for (int64_t v = 0; v < N; ++v) plan[size_t(v + 1)] += plan[size_t(v)];
  std::vector<int32_t> next(plan.begin(), plan.begin() + N);
  for (int64_t k = 0; k < P; ++k) plan[size_t(N + 1 + next[size_t(ip[k])]++)] = int32_t(k);
  Tensor dev_plan = upload_ints(plan, src.device());
  struct { uint32_t n, N, P, I, src_off, out_off; } p{u32(out.numel(), "size"), u32(N, "size"), u32(P, "size"),
                                                      u32(I, "size"), u32(src.offset(), "offset"),
                                                      u32(out.offset(), "offset")};
  launch(src, "scatter_add", {buffer_of(src), buffer_of(dev_plan), buffer_of(out)}, p, out.numel());
}

void dropout(const Tensor& x, const Tensor& out, float prob, float scale, uint64_t key, uint64_t start) {
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { dropout(widened(x), o, prob, scale, key, start); });
  }
  require_f32("dropout", x);
  if (!out.numel()) return;
  struct {
    uint32_t n, x_off, out_off, key_lo, key_hi, start_lo, start_hi;
    float prob, scale;
  } p{u32(x.numel(), "size"), u32(x.offset(), "offset"), u32(out.offset(), "offset"), uint32_t(key),
      uint32_t(key >> 32), uint32_t(start), uint32_t(start >> 32), prob, scale};
  launch(x, "dropout", {buffer_of(x), buffer_of(out)}, p, (x.numel() + 3) / 4);
}

void adam(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, float lr, double b1, double b2,
          float eps, float wd, float bc1, float bc2, bool decoupled) {
  require_f32("adam", p);
  require_f32("adam", g);
  if (!p.numel()) return;
  struct {
    uint32_t n, p_off, g_off, m_off, v_off, decoupled;
    float lr, b1, b2, omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2;
  } q{u32(p.numel(), "size"), u32(p.offset(), "offset"), u32(g.offset(), "offset"), u32(m.offset(), "offset"),
      u32(v.offset(), "offset"), decoupled, lr, float(b1), float(b2), float(1.0 - b1), float(1.0 - b2), eps, wd, 1.0f / bc1,
      1.0f / std::sqrt(bc2)};
  launch(p, "adam", {buffer_of(p), buffer_of(g), buffer_of(m), buffer_of(v)}, q, p.numel());
}

void sgd(const Tensor& p, const Tensor& g, const Tensor& buf, float lr, float momentum, float dampening, float wd,
         bool nesterov, bool first_step) {
  require_f32("sgd", p);
  require_f32("sgd", g);
  if (!p.numel()) return;
  struct {
    uint32_t n, p_off, g_off, b_off, has_momentum, nesterov, first_step;
    float lr, momentum, dampening, wd;
  } q{u32(p.numel(), "size"), u32(p.offset(), "offset"), u32(g.offset(), "offset"),
      buf.defined() ? u32(buf.offset(), "offset") : 0, buf.defined(), nesterov, first_step, lr, momentum, dampening,
      wd};
  launch(p, "sgd", {buffer_of(p), buffer_of(g), buf.defined() ? buffer_of(buf) : buffer_of(p)}, q, p.numel());
}

}  // namespace pcp::gpu
