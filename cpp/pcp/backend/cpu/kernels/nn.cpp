// Fused row kernels: softmax / log-softmax, layer norm, cross-entropy, and their backward passes.
// `omp simd reduction` (-fopenmp-simd, no OpenMP runtime) lets the row sums vectorize.
#include "pcp/backend/cpu/kernels/common.h"

namespace pcp::cpu::PCP_ISA {

template <class T>
static void softmax_typed(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  using C = acc_t<T>;
  C* e = static_cast<C*>(kernel_scratch("softmax", sizeof(C) * size_t(n)));
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    C m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int64_t i = 0; i < n; ++i) m = ld(xr[i]) > m ? ld(xr[i]) : m;
    if (m == -INFINITY) m = 0;  // an all -inf row: avoid inf - inf
    C s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) {
      e[i] = k_exp_nonpos(ld(xr[i]) - m);
      s += e[i];
    }
    if (log) {  // (x - m) - log s: x - (m + log s) cancels for large x (2**31 lost log 2)
      C ls = k_log(s);
      for (int64_t i = 0; i < n; ++i) yr[i] = st<T>((ld(xr[i]) - m) - ls);
    } else {
      C inv = C(1) / s;
      for (int64_t i = 0; i < n; ++i) yr[i] = st<T>(e[i] * inv);
    }
  }
  std::free(e);
}

static void softmax_rows(DType dt, const char* x, char* y, int64_t rows, int64_t n, bool log) {
  switch (dt) {
    PCP_FLOAT_CASES(T, softmax_typed<T>(reinterpret_cast<const T*>(x), reinterpret_cast<T*>(y), rows, n, log))
    default: kernel_error("softmax kernel", "dtype is not floating: ", dtype_name(dt));
  }
}

template <class T>
static void layer_norm_typed(const T* x, const T* w, const T* b, T* y, float* mean_out, float* rstd_out,
                             int64_t rows, int64_t n, double eps) {
  using C = acc_t<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    // Corrected two-pass statistics in the compute type: a first mean, then the sums of the
    // deviations d and d^2 from it; sum(d) / n corrects the mean, so inputs with a large mean
    // and a small spread stay accurate without float64 arithmetic.
    C s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += ld(xr[i]);
    const C mean0 = s / C(n);
    C sd = 0, ss = 0;
#pragma omp simd reduction(+ : sd, ss)
    for (int64_t i = 0; i < n; ++i) {
      const C d = ld(xr[i]) - mean0;
      sd += d;
      ss += d * d;
    }
    const C shift = sd / C(n);
    const C mean = mean0 + shift;
    const double var = std::max(double(ss) / double(n) - double(shift) * double(shift), 0.0);
    const C rstd = C(1.0 / std::sqrt(var + eps));
    if (mean_out) mean_out[r] = float(mean);
    if (rstd_out) rstd_out[r] = float(rstd);
    for (int64_t i = 0; i < n; ++i) {
      C v = (ld(xr[i]) - mean0 - shift) * rstd;  // x - mean0 is exact where it matters
      if (w) v *= ld(w[i]);
      if (b) v += ld(b[i]);
      yr[i] = st<T>(v);
    }
  }
}

static void layer_norm_rows(DType dt, const char* x, const char* w, const char* b, char* y, float* mean,
                            float* rstd, int64_t rows, int64_t n, double eps) {
  switch (dt) {
    PCP_FLOAT_CASES(T, layer_norm_typed<T>(reinterpret_cast<const T*>(x), reinterpret_cast<const T*>(w),
                                           reinterpret_cast<const T*>(b), reinterpret_cast<T*>(y), mean, rstd,
                                           rows, n, eps))
    default: kernel_error("layer_norm kernel", "dtype is not floating: ", dtype_name(dt));
  }
}

// Backward of softmax over rows, from the output y: gx = y (g - sum(g y)); for log-softmax
// gx = g - exp(y) sum(g).
template <class T>
static void softmax_backward_typed(const T* y, const T* g, T* gx, int64_t rows, int64_t n, bool log) {
  using C = acc_t<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const T *yr = y + r * n, *gr = g + r * n;
    T* out = gx + r * n;
    C s = 0;
    if (log) {
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < n; ++i) s += ld(gr[i]);
      for (int64_t i = 0; i < n; ++i) out[i] = st<T>(ld(gr[i]) - k_exp_nonpos(ld(yr[i])) * s);
    } else {
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < n; ++i) s += ld(gr[i]) * ld(yr[i]);
      for (int64_t i = 0; i < n; ++i) out[i] = st<T>(ld(yr[i]) * (ld(gr[i]) - s));
    }
  }
}

static void softmax_backward_rows(DType dt, const char* y, const char* g, char* gx, int64_t rows, int64_t n,
                                  bool log) {
  switch (dt) {
    PCP_FLOAT_CASES(T, softmax_backward_typed<T>(reinterpret_cast<const T*>(y), reinterpret_cast<const T*>(g),
                                                 reinterpret_cast<T*>(gx), rows, n, log))
    default: kernel_error("softmax backward kernel", "dtype is not floating: ", dtype_name(dt));
  }
}

// Backward of layer norm from the forward's row statistics: with xhat = (x - mean) rstd and
// gh = g w, gx = rstd (gh - mean(gh) - xhat mean(gh xhat)); dw += g xhat and db += g.
template <class T>
static void layer_norm_backward_typed(const T* x, const T* w, const T* g, const float* mean, const float* rstd,
                                      T* gx, float* dw, float* db, int64_t rows, int64_t n) {
  using C = acc_t<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * n, *gr = g + r * n;
    const C mu = C(mean[r]), rs = C(rstd[r]);
    C a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
    for (int64_t i = 0; i < n; ++i) {
      const C xh = (ld(xr[i]) - mu) * rs, gi = ld(gr[i]);
      const C gh = w ? gi * ld(w[i]) : gi;
      a += gh;
      b += gh * xh;
      if (dw) dw[i] += float(gi * xh);
      if (db) db[i] += float(gi);
    }
    if (!gx) continue;
    a /= C(n);
    b /= C(n);
    T* out = gx + r * n;
    for (int64_t i = 0; i < n; ++i) {
      const C xh = (ld(xr[i]) - mu) * rs, gh = w ? ld(gr[i]) * ld(w[i]) : ld(gr[i]);
      out[i] = st<T>(rs * (gh - a - xh * b));
    }
  }
}

static void layer_norm_backward_rows(DType dt, const char* x, const char* w, const char* g, const float* mean,
                                     const float* rstd, char* gx, float* dw, float* db, int64_t rows, int64_t n) {
  switch (dt) {
    PCP_FLOAT_CASES(T, layer_norm_backward_typed<T>(reinterpret_cast<const T*>(x), reinterpret_cast<const T*>(w),
                                                    reinterpret_cast<const T*>(g), mean, rstd,
                                                    reinterpret_cast<T*>(gx), dw, db, rows, n))
    default: kernel_error("layer_norm backward kernel", "dtype is not floating: ", dtype_name(dt));
  }
}

template <class T>
static void cross_entropy_typed(const T* logits, const int64_t* targets, T* loss, int64_t rows, int64_t classes,
                                int64_t ignore_index) {
  using C = acc_t<T>;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = logits + r * classes;
    if (targets[r] == ignore_index) {
      loss[r] = st<T>(C(0));
      continue;
    }
    C m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (int64_t i = 0; i < classes; ++i) m = ld(xr[i]) > m ? ld(xr[i]) : m;
    if (m == -INFINITY) m = 0;
    C s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < classes; ++i) s += k_exp_nonpos(ld(xr[i]) - m);
    loss[r] = st<T>((m - ld(xr[targets[r]])) + k_log(s));
  }
}

static void cross_entropy_rows(DType dt, const char* logits, const int64_t* targets, char* loss, int64_t rows,
                               int64_t classes, int64_t ignore_index) {
  switch (dt) {
    PCP_FLOAT_CASES(T, cross_entropy_typed<T>(reinterpret_cast<const T*>(logits), targets,
                                              reinterpret_cast<T*>(loss), rows, classes, ignore_index))
    default: kernel_error("cross_entropy kernel", "dtype is not floating: ", dtype_name(dt));
  }
}

void register_nn(KernelTable& t) {
  t.softmax_rows = softmax_rows;
  t.layer_norm_rows = layer_norm_rows;
  t.softmax_backward_rows = softmax_backward_rows;
  t.layer_norm_backward_rows = layer_norm_backward_rows;
  t.cross_entropy_rows = cross_entropy_rows;
}

}  // namespace pcp::cpu::PCP_ISA
