#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
// bfloat16 matmul on tensor cores (see matmul_coop.glsl). Built only when glslc supports
// GL_EXT_bfloat16; used only on devices that report 16x16x16 bfloat16 products.
#define ELEM bfloat16_t
#define ROUND bf16_bits
#include "matmul_coop.glsl"
