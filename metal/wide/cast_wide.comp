#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// Casts into or out of float64 and int64, strided to strided. src: any type code (common.glsl's,
// and T_F64); dst: T_F32, T_I32, T_F64, T_I64, or T_BOOL written as int32 0 / 1 (the host packs
// bools, and rounds 16-bit results, through cast.comp). Float to int truncates toward zero,
// int64 to int32 keeps the low word, as NumPy.
#include "../common.glsl"
#include "wide.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer In { uint in_[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_[]; };
layout(push_constant) uniform Params {
  uint n, ndim, in_off, out_off, src, dst;
  uint shape[MAX_DIMS];
  int in_strides[MAX_DIMS];
  int out_strides[MAX_DIMS];
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE) {
    const uint k = uint(int(p.in_off) + strided_offset(i, p.ndim, p.shape, p.in_strides));
    const uint o = uint(int(p.out_off) + strided_offset(i, p.ndim, p.shape, p.out_strides));
    // The value as a double (f) or an int64 (v), whichever the source is.
    const bool from_int = p.src == T_I64 || p.src == T_I32 || p.src == T_BOOL;
    double f = 0.0LF;
    int64_t v = 0l;
    if (p.src == T_F64) f = F64_AT(in_, k);
    else if (p.src == T_F32) f = double(uintBitsToFloat(in_[k]));
    else if (p.src == T_F16) f = double(f16_value(HALF_OF(in_, k)));
    else if (p.src == T_BF16) f = double(uintBitsToFloat(HALF_OF(in_, k) << 16));
    else if (p.src == T_I64) v = I64_AT(in_, k);
    else if (p.src == T_I32) v = int64_t(int(in_[k]));
    else v = int64_t(BYTE_OF(in_, k) != 0u ? 1 : 0);
    if (p.dst == T_F64 || p.dst == T_I64) {
      uvec2 w;
      if (p.dst == T_F64) w = unpackDouble2x32(from_int ? double(v) : f);
      else w = unpackUint2x32(uint64_t(from_int ? v : int64_t(f)));
      out_[2u * o] = w.x;
      out_[2u * o + 1u] = w.y;
    } else if (p.dst == T_F32) {
      out_[o] = floatBitsToUint(from_int ? float(v) : float(f));
    } else if (p.dst == T_I32) {
      out_[o] = from_int ? uint(v & 0xFFFFFFFFl) : uint(int(f));
    } else {  // T_BOOL, as int32
      out_[o] = (from_int ? v != 0l : f != 0.0LF) ? 1u : 0u;
    }
  }
}
