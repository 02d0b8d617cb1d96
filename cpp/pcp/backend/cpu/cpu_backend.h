// CPU implementations the primitives call: they walk strided tensors, split work across the
// thread pool and hand contiguous runs to the selected ISA's kernels.
#pragma once
#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/core/tensor.h"

namespace pcp::cpu {

// Elementwise ops write into a preallocated `out`; inputs are read through their strides,
// broadcast to out's shape (stride 0 on broadcast axes).
void unary(UnaryOp op, const Tensor& x, const Tensor& out);
void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
void cast_copy(const Tensor& src, const Tensor& dst);  // converts dtype; same dtype is a strided copy

// Reduces contiguous x viewed as (O, R, I) along R into contiguous out (O, I).
void reduce(ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out);

// C[M,N] = A[M,K] @ B[K,N] with arbitrary element strides for A and B; C contiguous (ldc).
void gemm_f32(int64_t M, int64_t N, int64_t K, const float* A, int64_t rsa, int64_t csa, const float* B,
              int64_t rsb, int64_t csb, float* C, int64_t ldc);
// bfloat16 inputs, float32 accumulation and output, where has_gemm_bf16() (AVX512_BF16).
bool has_gemm_bf16();
void gemm_bf16(int64_t M, int64_t N, int64_t K, const BFloat16* A, int64_t rsa, int64_t csa, const BFloat16* B,
               int64_t rsb, int64_t csb, float* C, int64_t ldc);
void gemm_f64(int64_t M, int64_t N, int64_t K, const double* A, int64_t rsa, int64_t csa, const double* B,
              int64_t rsb, int64_t csb, double* C, int64_t ldc);

// Strides of x read as if broadcast to `shape` (0 on broadcast axes).
Strides broadcast_strides(const Tensor& x, const Shape& shape);

}  // namespace pcp::cpu
