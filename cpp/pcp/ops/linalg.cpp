// matmul: 1-D, 2-D and batched with broadcast batch dimensions, on the packed GEMM.
#include <algorithm>

#include "pcp/autograd/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// Inputs are at least 2-D with matching inner dims; batch dims broadcast.
class Matmul : public Primitive {
 public:
  explicit Matmul(Shape batch) : batch_(std::move(batch)) {}
  const char* name() const override { return "matmul"; }

  Tensor forward(const std::vector<Tensor>& in) override {
    Tensor a = in[0], b = in[1];
    DType dt = a.dtype();
    const bool cpu_16bit = (dt == DType::Float16 || dt == DType::BFloat16) && !a.device().is_gpu();
    const bool bf16_kernel = cpu_16bit && dt == DType::BFloat16 && cpu::has_gemm_bf16();
    if (cpu_16bit && !bf16_kernel) {  // computed in float32 on widened copies
      NoGradGuard ng;
      Tensor r = forward({astype(a, DType::Float32), astype(b, DType::Float32)});
      return astype(r, dt);
    }
    const int64_t M = a.shape()[a.ndim() - 2], K = a.shape()[a.ndim() - 1], N = b.shape()[b.ndim() - 1];
    Shape out_shape = batch_;
    out_shape.push_back(M);
    out_shape.push_back(N);
    // bfloat16 accumulates into a float32 result, rounded once at the end.
    Tensor out = Tensor::empty(out_shape, bf16_kernel ? DType::Float32 : dt, a.device());
    const int64_t nb = numel(batch_);
    if (out.numel() == 0) return Tensor::empty(out_shape, dt, a.device());
    if (K == 0) return zeros(out_shape, dt, a.device());  // an empty sum
    if (out.device().is_gpu()) return forward_gpu(a, b, out, M, N, K);
    // Batch strides of a and b broadcast to batch_.
    auto batch_strides = [&](const Tensor& t) {
      Shape bs(t.shape().begin(), t.shape().end() - 2);
      Strides st(batch_.size(), 0);
      size_t off = batch_.size() - bs.size();
      for (size_t i = 0; i < bs.size(); ++i) st[off + i] = bs[i] == 1 ? 0 : t.strides()[i];
      return st;
    };
    Strides sa = batch_strides(a), sb = batch_strides(b);
    auto offset_of = [&](int64_t idx, const Strides& st) {
      int64_t off = 0;
      for (int d = int(batch_.size()) - 1; d >= 0; --d) {
        off += (idx % batch_[d]) * st[d];
        idx /= batch_[d];
      }
      return off;
    };
    const int64_t rsa = a.strides()[a.ndim() - 2], csa = a.strides()[a.ndim() - 1];
    const int64_t rsb = b.strides()[b.ndim() - 2], csb = b.strides()[b.ndim() - 1];
    auto run = [&](int64_t i) {
      if (bf16_kernel)
        cpu::gemm_bf16(M, N, K, a.data<BFloat16>() + offset_of(i, sa), rsa, csa, b.data<BFloat16>() + offset_of(i, sb),
                       rsb, csb, out.data<float>() + i * M * N, N);
      else if (dt == DType::Float32)
        cpu::gemm_f32(M, N, K, a.data<float>() + offset_of(i, sa), rsa, csa, b.data<float>() + offset_of(i, sb), rsb,
                      csb, out.data<float>() + i * M * N, N);
      else
        cpu::gemm_f64(M, N, K, a.data<double>() + offset_of(i, sa), rsa, csa, b.data<double>() + offset_of(i, sb),
                      rsb, csb, out.data<double>() + i * M * N, N);
    };
    // Small matrices: one per thread; large ones: each GEMM uses every thread.
    if (nb > 1 && M * N * K < (int64_t(1) << 21))
      parallel_for(nb, 1, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) run(i);
      });
    else
      for (int64_t i = 0; i < nb; ++i) run(i);
    if (bf16_kernel) {
      NoGradGuard ng;
      return astype(out, dt);
    }
    return out;
  }

  bool runs_on_gpu() const override { return true; }

  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const Tensor&, const Tensor& g,
                          const std::vector<bool>& needs) override {
    // A gradient comes out in its input's layout: for a transposed view such as Linear's W.T,
    // (g^T a)^T instead of a^T g, so that the gradient the transpose hands back to W is
    // contiguous and .grad needs no copy.
    Tensor ga, gb;
    if (needs[0])
      ga = column_major(in[0]) ? swapaxes(matmul(in[1], swapaxes(g, -1, -2)), -1, -2) : matmul(g, swapaxes(in[1], -1, -2));
    if (needs[1])
      gb = column_major(in[1]) ? swapaxes(matmul(swapaxes(g, -1, -2), in[0]), -1, -2) : matmul(swapaxes(in[0], -1, -2), g);
    return {ga, gb};
  }

  static bool column_major(const Tensor& t) {
    const size_t n = t.ndim();
    return t.shape()[n - 1] > 1 && t.shape()[n - 2] > 1 && t.strides()[n - 2] == 1 && t.strides()[n - 1] != 1;
  }

 private:
  // One dispatch covers the two innermost batch dimensions (a stride per operand for each);
  // further outer batch dimensions, rare in practice, loop here.
  Tensor forward_gpu(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K) {
    const bool half = a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16;
    if (half && !gpu::tensor_core_matmul(a, out, N)) {
      // float16/bfloat16 without tensor-core kernels: the float32 kernel on widened copies.
      Tensor wide = Tensor::empty(out.shape(), DType::Float32, out.device());
      forward_gpu(astype(a, DType::Float32), astype(b, DType::Float32), wide, M, N, K);
      gpu::cast(wide, out);
      return out;
    }
    auto batch_stride = [&](const Tensor& t, size_t d) {
      const size_t lead = batch_.size() - (t.ndim() - 2);
      return d < lead || t.shape()[d - lead] == 1 ? int64_t(0) : t.strides()[d - lead];
    };
    const size_t nd = batch_.size(), loop_dims = nd > 2 ? nd - 2 : 0;
    gpu::MatmulBatch bt;
    if (nd >= 1) bt.inner = batch_[nd - 1], bt.a_inner = batch_stride(a, nd - 1), bt.b_inner = batch_stride(b, nd - 1);
    if (nd >= 2) bt.outer = batch_[nd - 2], bt.a_outer = batch_stride(a, nd - 2), bt.b_outer = batch_stride(b, nd - 2);
    int64_t loops = 1;
    for (size_t d = 0; d < loop_dims; ++d) loops *= batch_[d];
    for (int64_t o = 0; o < loops; ++o) {
      int64_t oa = a.offset(), ob = b.offset(), rem = o;
      for (int d = int(loop_dims) - 1; d >= 0; --d) {
        const int64_t i = rem % batch_[d];
        rem /= batch_[d];
        oa += i * batch_stride(a, size_t(d));
        ob += i * batch_stride(b, size_t(d));
      }
      gpu::matmul(a.alias(a.shape(), a.strides(), oa), b.alias(b.shape(), b.strides(), ob),
                  out.alias(out.shape(), out.strides(), o * bt.outer * bt.inner * M * N), M, N, K, bt);
    }
    return out;
  }

  Shape batch_;
};

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  if (!a_in.defined() || !b_in.defined()) fail<ValueError>("matmul: got an undefined tensor");
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    fail<ValueError>("matmul: inputs must have at least one dimension, got shapes ", shape_str(a_in.shape()),
                     " and ", shape_str(b_in.shape()));
  DType dt = result_type(a_in.dtype(), false, b_in.dtype(), false);
  if (!is_floating(dt))
    fail<TypeError>("matmul: expected floating-point tensors, got ", dtype_name(a_in.dtype()), " and ",
                    dtype_name(b_in.dtype()));
  Tensor a = a_in.ndim() == 1 ? unsqueeze(a_in, 0) : a_in;
  Tensor b = b_in.ndim() == 1 ? unsqueeze(b_in, 1) : b_in;
  int64_t ka = a.shape()[a.ndim() - 1], kb = b.shape()[b.ndim() - 2];
  if (ka != kb)
    fail<ValueError>("matmul: shapes ", shape_str(a_in.shape()), " and ", shape_str(b_in.shape()),
                     " do not align: ", ka, " != ", kb);
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(ba, bb, "matmul");
  } catch (const ValueError&) {
    fail<ValueError>("matmul: batch dimensions of shapes ", shape_str(a_in.shape()), " and ",
                     shape_str(b_in.shape()), " cannot be broadcast together (", shape_str(ba), " vs ",
                     shape_str(bb), ")");
  }
  Tensor out;
  if (b.ndim() == 2 && a.ndim() > 2) {
    // (..., M, K) @ (K, N): one GEMM with the batch folded into M (and, through the reshape's
    // VJP, one GEMM for each gradient too) instead of a GEMM per batch element.
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(b.shape()[1]);
    Tensor flat = reshape(astype(a, dt), {numel(Shape(a.shape().begin(), a.shape().end() - 1)), ka});
    out = reshape(pcp::apply<Matmul>({flat, astype(b, dt)}, Shape{}), out_shape);
  } else {
    out = pcp::apply<Matmul>({astype(a, dt), astype(b, dt)}, batch);
  }
  if (a_in.ndim() == 1) out = squeeze(out, std::vector<int64_t>{-2});
  if (b_in.ndim() == 1) out = squeeze(out, std::vector<int64_t>{-1});
  return out;
}

}  // namespace pcp
