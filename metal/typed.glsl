// Operands of float32, float16 or bfloat16 in buffers of 32-bit words, their type a push
// constant (T_F32, T_F16 or T_BF16 of common.glsl): kernels that read a 16-bit operand as it is,
// or write a 16-bit result (two elements a word), where a float32 copy would take a cast.
#define LOAD_TYPED(buf, type, i)                                                               \
  ((type) == T_F32    ? uintBitsToFloat((buf)[i])                                              \
   : (type) == T_BF16 ? uintBitsToFloat(HALF_OF(buf, i) << 16)                                 \
                      : f16_value(HALF_OF(buf, i)))
// The bits of v in a 16-bit type, rounded to nearest even.
uint half_bits(uint type, float v) { return type == T_BF16 ? bf16_bits(v) : f16_bits(v); }
// Two neighbouring 16-bit values as the word that holds them (lo first).
uint half_pair(uint type, float lo, float hi) { return half_bits(type, lo) | half_bits(type, hi) << 16; }
