// GPU reductions along the middle axis of contiguous (O, R, I) tensors.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/multi_tensor.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

namespace {
constexpr int64_t kFill = 1024, kMinRows = 2048;  // enough workgroups for a large GPU; rows per chunk

// reduce_cols's columns a workgroup: 64 (coalesced), fewer while that leaves the GPU short of
// workgroups and each of them long loops (256 / width lanes of rows share a column).
int64_t cols_width(int64_t O, int64_t R, int64_t I) {
  int64_t width = 64;
  while (width > 4 && O * ((I + width - 1) / width) < kFill / 4 && R > 4 * (256 / width)) width /= 2;
  return width;
}
}  // namespace

void reduce(ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out) {
  // int32 and bool reduce through the int64 kernels
  if (is_wide(x) || x.dtype() == DType::Int32 || x.dtype() == DType::Bool) return wide::reduce(op, x, O, R, I, out);
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { gpu::reduce(op, widened(x), O, R, I, o); });
  }
  require_f32("reduction", x);
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  if (arg && out.dtype() != DType::Int64) fail<ValueError>("argmax/argmin: the result must be int64");
  if (O * I == 0) return;
  const uint32_t code = op == ReduceOp::Sum ? 0 : op == ReduceOp::Max ? 1 : op == ReduceOp::Min ? 2
                        : op == ReduceOp::ArgMax ? 3 : 4;
  // Wide results read coalesced column blocks; a reduction with few workgroups is cut into
  // chunks of rows whose partial results a second pass combines (in a fixed order).
  const bool cols = I >= 16;
  const char* kernel = cols ? "reduce_cols" : "reduce";
  const int64_t width = cols ? cols_width(O, R, I) : 64;
  auto workgroups = [&](int64_t o, int64_t chunks, int64_t i) { return o * chunks * (cols ? (i + width - 1) / width : i); };
  int64_t chunks = 1;
  if (!arg && R >= 2 * kMinRows && workgroups(O, 1, I) < kFill)
    chunks = std::min((kFill + workgroups(O, 1, I) - 1) / workgroups(O, 1, I), R / kMinRows);
  const int64_t rows = (R + chunks - 1) / chunks;
  chunks = (R + rows - 1) / rows;
  struct { uint32_t O, R, I, chunks, rows, x_off, out_off, op, cols; } p{
      u32(O, "size"), u32(R, "size"), u32(I, "size"), uint32_t(chunks), u32(rows, "size"), u32(x.offset(), "offset"),
      0, code, uint32_t(width)};
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

void sum_rows_multi(const std::vector<Tensor>& xs, const std::vector<Tensor>& outs) {
  if (xs.empty()) return;
  const Device dev = xs[0].device();
  std::vector<Row> rows;
  std::vector<uint32_t> units, extra;
  std::vector<size_t> tabled_ones, alone;
  for (size_t i = 0; i < xs.size(); ++i) {
    require_f32("sum_rows_multi", xs[i]);
    const int64_t R = xs[i].shape()[0], I = xs[i].shape()[1];
    // In the table: what reduce() sums with reduce_cols in one pass; each entry takes reduce's
    // column width, so the sums are reduce's bit for bit.
    if (R == 0 || I < 16 || R >= 2 * kMinRows) {
      alone.push_back(i);
      continue;
    }
    const int64_t width = cols_width(1, R, I);
    rows.push_back({&xs[i], &outs[i], nullptr, nullptr});
    units.push_back(u32((I + width - 1) / width, "size"));
    extra.push_back(u32(R, "rows") | uint32_t(width) << 24);  // R < 4096: 12 bits
    tabled_ones.push_back(i);
  }
  if (!rows.empty() && tabled(dev, rows)) {
    const Table t = table(dev, rows, units, extra);
    struct { uint32_t count, blocks; } p{t.count, t.chunks};
    if (t.count) launch_table(dev, "sum_rows_multi", t, p);
  } else {
    alone.insert(alone.end(), tabled_ones.begin(), tabled_ones.end());
  }
  for (size_t i : alone) {
    if (xs[i].numel() == 0) {
      if (outs[i].numel()) fill(outs[i], 0.0);  // an empty sum
    } else {
      gpu::reduce(ReduceOp::Sum, xs[i], 1, xs[i].shape()[0], xs[i].shape()[1], outs[i]);
    }
  }
}

}  // namespace pcp::gpu
