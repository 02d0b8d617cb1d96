// GPU host code of the neural-network primitives: softmax, layer norm, cross-entropy, dropout.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "pcp/backend/gpu/faults.h"
#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

namespace {

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

Tensor device_class_indices(const Tensor& targets, Device device) {
  const Tensor flat = upload_indices(targets, device);  // contiguous int64 (prepared_targets)
  return flat.alias(targets.shape(), contiguous_strides(targets.shape()), 0);
}

// Rows of a multiple of 4 values at offsets of a multiple of 4 in float32, float16 or
// bfloat16: the kernels that read and write these types directly, 8 rows per workgroup.
static bool rows4(const Tensor& any, std::initializer_list<const Tensor*> ts) {
  if (any.shape().back() % 4) return false;
  for (const Tensor* t : ts)
    if (!wide_io(*t) || t->offset() % 4) return false;
  return true;
}
static uint32_t row_groups(int64_t rows) { return uint32_t(std::min<int64_t>((rows + 7) / 8, max_groups())); }
// Rows up to this long take the 8-rows-per-workgroup layer norm kernels (GPT's 384 to 1600;
// MAX_BLOCKS x BLOCK in layer_norm_backward8.comp).
constexpr int64_t kShortRow = 2048;

void softmax(const Tensor& x, const Tensor& y, bool log, int64_t causal_T) {
  if (is_wide(x)) {
    require_wide("softmax", x);
    return wide::softmax(x, y, log, causal_T);
  }
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  if (rows4(x, {&x, &y})) {
    struct { uint32_t rows, n4, x_off4, y_off4, log, causal, T, x_type, y_type; } p{
        u32(rows, "rows"), u32(n / 4, "size"), u32(x.offset() / 4, "offset"), u32(y.offset() / 4, "offset"), log,
        causal_T > 0, u32(std::max<int64_t>(causal_T, 1), "size"), type_code("softmax", x), type_code("softmax", y)};
    if (rows > 0) rt().dispatch(x.device().index, "softmax4", {buffer_of(x), buffer_of(y)}, &p, sizeof p, row_groups(rows));
    return;
  }
  if (is_half(x)) {
    return into_float32(y, [&](const Tensor& o) { softmax(widened(x), o, log, causal_T); });
  }
  require_f32("softmax", x);
  struct { uint32_t rows, n, x_off, y_off, log, causal, T; } p{
      u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"), u32(y.offset(), "offset"), log,
      causal_T > 0, u32(std::max<int64_t>(causal_T, 1), "size")};
  launch_rows(x, "softmax", {buffer_of(x), buffer_of(y)}, &p, sizeof p, rows);
}

void softmax_backward(const Tensor& y, const Tensor& g, const Tensor& gx, bool log, int64_t causal_T) {
  if (is_wide(y)) {
    require_wide("softmax_backward", y);
    return wide::softmax_backward(y, g, gx, log, causal_T);
  }
  const int64_t n = y.shape().back(), rows = rows_of(y.shape());
  if (rows4(y, {&y, &g, &gx})) {
    struct { uint32_t rows, n4, y_off4, g_off4, gx_off4, log, causal, T, y_type, g_type, gx_type; } p{
        u32(rows, "rows"), u32(n / 4, "size"), u32(y.offset() / 4, "offset"), u32(g.offset() / 4, "offset"),
        u32(gx.offset() / 4, "offset"), log, causal_T > 0, u32(std::max<int64_t>(causal_T, 1), "size"),
        type_code("softmax_backward", y), type_code("softmax_backward", g), type_code("softmax_backward", gx)};
    if (rows > 0)
      rt().dispatch(y.device().index, "softmax_backward4", {buffer_of(y), buffer_of(g), buffer_of(gx)}, &p, sizeof p,
                    row_groups(rows));
    return;
  }
  if (is_half(y)) {
    return into_float32(gx, [&](const Tensor& o) { softmax_backward(widened(y), widened(g), o, log, causal_T); });
  }
  require_f32("softmax_backward", y);
  struct { uint32_t rows, n, y_off, g_off, gx_off, log, causal, T; } p{
      u32(rows, "rows"), u32(n, "size"), u32(y.offset(), "offset"), u32(g.offset(), "offset"),
      u32(gx.offset(), "offset"), log, causal_T > 0, u32(std::max<int64_t>(causal_T, 1), "size")};
  launch_rows(y, "softmax_backward", {buffer_of(y), buffer_of(g), buffer_of(gx)}, &p, sizeof p, rows);
}

// Whether a kernel writes `out` as 16-bit words (two elements each): rows of an even length at
// an even offset.
static bool half_pairs(const Tensor& out) { return is_half(out) && out.shape().back() % 2 == 0 && out.offset() % 2 == 0; }

void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Tensor& mean,
                const Tensor& rstd, double eps, const Tensor& r, const Tensor& s) {
  if (is_wide(x)) {
    require_wide("layer_norm", x);
    return wide::layer_norm(x, w, b, y, mean, rstd, eps, r, s);
  }
  if (is_half(x)) {
    return into_float32(y, [&](const Tensor& o) { layer_norm(widened(x), widened(w), widened(b), o, mean, rstd, eps, {}, {}); });
  }
  require_f32("layer_norm", x);
  // A float32 x normalized into a 16-bit y (a plan's cast folded in): written as it is computed.
  if (is_half(y) && !half_pairs(y))
    return into_float32(y, [&](const Tensor& o) { layer_norm(x, w, b, o, mean, rstd, eps, r, s); });
  if (r.defined() && !wide_io(r)) require_f32("layer_norm", r);
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  struct {
    uint32_t rows, n, x_off, w_off, b_off, y_off, has_w, has_b;
    float eps;
    uint32_t y_type, has_r, r_off, r_type, s_off;
  } p{u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"), w.defined() ? u32(w.offset(), "offset") : 0,
      b.defined() ? u32(b.offset(), "offset") : 0, u32(y.offset(), "offset"), w.defined(), b.defined(), float(eps),
      type_code("layer_norm", y), r.defined(), r.defined() ? u32(r.offset(), "offset") : 0,
      r.defined() ? type_code("layer_norm", r) : 0, s.defined() ? u32(s.offset(), "offset") : 0};
  Buffer* xb = buffer_of(x);
  if (rows == 0) return;
  const bool short_rows = n <= kShortRow;
  rt().dispatch(x.device().index, short_rows ? "layer_norm8" : "layer_norm",
                {xb, w.defined() ? buffer_of(w) : xb, b.defined() ? buffer_of(b) : xb, buffer_of(y), buffer_of(mean),
                 buffer_of(rstd), r.defined() ? buffer_of(r) : xb, s.defined() ? buffer_of(s) : buffer_of(mean)},
                &p, sizeof p, short_rows ? row_groups(rows) : uint32_t(std::min<int64_t>(rows, max_groups())));
}

void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& g, const Tensor& mean, const Tensor& rstd,
                         const Tensor& gx, const Tensor& param_grads, const Tensor& acc, const Tensor& low,
                         const Tensor& partial) {
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  if (partial.defined() && (n > kShortRow || is_half(x) || (low.defined() && !half_pairs(low)))) {
    // The partial rows' form where the one-pass kernel does not run: the sums in row 0.
    Tensor sums = Tensor::empty({2, n}, DType::Float32, x.device());
    layer_norm_backward(x, w, g, mean, rstd, gx, sums, acc, low, {});
    fill(partial, 0.0);
    return copy(sums.alias({1, 2 * n}, {2 * n, 1}, 0), partial.alias({1, 2 * n}, {2 * n, 1}, partial.offset()));
  }
  if (low.defined() && !half_pairs(low)) {  // odd rows: the copy cast apart
    layer_norm_backward(x, w, g, mean, rstd, gx, param_grads, acc, {}, {});
    return cast(gx, low);
  }
  // g may be 16-bit for a float32 x (a plan's cast folded in): the kernels widen it as they read.
  if (is_half(x)) {
    return into_float32(gx, [&](const Tensor& gx32) {
      into_float32(param_grads, [&](const Tensor& pg32) {
        layer_norm_backward(widened(x), widened(w), widened(g), mean, rstd, gx32, pg32, {}, {}, {});
      });
    });
  }
  require_f32("layer_norm_backward", x);
  Buffer* xb = buffer_of(x);
  const uint32_t g_type = type_code("layer_norm_backward", g);
  if (acc.defined()) require_f32("layer_norm_backward", acc);
  struct { uint32_t rows, n, x_off, w_off, g_off, gx_off, has_w, g_type, has_acc, acc_off, has_low, low_off, low_type; } p{
      u32(rows, "rows"), u32(n, "size"), u32(x.offset(), "offset"), w.defined() ? u32(w.offset(), "offset") : 0,
      u32(g.offset(), "offset"), u32(gx.offset(), "offset"), w.defined(), g_type, acc.defined(),
      acc.defined() ? u32(acc.offset(), "offset") : 0, low.defined(), low.defined() ? u32(low.offset(), "offset") : 0,
      low.defined() ? type_code("layer_norm_backward", low) : 0};
  std::vector<Buffer*> buffers{xb, w.defined() ? buffer_of(w) : xb, buffer_of(g), buffer_of(mean), buffer_of(rstd),
                               buffer_of(gx), acc.defined() ? buffer_of(acc) : xb,
                               low.defined() ? buffer_of(low) : buffer_of(gx)};
  if (n <= kShortRow) {
    // One pass writes gx and each workgroup's partial sums of dw and db (rows of `partial`);
    // a sum over them follows (reduce_cols, narrow column blocks). Enough workgroups to keep a
    // large GPU's memory busy (1024 of 256: 8 on each of 128 multiprocessors), few enough to
    // keep that sum small.
    // With `partial`, its rows are these (a plan sums them with others').
    const int64_t groups =
        partial.defined() ? partial.shape()[0] : std::max<int64_t>(1, std::min<int64_t>(row_groups(rows), 1024));
    const Tensor part = partial.defined() ? partial : Tensor::empty({groups, 2 * n}, DType::Float32, x.device());
    buffers.push_back(buffer_of(part));
    rt().dispatch(x.device().index, "layer_norm_backward8", buffers, &p, sizeof p, uint32_t(groups));
    if (!partial.defined()) gpu::reduce(ReduceOp::Sum, part, 1, groups, 2 * n, param_grads);
    return;
  }
  if (rows > 0)
    rt().dispatch(x.device().index, "layer_norm_backward", buffers, &p, sizeof p,
                  uint32_t(std::min<int64_t>(rows, max_groups())));
  // dw, db: per-chunk column sums (enough chunks to fill the GPU), then a sum over the chunks.
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(rows, 65536 / std::max<int64_t>(n, 1)));
  Tensor chunk_sums = Tensor::empty({chunks, 2 * n}, DType::Float32, x.device());
  struct { uint32_t rows, n, x_off, g_off, chunks, g_type; } q{u32(rows, "rows"), u32(n, "size"),
                                                               u32(x.offset(), "offset"), u32(g.offset(), "offset"),
                                                               u32(chunks, "chunks"), g_type};
  launch(x, "layer_norm_param_grad", {xb, buffer_of(g), buffer_of(mean), buffer_of(rstd), buffer_of(chunk_sums)}, q,
         chunks * n);
  gpu::reduce(ReduceOp::Sum, chunk_sums, 1, chunks, 2 * n, param_grads);
}

// Cross-entropy reads float32, float16 or bfloat16 logits as they are (computing in float32).
void cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& loss, const Tensor& lse) {
  if (is_wide(logits)) {
    require_wide("cross_entropy", logits);
    return wide::cross_entropy(logits, targets, ignore, loss, lse);
  }
  if (is_half(loss)) {
    return into_float32(loss, [&](const Tensor& o) { cross_entropy(logits, targets, ignore, o, lse); });
  }
  if (!wide_io(logits)) require_f32("cross_entropy", logits);
  const int64_t C = logits.shape().back(), rows = rows_of(logits.shape());
  Tensor t = class_indices(targets, logits.device());
  struct { uint32_t rows, C, x_off, loss_off, t_off; int32_t ignore; uint32_t x_type; } p{
      u32(rows, "rows"), u32(C, "size"), u32(logits.offset(), "offset"), u32(loss.offset(), "offset"),
      u32(t.offset(), "offset"), int32_t(std::clamp<int64_t>(ignore, INT32_MIN, INT32_MAX)),
      type_code("cross_entropy", logits)};
  launch_rows(logits, "cross_entropy",
              {buffer_of(logits), buffer_of(t), buffer_of(loss), buffer_of(lse), fault_buffer(logits.device().index)},
              &p, sizeof p, rows);
}

// Reads float32, float16 or bfloat16 logits as they are and writes gx in its own type (16-bit:
// two elements a word, for an even count at an even offset).
void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& lse,
                            const Tensor& g, const Tensor& gx) {
  if (is_wide(logits)) {
    require_wide("cross_entropy_backward", logits);
    return wide::cross_entropy_backward(logits, targets, ignore, g, gx);
  }
  if (!lse.defined()) {  // a plan traced on the CPU, whose backward takes no statistics: made here
    Tensor stats = Tensor::empty({rows_of(logits.shape()), 2}, DType::Float32, logits.device());
    Tensor loss = Tensor::empty({rows_of(logits.shape())}, DType::Float32, logits.device());
    cross_entropy(logits, targets, ignore, loss, stats);
    return cross_entropy_backward(logits, targets, ignore, stats, g, gx);
  }
  if (is_half(g) || (is_half(gx) && (gx.numel() % 2 || gx.offset() % 2))) {
    return into_float32(gx, [&](const Tensor& o) { cross_entropy_backward(logits, targets, ignore, lse, widened(g), o); });
  }
  if (!wide_io(logits)) require_f32("cross_entropy_backward", logits);
  const int64_t C = logits.shape().back();
  Tensor t = class_indices(targets, logits.device());
  struct { uint32_t n, C, x_off, g_off, gx_off, t_off; int32_t ignore; uint32_t x_type, gx_type, g_step; } p{
      u32(logits.numel(), "size"), u32(C, "size"), u32(logits.offset(), "offset"), u32(g.offset(), "offset"),
      u32(gx.offset(), "offset"), u32(t.offset(), "offset"), int32_t(std::clamp<int64_t>(ignore, INT32_MIN, INT32_MAX)),
      type_code("cross_entropy_backward", logits), type_code("cross_entropy_backward", gx), !g.one_value()};
  if (logits.numel())
    launch(logits, "cross_entropy_backward",
           {buffer_of(logits), buffer_of(t), buffer_of(lse), buffer_of(g), buffer_of(gx)}, p,
           is_half(gx) ? logits.numel() / 2 : logits.numel());
}

void dropout(const Tensor& x, const Tensor& out, float prob, float scale, uint64_t key, uint64_t start) {
  if (is_wide(x)) {
    require_wide("dropout", x);
    return wide::dropout(x, out, prob, scale, key, start);
  }
  if (!out.numel()) return;
  if (x.is_contiguous() && wide_io(x) && wide_io(out) && x.numel() % 4 == 0 && x.offset() % 4 == 0 &&
      out.offset() % 4 == 0) {  // 16-bit words read and written directly
    struct {
      uint32_t n4, x_off4, out_off4, key_lo, key_hi, start_lo, start_hi, x_type, out_type;
      float prob, scale;
    } p{u32(x.numel() / 4, "size"), u32(x.offset() / 4, "offset"), u32(out.offset() / 4, "offset"), uint32_t(key),
        uint32_t(key >> 32), uint32_t(start), uint32_t(start >> 32), type_code("dropout", x), type_code("dropout", out),
        prob, scale};
    return launch(x, "dropout4", {buffer_of(x), buffer_of(out)}, p, x.numel() / 4);
  }
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

}  // namespace pcp::gpu
