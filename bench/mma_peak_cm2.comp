#version 450
// bench/mma_peak.comp for VK_NV_cooperative_matrix2's workgroup-scope matrices: a workgroup of
// THREADS holds one BM x BN float32 accumulator and multiplies-adds BM x 32 and 32 x BN 16-bit
// operands into it ITERS times, loading both from shared memory every step (SMEM) or once. How
// the driver maps that onto the tensor cores (which subgroup owns which part, how the operands
// reach them) is its own; this measures what it achieves. -DBF16 for bfloat16.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#ifdef BF16
#extension GL_EXT_bfloat16 : require
#define ELEM bfloat16_t
#else
#define ELEM float16_t
#endif
#ifndef BM
#define BM 128
#define BN 128
#define THREADS 256
#endif
#define BK 32
layout(local_size_x = THREADS) in;
layout(constant_id = 0) const uint ITERS = 4096;
layout(constant_id = 1) const bool SMEM = false;
layout(std430, binding = 0) readonly buffer In { uvec4 x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };
// A (BM x BK) then B (BK x BN), row-major, 8 values a uvec4; and room to shift.
shared uvec4 tiles[(BM + BN) * BK / 8 + 8];

void main() {
  const uint n = (BM + BN) * BK / 8 + 8;
  for (uint i = gl_LocalInvocationID.x; i < n; i += THREADS) tiles[i] = x[i % 264];
  barrier();
  coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> a;
  coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> b;
  coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> c =
      coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
  coopMatLoad(a, tiles, 0, BK / 8, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, tiles, BM * BK / 8, BN / 8, gl_CooperativeMatrixLayoutRowMajor);
  const uint never = x[0].y;  // 0xFFFFFFFF: no step stores
  for (uint it = 0; it < ITERS; ++it) {
    if (SMEM) {
      if (it == never) tiles[gl_LocalInvocationID.x] = uvec4(it);
      const uint o = it & 1u;
      coopMatLoad(a, tiles, o, BK / 8, gl_CooperativeMatrixLayoutRowMajor);
      coopMatLoad(b, tiles, BM * BK / 8 + o, BN / 8, gl_CooperativeMatrixLayoutRowMajor);
    }
    c = coopMatMulAdd(a, b, c);
  }
  coopMatStore(c, y, (gl_WorkGroupID.x % 8) * BM * BN, BN, gl_CooperativeMatrixLayoutRowMajor);  // races: only the rate counts
}
