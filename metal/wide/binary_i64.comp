#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// int64 binary arithmetic with broadcasting, binary_int.comp's rules at 64 bits: sums and
// products wrap; floored division and its remainder give 0 for a zero divisor; shifts by a count
// outside [0, 64) give 0 (-1 for a negative value shifted right).
#include "../common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { int64_t a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { int64_t b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { int64_t out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, a_off, b_off, out_off, op;
  uint shape[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
} p;

int64_t ipow64(int64_t base, int64_t e) {
  if (e < 0l) return base == 1l ? 1l : (base == -1l ? ((e & 1l) != 0l ? -1l : 1l) : 0l);
  int64_t r = 1l;
  while (e != 0l) {
    if ((e & 1l) != 0l) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

// x / y truncated toward zero, on magnitudes; y != 0.
int64_t truncated64(int64_t x, int64_t y) {
  const uint64_t ax = x < 0l ? uint64_t(-x) : uint64_t(x), ay = y < 0l ? uint64_t(-y) : uint64_t(y);
  const uint64_t q = ax / ay;
  return (x < 0l) != (y < 0l) ? -int64_t(q) : int64_t(q);
}

int64_t apply_i64(uint op, int64_t x, int64_t y) {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 4: return ipow64(x, y);
    case 5: return x > y ? x : y;
    case 6: return x < y ? x : y;
    case 15: return x & y;
    case 16: return x | y;
    case 17: return x ^ y;
    case 22: {  // remainder, with y's sign
      if (y == 0l || y == -1l) return 0l;
      const int64_t m = x - truncated64(x, y) * y;
      return m != 0l && (m < 0l) != (y < 0l) ? m + y : m;
    }
    case 23: {  // floor_divide
      if (y == 0l) return 0l;
      if (y == -1l) return -x;
      const int64_t q = truncated64(x, y);
      return x - q * y != 0l && (x < 0l) != (y < 0l) ? q - 1l : q;
    }
    case 24: return y < 0l || y >= 64l ? 0l : int64_t(uint64_t(x) << uint64_t(y));
    case 25: return y < 0l || y >= 64l ? (x < 0l ? -1l : 0l) : x >> y;
  }
  return x;
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const int64_t x = a[int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides)];
    const int64_t y = b[int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides)];
    out_[p.out_off + i] = apply_i64(p.op, x, y);
  }
}
