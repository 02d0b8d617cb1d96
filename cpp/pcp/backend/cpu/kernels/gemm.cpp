// float32 GEMM pieces: panel packing and register-tiled micro-kernels.
// AVX-512: 8 x 32 tile (16 zmm accumulators); AVX2: 6 x 16 (12 ymm); NEON (arm64): 8 x 12
// (24 q registers); baseline: 4 x 16 in plain C++.
// The AVX-512 tile has 8 rows, not the 12 that would fill the registers. Measured on Zen 4 at
// 2048: 8 x 32 runs at 215 GFLOP/s, 6 x 32 the same, 12 x 32 at 201 (207 with one pointer
// for its packed rows: 12 row pointers spill), 14 x 32 at 158. Eight rows also divide the
// power-of-two sequence lengths of attention (12 x 4 heads of 64 x 32: 0.64 -> 0.54 ms).
// bfloat16 GEMM pieces with the AVX-512 tiles, used where the CPU has AVX512_BF16.
#include "pcp/backend/cpu/kernels/common.h"

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(PCP_NEON)
#include <arm_neon.h>
#endif

namespace pcp::cpu::PCP_ISA {

#if defined(__AVX512F__)
constexpr int MR = 8, NR = 32;
#elif defined(__AVX2__)
constexpr int MR = 6, NR = 16;
#elif defined(PCP_NEON)
constexpr int MR = 8, NR = 12;
#else
constexpr int MR = 4, NR = 16;
#endif

// dst[(p * kc + k) * MR + r] = a[(p*MR + r) * rs + k * cs], zero-padded past mc.
static void pack_a(const float* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, float* dst) {
  for (int64_t p0 = 0; p0 < mc; p0 += MR) {
    int64_t rows = mc - p0 < MR ? mc - p0 : MR;
    const float* ap = a + p0 * rs;
    if (rows == MR && cs == 1) {
      for (int64_t k = 0; k < kc; ++k)
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = ap[r * rs + k];
    } else if (rows == MR && rs == 1) {  // column-major A (a transposed view): MR contiguous values per k
      for (int64_t k = 0; k < kc; ++k) std::memcpy(dst + k * MR, ap + k * cs, MR * sizeof(float));
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = r < rows ? ap[r * rs + k * cs] : 0.0f;
    }
    dst += kc * MR;
  }
}

#if defined(__AVX2__)
// dst[k * ld_dst + c] = src[c * ld_src + k] for k, c < 8: an 8 x 8 transpose in registers.
static inline void transpose8(const float* src, int64_t ld_src, float* dst, int64_t ld_dst) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld_src);
  for (int i = 0; i < 8; i += 2) t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ld_dst, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ld_dst, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}
#endif

// dst[(q * kc + k) * NR + c] = b[k * rs + (q*NR + c) * cs], zero-padded past nc.
static void pack_b(const float* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, float* dst) {
  for (int64_t q0 = 0; q0 < nc; q0 += NR) {
    int64_t cols = nc - q0 < NR ? nc - q0 : NR;
    const float* bp = b + q0 * cs;
    if (cols == NR && cs == 1) {
      for (int64_t k = 0; k < kc; ++k) std::memcpy(dst + k * NR, bp + k * rs, NR * sizeof(float));
    } else if (cols == NR && rs == 1) {  // column-major B (a transposed view, such as Linear's W.T)
      int64_t k = 0;
#if defined(__AVX2__)
      for (; k + 8 <= kc; k += 8)
        for (int c = 0; c < NR; c += 8) transpose8(bp + c * cs + k, cs, dst + k * NR + c, NR);
#endif
      for (int c = 0; c < NR; ++c)
        for (int64_t kk = k; kk < kc; ++kk) dst[kk * NR + c] = bp[c * cs + kk];
    } else {
      for (int64_t k = 0; k < kc; ++k)
        for (int c = 0; c < NR; ++c) dst[k * NR + c] = c < cols ? bp[k * rs + c * cs] : 0.0f;
    }
    dst += kc * NR;
  }
}

static inline void store_tile(const float* tile, float* c, int64_t ldc, int64_t mr, int64_t nr, bool accumulate) {
  for (int64_t r = 0; r < mr; ++r)
    for (int64_t j = 0; j < nr; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + tile[r * NR + j] : tile[r * NR + j];
}

// A is read as a[r * a_rs + k * a_cs]: packed panels are (1, MR); an unpacked row-major block
// is (lda, 1), which saves packing A when it is already row-major. Rows past mr repeat row 0.
#define PCP_A_ROWS()                                  \
  decltype(a) ar[MR];                                 \
  for (int r = 0; r < MR; ++r) ar[r] = a + (r < mr ? r : 0) * a_rs;

#if defined(__AVX512F__)
// C[mr x nr] (+)= the MR x NR accumulators.
static inline __attribute__((always_inline)) void store_acc(__m512 (&acc)[MR][2], float* c, int64_t ldc, int64_t mr,
                                                             int64_t nr, bool accumulate) {
  if (mr == MR && nr == NR) {
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      float* cr = c + r * ldc;
      if (accumulate) {
        acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_loadu_ps(cr));
        acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_loadu_ps(cr + 16));
      }
      _mm512_storeu_ps(cr, acc[r][0]);
      _mm512_storeu_ps(cr + 16, acc[r][1]);
    }
    return;
  }
  alignas(64) float tile[MR * NR];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {  // unrolled, or acc would live in memory (see the AVX2 kernel)
    _mm512_store_ps(tile + r * NR, acc[r][0]);
    _mm512_store_ps(tile + r * NR + 16, acc[r][1]);
  }
  store_tile(tile, c, ldc, mr, nr, accumulate);
}

static void micro(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* b, float* c, int64_t ldc,
                  int64_t mr, int64_t nr, bool accumulate) {
  PCP_A_ROWS();
  // C's rows are fetched for writing while the depth loop runs: outputs are often fresh memory.
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    const float* cr = c + (r < mr ? r : 0) * ldc;
    _mm_prefetch(reinterpret_cast<const char*>(cr), _MM_HINT_ET0);
    _mm_prefetch(reinterpret_cast<const char*>(cr + NR - 1), _MM_HINT_ET0);
  }
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b0 = _mm512_loadu_ps(b + k * NR), b1 = _mm512_loadu_ps(b + k * NR + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      __m512 av = _mm512_set1_ps(ar[r][k * a_cs]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  store_acc(acc, c, ldc, mr, nr, accumulate);
}
#elif defined(__AVX2__)
static void micro(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* b, float* c, int64_t ldc,
                  int64_t mr, int64_t nr, bool accumulate) {
  PCP_A_ROWS();
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    __m256 b0 = _mm256_loadu_ps(b + k * NR), b1 = _mm256_loadu_ps(b + k * NR + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      __m256 av = _mm256_broadcast_ss(ar[r] + k * a_cs);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  if (mr == MR && nr == NR) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float* cr = c + r * ldc;
      if (accumulate) {
        acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(cr));
        acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(cr + 8));
      }
      _mm256_storeu_ps(cr, acc[r][0]);
      _mm256_storeu_ps(cr + 8, acc[r][1]);
    }
    return;
  }
  alignas(32) float tile[MR * NR];
  // Unrolled, as every loop over acc must be: one indexed at run time keeps acc in memory, and
  // the depth loop then stores all 12 accumulators on every step.
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    _mm256_store_ps(tile + r * NR, acc[r][0]);
    _mm256_store_ps(tile + r * NR + 8, acc[r][1]);
  }
  store_tile(tile, c, ldc, mr, nr, accumulate);
}
#elif defined(PCP_NEON)
static void micro(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* b, float* c, int64_t ldc,
                  int64_t mr, int64_t nr, bool accumulate) {
  PCP_A_ROWS();
  float32x4_t acc[MR][3];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = vdupq_n_f32(0.0f);
  for (int64_t k = 0; k < kc; ++k) {
    const float32x4_t b0 = vld1q_f32(b + k * NR), b1 = vld1q_f32(b + k * NR + 4), b2 = vld1q_f32(b + k * NR + 8);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const float32x4_t av = vld1q_dup_f32(ar[r] + k * a_cs);
      acc[r][0] = vfmaq_f32(acc[r][0], av, b0);
      acc[r][1] = vfmaq_f32(acc[r][1], av, b1);
      acc[r][2] = vfmaq_f32(acc[r][2], av, b2);
    }
  }
  if (mr == MR && nr == NR) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      float* cr = c + r * ldc;
      for (int q = 0; q < 3; ++q) {
        if (accumulate) acc[r][q] = vaddq_f32(acc[r][q], vld1q_f32(cr + 4 * q));
        vst1q_f32(cr + 4 * q, acc[r][q]);
      }
    }
    return;
  }
  float tile[MR * NR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int q = 0; q < 3; ++q) vst1q_f32(tile + r * NR + 4 * q, acc[r][q]);
  store_tile(tile, c, ldc, mr, nr, accumulate);
}
#else
static void micro(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* b, float* c, int64_t ldc,
                  int64_t mr, int64_t nr, bool accumulate) {
  PCP_A_ROWS();
  float tile[MR * NR] = {};
  for (int64_t k = 0; k < kc; ++k)
    for (int r = 0; r < MR; ++r) {
      float av = ar[r][k * a_cs];
      for (int j = 0; j < NR; ++j) tile[r * NR + j] += av * b[k * NR + j];
    }
  store_tile(tile, c, ldc, mr, nr, accumulate);
}
#endif

#if defined(__AVX512F__)
// bfloat16 GEMM pieces. Packed panels hold pairs of consecutive-depth values in one 32-bit word
// (the even depth in the low half), zero-padded to an even depth, so that AVX512_BF16's
// vdpbf16ps adds two products per float32 lane: twice the float32 FMA rate.
static inline uint32_t bf16_pair(const BFloat16* p, int64_t step, bool second) {
  uint16_t lo, hi = 0;
  std::memcpy(&lo, p, 2);
  if (second) std::memcpy(&hi, p + step, 2);
  return uint32_t(lo) | uint32_t(hi) << 16;
}

// dst[(p * kp + k2) * MR + r] = pair(a[row r, depth 2 k2 and 2 k2 + 1]), kp = ceil(kc / 2).
static void pack_a_bf16(const BFloat16* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, uint32_t* dst) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t p0 = 0; p0 < mc; p0 += MR) {
    const int64_t rows = mc - p0 < MR ? mc - p0 : MR;
    const BFloat16* ap = a + p0 * rs;
    for (int64_t k2 = 0; k2 < kp; ++k2)
      for (int r = 0; r < MR; ++r)
        dst[k2 * MR + r] = r < rows ? bf16_pair(ap + r * rs + 2 * k2 * cs, cs, 2 * k2 + 1 < kc) : 0u;
    dst += kp * MR;
  }
}

// dst[(q * kp + k2) * NR + c] = pair(b[depth 2 k2 and 2 k2 + 1, column c]).
static void pack_b_bf16(const BFloat16* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, uint32_t* dst) {
  const int64_t kp = (kc + 1) / 2;
  for (int64_t q0 = 0; q0 < nc; q0 += NR) {
    const int64_t cols = nc - q0 < NR ? nc - q0 : NR;
    const BFloat16* bp = b + q0 * cs;
    for (int64_t k2 = 0; k2 < kp; ++k2)
      for (int c = 0; c < NR; ++c)
        dst[k2 * NR + c] = c < cols ? bf16_pair(bp + 2 * k2 * rs + c * cs, rs, 2 * k2 + 1 < kc) : 0u;
    dst += kp * NR;
  }
}

// C[mr x nr] (+)= A * B over kp depth pairs, A's pair (r, k) at a[r * a_rs + k * a_cs].
__attribute__((target("avx512bf16"))) static void micro_bf16(int64_t kp, const uint32_t* a, int64_t a_rs,
                                                             int64_t a_cs, const uint32_t* b, float* c, int64_t ldc,
                                                             int64_t mr, int64_t nr, bool accumulate) {
  PCP_A_ROWS();
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kp; ++k) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + k * NR), b1 = (__m512bh)_mm512_loadu_si512(b + k * NR + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(int(ar[r][k * a_cs]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
  store_acc(acc, c, ldc, mr, nr, accumulate);
}
#endif
#undef PCP_A_ROWS

void register_gemm(KernelTable& t) {
  t.gemm_mr = MR;
  t.gemm_nr = NR;
  t.gemm_pack_a = pack_a;
  t.gemm_pack_b = pack_b;
  t.gemm_micro = micro;
#if defined(__AVX512F__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16")) {
    t.gemm_bf16_pack_a = pack_a_bf16;
    t.gemm_bf16_pack_b = pack_b_bf16;
    t.gemm_bf16_micro = micro_bf16;
  }
#endif
}

}  // namespace pcp::cpu::PCP_ISA
