// Blocked, packed, threaded GEMM driver (BLIS-style loops around the ISA's micro-kernel).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/error.h"

namespace pcp::cpu {
namespace {

// Packing buffers live per thread and only grow, so small GEMMs (attention heads, one per
// batch element) allocate nothing.
struct PackBuffer {
  void* data = nullptr;
  size_t bytes = 0;
  ~PackBuffer() { std::free(data); }
  template <class P>
  P* get(size_t n) {
    if (n * sizeof(P) > bytes) {
      std::free(data);
      bytes = (n * sizeof(P) + 63) / 64 * 64;
      data = std::aligned_alloc(64, bytes);
      if (!data) throw std::bad_alloc();
    }
    return static_cast<P*>(data);
  }
};
thread_local PackBuffer t_apack, t_bpack;

// Splits an m x n grid of micro-tiles over `threads` as a tm x tn grid of rectangles, choosing
// the factorisation whose largest rectangle is smallest, then the one that packs least per
// thread: each thread packs the B columns of its rectangle, and its A rows when `a_cost` (MR,
// or 0 when A is read in place).
std::pair<int64_t, int64_t> thread_grid(int64_t m, int64_t n, int64_t threads, int64_t a_cost, int64_t b_cost) {
  std::pair<int64_t, int64_t> best{1, 1};
  int64_t best_work = m * n + 1, best_pack = 0;
  for (int64_t tm = 1; tm <= threads; ++tm) {
    if (threads % tm) continue;
    const int64_t tn = threads / tm;
    if (tm > m || tn > n) continue;
    const int64_t rows = (m + tm - 1) / tm, cols = (n + tn - 1) / tn;
    const int64_t work = rows * cols, pack = rows * a_cost + cols * b_cost;
    if (work < best_work || (work == best_work && pack < best_pack)) best = {tm, tn}, best_work = work, best_pack = pack;
  }
  return best;
}

// The loops around one element type's packing routines and micro-kernel. Packed panels hold
// `kp(kc)` entries of type P per row or column: kc for float32, ceil(kc / 2) depth pairs for bfloat16.
template <class T, class P>
struct GemmPieces {
  void (*pack_a)(const T*, int64_t, int64_t, int64_t, int64_t, P*);
  void (*pack_b)(const T*, int64_t, int64_t, int64_t, int64_t, P*);
  // micro(kp, a, a_rs, a_cs, b, c, ldc, mr, nr, accumulate): A packed is (1, MR); unpacked
  // (row-major, read in place) only when read_a_in_place.
  void (*micro)(int64_t, const P*, int64_t, int64_t, const P*, float*, int64_t, int64_t, int64_t, bool);
  int64_t depth_step;   // 1 for float32; 2 (a pair) for bfloat16
  bool read_a_in_place; // whether an unpacked row-major A may go straight to the micro-kernel
};

template <class T, class P>
void gemm_loops(const GemmPieces<T, P>& g, int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                const T* B, int64_t rsb, int64_t csb, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
    return;
  }
  const KernelTable& kt = kernels();
  const int64_t MR = kt.gemm_mr, NR = kt.gemm_nr, step = g.depth_step;
  // Depth slices of at most 1024, split evenly (in whole steps): deep slices mean fewer passes
  // over C and fewer synchronisations, which matters most for the skinny GEMMs of weight gradients.
  const int64_t slices = (K + 1023) / 1024;
  const int64_t KC = ((K + slices - 1) / slices + step - 1) / step * step;
  const int64_t MC = MR * std::max<int64_t>(1, 144 / MR);  // an A block (MC x KC) stays in L2
  const int64_t NC = NR * std::max<int64_t>(1, 4096 / NR);
  const int64_t NB = NR * 4;                   // columns per cache block

  const int64_t m_panels = (M + MR - 1) / MR;
  // Too little work to be worth waking threads for: one thread does it all.
  const bool small = (M + N) * std::min(K, KC) < 32768 || M * N * K < (1 << 21);
  // A row-major (unit column stride) can be read in place by the float32 micro-kernel. Packing
  // it pays when many B panels reuse long rows: it avoids the cache-set conflicts of 12 rows a
  // power-of-two stride apart. With short rows (depth <= 256) reading in place is faster.
  const bool pack_a = !g.read_a_in_place || csa != 1 || (N > 256 && KC > 256);
  const auto grid = small ? std::pair<int64_t, int64_t>{1, 1}
                          : thread_grid(m_panels, (std::min(N, NC) + NR - 1) / NR, get_num_threads(),
                                        pack_a ? MR : 0, NR);

  for (int64_t jc = 0; jc < N; jc += NC) {
    const int64_t nc = std::min(NC, N - jc);
    const int64_t n_panels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < K; pc += KC) {
      const int64_t kc = std::min(KC, K - pc), kp = (kc + step - 1) / step;
      const bool accumulate = pc > 0;
      // Each thread owns one rectangle of C (a tm x tn grid split evenly in micro-panels),
      // packs the A rows and B columns it needs into its own buffers, and walks its rectangle in
      // MC x NB cache blocks. Packing privately repeats some of it across threads, but no
      // packed line moves between cores: that traffic costs more than the packing for the
      // small GEMMs of a training step, and leaves one synchronisation per depth slice.
      const int64_t tm = grid.first, tn = grid.second;
      parallel_for(tm * tn, 1, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t p0 = m_panels * (t / tn) / tm, p1 = m_panels * (t / tn + 1) / tm;
          const int64_t q0 = n_panels * (t % tn) / tn, q1 = n_panels * (t % tn + 1) / tn;
          if (p0 == p1 || q0 == q1) continue;
          const int64_t r0 = p0 * MR, r1 = std::min(M, p1 * MR), c0 = q0 * NR, c1 = std::min(nc, q1 * NR);
          P* bpack = t_bpack.get<P>(size_t((q1 - q0) * NR * kp));
          g.pack_b(B + pc * rsb + (jc + c0) * csb, rsb, csb, kc, c1 - c0, bpack);
          P* apack = pack_a ? t_apack.get<P>(size_t((p1 - p0) * MR * kp)) : nullptr;
          if (pack_a) g.pack_a(A + r0 * rsa + pc * csa, rsa, csa, r1 - r0, kc, apack);
          for (int64_t jb = c0; jb < c1; jb += NB) {
            const int64_t j1 = std::min(c1, jb + NB);
            for (int64_t ib = r0; ib < r1; ib += MC) {
              const int64_t i1 = std::min(r1, ib + MC);
              for (int64_t j = jb; j < j1; j += NR) {
                const P* bp = bpack + (j - c0) * kp;
                for (int64_t i = ib; i < i1; i += MR) {
                  float* c = C + i * ldc + jc + j;
                  const int64_t mr = std::min(MR, M - i), nr = std::min(NR, nc - j);
                  if (pack_a)
                    g.micro(kp, apack + (i - r0) * kp, 1, MR, bp, c, ldc, mr, nr, accumulate);
                  else
                    g.micro(kp, reinterpret_cast<const P*>(A + i * rsa + pc), rsa, 1, bp, c, ldc, mr, nr, accumulate);
                }
              }
            }
          }
        }
      });
    }
  }
}

}  // namespace

void gemm_f32(int64_t M, int64_t N, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B,
              int64_t rsb, int64_t csb, float* C, int64_t ldc) {
  const KernelTable& kt = kernels();
  gemm_loops(GemmPieces<float, float>{kt.gemm_pack_a, kt.gemm_pack_b, kt.gemm_micro, 1, true}, M, N, K, A, rsa, csa,
             B, rsb, csb, C, ldc);
}

bool has_gemm_bf16() { return kernels().gemm_bf16_micro != nullptr; }

void gemm_bf16(int64_t M, int64_t N, int64_t K, const BFloat16* A, int64_t rsa, int64_t csa, const BFloat16* B,
               int64_t rsb, int64_t csb, float* C, int64_t ldc) {
  const KernelTable& kt = kernels();
  if (!kt.gemm_bf16_micro) fail<NotImplementedError>("gemm_bf16: this CPU has no AVX512_BF16 kernels");
  gemm_loops(GemmPieces<BFloat16, uint32_t>{kt.gemm_bf16_pack_a, kt.gemm_bf16_pack_b, kt.gemm_bf16_micro, 2, false}, M, N, K, A,
             rsa, csa, B, rsb, csb, C, ldc);
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
