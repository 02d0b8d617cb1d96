// CPU host code of sorting, scans and searches (ops/sort.cpp), over contiguous tensors viewed as
// (rows, n) along the axis they work on. Keys are float32, float64, int32 or int64 (the op layer
// widens 16-bit floats and bools first, exactly); a NaN orders above every number, so ascending
// sorts put NaNs last, as NumPy's.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/error.h"

namespace pcp::cpu {
namespace {

template <class F>
void with_key_type(DType dt, const char* op, F&& f) {
  switch (dt) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    default: fail<TypeError>(op, ": no CPU kernel for ", dtype_name(dt));
  }
}

template <class T>
bool key_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (b != b && a == a);
  else return a < b;
}

// Rows of (rows, n): a grain of about 64K elements a task.
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, 65536 / std::max<int64_t>(n, 1)); }

// Orders (key, index) pairs by key, NaN above every number; `descending` swaps the keys. Stable
// either way: equal keys keep their indices' order.
template <class T>
struct PairLess {
  bool descending;
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    return descending ? key_less(b.first, a.first) : key_less(a.first, b.first);
  }
};

// Stable-sorts pairs, a long run in parallel: each thread sorts a slice, then slices merge pairwise.
template <class T>
void stable_sort_pairs(std::vector<std::pair<T, int64_t>>& kv, PairLess<T> less, bool parallel) {
  const int64_t n = int64_t(kv.size());
  const int64_t parts = parallel ? std::min<int64_t>(get_num_threads(), n / 32768) : 1;
  if (parts < 2) return std::stable_sort(kv.begin(), kv.end(), less);
  const int64_t chunk = (n + parts - 1) / parts;
  parallel_for(parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      std::stable_sort(kv.begin() + std::min(n, c * chunk), kv.begin() + std::min(n, (c + 1) * chunk), less);
  });
  std::vector<std::pair<T, int64_t>> merged(kv.size());
  for (int64_t width = chunk; width < n; width *= 2) {
    const int64_t pairs = (n + 2 * width - 1) / (2 * width);
    parallel_for(pairs, 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const int64_t lo = k * 2 * width, mid = std::min(n, lo + width), hi = std::min(n, lo + 2 * width);
        std::merge(kv.begin() + lo, kv.begin() + mid, kv.begin() + mid, kv.begin() + hi, merged.begin() + lo, less);
      }
    });
    kv.swap(merged);
  }
}

}  // namespace

void argsort(const Tensor& x, const Tensor& out, bool descending) {
  const int64_t n = x.ndim() ? x.shape().back() : 1, rows = n ? x.numel() / n : 0;
  int64_t* idx = out.data<int64_t>();
  with_key_type(x.dtype(), "argsort", [&](auto tag) {
    using T = decltype(tag);
    const T* v = x.data<T>();
    const auto sort_rows = [&](int64_t b, int64_t e, bool parallel) {
      std::vector<std::pair<T, int64_t>> kv(static_cast<size_t>(n));  // keys beside indices: no gathers while sorting
      for (int64_t r = b; r < e; ++r) {
        const T* row = v + r * n;
        for (int64_t i = 0; i < n; ++i) kv[size_t(i)] = {row[i], i};
        stable_sort_pairs(kv, PairLess<T>{descending}, parallel);
        for (int64_t i = 0; i < n; ++i) idx[r * n + i] = kv[size_t(i)].second;
      }
    };
    // Few rows: each sorts on every thread in turn; many: the rows spread over the threads.
    if (rows < get_num_threads()) sort_rows(0, rows, true);
    else parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) { sort_rows(b, e, false); });
  });
}

void cumulative(const Tensor& x, const Tensor& out, bool product, bool reverse) {
  const int64_t n = x.ndim() ? x.shape().back() : 1, rows = n ? x.numel() / n : 0;
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    // float32 accumulates in float64, each output rounded once; integers wrap, as NumPy's.
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const T* v = x.data<T>();
    T* o = out.data<T>();
    parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        Acc acc = product ? Acc(1) : Acc(0);
        for (int64_t k = 0; k < n; ++k) {
          const int64_t i = r * n + (reverse ? n - 1 - k : k);
          const Acc term = std::is_floating_point_v<T> ? Acc(v[i]) : Acc(int64_t(v[i]));
          acc = product ? Acc(acc * term) : Acc(acc + term);
          o[i] = static_cast<T>(acc);
        }
      }
    });
  };
  switch (x.dtype()) {
    case DType::Float32: return run(float{});
    case DType::Float64: return run(double{});
    case DType::Int64: return run(int64_t{});
    default: fail<TypeError>("cumulative_sum: no CPU kernel for ", dtype_name(x.dtype()));
  }
}

void cumprod_backward(const Tensor& x, const Tensor& g, const Tensor& out) {
  // y_j = prod_{k<=j} x_k, so dL/dx_i = prod_{k<i} x_k * S_i with S_i = g_i + x_{i+1} S_{i+1}:
  // no division, so zeros in x are handled exactly.
  const int64_t n = x.ndim() ? x.shape().back() : 1, rows = n ? x.numel() / n : 0;
  const auto run = [&](auto tag) {
    using T = decltype(tag);
    const T *xv = x.data<T>(), *gv = g.data<T>();
    T* o = out.data<T>();
    parallel_for(rows, row_grain(n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T *xr = xv + r * n, *gr = gv + r * n;
        T* orow = o + r * n;
        double s = 0;
        for (int64_t i = n - 1; i >= 0; --i) {
          s = double(gr[i]) + (i + 1 < n ? double(xr[i + 1]) * s : 0.0);
          orow[i] = T(s);  // S_i, scaled by the prefix product below
        }
        double prefix = 1;
        for (int64_t i = 0; i < n; ++i) {
          orow[i] = T(prefix * double(orow[i]));
          prefix *= double(xr[i]);
        }
      }
    });
  };
  if (x.dtype() == DType::Float64) run(double{});
  else if (x.dtype() == DType::Float32) run(float{});
  else fail<TypeError>("cumulative_prod: no gradient kernel for ", dtype_name(x.dtype()));
}

void searchsorted(const Tensor& sorted, const Tensor& values, const Tensor& out, bool right) {
  const int64_t n = sorted.numel(), m = values.numel();
  int64_t* o = out.data<int64_t>();
  with_key_type(sorted.dtype(), "searchsorted", [&](auto tag) {
    using T = decltype(tag);
    const T *s = sorted.data<T>(), *v = values.data<T>();
    parallel_for(m, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* at = right ? std::upper_bound(s, s + n, v[i], key_less<T>) : std::lower_bound(s, s + n, v[i], key_less<T>);
        o[i] = at - s;
      }
    });
  });
}

UniqueParts unique(const Tensor& flat) {
  const int64_t n = flat.numel();
  Tensor order = Tensor::empty({n}, DType::Int64);
  argsort(flat, order, false);
  const int64_t* ord = order.data<int64_t>();
  UniqueParts parts;
  parts.inverse = Tensor::empty({n}, DType::Int64);
  int64_t* inv = parts.inverse.data<int64_t>();
  std::vector<int64_t> first, counts;
  with_key_type(flat.dtype(), "unique", [&](auto tag) {
    using T = decltype(tag);
    const T* v = flat.data<T>();
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = ord[k];
      // NaNs are never equal, so each is its own value (the standard's rule); -0 equals +0.
      if (k == 0 || !(v[i] == v[ord[k - 1]])) {
        first.push_back(i);  // the stable sort puts an equal run's first occurrence first
        counts.push_back(0);
      }
      ++counts.back();
      inv[i] = int64_t(first.size()) - 1;
    }
  });
  const int64_t u = int64_t(first.size());
  parts.index = Tensor::empty({u}, DType::Int64);
  parts.counts = Tensor::empty({u}, DType::Int64);
  std::copy(first.begin(), first.end(), parts.index.data<int64_t>());
  std::copy(counts.begin(), counts.end(), parts.counts.data<int64_t>());
  return parts;
}

}  // namespace pcp::cpu
