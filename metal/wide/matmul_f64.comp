#version 450
#extension GL_GOOGLE_include_directive : require
// float64 batched matmul (matmul_wide.glsl); alpha scales the products as they are written.
#include "../common.glsl"
#define VAL double
#define SCALED(v) ((v) * double(p.alpha))
#include "matmul_wide.glsl"
