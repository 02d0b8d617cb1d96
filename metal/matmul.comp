#version 450
#extension GL_GOOGLE_include_directive : require
// Batched matmul (float32 arithmetic) with 64 x 64 tiles (4 x 4 results per invocation): small
// products.
#include "common.glsl"
layout(local_size_x = 256) in;
#define TM 64
#define TN 64
#define TK 16
#include "matmul_tiled.glsl"
