#version 450
#extension GL_GOOGLE_include_directive : require
// int32 binary arithmetic with broadcasting: out[out_off + i] = f(a[...], b[...]), as the CPU
// kernels compute it: sums and products wrap around; floored division and its remainder give 0
// for a zero divisor (NumPy's) and wrap INT_MIN // -1; shifts by a count outside [0, 32) give 0
// (-1 for a negative value shifted right). Op codes follow pcp::BinaryOp.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { int a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { int b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { int out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, a_off, b_off, out_off, op;
  uint shape[MAX_DIMS];
  int a_strides[MAX_DIMS];
  int b_strides[MAX_DIMS];
} p;

int ipow(int base, int e) {
  if (e < 0) return base == 1 ? 1 : (base == -1 ? ((e & 1) != 0 ? -1 : 1) : 0);
  int r = 1;
  while (e != 0) {
    if ((e & 1) != 0) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

// x / y truncated toward zero, on magnitudes (GLSL leaves / and % of negative ints open); y != 0.
int truncated(int x, int y) {
  const uint q = uint(abs(x)) / uint(abs(y));  // abs(INT_MIN) is INT_MIN, 2^31 as a uint
  return (x < 0) != (y < 0) ? -int(q) : int(q);
}

int apply_int(uint op, int x, int y) {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 4: return ipow(x, y);
    case 5: return max(x, y);
    case 6: return min(x, y);
    case 15: return x & y;
    case 16: return x | y;
    case 17: return x ^ y;
    case 22: {  // remainder, with y's sign
      if (y == 0 || y == -1) return 0;
      const int m = x - truncated(x, y) * y;
      return m != 0 && (m < 0) != (y < 0) ? m + y : m;
    }
    case 23: {  // floor_divide
      if (y == 0) return 0;
      if (y == -1) return -x;
      const int q = truncated(x, y);
      return x - q * y != 0 && (x < 0) != (y < 0) ? q - 1 : q;
    }
    case 24: return y < 0 || y >= 32 ? 0 : int(uint(x) << uint(y));
    case 25: return y < 0 || y >= 32 ? (x < 0 ? -1 : 0) : x >> y;
  }
  return x;
}

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const int x = a[int(p.a_off) + strided_offset(i, p.ndim, p.shape, p.a_strides)];
    const int y = b[int(p.b_off) + strided_offset(i, p.ndim, p.shape, p.b_strides)];
    out_[p.out_off + i] = apply_int(p.op, x, y);
  }
}
