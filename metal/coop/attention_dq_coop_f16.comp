#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// float16 flash attention on tensor cores, the backward pass: dq and delta (see attention_coop.glsl).
#define DQ
#define ELEM float16_t
#define ROUND f16_bits
#include "attention_coop.glsl"
