// One core's float32 FMA peak: 12 independent chains of fused multiply-adds (enough to hide the
// FMA latency), AVX-512 when compiled with -mavx512f, else AVX2. Prints GFLOP/s.
// `peak bf16` (built with -mavx512bf16): the bfloat16 dot-product peak instead (vdpbf16ps, two
// multiply-adds per float32 lane).
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#ifdef __AVX512F__
typedef __m512 vec;
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LANES 16
static float first(vec v) { return _mm512_cvtss_f32(v); }
#else
typedef __m256 vec;
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define LANES 8
static float first(vec v) { return _mm256_cvtss_f32(v); }
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// 12 independent chains of acc = STEP(acc) (enough to hide the latency), 20M rounds; prints
// GFLOP/s, counting FLOPS per step of one chain.
#define RUN_PEAK(STEP, FLOPS)                                                           \
  do {                                                                                  \
    vec acc[12];                                                                        \
    for (int i = 0; i < 12; i++) acc[i] = SET1((float)i);                               \
    const long iters = 20000000;                                                        \
    double t0 = now();                                                                  \
    for (long k = 0; k < iters; k++) {                                                  \
      _Pragma("GCC unroll 12") for (int i = 0; i < 12; i++) acc[i] = STEP(acc[i]);      \
    }                                                                                   \
    double t = now() - t0;                                                              \
    float sink = 0; /* printed, so the loop stays alive */                              \
    for (int i = 0; i < 12; i++) sink += first(acc[i]);                                 \
    printf("%.1f %g\n", iters * 12.0 * (FLOPS) / t / 1e9, sink);                        \
  } while (0)

int main(int argc, char** argv) {
#ifdef __AVX512BF16__
  if (argc > 1 && argv[1][0] == 'b') {
    const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x33803380);
#define DPBF16(a) _mm512_dpbf16_ps(a, x, y)
    RUN_PEAK(DPBF16, 32 * 2);
    return 0;
  }
#endif
  (void)argc, (void)argv;
  const vec x = SET1(1.0000001f), y = SET1(0.9999999f);
#define FMA_XY(a) FMA(a, x, y)
  RUN_PEAK(FMA_XY, LANES * 2);
  return 0;
}
