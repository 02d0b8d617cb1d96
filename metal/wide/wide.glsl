// 64-bit elements in buffers of 32-bit words (the kernels that mix types: compare_wide,
// cast_wide): element k is words 2k (low) and 2k + 1. T_F64 extends common.glsl's type codes.
#define T_F64 6u
#define F64_AT(words, k) packDouble2x32(uvec2((words)[2u * (k)], (words)[2u * (k) + 1u]))
#define I64_AT(words, k) int64_t(packUint2x32(uvec2((words)[2u * (k)], (words)[2u * (k) + 1u])))
