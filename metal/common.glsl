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

float tanh_(float v) {  // stable for large |v|
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

// x^y with C's conventions where GLSL's pow is undefined: negative bases with integral
// exponents, and zero bases (0^0 = 1, 0^-y = inf).
float pow_(float x, float y) {
  if (y == 0.0) return 1.0;
  if (x == 0.0) return y > 0.0 ? 0.0 : 1.0 / 0.0;
  if (x > 0.0) return pow(x, y);
  if (floor(y) != y) return 0.0 / 0.0;  // NaN, as NumPy
  const float r = pow(-x, y);
  return mod(y, 2.0) == 1.0 ? -r : r;
}

// Element types of the kernels that mix dtypes (compare, where, cast). Their buffers are 32-bit
// words; a bool is one byte, read out of its word and written four to a word.
#define T_F32 0u
#define T_I32 1u
#define T_BOOL 2u
#define BYTE_OF(words, i) (((words)[(i) >> 2] >> (((i) & 3u) * 8u)) & 0xFFu)
