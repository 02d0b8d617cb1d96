#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// int64 sums (wrapping), maxima, minima and their indices (reduce_wide.glsl).
#include "../common.glsl"
#define VAL int64_t
#define LOWEST (-9223372036854775807l - 1l)
#define HIGHEST 9223372036854775807l
#define IS_NAN(v) false
#include "reduce_wide.glsl"
