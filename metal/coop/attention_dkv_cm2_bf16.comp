#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
// bfloat16 flash attention through VK_NV_cooperative_matrix2, the backward pass: dk and dv (see attention_cm2.glsl).
#define DKV
#define ELEM bfloat16_t
#define ROUNDED(x) uintBitsToFloat(bf16_bits(x) << 16)
#include "attention_cm2.glsl"
