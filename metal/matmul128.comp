#version 450
#extension GL_GOOGLE_include_directive : require
// Batched matmul (float32 arithmetic) with 128 x 128 tiles (8 x 8 results per invocation: twice
// the FMAs per shared-memory read of matmul.comp), for products with both sides >= 128.
#include "common.glsl"
layout(local_size_x = 256) in;
#define TM 128
#define TN 128
#define TK 8
#include "matmul_tiled.glsl"
