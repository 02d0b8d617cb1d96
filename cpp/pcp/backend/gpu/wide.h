// float64 and int64 on the GPU (wide.cpp, metal/wide/): internal to backend/gpu/.
#pragma once
#include "pcp/backend/gpu/ops.h"

namespace pcp::gpu {

bool is_wide(const Tensor& t);  // float64 or int64
bool has_wide(Device device);   // the device runs the 64-bit kernels
// NotImplementedError "<op>: float64 is not supported on vulkan:0 (<name>): the device lacks
// shaderFloat64" where it does not.
void require_wide(const char* op, const Tensor& t);

// The GPU ops of 64-bit tensors (ops.h's, same arguments); int32 and bool operands are widened.
namespace wide {
void copy(const Tensor& x, const Tensor& out);
void fill(const Tensor& out, double value);
void cast(const Tensor& x, const Tensor& out);
void unary(UnaryOp op, const Tensor& x, const Tensor& out);
void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void compare(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
void reduce(ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out);
void matmul(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K,
            const MatmulBatch& bt, float alpha);
void gather(const Tensor& x, const Tensor& idx, int64_t N, int64_t I, const Tensor& out);
// The row ops (wide_nn.cpp), composed from the above; cross_entropy_backward recomputes the
// forward's statistics (it takes no lse).
void softmax(const Tensor& x, const Tensor& y, bool log, int64_t causal_T);
void softmax_backward(const Tensor& y, const Tensor& g, const Tensor& gx, bool log, int64_t causal_T);
void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Tensor& mean,
                const Tensor& rstd, double eps, const Tensor& r, const Tensor& s);
void cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& loss, const Tensor& lse);
void cross_entropy_backward(const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& g,
                            const Tensor& gx);
void dropout(const Tensor& x, const Tensor& out, float prob, float scale, uint64_t key, uint64_t start);
}  // namespace wide

}  // namespace pcp::gpu
