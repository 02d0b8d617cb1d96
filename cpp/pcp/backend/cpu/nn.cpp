// CPU host code of the neural-network primitives (ops/nn.cpp): split the rows of contiguous
// tensors across the thread pool and hand each chunk to the selected ISA's row kernels.
#include <algorithm>
#include <cstring>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/random.h"

namespace pcp::cpu {
namespace {

// Rows per thread chunk: about 16K elements, so short rows are batched.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)); }

const char* bytes(const Tensor& t) { return t.defined() ? static_cast<const char*>(t.raw_data()) : nullptr; }
char* bytes_out(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

}  // namespace

// Calls fn(first row, rows, columns) over the rows in parallel: whole rows of n columns, or, for
// causal blocks of causal_T rows, row r over its columns 0..r % causal_T with the rest of its row
// in `out` zeroed (the masked softmax outputs, and their gradients).
template <class F>
void rows_in_parallel(int64_t rows, int64_t n, int64_t causal_T, char* out, size_t itemsize, F fn) {
  const size_t row = size_t(n) * itemsize;
  parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
    if (causal_T <= 0) return fn(b, e - b, n);
    for (int64_t r = b; r < e; ++r) {
      const int64_t keep = std::min(n, r % causal_T + 1);
      fn(r, int64_t(1), keep);
      std::memset(out + r * row + keep * itemsize, 0, size_t(n - keep) * itemsize);
    }
  });
}

void softmax(const Tensor& x, const Tensor& y, bool log, int64_t causal_T) {
  const int64_t n = x.shape().back();
  const auto& k = kernels();
  const char* px = bytes(x);
  char* py = bytes_out(y);
  const size_t row = size_t(n) * x.itemsize();
  rows_in_parallel(rows_of(x.shape()), n, causal_T, py, x.itemsize(), [&](int64_t r, int64_t count, int64_t cols) {
    k.softmax_rows(x.dtype(), px + r * row, py + r * row, count, cols, log);
  });
}

void softmax_backward(const Tensor& y, const Tensor& g, const Tensor& gx, bool log, int64_t causal_T) {
  const int64_t n = y.shape().back();
  const auto& k = kernels();
  const size_t row = size_t(n) * y.itemsize();
  const char *py = bytes(y), *pg = bytes(g);
  char* pgx = bytes_out(gx);
  rows_in_parallel(rows_of(y.shape()), n, causal_T, pgx, y.itemsize(), [&](int64_t r, int64_t count, int64_t cols) {
    k.softmax_backward_rows(y.dtype(), py + r * row, pg + r * row, pgx + r * row, count, cols, log);
  });
}

// t as a contiguous tensor of dtype dt: itself where it is one (and where it is undefined), else a
// converted copy (the 16-bit operands a plan's folded casts leave are widened exactly).
static Tensor dense_as(const Tensor& t, DType dt) {
  if (!t.defined() || (t.dtype() == dt && t.is_contiguous())) return t;
  Tensor c = Tensor::empty(t.shape(), dt, t.device());
  cast_copy(t, c);
  return c;
}

static bool is_half(const Tensor& t) { return t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16; }

void layer_norm(const Tensor& x_in, const Tensor& w, const Tensor& b, const Tensor& y, const Tensor& mean,
                const Tensor& rstd, double eps, const Tensor& r_in, const Tensor& sum) {
  // The residual in x's type, both contiguous (x + r is summed a block of rows at a time); a y of
  // another type (a plan's cast folded in) written through a copy in x's.
  const Tensor r = dense_as(r_in, x_in.dtype()), x = r.defined() ? dense_as(x_in, x_in.dtype()) : x_in;
  if (y.dtype() != x.dtype()) {
    Tensor y_x = Tensor::empty(y.shape(), x.dtype(), y.device());
    layer_norm(x, w, b, y_x, mean, rstd, eps, r, sum);
    return cast_copy(y_x, y);
  }
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  const auto& k = kernels();
  const size_t row = size_t(n) * x.itemsize();
  const char *px = bytes(x), *pw = bytes(w), *pb = bytes(b);
  char* py = bytes_out(y);
  float *pm = mean.data<float>(), *pr = rstd.data<float>();
  parallel_for(rows, row_grain(n), [&](int64_t s, int64_t e) {
    const char* in = px + s * row;
    if (r.defined()) {  // the rows' sum, normalized while it is in cache
      char* ps = bytes_out(sum) + s * row;
      k.binary(BinaryOp::Add, x.dtype(), (e - s) * n, ps, 1, in, 1, bytes(r) + s * row, 1);
      in = ps;
    }
    k.layer_norm_rows(x.dtype(), in, pw, pb, py + s * row, pm + s, pr + s, e - s, n, eps);
  });
}

void layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& g_in, const Tensor& mean, const Tensor& rstd,
                         const Tensor& gx, const Tensor& param_grads_in, const Tensor& acc, const Tensor& low,
                         const Tensor& partial) {
  const int64_t n = x.shape().back(), rows = rows_of(x.shape());
  // g in x's type (a folded cast's 16-bit g widened, exactly); with partial, the sums in its
  // row 0 and zeros below; with low, gx cast to it at the end.
  const Tensor g = g_in.dtype() == x.dtype() ? g_in : dense_as(g_in, x.dtype());
  Tensor param_grads = param_grads_in;
  if (partial.defined()) {
    std::fill(partial.data<float>(), partial.data<float>() + partial.numel(), 0.0f);
    param_grads = partial.alias({2, n}, {n, 1}, partial.offset());
  }
  const auto& k = kernels();
  const size_t row = size_t(n) * x.itemsize();
  const char *px = bytes(x), *pg = bytes(g), *pw = bytes(w);
  char* pgx = bytes_out(gx);
  const float *pm = mean.data<float>(), *pr = rstd.data<float>();
  // Each chunk of rows sums its own dw, db; the partial sums are added in chunk order, so the
  // result does not depend on the thread count's scheduling.
  const int64_t chunks = std::min<int64_t>(get_num_threads(), std::max<int64_t>(1, rows / row_grain(n)));
  std::vector<float> partial_sums(size_t(chunks * 2 * n), 0.0f);
  parallel_for(chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      const int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
      float* dw = partial_sums.data() + c * 2 * n;
      k.layer_norm_backward_rows(x.dtype(), px + r0 * row, pw, pg + r0 * row, pm + r0, pr + r0, pgx + r0 * row, dw,
                                 dw + n, r1 - r0, n);
      if (acc.defined())  // the other gradient added while gx's rows are in cache
        k.binary(BinaryOp::Add, x.dtype(), (r1 - r0) * n, pgx + r0 * row, 1, pgx + r0 * row, 1, bytes(acc) + r0 * row, 1);
    }
  });
  Tensor sums = Tensor::empty({2, n}, DType::Float32);
  float* total = sums.data<float>();
  std::fill(total, total + 2 * n, 0.0f);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t i = 0; i < 2 * n; ++i) total[i] += partial_sums[size_t(c * 2 * n + i)];
  cast_copy(sums, param_grads);
  if (low.defined()) cast_copy(gx, low);
}

void cross_entropy(const Tensor& logits_in, const Tensor& targets, int64_t ignore, const Tensor& loss, const Tensor&) {
  // 16-bit logits (a folded cast) read widened for a float32 loss; no per-row statistics kept.
  const Tensor logits = loss.dtype() == DType::Float32 && is_half(logits_in) ? dense_as(logits_in, DType::Float32) : logits_in;
  const int64_t C = logits.shape().back(), rows = rows_of(logits.shape());
  const auto& k = kernels();
  const size_t row = size_t(C) * logits.itemsize(), isz = loss.itemsize();
  const char* pl = bytes(logits);
  const int64_t* pt = targets.data<int64_t>();
  char* po = bytes_out(loss);
  parallel_for(rows, row_grain(C), [&](int64_t s, int64_t e) {
    k.cross_entropy_rows(logits.dtype(), pl + s * row, pt + s, po + s * isz, e - s, C, ignore);
  });
}

void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& lse,
                            const Tensor& g, const Tensor& gx) {
  if (is_half(logits) || is_half(gx)) {  // a folded cast: computed in float32, then cast
    Tensor g32 = Tensor::empty(gx.shape(), DType::Float32);
    cross_entropy_backward(is_half(logits) ? dense_as(logits, DType::Float32) : logits, targets, ignore, lse, g, g32);
    return cast_copy(g32, gx);
  }
  // (softmax(logits) - one_hot(target)) g per row, zero for ignored rows: one pass over the
  // softmax's output instead of five ops.
  softmax(logits, gx, false, 0);
  const int64_t C = logits.shape().back(), rows = rows_of(logits.shape());
  const int64_t* t = targets.data<int64_t>();
  const int64_t g_step = g.one_value() ? 0 : 1;  // one g for every row: a mean's gradient, broadcast
  auto fix_rows = [&](auto* p, const auto* gr) {
    parallel_for(rows, row_grain(C), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const bool keep = t[r] != ignore;
        const auto s = keep ? gr[r * g_step] : 0;
        auto* row = p + r * C;
        for (int64_t j = 0; j < C; ++j) row[j] *= s;
        if (keep) row[t[r]] -= s;
      }
    });
  };
  if (logits.dtype() == DType::Float32) fix_rows(gx.data<float>(), g.data<float>());
  else fix_rows(gx.data<double>(), g.data<double>());
}

void dropout(const Tensor& x, const Tensor& out, float prob, float scale, uint64_t key, uint64_t start) {
  const float* px = x.data<float>();
  float* po = out.data<float>();
  const int64_t n = x.numel();
  parallel_for((n + 3) / 4, 4096, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      uint32_t w[4];
      Philox::generate(key, 0, start + uint64_t(c), w);
      for (int64_t j = 0; j < 4 && c * 4 + j < n; ++j)
        po[c * 4 + j] = uint_to_unit_float(w[j]) >= prob ? px[c * 4 + j] * scale : 0.0f;
    }
  });
}

}  // namespace pcp::cpu
