#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
// bfloat16 matmul on tensor cores through VK_NV_cooperative_matrix2 (see matmul_cm2.glsl).
#define ELEM bfloat16_t
#define ROUNDED(x) uintBitsToFloat(bf16_bits(x) << 16)
#include "matmul_cm2.glsl"
