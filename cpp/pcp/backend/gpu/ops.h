// GPU implementations of the core's primitives: each validates what the kernels support
// (float32 math; any 32-bit type for fills and copies), packs shapes, strides and offsets into
// push constants and records one kernel dispatch on the tensors' device.
#pragma once
#include "pcp/backend/shared_ops.h"
#include "pcp/core/fused_program.h"
#include "pcp/core/op_kinds.h"
#include "pcp/core/tensor.h"

namespace pcp::gpu {

// unary, binary (compare() for a bool out), where, fused_elementwise, reduce, softmax,
// softmax_backward, dropout, gather and scatter_add, as backend/shared_ops.h declares them.
PCP_SHARED_BACKEND_OPS(PCP_DECLARE_BACKEND_OP)

// A copy of x on `device` (host <-> device through staging memory; any dtype and strides).
Tensor to_device(const Tensor& x, Device device);
// out (contiguous, on a GPU) = value.
void fill(const Tensor& out, double value);
// out = x elementwise; both may be strided views (same device and dtype).
// Comparisons (and logical and / or as minimum / maximum of bools) of float32, int32 or bool
// operands into a contiguous bool tensor.
void compare(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out);
// out = x converted, between float32, float16, bfloat16, int32 and bool; both may be strided.
void cast(const Tensor& x, const Tensor& out);
// Checked host int64 class indices as int32 on `device`, in their shape: one upload, which a
// cross-entropy's forward and backward share.
Tensor device_class_indices(const Tensor& targets, Device device);
// outs[i] = xs[i] converted, for contiguous tensors of one source and one destination type
// among float32, float16 and bfloat16 (a plan's batched casts): one dispatch for those a
// multi-tensor table takes (metal/addr/cast_multi.comp), cast() for the rest.
void cast_multi(const std::vector<Tensor>& xs, const std::vector<Tensor>& outs);
// outs[i] (I_i) = the column sums of contiguous float32 xs[i] (R_i, I_i): a plan's batched layer
// norm weight sums, one dispatch for those a multi-tensor table takes
// (metal/addr/sum_rows_multi.comp), reduce() for the rest.
void sum_rows_multi(const std::vector<Tensor>& xs, const std::vector<Tensor>& outs);
// Up to two batch dimensions (outer, inner) of a matmul, with each operand's element strides
// along them (0 broadcasts).
struct MatmulBatch {
  int64_t outer = 1, inner = 1;
  int64_t a_outer = 0, b_outer = 0, a_inner = 0, b_inner = 0;
};
// out[i] (M x N, contiguous) = a[i] @ b[i] over the batch entries in row-major order; a and b
// are (M, K) and (K, N) with any row/column strides. float32, or float16/bfloat16 where
// tensor_core_matmul() says so (the caller widens them to float32 elsewhere).
bool tensor_core_matmul(const Tensor& a, const Tensor& out, int64_t N);
// alpha scales the products as they are written (a power of two costs no rounding).
void matmul(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K,
            const MatmulBatch& batch, float alpha = 1.0f);
// matmul (backend/shared_ops.h) loops over the batch beyond the kernels' two dimensions, and
// widens 16-bit floats where there are no tensor-core kernels.
// A 2-D product with GELU (tanh) in its epilogue, where a library's product takes it (cuBLASLt):
// GeluTanh writes out = gelu(a @ b) and aux = a @ b; DGeluTanh reads aux (the GELU's input)
// and writes out = gelu'(aux) (a @ b). False where not taken: the caller runs the ops apart.
enum class MatmulEpilogue { GeluTanh, DGeluTanh };
bool matmul_epilogue(MatmulEpilogue e, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& aux,
                     float alpha = 1.0f);


// Row kernels over contiguous float32 (rows, n) blocks (softmax and layer_norm:
// backend/shared_ops.h).

// Fused attention (flash-style, no T x T matrix) over float32, float16 or bfloat16 heads of
// width D <= 64 (even). Head element (b, h, t, d) of q, k, v is at off + b sb + h sh + t st + d in
// its tensor's buffer (q, k and v may be one packed tensor); o is a (B, T, H, D) contiguous
// buffer in the heads' dtype and lse (B, H, T) float32. The backward pass writes dq, dk and dv
// (which may be one tensor) at the offsets of `grads` with the heads' strides, from o, its
// cotangent `go` ((B, T, H, D) contiguous) and lse.
struct AttentionHeads {
  int64_t B, H, T, D;
  int64_t q_off, k_off, v_off, sb, sh, st;
};
// Dropout on the attention weights inside the kernels: probability p (0: none) and the global
// generator's draws reserved for the (B, H, T, T) weights (key and first counter, as
// pcp::dropout's), so the mask is the one the composed path draws. B H T T < 2^32. The forward
// pass writes the mask's bits into `mask` (an int32 tensor of attention_mask_words() words; one
// unused word without dropout), which the backward pass reads.
struct AttentionDropout {
  double p = 0.0;
  uint64_t key = 0, start = 0;
};
bool attention_fits(int64_t D, DType dtype);  // what the kernels take
// Whether heads of this 16-bit dtype with this dropout run on tensor cores on this device: cuDNN's
// flash attention (the CUDA runtime; without dropout), or the tensor-core kernels
// (metal/coop/attention_coop.glsl); elsewhere the scalar float32-math kernels take them.
bool attention_on_tensor_cores(DType dtype, int device, double dropout_p = 0.0);
int64_t attention_mask_words(const AttentionHeads& a, double dropout_p);
void attention(const AttentionHeads& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
               const Tensor& lse, const Tensor& mask, double scale, bool causal, const AttentionDropout& drop);
void attention_backward(const AttentionHeads& a, const AttentionHeads& grads, const Tensor& q, const Tensor& k,
                        const Tensor& v, const Tensor& o, const Tensor& go, const Tensor& lse, const Tensor& mask,
                        const Tensor& dq, const Tensor& dk, const Tensor& dv, double scale, bool causal,
                        const AttentionDropout& drop);


// In-place optimizer updates of lists of contiguous float32 parameters on one device, one
// dispatch for the list where the runtime has buffer addresses (see pcp/ops/optim.h); the lists
// have equal lengths (buf: empty without momentum). b1, b2 in double: 1 - b is computed before
// rounding (1 - float(0.999) is 1.3e-5 off).
// Scales contiguous float32 gradients in place by min(max_norm / (norm + eps), 1), norm their
// global L2 norm; returns the norm (0-d float32), all without waiting for the GPU.
Tensor clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double eps);

}  // namespace pcp::gpu
