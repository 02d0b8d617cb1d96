#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
// bfloat16 flash attention on tensor cores, the forward pass (see attention_coop.glsl).
#define FWD
#define ELEM bfloat16_t
#define ROUND bf16_bits
#include "attention_coop.glsl"
