// CRC32C: hardware instructions where the CPU has them (three independent streams, to hide the
// instruction's 3-cycle latency, joined with a multiplication in GF(2)[x] mod P), a table
// otherwise.
#include "pcp/core/crc32c.h"

#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#include <nmmintrin.h>
#define PCP_CRC_X86 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define PCP_CRC_ARM 1
#endif

namespace pcp {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // Castagnoli's polynomial, bit-reflected

struct Table {
  uint32_t t[256];
  Table() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ kPoly : c >> 1;
      t[i] = c;
    }
  }
};

// The register advanced over bytes (no pre- or post-inversion).
uint32_t update_table(uint32_t reg, const uint8_t* p, size_t n) {
  static const Table table;
  for (size_t i = 0; i < n; ++i) reg = table.t[(reg ^ p[i]) & 0xFF] ^ (reg >> 8);
  return reg;
}

// a * b mod P, both bit-reflected polynomials (bit 31 is x^0).
uint32_t mul_mod_p(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = 1u << 31; bit; bit >>= 1) {
    if (a & bit) product ^= b;
    b = b & 1 ? (b >> 1) ^ kPoly : b >> 1;  // b *= x
  }
  return product;
}

// x^(8 n) mod P: what advancing the register over n zero bytes multiplies it by.
uint32_t x_pow_8n(size_t n) {
  uint32_t result = 1u << 31, base = 1u << 23;  // 1 and x^8
  for (; n; n >>= 1) {
    if (n & 1) result = mul_mod_p(result, base);
    base = mul_mod_p(base, base);
  }
  return result;
}

#if PCP_CRC_X86
bool has_sse42() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
}

__attribute__((target("sse4.2"))) uint32_t stream(uint32_t reg, const uint8_t* p, size_t words) {
  uint64_t r = reg;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    r = _mm_crc32_u64(r, w);
  }
  return static_cast<uint32_t>(r);
}

__attribute__((target("sse4.2"))) uint32_t update_hw(uint32_t reg, const uint8_t* p, size_t n) {
  constexpr size_t kBlock = 8192;  // bytes per stream per step
  static const uint32_t shift1 = x_pow_8n(kBlock), shift2 = x_pow_8n(2 * kBlock);
  while (n >= 3 * kBlock) {
    uint64_t a = reg, b = 0, c = 0;
    for (size_t i = 0; i < kBlock; i += 8) {
      uint64_t wa, wb, wc;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kBlock + i, 8);
      std::memcpy(&wc, p + 2 * kBlock + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      c = _mm_crc32_u64(c, wc);
    }
    // Linear: the register over A|B|C is A's shifted past B and C, B's past C, and C's.
    reg = mul_mod_p(shift2, static_cast<uint32_t>(a)) ^ mul_mod_p(shift1, static_cast<uint32_t>(b)) ^
          static_cast<uint32_t>(c);
    p += 3 * kBlock;
    n -= 3 * kBlock;
  }
  reg = stream(reg, p, n / 8);
  return update_table(reg, p + (n & ~size_t(7)), n & 7);
}
#endif

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t reg = ~crc;
#if PCP_CRC_X86
  static const bool hw = has_sse42();
  reg = hw ? update_hw(reg, p, n) : update_table(reg, p, n);
#elif PCP_CRC_ARM
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    reg = __crc32cd(reg, w);
  }
  reg = update_table(reg, p, n);
#else
  reg = update_table(reg, p, n);
#endif
  return ~reg;
}

}  // namespace pcp
