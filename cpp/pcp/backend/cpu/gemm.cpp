// Blocked, packed, threaded GEMM driver (BLIS-style loops around the ISA's micro-kernel).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"

namespace pcp::cpu {
namespace {

// Packing buffers live per thread and only grow, so small GEMMs (attention heads, one per
// batch element) allocate nothing.
struct PackBuffer {
  float* data = nullptr;
  size_t size = 0;
  ~PackBuffer() { std::free(data); }
  float* get(size_t n) {
    if (n > size) {
      std::free(data);
      size = n;
      data = static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64));
      if (!data) throw std::bad_alloc();
    }
    return data;
  }
};
thread_local PackBuffer t_apack, t_bpack;

}  // namespace

void gemm_f32(int64_t M, int64_t N, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B,
              int64_t rsb, int64_t csb, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
    return;
  }
  const KernelTable& kt = kernels();
  const int64_t MR = kt.gemm_mr, NR = kt.gemm_nr;
  const int64_t KC = 256;                      // a B micro-panel (KC x NR) stays in L1/L2
  const int64_t MC = MR * std::max<int64_t>(1, 144 / MR);  // an A block (MC x KC) stays in L2
  const int64_t NC = NR * std::max<int64_t>(1, 4096 / NR);
  const int64_t NB = NR * 4;                   // columns per task

  const int64_t m_panels = (M + MR - 1) / MR;
  float* apack = t_apack.get(size_t(m_panels * MR * KC));
  float* bpack = t_bpack.get(size_t(((std::min(N, NC) + NR - 1) / NR) * NR * KC));

  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = std::min(NC, N - jc);
    const int64_t n_panels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = std::min(KC, K - pc);
      const bool accumulate = pc > 0;
      // Pack B (kc x nc) and all of A (M x kc) for this depth slice in one parallel region:
      // items [0, n_panels) are B panels, the rest A panels.
      const int64_t small = (M + N) * kc < 65536;  // too little to be worth waking threads for
      parallel_for(n_panels + m_panels, small ? n_panels + m_panels : 4, [&](int64_t b, int64_t e) {
        if (b < n_panels) {
          int64_t be = std::min(e, n_panels);
          int64_t c0 = b * NR, c1 = std::min(nc, be * NR);
          kt.gemm_pack_b(B + pc * rsb + (jc + c0) * csb, rsb, csb, kc, c1 - c0, bpack + b * NR * kc);
        }
        if (e > n_panels) {
          int64_t ab = std::max(b, n_panels) - n_panels, ae = e - n_panels;
          int64_t r0 = ab * MR, r1 = std::min(M, ae * MR);
          kt.gemm_pack_a(A + r0 * rsa + pc * csa, rsa, csa, r1 - r0, kc, apack + ab * MR * kc);
        }
      });
      // Tasks: (MC rows) x (NB columns) tiles of C.
      const int64_t m_blocks = (M + MC - 1) / MC, n_blocks = (nc + NB - 1) / NB;
      parallel_for(m_blocks * n_blocks, small ? m_blocks * n_blocks : 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t ib = t / n_blocks, jb = t % n_blocks;
          const int64_t i0 = ib * MC, i1 = std::min(M, i0 + MC);
          const int64_t j0 = jb * NB, j1 = std::min(nc, j0 + NB);
          for (int64_t j = j0; j < j1; j += NR) {
            const float* bp = bpack + (j / NR) * NR * kc;
            for (int64_t i = i0; i < i1; i += MR) {
              const float* ap = apack + (i / MR) * MR * kc;
              kt.gemm_micro(kc, ap, bp, C + i * ldc + jc + j, ldc, std::min(MR, M - i), std::min(NR, nc - j),
                            accumulate);
            }
          }
        }
      });
    }
  }
}

void gemm_f64(int64_t M, int64_t N, int64_t K, const double* A, int64_t rsa, int64_t csa, const double* B,
              int64_t rsb, int64_t csb, double* C, int64_t ldc) {
  // float64 is the reference dtype, not the fast one: a simple i-k-j loop over rows in parallel.
  parallel_for(M, std::max<int64_t>(1, 16384 / std::max<int64_t>(N * K, 1)), [&](int64_t b, int64_t e) {
    std::vector<double> row(static_cast<size_t>(N));
    for (int64_t i = b; i < e; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t k = 0; k < K; ++k) {
        double a = A[i * rsa + k * csa];
        const double* bk = B + k * rsb;
        if (csb == 1)
          for (int64_t j = 0; j < N; ++j) row[j] += a * bk[j];
        else
          for (int64_t j = 0; j < N; ++j) row[j] += a * bk[j * csb];
      }
      std::copy(row.begin(), row.end(), C + i * ldc);
    }
  });
}

}  // namespace pcp::cpu
