// Fused optimizer updates: one pass over parameter, gradient and state (vectorizes).
#include "pcp/backend/cpu/kernels/common.h"

namespace pcp::cpu::PCP_ISA {

// g + wd * p, without the term when wd is 0: an infinite parameter would make it NaN (0 * inf).
PCP_INLINE float decayed(float g, float p, float wd) { return g + (wd != 0.0f ? wd * p : 0.0f); }

static void adam_update(float* p, const float* g, float* m, float* v, int64_t n, float lr, float b1, float b2,
                        float omb1, float omb2, float eps, float wd, float bc1, float bc2, bool decoupled) {
  const float inv_bc1 = 1.0f / bc1, inv_sqrt_bc2 = 1.0f / std::sqrt(bc2);
  if (decoupled) {
    for (int64_t i = 0; i < n; ++i) {
      float gi = g[i];
      m[i] = b1 * m[i] + omb1 * gi;
      v[i] = b2 * v[i] + omb2 * gi * gi;
      float denom = std::sqrt(v[i]) * inv_sqrt_bc2 + eps;
      p[i] = p[i] * (1.0f - lr * wd) - lr * (m[i] * inv_bc1) / denom;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      float gi = decayed(g[i], p[i], wd);
      m[i] = b1 * m[i] + omb1 * gi;
      v[i] = b2 * v[i] + omb2 * gi * gi;
      float denom = std::sqrt(v[i]) * inv_sqrt_bc2 + eps;
      p[i] -= lr * (m[i] * inv_bc1) / denom;
    }
  }
}

static void sgd_update(float* p, const float* g, float* buf, int64_t n, float lr, float momentum, float dampening,
                       float wd, bool nesterov, bool first_step) {
  if (momentum == 0.0f) {
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * decayed(g[i], p[i], wd);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    float gi = decayed(g[i], p[i], wd);
    float b = first_step ? gi : momentum * buf[i] + (1.0f - dampening) * gi;
    buf[i] = b;
    p[i] -= lr * (nesterov ? gi + momentum * b : b);
  }
}

static double sum_squares(const float* x, int64_t n) {
  // Blocks of float partial sums keep the loop vectorized; blocks are added in double.
  double total = 0;
  for (int64_t b = 0; b < n; b += 1024) {
    const int64_t e = b + 1024 < n ? b + 1024 : n;
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; ++i) s += x[i] * x[i];
    total += s;
  }
  return total;
}

void register_optim(KernelTable& t) {
  t.sum_squares = sum_squares;
  t.adam_update = adam_update;
  t.sgd_update = sgd_update;
}

}  // namespace pcp::cpu::PCP_ISA
