#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
// matmul_coop_bf16_f32.comp with 256 x 128 tiles of 16 subgroups (TILE_M256 in
// matmul_coop.glsl), for the products the host gives this tiling.
#define ELEM bfloat16_t
#define ROUND bf16_bits
#define OUT_F32
#define TILE_M256
#include "matmul_coop.glsl"
