// Shared by the kernels: grid-stride loops and strided (broadcast) indexing.
// Every kernel runs 256 invocations per workgroup along x and loops over its work with a
// stride of the whole grid, so any size fits in the 65535-workgroup dispatch limit.
#define MAX_DIMS 6
#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)

// Element offset of row-major flat index i over `shape` (dims 0..ndim-1) with `strides`.
// Strides are signed (negative steps) and 0 for broadcast dimensions.
int strided_offset(uint i, uint ndim, uint shape[MAX_DIMS], int strides[MAX_DIMS]) {
  if (ndim <= 1) return int(i) * strides[0];  // contiguous runs: no divisions (ndim 0 has stride 0)
  int off = 0;
  for (int d = int(ndim) - 1; d >= 0; --d) {
    uint q = i / shape[d];
    off += int(i - q * shape[d]) * strides[d];
    i = q;
  }
  return off;
}

// float32 math shared by the elementwise kernels (GELU and its gradient need both).
const float SQRT1_2 = 0.7071067811865476, K_TANH = 0.7978845608028654, C_TANH = 0.044715;

float tanh_(float v) {  // stable for large |v|; near 0 a series, which keeps tiny values and -0
  if (abs(v) < 0.004) return v * (1.0 - v * v * (1.0 / 3.0));
  float e = exp(-2.0 * abs(v));
  float t = (1.0 - e) / (1.0 + e);
  return v < 0.0 ? -t : t;
}

// erf, Abramowitz-Stegun 7.1.26 refined (max error ~1e-7 relative after the exp).
float erf_(float v) {
  float a = abs(v), t = 1.0 / (1.0 + 0.5 * a);
  float y = 1.0 - t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
            t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
            t * (-0.82215223 + t * 0.17087277)))))))));
  return v < 0.0 ? -y : y;
}

// x^y with C's conventions where GLSL's pow is undefined or differs: negative bases with integral
// exponents, zero bases (0^-1 = inf, -0^-1 = -inf), 1^y = 1 and x^0 = 1 even for NaN, (-1)^inf = 1.
// Elsewhere GLSL's pow is exp2(y * log2(x)): about 1e-5 relative error for large results.
float pow_(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (y == 1.0) return x;      // exact, where exp2(y * log2(x)) rounds FLT_MAX up to inf
  if (y == 2.0) return x * x;  // the common square, exact as well
  if (isnan(x) || isnan(y)) return x + y;
  const bool odd_y = abs(y) < 16777216.0 && floor(y) == y && mod(y, 2.0) == 1.0;
  if (x == 0.0) {
    const float r = y > 0.0 ? 0.0 : 1.0 / 0.0;
    return odd_y && floatBitsToUint(x) != 0u ? -r : r;  // -0 keeps its sign for odd y
  }
  if (x > 0.0) return pow(x, y);
  if (isinf(x)) {  // -inf, as C's pow: inf for y > 0 (-inf for odd y), 0 for y < 0 (-0 for odd y)
    const float r = y > 0.0 ? 1.0 / 0.0 : 0.0;
    return odd_y ? -r : r;
  }
  if (isinf(y)) return x == -1.0 ? 1.0 : (abs(x) < 1.0) == (y > 0.0) ? 0.0 : 1.0 / 0.0;
  if (floor(y) != y) return 0.0 / 0.0;  // NaN, as NumPy
  const float r = pow(-x, y);
  return odd_y ? -r : r;
}

// Element types of the kernels that mix dtypes (compare, where, cast). Their buffers are 32-bit
// words; a bool is one byte of its word, a float16 or bfloat16 one half.
// Device-side fault codes (enum Fault in cpp/pcp/backend/gpu/faults.h). A kernel records the
// first fault in the record {code, value, bound, detail}; the host raises it at the next sync.
#define FAULT_CROSS_ENTROPY_TARGET 1
#define RECORD_FAULT(rec, code, value, bound, detail)               \
  if (atomicCompSwap(rec[0], 0, code) == 0) {                       \
    rec[1] = (value), rec[2] = (bound), rec[3] = (detail);          \
  }
#define T_F32 0u
#define T_I32 1u
#define T_BOOL 2u
#define T_F16 3u
#define T_BF16 4u
#define T_I64 5u  // a cast's input only (two words per element, little-endian)
#define BYTE_OF(words, i) (((words)[(i) >> 2] >> (((i) & 3u) * 8u)) & 0xFFu)
#define HALF_OF(words, i) (((words)[(i) >> 1] >> (((i) & 1u) * 16u)) & 0xFFFFu)

// float32 to float16 / bfloat16 bits, rounding to nearest even; the same bits as the CPU
// (pcp/core/half.h), where GLSL's packHalf2x16 leaves rounding to the implementation.
uint f16_bits(float f) {
  const uint u = floatBitsToUint(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;                                  // NaN
  if (a >= 0x477FF000u) return sign | 0x7C00u;                                 // rounds past 65504
  if (a < 0x38800000u) return sign | uint(roundEven(uintBitsToFloat(a) * 16777216.0));  // subnormal
  return sign | ((a + 0xFFFu + ((a >> 13) & 1u) - (112u << 23)) >> 13);
}

// float16 bits to float32, exactly (NaN payloads and signs kept, as the CPU; unpackHalf2x16
// canonicalises NaNs on NVIDIA).
float f16_value(uint h) {
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return uintBitsToFloat(sign | 0x7F800000u | (m << 13));
  if (e == 0u) return (sign != 0u ? -1.0 : 1.0) * float(m) * 5.9604644775390625e-8;
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

uint bf16_bits(float f) {
  const uint u = floatBitsToUint(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;  // quiet NaN
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// Four consecutive float32, float16 or bfloat16 values as one vec4, from or to a buffer of uvec2s
// (one buffer per binding: Metal allows no aliases): two 64-bit words for float32, one for the
// 16-bit types. q = element offset / 4.
vec4 unpack4(uvec2 h, uint type) {
  if (type == T_BF16) return uintBitsToFloat(uvec4(h.x << 16, h.x & 0xFFFF0000u, h.y << 16, h.y & 0xFFFF0000u));
  return vec4(f16_value(h.x & 0xFFFFu), f16_value(h.x >> 16), f16_value(h.y & 0xFFFFu), f16_value(h.y >> 16));
}
uvec2 pack4(vec4 v, uint type) {
  if (type == T_BF16) return uvec2(bf16_bits(v.x) | bf16_bits(v.y) << 16, bf16_bits(v.z) | bf16_bits(v.w) << 16);
  return uvec2(f16_bits(v.x) | f16_bits(v.y) << 16, f16_bits(v.z) | f16_bits(v.w) << 16);
}
#define LOAD4(buf, type, q) \
  ((type) == T_F32 ? uintBitsToFloat(uvec4((buf)[2u * (q)], (buf)[2u * (q) + 1u])) : unpack4((buf)[q], type))
#define STORE4(buf, type, q, v)                                          \
  if ((type) == T_F32) {                                                 \
    const uvec4 bits_ = floatBitsToUint(v);                              \
    (buf)[2u * (q)] = bits_.xy;                                          \
    (buf)[2u * (q) + 1u] = bits_.zw;                                     \
  } else {                                                               \
    (buf)[q] = pack4(v, type);                                           \
  }
// Element e of such a buffer, as a float.
#define LOAD1(buf, type, e)                                                                   \
  ((type) == T_F32 ? uintBitsToFloat((buf)[(e) >> 1][(e) & 1u])                              \
                   : unpack4((buf)[(e) >> 2], type)[(e) & 3u])

// atan with the argument reduced to [0, tan(pi/8)] and a degree-9 odd minimax polynomial (the
// drivers' atan, asin and acos can be off by 1e-4: lavapipe's are); -0 stays -0, NaN stays NaN.
float atan_(float v) {
  float a = abs(v), base = 0.0;
  if (a > 2.414213562373095) {
    base = 1.5707963267948966;
    a = -1.0 / a;
  } else if (a > 0.4142135623730950) {
    base = 0.7853981633974483;
    a = (a - 1.0) / (a + 1.0);
  }
  const float z = a * a;
  const float r = base + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z -
                           3.33329491539e-1) * z * a + a);
  return v < 0.0 ? -r : (v == 0.0 ? v : r);
}
