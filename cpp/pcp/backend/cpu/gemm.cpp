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

// Splits an m x n grid of MR x NR micro-tiles over `threads` as a tm x tn grid of rectangles,
// choosing the factorisation with the least time on one thread: its tiles (MR * NR
// multiply-adds per depth step) and the A rows and B columns it reads (MR per row of tiles, NR
// per column), a value read from memory (to pack it, or in place) costing about as much as a
// vector of multiply-adds. Splitting C's columns makes every thread read all of A, and the
// reverse.
std::pair<int64_t, int64_t> thread_grid(int64_t m, int64_t n, int64_t threads, int64_t MR, int64_t NR) {
  std::pair<int64_t, int64_t> best{1, 1};
  int64_t best_cost = -1;
  for (int64_t tm = 1; tm <= threads; ++tm) {
    if (threads % tm) continue;
    const int64_t tn = threads / tm;
    if (tm > m || tn > n) continue;
    const int64_t rows = (m + tm - 1) / tm, cols = (n + tn - 1) / tn;
    const int64_t cost = rows * cols * MR * NR + (rows * MR + cols * NR) * 16;
    if (best_cost < 0 || cost < best_cost) best = {tm, tn}, best_cost = cost;
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

// Cache blocking of one GEMM.
struct Blocking {
  int64_t MR, NR, KC, MC, NC, NB, step;
};

// C[r0:r1, c0:c1] (+)= A[r0:r1, k0:k1] B[k0:k1, c0:c1] on the calling thread: B columns in
// blocks of NC, depth in slices of KC, each slice's A rows and B columns packed into this
// thread's own buffers, then walked in MC x NB cache blocks of micro-tiles. C is written
// (not accumulated into) by the first depth slice.
// The epilogue over C[i0:i1, j0:j1], final: a row segment at a time through the elementwise
// kernels, which compute each element alike wherever it lies (the bits of the op apart).
void finish_block(const GemmEpilogue& ep, float* C, int64_t ldc, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const KernelTable& kt = kernels();
  const int64_t n = j1 - j0;
  for (int64_t i = i0; i < i1; ++i) {
    float* c = C + i * ldc + j0;
    float* aux = ep.aux + i * ep.ld + j0;
    if (ep.kind == GemmEpilogue::Kind::GeluTanh) {
      std::copy(c, c + n, aux);
      kt.unary(UnaryOp::GeluTanh, DType::Float32, n, reinterpret_cast<char*>(c), 1, reinterpret_cast<const char*>(aux),
               1);
    } else {
      kt.binary(BinaryOp::GeluTanhGrad, DType::Float32, n, reinterpret_cast<char*>(c), 1,
                reinterpret_cast<const char*>(aux), 1, reinterpret_cast<const char*>(c), 1);
    }
  }
}

template <class T, class P>
void gemm_rect(const GemmPieces<T, P>& g, const Blocking& bk, int64_t M, int64_t N, int64_t r0, int64_t r1,
               int64_t c0, int64_t c1, int64_t k0, int64_t k1, const T* A, int64_t rsa, int64_t csa, const T* B,
               int64_t rsb, int64_t csb, float* C, int64_t ldc, bool pack_a, const GemmEpilogue& ep) {
  const int64_t MR = bk.MR, NR = bk.NR;
  for (int64_t jc = c0; jc < c1; jc += bk.NC) {
    const int64_t jc1 = std::min(c1, jc + bk.NC);
    for (int64_t pc = k0; pc < k1; pc += bk.KC) {
      const int64_t kc = std::min(bk.KC, k1 - pc), kp = (kc + bk.step - 1) / bk.step;
      const bool accumulate = pc > k0;
      P* bpack = t_bpack.get<P>(size_t((jc1 - jc + NR - 1) / NR * NR * kp));
      g.pack_b(B + pc * rsb + jc * csb, rsb, csb, kc, jc1 - jc, bpack);
      P* apack = pack_a ? t_apack.get<P>(size_t((r1 - r0 + MR - 1) / MR * MR * kp)) : nullptr;
      if (pack_a) g.pack_a(A + r0 * rsa + pc * csa, rsa, csa, r1 - r0, kc, apack);
      for (int64_t jb = jc; jb < jc1; jb += bk.NB) {
        const int64_t j1 = std::min(jc1, jb + bk.NB);
        for (int64_t ib = r0; ib < r1; ib += bk.MC) {
          const int64_t i1 = std::min(r1, ib + bk.MC);
          for (int64_t j = jb; j < j1; j += NR) {
            const P* bp = bpack + (j - jc) * kp;
            for (int64_t i = ib; i < i1; i += MR) {
              float* c = C + i * ldc + j;
              const int64_t mr = std::min(MR, M - i), nr = std::min(NR, N - j);
              if (pack_a)
                g.micro(kp, apack + (i - r0) * kp, 1, MR, bp, c, ldc, mr, nr, accumulate);
              else
                g.micro(kp, reinterpret_cast<const P*>(A + i * rsa + pc), rsa, 1, bp, c, ldc, mr, nr, accumulate);
            }
          }
          if (ep.kind != GemmEpilogue::Kind::None && pc + kc >= k1) finish_block(ep, C, ldc, ib, i1, jb, j1);
        }
      }
    }
  }
}

template <class T, class P>
void gemm_loops(const GemmPieces<T, P>& g, int64_t M, int64_t N, int64_t K, const T* A, int64_t rsa, int64_t csa,
                const T* B, int64_t rsb, int64_t csb, float* C, int64_t ldc, const GemmEpilogue& ep = {}) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
    return;
  }
  const KernelTable& kt = kernels();
  Blocking bk;
  bk.MR = kt.gemm_mr, bk.NR = kt.gemm_nr, bk.step = g.depth_step;
  const int64_t MR = bk.MR, NR = bk.NR, step = bk.step;
  // Depth slices of at most 1024, split evenly (in whole steps): deep slices mean fewer passes
  // over C, which matters most for the skinny GEMMs of weight gradients.
  const int64_t slices = (K + 1023) / 1024;
  bk.KC = ((K + slices - 1) / slices + step - 1) / step * step;
  bk.MC = MR * std::max<int64_t>(1, 144 / MR);  // an A block (MC x KC) stays in L2
  bk.NC = NR * std::max<int64_t>(1, 4096 / NR);
  bk.NB = NR * 4;                               // columns per cache block

  const int64_t m_panels = (M + MR - 1) / MR, n_panels = (N + NR - 1) / NR;
  const int64_t threads = get_num_threads();
  // A row-major (unit column stride) is read in place by the float32 micro-kernel: with 8-row
  // tiles that beats packing it at every size measured (float32 2048: 222 against 215 GFLOP/s).
  const bool pack_a = !g.read_a_in_place || csa != 1;
  // Too little work to be worth waking threads for: one thread does it all.
  const bool small = threads == 1 || (M + N) * std::min(K, bk.KC) < 32768 || M * N * K < (1 << 21);
  if (small) {
    gemm_rect(g, bk, M, N, 0, M, 0, N, 0, K, A, rsa, csa, B, rsb, csb, C, ldc, pack_a, ep);
    return;
  }
  // Each thread owns one rectangle of C (a tm x tn grid split evenly in micro-panels) and packs
  // the A rows and B columns it needs into its own buffers. Packing privately repeats some of
  // it across threads, but no packed line moves between cores: that traffic costs more than the
  // packing for the small GEMMs of a training step, and the threads never wait on each other.
  const auto [tm, tn] = thread_grid(m_panels, n_panels, threads, MR, NR);
  parallel_for(tm * tn, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t p0 = m_panels * (t / tn) / tm, p1 = m_panels * (t / tn + 1) / tm;
      const int64_t q0 = n_panels * (t % tn) / tn, q1 = n_panels * (t % tn + 1) / tn;
      if (p0 == p1 || q0 == q1) continue;
      gemm_rect(g, bk, M, N, p0 * MR, std::min(M, p1 * MR), q0 * NR, std::min(N, q1 * NR), 0, K, A, rsa, csa, B,
                rsb, csb, C, ldc, pack_a, ep);
    }
  });
}

}  // namespace

void gemm_f32(int64_t M, int64_t N, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B,
              int64_t rsb, int64_t csb, float* C, int64_t ldc, const GemmEpilogue& epilogue) {
  const KernelTable& kt = kernels();
  if (epilogue.kind != GemmEpilogue::Kind::None && K == 0) fail<ValueError>("gemm_f32: an epilogue needs K > 0");
  gemm_loops(GemmPieces<float, float>{kt.gemm_pack_a, kt.gemm_pack_b, kt.gemm_micro, 1, true}, M, N, K, A, rsa, csa,
             B, rsb, csb, C, ldc, epilogue);
}

bool matmul_epilogue(GemmEpilogue::Kind kind, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& aux) {
  const auto f32 = [](const Tensor& t) { return t.dtype() == DType::Float32; };
  if (!f32(a) || !f32(b) || !f32(out) || !f32(aux) || a.ndim() != 2 || b.ndim() != 2 || !out.is_contiguous() ||
      !aux.is_contiguous() || aux.shape() != out.shape() || a.shape()[1] == 0)
    return false;
  const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
  gemm_f32(M, N, K, a.data<float>(), a.strides()[0], a.strides()[1], b.data<float>(), b.strides()[0], b.strides()[1],
           out.data<float>(), N, GemmEpilogue{kind, aux.data<float>(), N});
  return true;
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
