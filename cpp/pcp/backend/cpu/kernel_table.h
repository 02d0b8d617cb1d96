// The CPU kernels one instruction set provides. backend/cpu/kernels/*.cpp are compiled once
// per ISA (baseline, AVX2+FMA, AVX-512), each copy in its own namespace, and dispatch.cpp
// picks the best the machine supports. Kernels are single-threaded inner loops over raw
// pointers with element strides; the callers in backend/cpu/ split work across threads.
#pragma once
#include <cstdint>

#include "pcp/core/dtype.h"
#include "pcp/core/half.h"
#include "pcp/core/op_kinds.h"

namespace pcp::cpu {

// Raises TypeError("<kernel>: <problem><detail>"). Defined once, outside the per-ISA files: a
// template such as fail<> instantiated there could be merged by the linker with the same
// instantiation elsewhere and run that ISA's code on any machine.
[[noreturn]] void kernel_error(const char* kernel, const char* problem, const char* detail = "");
// std::malloc for a kernel's scratch row; MemoryError when it cannot be had.
void* kernel_scratch(const char* kernel, size_t bytes);

// A T x D matrix view: element (i, j) at p[i * rs + j * cs].
struct AttnView {
  const float* p;
  int64_t rs, cs;
};

struct KernelTable {
  const char* isa;
  // out[i*so] = op(a[i*sa]) for i < n, in dtype dt (LogicalNot: bool in, bool out).
  void (*unary)(UnaryOp op, DType dt, int64_t n, char* out, int64_t so, const char* a, int64_t sa);
  // out[i*so] = op(a[i*sa], b[i*sb]); comparisons write bool.
  void (*binary)(BinaryOp op, DType dt, int64_t n, char* out, int64_t so, const char* a, int64_t sa,
                 const char* b, int64_t sb);
  void (*where)(DType dt, int64_t n, char* out, int64_t so, const char* cond, int64_t sc, const char* a,
                int64_t sa, const char* b, int64_t sb);
  void (*cast)(DType from, DType to, int64_t n, char* out, int64_t so, const char* a, int64_t sa);
  // Reduces a contiguous (O, R, I) block along R into a contiguous (O, I) output.
  // Sum writes dtype dt (callers pass int64 for integers), Arg* write int64.
  void (*reduce)(ReduceOp op, DType dt, const char* x, int64_t O, int64_t R, int64_t I, char* out);
  // Row-wise kernels over `rows` contiguous rows of length n.
  void (*softmax_rows)(DType dt, const char* x, char* y, int64_t rows, int64_t n, bool log);
  void (*layer_norm_rows)(DType dt, const char* x, const char* w, const char* b, char* y, float* mean,
                          float* rstd, int64_t rows, int64_t n, double eps);
  // Their first-order backward passes (see kernels/nn.cpp); layer norm accumulates dw, db (may be null).
  void (*softmax_backward_rows)(DType dt, const char* y, const char* g, char* gx, int64_t rows, int64_t n, bool log);
  void (*layer_norm_backward_rows)(DType dt, const char* x, const char* w, const char* g, const float* mean,
                                   const float* rstd, char* gx, float* dw, float* db, int64_t rows, int64_t n);
  // loss[r] = logsumexp(logits[r]) - logits[r, target[r]], 0 where target == ignore_index.
  void (*cross_entropy_rows)(DType dt, const char* logits, const int64_t* targets, char* loss, int64_t rows,
                             int64_t classes, int64_t ignore_index);
  // Fused optimizer updates over n contiguous float32 values, in place.
  // AdamW: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m/bc1 / (sqrt(v/bc2) + eps) + wd p).
  // Adam folds weight decay into the gradient instead (g += wd p), as torch.optim.Adam.
  // omb1 = 1 - b1 and omb2 = 1 - b2 come from the caller in double precision (1 - 0.999f is not 0.001).
  void (*adam_update)(float* p, const float* g, float* m, float* v, int64_t n, float lr, float b1, float b2,
                      float omb1, float omb2, float eps, float wd, float bc1, float bc2, bool decoupled);
  // SGD: g += wd p; buf = mu buf + (1 - dampening) g (g on the first step); p -= lr (nesterov ? g + mu buf : buf).
  void (*sgd_update)(float* p, const float* g, float* buf, int64_t n, float lr, float momentum, float dampening,
                     float wd, bool nesterov, bool first_step);
  // Gradient clipping's norm: the sum of squares, accumulated in double.
  double (*sum_squares)(const float* x, int64_t n);
  // float32 GEMM pieces: packing into MR-row / NR-column panels and the MR x NR micro-kernel.
  int gemm_mr, gemm_nr;
  void (*gemm_pack_a)(const float* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, float* dst);
  void (*gemm_pack_b)(const float* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, float* dst);
  // C[mr x nr] (+)= A[mr x kc] * Bpanel, A read as a[r * a_rs + k * a_cs] (packed: 1, MR).
  void (*gemm_micro)(int64_t kc, const float* a, int64_t a_rs, int64_t a_cs, const float* b, float* c, int64_t ldc,
                     int64_t mr, int64_t nr, bool accumulate);
  // bfloat16 GEMM with float32 accumulation (AVX512_BF16; null where the CPU lacks it): the same
  // MR x NR tiles over packed depth pairs, kp = ceil(kc / 2) 32-bit words per row or column.
  void (*gemm_bf16_pack_a)(const BFloat16* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, uint32_t* dst);
  void (*gemm_bf16_pack_b)(const BFloat16* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, uint32_t* dst);
  void (*gemm_bf16_micro)(int64_t kp, const uint32_t* a, int64_t a_rs, int64_t a_cs, const uint32_t* b, float* c,
                          int64_t ldc, int64_t mr, int64_t nr, bool accumulate);
  // One (batch, head) of float32 attention, flash-style (kernels/attention.cpp): q, k, v, o
  // and the output gradient g are T x D views; o and dq, dk, dv are written with unit column
  // stride; lse[i] is the log-sum-exp of row i's scaled scores, kept for the backward pass.
  void (*attention_forward)(int64_t T, int64_t D, float scale, bool causal, AttnView q, AttnView k, AttnView v,
                            float* o, int64_t o_rs, float* lse);
  void (*attention_backward)(int64_t T, int64_t D, float scale, bool causal, AttnView q, AttnView k, AttnView v,
                             AttnView o, AttnView g, const float* lse, float* dq, float* dk, float* dv,
                             int64_t d_rs);
};

// The table of the ISA selected at startup (PCP_SIMD=baseline|avx2|avx512|neon forces one).
const KernelTable& kernels();
// Instruction sets compiled into this binary and supported by this CPU, best first.
const char* available_isas();
// Switches the active ISA (tests run kernels at every level); throws if unsupported.
void set_isa(const char* name);

}  // namespace pcp::cpu
