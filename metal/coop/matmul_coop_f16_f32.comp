#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// float16 matmul on tensor cores with a float32 result (see matmul_coop.glsl): the partial sums
// of a split K, summed and rounded once afterwards.
#define ELEM float16_t
#define ROUND f16_bits
#define OUT_F32
#include "matmul_coop.glsl"
