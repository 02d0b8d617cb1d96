// The row ops (softmax, layer_norm, cross_entropy, dropout) on float64, composed from the 64-bit
// elementwise and reduction kernels (wide.cpp): float64 on a GPU is for accuracy, not speed, so
// these take several dispatches where the float32 ones take one fused kernel.
#include <algorithm>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu::wide {

namespace {

Tensor rows_of_t(const Tensor& t, int64_t rows, int64_t n) { return t.alias({rows, n}, {n, 1}, t.offset()); }
// Per-row values (contiguous, one a row, or one for all) as a (rows, 1) column.
Tensor column(const Tensor& t, int64_t rows) {
  return t.one_value() ? t.alias({1, 1}, {0, 0}, t.offset()) : t.alias({rows, 1}, {1, 1}, t.offset());
}

Tensor constant(double v, Device d) {
  Tensor t = Tensor::empty({1, 1}, DType::Float64, d);
  gpu::fill(t, v);
  return t;
}
Shape broadcast(const Shape& a, const Shape& b) { return {std::max(a[0], b[0]), std::max(a[1], b[1])}; }
Tensor bin(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::empty(broadcast(a.shape(), b.shape()), op >= BinaryOp::Eq && op <= BinaryOp::Ge ? DType::Bool
                                                                                                      : DType::Float64,
                             a.device());
  gpu::binary(op, a, b, out);
  return out;
}
Tensor un(UnaryOp op, const Tensor& x) {
  Tensor out = Tensor::empty(x.shape(), DType::Float64, x.device());
  gpu::unary(op, x, out);
  return out;
}
Tensor choose(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::empty(broadcast(cond.shape(), broadcast(a.shape(), b.shape())), DType::Float64, a.device());
  gpu::where(cond, a, b, out);
  return out;
}
// Sum (or max) of each row of a (rows, n) block, as a (rows, 1) column.
Tensor per_row(ReduceOp op, const Tensor& x) {
  const Tensor c = x.is_contiguous() ? x : Tensor::empty(x.shape(), DType::Float64, x.device());
  if (!c.is_same(x)) gpu::copy(x, c);
  Tensor out = Tensor::empty({x.shape()[0], 1}, DType::Float64, x.device());
  gpu::reduce(op, c, x.shape()[0], x.shape()[1], 1, out);
  return out;
}
Tensor upload_bools(const std::vector<uint8_t>& v, const Shape& shape, Device d) {
  Tensor t = Tensor::empty(shape, DType::Bool, d);
  if (!v.empty()) rt().upload(d.index, buffer_of(t), 0, v.data(), v.size());
  return t;
}
// The causal mask of attention scores: row r keeps columns 0 .. r % T.
Tensor causal_keep(int64_t rows, int64_t n, int64_t T, Device d) {
  std::vector<uint8_t> keep(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) keep[size_t(r * n + c)] = c <= r % T;
  return upload_bools(keep, {rows, n}, d);
}

}  // namespace

void softmax(const Tensor& x, const Tensor& y, bool log, int64_t causal_T) {
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  if (rows * n == 0) return;
  const Device d = x.device();
  Tensor X = rows_of_t(x, rows, n), keep;
  if (causal_T > 0) {
    keep = causal_keep(rows, n, causal_T, d);
    X = choose(keep, X, constant(-1.0 / 0.0, d));
  }
  const Tensor z = bin(BinaryOp::Sub, X, per_row(ReduceOp::Max, X)), e = un(UnaryOp::Exp, z);
  const Tensor s = per_row(ReduceOp::Sum, e);
  Tensor r = log ? bin(BinaryOp::Sub, z, un(UnaryOp::Log, s)) : bin(BinaryOp::Div, e, s);
  if (causal_T > 0) r = choose(keep, r, constant(0.0, d));
  gpu::cast(r, rows_of_t(y, rows, n));
}

void softmax_backward(const Tensor& y, const Tensor& g, const Tensor& gx, bool log, int64_t causal_T) {
  const int64_t n = y.shape().back(), rows = rows_of(y.shape());
  if (rows * n == 0) return;
  const Tensor Y = rows_of_t(y, rows, n), G = rows_of_t(g, rows, n);
  Tensor r = log ? bin(BinaryOp::Sub, G, bin(BinaryOp::Mul, un(UnaryOp::Exp, Y), per_row(ReduceOp::Sum, G)))
                 : bin(BinaryOp::Mul, Y, bin(BinaryOp::Sub, G, per_row(ReduceOp::Sum, bin(BinaryOp::Mul, G, Y))));
  if (causal_T > 0) r = choose(causal_keep(rows, n, causal_T, y.device()), r, constant(0.0, y.device()));
  gpu::cast(r, rows_of_t(gx, rows, n));
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Tensor& mean,
                const Tensor& rstd, double eps, const Tensor& r, const Tensor& s) {
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  if (rows == 0) return;
  const Device d = x.device();
  Tensor X = rows_of_t(x, rows, n);
  if (r.defined()) {  // the residual form: x + r, written to s and normalized
    X = bin(BinaryOp::Add, X, rows_of_t(r, rows, n));
    gpu::cast(X, rows_of_t(s, rows, n));
  }
  const Tensor inv_n = constant(1.0 / double(n), d);
  const Tensor mu = bin(BinaryOp::Mul, per_row(ReduceOp::Sum, X), inv_n);
  const Tensor xc = bin(BinaryOp::Sub, X, mu);
  const Tensor var = bin(BinaryOp::Mul, per_row(ReduceOp::Sum, bin(BinaryOp::Mul, xc, xc)), inv_n);
  const Tensor rs = un(UnaryOp::Rsqrt, bin(BinaryOp::Add, var, constant(eps, d)));
  Tensor out = bin(BinaryOp::Mul, xc, rs);
  if (w.defined()) out = bin(BinaryOp::Mul, out, w.alias({1, n}, {0, 1}, w.offset()));
  if (b.defined()) out = bin(BinaryOp::Add, out, b.alias({1, n}, {0, 1}, b.offset()));
  gpu::cast(out, rows_of_t(y, rows, n));
  gpu::cast(mu, column(mean, rows));
  gpu::cast(rs, column(rstd, rows));
}

namespace {
// Each row's class (int32, -1 where ignored), from checked host int64 targets (ignore -1) or
// int32 GPU targets, checked here (they are read back: float64 is not the fast path).
Tensor row_classes(const Tensor& targets, int64_t ignore, int64_t rows, int64_t C, Device d) {
  const Tensor host = targets.device().is_gpu() ? targets.host_copy() : targets;
  std::vector<int32_t> t(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t v = host.dtype() == DType::Int32 ? host.data<int32_t>()[i] : host.data<int64_t>()[i];
    if (v == ignore) t[size_t(i)] = -1;
    else if (v < 0 || v >= C)
      fail<IndexError>("cross_entropy: target ", v, " is out of range for ", C, " classes (expected 0 <= target < ",
                       C, ", or ignore_index ", ignore, ")");
    else t[size_t(i)] = int32_t(v);
  }
  return upload_ints(t, d).alias({rows, 1}, {1, 1}, 0);
}
// (rows, C) bools: column == the row's class.
Tensor one_hot_rows(const Tensor& classes, int64_t C, Device d) {
  std::vector<int32_t> cols(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) cols[size_t(c)] = int32_t(c);
  Tensor hot = Tensor::empty({classes.shape()[0], C}, DType::Bool, d);
  gpu::compare(BinaryOp::Eq, classes, upload_ints(cols, d).alias({1, C}, {0, 1}, 0), hot);
  return hot;
}
Tensor valid_rows(const Tensor& classes, Device d) {
  Tensor valid = Tensor::empty(classes.shape(), DType::Bool, d);
  gpu::compare(BinaryOp::Ne, classes, upload_ints({-1}, d).alias({1, 1}, {0, 0}, 0), valid);
  return valid;
}
}  // namespace

void cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& loss, const Tensor& lse) {
  const int64_t C = logits.shape().back(), rows = rows_of(logits.shape());
  if (rows == 0) return;
  const Device d = logits.device();
  const Tensor X = rows_of_t(logits, rows, C), classes = row_classes(targets, ignore, rows, C, d);
  const Tensor m = per_row(ReduceOp::Max, X);
  const Tensor log_sum = un(UnaryOp::Log, per_row(ReduceOp::Sum, un(UnaryOp::Exp, bin(BinaryOp::Sub, X, m))));
  const Tensor picked = per_row(ReduceOp::Sum, choose(one_hot_rows(classes, C, d), X, constant(0.0, d)));
  const Tensor row_loss = bin(BinaryOp::Sub, bin(BinaryOp::Add, m, log_sum), picked);
  gpu::cast(choose(valid_rows(classes, d), row_loss, constant(0.0, d)), loss.alias({rows, 1}, {1, 1}, loss.offset()));
  if (lse.defined()) {  // (max, log-sum-exp), as the float32 kernel keeps them (the backward recomputes)
    gpu::cast(m, lse.alias({rows, 1}, {2, 1}, lse.offset()));
    gpu::cast(log_sum, lse.alias({rows, 1}, {2, 1}, lse.offset() + 1));
  }
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& g,
                            const Tensor& gx) {
  const int64_t C = logits.shape().back(), rows = rows_of(logits.shape());
  if (rows * C == 0) return;
  const Device d = logits.device();
  const Tensor X = rows_of_t(logits, rows, C), classes = row_classes(targets, ignore, rows, C, d);
  const Tensor e = un(UnaryOp::Exp, bin(BinaryOp::Sub, X, per_row(ReduceOp::Max, X)));
  const Tensor p = bin(BinaryOp::Div, e, per_row(ReduceOp::Sum, e));
  const Tensor hot = choose(one_hot_rows(classes, C, d), constant(1.0, d), constant(0.0, d));
  const Tensor scale = choose(valid_rows(classes, d), column(g, rows), constant(0.0, d));
  gpu::cast(bin(BinaryOp::Mul, bin(BinaryOp::Sub, p, hot), scale), rows_of_t(gx, rows, C));
}

void dropout(const Tensor& x, const Tensor& out, float prob, float scale, uint64_t key, uint64_t start) {
  // The float32 kernel's mask (scale or 0 at each element), applied in float64.
  Tensor ones = Tensor::empty(x.shape(), DType::Float32, x.device()), mask = Tensor::empty(x.shape(), DType::Float32, x.device());
  gpu::fill(ones, 1.0);
  gpu::dropout(ones, mask, prob, scale, key, start);
  gpu::binary(BinaryOp::Mul, x, mask, out);
}

}  // namespace pcp::gpu::wide
