#version 450
#extension GL_GOOGLE_include_directive : require
// float64 sums, maxima, minima and their indices (reduce_wide.glsl). An index is written as a
// double (exact below 2^53); the host casts it into the int64 result.
#include "../common.glsl"
#define VAL double
#define LOWEST (-1.0LF / 0.0LF)
#define HIGHEST (1.0LF / 0.0LF)
#define IS_NAN(v) isnan(v)
#include "reduce_wide.glsl"
