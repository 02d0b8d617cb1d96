// CPU implementations the primitives call: they walk strided tensors, split work across the
// thread pool and hand contiguous runs to the selected ISA's kernels.
#pragma once
#include "pcp/backend/cpu/kernel_table.h"
#include <vector>

#include "pcp/backend/shared_ops.h"
#include "pcp/core/fused_program.h"
#include "pcp/core/tensor.h"

namespace pcp::cpu {

// unary, binary, where, fused_elementwise, reduce, softmax, softmax_backward, dropout, gather
// and scatter_add, as backend/shared_ops.h declares them.
PCP_SHARED_BACKEND_OPS(PCP_DECLARE_BACKEND_OP)

void cast_copy(const Tensor& src, const Tensor& dst);  // converts dtype; same dtype is a strided copy

// Sorting, scans and searches along the last axis of contiguous tensors (backend/cpu/sort.cpp).
// Keys: float32, float64, int32, int64; NaN orders above every number.
void argsort(const Tensor& x, const Tensor& out, bool descending);  // out int64, stable
// out = running sums (or products) of x, of x's dtype (float32, float64, int64), from the end
// when reverse.
void cumulative(const Tensor& x, const Tensor& out, bool product, bool reverse);
// out = the gradient of cumulative products of x (float32, float64) for their cotangent g.
void cumprod_backward(const Tensor& x, const Tensor& g, const Tensor& out);
// out[i] = where values[i] goes in the sorted 1-D tensor: before equals, or after them (right).
void searchsorted(const Tensor& sorted, const Tensor& values, const Tensor& out, bool right);
// The distinct values of a 1-D tensor, ascending: each one's first index, the index of each
// element's value (inverse) and the counts; NaNs are each distinct.
struct UniqueParts {
  Tensor index, inverse, counts;
};
UniqueParts unique(const Tensor& flat);


// matmul (backend/shared_ops.h) with K > 0: float32, float64, or 16-bit floats computed in
// float32 and rounded once; int32 and int64 wrap around, as NumPy's.

// A plan's product epilogue on the CPU: what a GEMM does to each block of C once the block is
// final, while it is in cache. GeluTanh stores the product in aux and writes gelu(C); DGeluTanh
// writes gelu'(aux) C. aux: C's shape, row-major with leading dimension ld.
struct GemmEpilogue {
  enum class Kind { None, GeluTanh, DGeluTanh } kind = Kind::None;
  float* aux = nullptr;
  int64_t ld = 0;
};

// C[M,N] = A[M,K] @ B[K,N] with arbitrary element strides for A and B; C contiguous (ldc); K > 0
// with an epilogue.
void gemm_f32(int64_t M, int64_t N, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B,
              int64_t rsb, int64_t csb, float* C, int64_t ldc, const GemmEpilogue& epilogue = {});
// matmul of 2-D float32 operands with the epilogue, out and aux contiguous float32 of the
// product's shape: the bits of the product and the elementwise op apart. False where it does
// not take them (another dtype, K = 0): the caller runs them apart.
bool matmul_epilogue(GemmEpilogue::Kind kind, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& aux);
// bfloat16 inputs, float32 accumulation and output, where has_gemm_bf16() (AVX512_BF16).
bool has_gemm_bf16();
void gemm_bf16(int64_t M, int64_t N, int64_t K, const BFloat16* A, int64_t rsa, int64_t csa, const BFloat16* B,
               int64_t rsb, int64_t csb, float* C, int64_t ldc);
void gemm_f64(int64_t M, int64_t N, int64_t K, const double* A, int64_t rsa, int64_t csa, const double* B,
              int64_t rsb, int64_t csb, double* C, int64_t ldc);

// Row kernels over contiguous (rows, n) tensors: the CPU halves of the neural-network
// primitives, beside gpu::layer_norm_backward and friends (backend/gpu/ops.h).

// Fused float32 attention (flash-style, no T x T matrix). q, k, v: (B, H, T, D) views of any
// strides; o: a (B, T, H, D) contiguous buffer; lse (B, H, T) receives each row's log-sum-exp
// for the backward pass. The qkv_ forms read heads straight out of GPT-2's
// packed (B, T, 3 * H * D) projection and write o, dqkv as (B, T, H * D) and (B, T, 3 * H * D).
void attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse, double scale,
               bool causal);
void qkv_attention(const Tensor& qkv, int64_t H, const Tensor& o, const Tensor& lse, double scale, bool causal);
// dq, dk, dv: (B, H, T, D) views sharing one row stride, with unit column stride.
void attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                        const Tensor& g, const Tensor& dq, const Tensor& dk, const Tensor& dv, double scale,
                        bool causal);
void qkv_attention_backward(const Tensor& qkv, int64_t H, const Tensor& o, const Tensor& lse, const Tensor& g,
                            const Tensor& dqkv, double scale, bool causal);

// In-place optimizer updates of contiguous float32 tensors (see pcp/ops/optim.h), all CPU
// tensors of the lists in one parallel loop (GPU ones are skipped: gpu::adam, gpu::sgd).
// bufs may be empty (no momentum).
// Sum of squares of every CPU float32 tensor of xs, in float64, independent of the thread count.
double sum_squares(const std::vector<Tensor>& xs);
void scale_in_place(const std::vector<Tensor>& xs, float s);


}  // namespace pcp::cpu
