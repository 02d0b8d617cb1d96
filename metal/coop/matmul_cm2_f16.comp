#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// float16 matmul on tensor cores through VK_NV_cooperative_matrix2 (see matmul_cm2.glsl).
#define ELEM float16_t
#define ROUNDED(x) f16_value(f16_bits(x))
#include "matmul_cm2.glsl"
