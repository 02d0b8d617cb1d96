// The operations the CPU and the GPU backends implement with the same arguments, declared here
// once: backend/cpu/cpu_backend.h and backend/gpu/ops.h expand PCP_SHARED_BACKEND_OPS inside
// their namespaces (cpu::<op>, gpu::<op>), and backend/dispatch.h makes backend::<op>, which runs
// the one of its `on` tensor's device. X(name, parameters, arguments, on).
//
// - unary, binary, where: elementwise into a preallocated `out`; inputs are read through their
//   strides, broadcast to out's shape (stride 0 on broadcast axes).
// - fused_elementwise: a fused program (core/fused_program.h) on float32 inputs into contiguous
//   outputs (on a GPU: contiguous inputs, within the kernel's limits).
// - reduce: contiguous x viewed as (O, R, I) along R into contiguous out (O, I).
// - softmax, softmax_backward: rows of contiguous (rows, n); causal_T > 0 keeps columns
//   0..(r % causal_T) of row r and makes the rest 0 (the causal mask of attention scores).
// - dropout: out = x * scale where Philox word (start + i / 4, i % 4) under `key` gives u >= prob,
//   else 0.
// - gather, scatter_add: along the middle axis of contiguous (O, N, I) -> (O, P, I), and the
//   gradient (zeros plus src added at the indexed rows); idx: P checked host int64 indices.
// - layer_norm: rows of x normalized into y (of x's type, or 16-bit for a float32 x); w and b may
//   be undefined; mean and rstd (float32, one per row) receive the statistics. With r (any
//   floating type, x's shape) and sum: sum = x + r is written and normalized (a plan's residual
//   form), as it is read.
// - matmul: out (batch..., M, N), contiguous = a @ b with the operands' batch dimensions broadcast
//   to `batch`, any strides; alpha scales the products as they are written.
// - layer_norm_backward: gx, and param_grads (2, n): the weight's gradient, then the bias's; g of
//   x's type, or 16-bit for a float32 x (a folded cast). With acc (float32, gx's shape: a plan's
//   add of another gradient), gx + acc is written; with low (16-bit, gx's shape: a folded cast),
//   gx in that type too; with partial (float32 (G, 2n), float32 x: a plan's form whose sums run
//   batched), G rows whose column sums are param_grads' rows are written instead of param_grads.
// - cross_entropy, cross_entropy_backward: per row of logits (..., C) against its class index
//   (checked host int64 targets, or on a GPU int32 ones it checks itself); rows whose target is
//   `ignore` give 0. Logits and gx may be 16-bit (folded casts). The GPU keeps each row's (max,
//   log-sum-exp) in lse for the gradient; the CPU takes an undefined lse and recomputes.
// - copy: out (any strides) = x, one dtype and shape.
// - adam, sgd: one step over every parameter of the lists (at least one), in place: p, and
//   AdamW's moments m and v or SGD's momentum buffers (empty without momentum). bc1 and bc2 are
//   Adam's bias corrections; decoupled: AdamW's weight decay.
#pragma once
#include <cstdint>
#include <vector>

#include "pcp/core/fused_program.h"
#include "pcp/core/op_kinds.h"
#include "pcp/core/tensor.h"

#define PCP_SHARED_BACKEND_OPS(X)                                                                               \
  X(unary, (UnaryOp op, const Tensor& x, const Tensor& out), (op, x, out), out)                               \
  X(binary, (BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out), (op, a, b, out), out)         \
  X(where, (const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out), (cond, a, b, out), out)  \
  X(fused_elementwise, (const FusedProgram& p, const std::vector<Tensor>& in, const std::vector<Tensor>& out), \
    (p, in, out), out.at(0))                                                                                   \
  X(reduce, (ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out),               \
    (op, x, O, R, I, out), out)                                                                                \
  X(softmax, (const Tensor& x, const Tensor& y, bool log, int64_t causal_T), (x, y, log, causal_T), y)        \
  X(softmax_backward, (const Tensor& y, const Tensor& g, const Tensor& gx, bool log, int64_t causal_T),       \
    (y, g, gx, log, causal_T), gx)                                                                             \
  X(dropout, (const Tensor& x, const Tensor& out, float prob, float scale, uint64_t key, uint64_t start),     \
    (x, out, prob, scale, key, start), out)                                                                    \
  X(gather, (const Tensor& x, const Tensor& idx, int64_t N, int64_t I, const Tensor& out), (x, idx, N, I, out), \
    x)                                                                                                         \
  X(scatter_add, (const Tensor& src, const Tensor& idx, int64_t N, int64_t I, const Tensor& out),             \
    (src, idx, N, I, out), src)                                                                                \
  X(layer_norm, (const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y, const Tensor& mean,       \
                 const Tensor& rstd, double eps, const Tensor& r, const Tensor& sum),                          \
    (x, w, b, y, mean, rstd, eps, r, sum), x)                                                                  \
  X(matmul, (const Tensor& a, const Tensor& b, const Tensor& out, const Shape& batch, double alpha),           \
    (a, b, out, batch, alpha), out)                                                                            \
  X(layer_norm_backward, (const Tensor& x, const Tensor& w, const Tensor& g, const Tensor& mean,               \
                          const Tensor& rstd, const Tensor& gx, const Tensor& param_grads, const Tensor& acc,   \
                          const Tensor& low, const Tensor& partial),                                            \
    (x, w, g, mean, rstd, gx, param_grads, acc, low, partial), x)                                             \
  X(cross_entropy, (const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& loss,           \
                    const Tensor& lse),                                                                        \
    (logits, targets, ignore, loss, lse), loss)                                                                \
  X(cross_entropy_backward, (const Tensor& logits, const Tensor& targets, int64_t ignore, const Tensor& lse,   \
                             const Tensor& g, const Tensor& gx),                                               \
    (logits, targets, ignore, lse, g, gx), gx)                                                                \
  X(copy, (const Tensor& x, const Tensor& out), (x, out), out)                                                 \
  X(adam, (const std::vector<Tensor>& p, const std::vector<Tensor>& g, const std::vector<Tensor>& m,          \
           const std::vector<Tensor>& v, float lr, double b1, double b2, float eps, float wd, float bc1,        \
           float bc2, bool decoupled),                                                                         \
    (p, g, m, v, lr, b1, b2, eps, wd, bc1, bc2, decoupled), p.at(0))                                          \
  X(sgd, (const std::vector<Tensor>& p, const std::vector<Tensor>& g, const std::vector<Tensor>& buf, float lr, \
          float momentum, float dampening, float wd, bool nesterov, bool first_step),                         \
    (p, g, buf, lr, momentum, dampening, wd, nesterov, first_step), p.at(0))

#define PCP_DECLARE_BACKEND_OP(name, params, args, on) void name params;
