#version 450
#extension GL_GOOGLE_include_directive : require
// binary.comp's ops four floats at a time (128-bit loads and stores) for the common layouts: a
// contiguous result, each operand either one broadcast scalar or contiguous and repeated along
// leading dimensions (a bias row). Element j of the result reads operand vec4 j % period.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 1) readonly buffer A { vec4 a[]; };
layout(std430, set = 0, binding = 2) readonly buffer B { vec4 b[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { vec4 out_[]; };
layout(push_constant) uniform Params {
  uint n4, op, out_off4;
  uint a_off, a_period;  // a_off in floats; a_period in vec4s, 0 for a broadcast scalar
  uint b_off, b_period;
} p;

#include "binary_ops.glsl"

// Operand vec4 j: a splatted scalar, or vec4 (off / 4 + j % period) (off is then a multiple of 4).
#define OPERAND(buf, off, period, j) \
  ((period) == 0u ? vec4(buf[(off) >> 2][(off) & 3u]) : buf[((off) >> 2) + ((j) < (period) ? (j) : (j) % (period))])

void main() {
  for (uint j = gl_GlobalInvocationID.x; j < p.n4; j += GRID_STRIDE) {
    vec4 x = OPERAND(a, p.a_off, p.a_period, j), y = OPERAND(b, p.b_off, p.b_period, j);
    out_[p.out_off4 + j] = vec4(apply(p.op, x.x, y.x), apply(p.op, x.y, y.y), apply(p.op, x.z, y.z),
                                apply(p.op, x.w, y.w));
  }
}
