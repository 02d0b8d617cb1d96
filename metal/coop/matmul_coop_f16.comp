#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// float16 matmul on tensor cores (see matmul_coop.glsl). Built only when glslc supports
// GL_KHR_cooperative_matrix; used only on devices that report 16x16x16 float16 products.
#define ELEM float16_t
#define ROUND f16_bits
#include "matmul_coop.glsl"
