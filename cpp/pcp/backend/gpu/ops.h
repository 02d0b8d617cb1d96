// GPU implementations of the core's primitives: each validates what the kernels support
// (float32 math; any 32-bit type for fills and copies), packs shapes, strides and offsets into
// push constants and records one kernel dispatch on the tensors' device.
#pragma once
#include "pcp/backend/cpu/kernel_table.h"
#include "pcp/core/tensor.h"
#include "pcp/ops/ops.h"

namespace pcp::gpu {

// A copy of x on `device` (host <-> device through staging memory; any dtype and strides).
Tensor to_device(const Tensor& x, Device device);
// out (contiguous, on a GPU) = value.
void fill(const Tensor& out, double value);
// out (contiguous) = x (strided, same device and dtype).
void copy(const Tensor& x, const Tensor& out);
void unary(UnaryOp op, const Tensor& x, const Tensor& out);
void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
// Contiguous (O, R, I) -> (O, I) along R (sum, max, min).
void reduce(cpu::ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out);
// out[i] (M x N, contiguous) = a[i] @ b[i] over `batch` entries; a and b are (M, K) and (K, N)
// with any row/column strides and batch strides a_batch, b_batch (0 broadcasts).
void matmul(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K, int64_t batch,
            int64_t a_batch, int64_t b_batch);

}  // namespace pcp::gpu
