#version 450
#extension GL_GOOGLE_include_directive : require
// Casts and copies between float32, int32, bool, float16 and bfloat16 (T_* codes), and from int64,
// from a strided tensor into a strided one. Float to int truncates toward zero (as C and NumPy),
// int64 to int32 keeps the low word (as NumPy); anything nonzero
// is true; float32 to float16/bfloat16 rounds to nearest even. Bools (bytes) and 16-bit types
// (halves) share 32-bit words: a contiguous result that starts on a word (packed = 1) is written
// whole words at a time, four elements per invocation; any other result (and a last partial word)
// merges each element into its word with atomics, so the neighbours it shares the word with stay.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uint in_[]; };
layout(std430, set = 0, binding = 2) buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, in_off, out_off, src, dst, packed;
  uint shape[MAX_DIMS];
  int in_strides[MAX_DIMS];
  int out_strides[MAX_DIMS];
} p;

// The bits of element i of the result: converted from element i of the input.
uint converted(uint i) {
  const uint k = uint(int(p.in_off) + strided_offset(i, p.ndim, p.shape, p.in_strides));
  const bool from_float = p.src == T_F32 || p.src == T_F16 || p.src == T_BF16;
  float f;
  int v;
  if (p.src == T_F32) f = uintBitsToFloat(in_[k]);
  else if (p.src == T_F16) f = f16_value(HALF_OF(in_, k));
  else if (p.src == T_BF16) f = uintBitsToFloat(HALF_OF(in_, k) << 16);
  else v = p.src == T_I32 || p.src == T_I64 ? int(in_[p.src == T_I64 ? 2 * k : k]) : int(BYTE_OF(in_, k));
  if (from_float) v = int(f);
  else if (p.src == T_I64)  // exact when it fits 32 bits (the high word is the sign of the low)
    f = int(in_[2 * k + 1]) == (v >> 31) ? float(v) : float(int(in_[2 * k + 1])) * 4294967296.0 + float(in_[2 * k]);
  else f = float(v);
  switch (p.dst) {
    case T_F32: return floatBitsToUint(f);
    case T_I32: return uint(v);
    case T_BOOL: return (from_float || p.src == T_I64 ? f != 0.0 : v != 0) ? 1u : 0u;
    case T_F16: return f16_bits(f);
    default: return bf16_bits(f);
  }
}

void main() {
  const uint per_word = p.dst == T_BOOL ? 4u : (p.dst == T_F16 || p.dst == T_BF16) ? 2u : 1u;
  const uint bits = 32u / per_word, mask = per_word == 1u ? 0xFFFFFFFFu : (1u << bits) - 1u;
  if (p.packed == 1u) {  // out: contiguous from element out_off, a multiple of per_word
    for (uint q = gl_GlobalInvocationID.x; q * 4 < p.n; q += GRID_STRIDE) {
      uint word = 0;
      for (uint j = 0; j < 4 && q * 4 + j < p.n; ++j) {
        const uint i = q * 4 + j, slot = i % per_word;
        word |= converted(i) << (slot * bits);
        if (slot == per_word - 1u) {
          out_[(p.out_off + i) / per_word] = word;
          word = 0;
        } else if (i + 1 == p.n) {  // a last, partial word: keep what follows the result
          const uint filled = (1u << ((slot + 1u) * bits)) - 1u;
          atomicAnd(out_[(p.out_off + i) / per_word], ~filled);
          atomicOr(out_[(p.out_off + i) / per_word], word);
        }
      }
    }
    return;
  }
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const uint k = uint(int(p.out_off) + strided_offset(i, p.ndim, p.shape, p.out_strides));
    const uint value = converted(i);
    if (per_word == 1u) {
      out_[k] = value;
    } else {
      const uint shift = (k % per_word) * bits;
      atomicAnd(out_[k / per_word], ~(mask << shift));
      atomicOr(out_[k / per_word], value << shift);
    }
  }
}
