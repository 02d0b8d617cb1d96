#version 450
#extension GL_GOOGLE_include_directive : require
// binary.comp's ops four elements at a time for the common layouts: a contiguous result, each
// operand either one broadcast scalar or contiguous and repeated along leading dimensions (a bias
// row). Element j of the result reads operand vec4 j % period. Operands and result are float32,
// float16 or bfloat16 (64-bit loads and stores), computed in float32 and rounded once.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { uvec2 a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { uvec2 b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { uvec2 out_[]; };
layout(push_constant) uniform Params {
  uint n4, op, out_off4;
  uint a_off, a_period;  // a_off in elements; a_period in vec4s, 0 for a broadcast scalar
  uint b_off, b_period;
  uint a_type, b_type, out_type;  // T_F32, T_F16 or T_BF16
} p;

#include "binary_ops.glsl"

// Operand vec4 j: a splatted scalar, or vec4 (off / 4 + j % period) (off is then a multiple of 4).
#define OPERAND(buf, type, off, period, j)                                             \
  ((period) == 0u ? vec4(LOAD1(buf, type, off))                                         \
                  : LOAD4(buf, type, ((off) >> 2) + ((j) < (period) ? (j) : (j) % (period))))

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.n4; j += GRID_STRIDE) {
    vec4 x = OPERAND(a, p.a_type, p.a_off, p.a_period, j), y = OPERAND(b, p.b_type, p.b_off, p.b_period, j);
    const vec4 r = vec4(apply(p.op, x.x, y.x), apply(p.op, x.y, y.y), apply(p.op, x.z, y.z), apply(p.op, x.w, y.w));
    STORE4(out_, p.out_type, p.out_off4 + j, r)
  }
}
