#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
// bfloat16 matmul on tensor cores with a float32 result (see matmul_coop.glsl): the partial sums
// of a split K, summed and rounded once afterwards.
#define ELEM bfloat16_t
#define ROUND bf16_bits
#define OUT_F32
#include "matmul_coop.glsl"
