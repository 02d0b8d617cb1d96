#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// int64 batched matmul (matmul_wide.glsl), wrapping as the CPU's; alpha is 1 for integers.
#include "../common.glsl"
#define VAL int64_t
#define SCALED(v) (v)
#include "matmul_wide.glsl"
