// 16-bit float storage types. They are stored as 16 bits and computed in float32.
#pragma once
#include <cstdint>
#include <cstring>

namespace pcp {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

static inline float bf16_to_float(BFloat16 h) { return bits_f32(uint32_t(h.bits) << 16); }

static inline BFloat16 float_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BFloat16{uint16_t((u >> 16) | 0x40)};  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return BFloat16{uint16_t(u >> 16)};
}

static inline float half_to_float(Half h) {
  uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t man = h.bits & 0x3ffu;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {
    // zero or subnormal: value = man * 2^-24
    float v = float(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline Half float_to_half(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return Half{uint16_t(sign | 0x7e00u)};  // NaN
  if (a >= 0x477ff000u) return Half{uint16_t(sign | 0x7c00u)};  // overflow to inf (rounds up past 65504)
  if (a < 0x38800000u) {
    // subnormal half (or zero): round a * 2^24 to nearest even integer
    float v = bits_f32(a) * 16777216.0f;
    uint32_t m = uint32_t(v);
    float rem = v - float(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) m++;
    return Half{uint16_t(sign | m)};
  }
  uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);  // rebias and round to nearest even
  return Half{uint16_t(sign | (r >> 13))};
}

}  // namespace pcp
