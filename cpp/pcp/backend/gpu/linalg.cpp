// GPU matmul: 64 x 64 and 128 x 128 tiles, tensor-core kernels for 16-bit floats, split K for
// few tiles over a long K.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/vendor/vendor.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

bool tensor_core_matmul(const Tensor& a, const Tensor& out, int64_t N) {
  if (!is_half(a)) return false;
  if (is_half(out) && (N % 2 || out.offset() % 2)) return false;  // 16-bit results are written in pairs
  const DeviceInfo info = rt().device_info(a.device().index);
  return a.dtype() == DType::Float16 ? info.tensor_core_f16 : info.tensor_core_bf16;
}

// Whether the VK_NV_cooperative_matrix2 kernels (metal/coop/matmul_cm2.glsl) take this product:
// asked for (PCP_TENSOR_CORE_KERNEL=cm2: on an H100 they reach 81 TFLOP/s at 4096^3 against the
// VK_KHR_cooperative_matrix kernels' 138, so these stay the default), the device has them, and
// each operand has a unit stride on one axis and 16-byte aligned rows, offsets and batch strides.
static bool cm2_matmul(const Tensor& a, const Tensor& b, int64_t M, int64_t N, int64_t K, const MatmulBatch& bt) {
  static const bool allowed = [] {
    const char* v = std::getenv("PCP_TENSOR_CORE_KERNEL");
    return v && std::strcmp(v, "cm2") == 0;
  }();
  if (!allowed || !rt().device_info(a.device().index).coopmat2) return false;
  const auto ok = [](const Tensor& t, int64_t rows, int64_t cols, int64_t inner, int64_t outer) {
    const int64_t rs = t.strides()[t.ndim() - 2], cs = t.strides().back();
    const bool aligned = t.offset() % 8 == 0 && inner % 8 == 0 && outer % 8 == 0;
    if (cs == 1) return aligned && (rows == 1 || (rs % 8 == 0 && rs >= cols));
    return aligned && rs == 1 && cs % 8 == 0 && cs >= rows;
  };
  return ok(a, M, K, bt.a_inner, bt.a_outer) && ok(b, K, N, bt.b_inner, bt.b_outer);
}

// Where there are no tensor-core kernels, the tiled kernels (matmul_tiled.glsl) read 16-bit
// operands of one type on runtimes that specialize kernels (not Metal), and write a 16-bit result
// in pairs: of even width and offset.
static bool tiled_reads_16bit(const Tensor& a, const Tensor& b) {
  return b.dtype() == a.dtype() && rt().specializes();
}
static bool tiled_writes(const Tensor& out, int64_t N) { return !is_half(out) || (N % 2 == 0 && out.offset() % 2 == 0); }

void matmul(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K,
            const MatmulBatch& bt, float alpha) {
  // float64, and integers (through int64)
  if (is_wide(a) || a.dtype() == DType::Int32 || a.dtype() == DType::Bool) return wide::matmul(a, b, out, M, N, K, bt, alpha);
  const bool coop = tensor_core_matmul(a, out, N);
  if (is_half(a) && !coop && !(tiled_reads_16bit(a, b) && tiled_writes(out, N)))
    fail<NotImplementedError>("matmul: ", dtype_name(a.dtype()), " into ", dtype_name(out.dtype()), " on ",
                              a.device().str(), " (widened to float32 by the caller where the kernels cannot)");
  if (!is_half(a)) require_f32("matmul", a);
  if (out.numel() == 0) return;
  if (K == 0) return fill(out, 0.0);
  // 128 x 128 tiles (matmul128.comp) pay off only with many tiles and a deep K (measured on an
  // H200 at GPT shapes); otherwise 64 x 64 (matmul.comp) keeps more workgroups busy.
  const int64_t batch = bt.outer * bt.inner;
  const int64_t tile = coop || (((M + 127) / 128) * ((N + 127) / 128) * batch >= 1024 && K >= 256) ? 128 : 64;
  const int64_t tiles_n = (N + tile - 1) / tile;
  int64_t tiles = ((M + tile - 1) / tile) * tiles_n * batch;
  const Strides &sa = a.strides(), &sb = b.strides();
  // Few output tiles over a long K (a weight gradient, X^T @ dY) leave most of the GPU idle: split
  // K into S equal slices computed as a batch of S float32 products, then sum them in a fixed
  // order (and round a 16-bit result once, after the sum).
  constexpr int64_t kFillTiles = 512, kMinSlice = 512;
  if (batch == 1 && tiles < kFillTiles / 2 && K >= 2 * kMinSlice) {
    int64_t S = std::min((kFillTiles + tiles - 1) / tiles, K / kMinSlice);
    while (S > 1 && K % S) --S;
    if (S > 1) {
      const int64_t slice = K / S;
      Tensor partial = Tensor::empty({S, M, N}, DType::Float32, out.device());
      MatmulBatch split;
      split.inner = S, split.a_inner = slice * sa.back(), split.b_inner = slice * sb[sb.size() - 2];
      matmul(a, b, partial, M, N, slice, split, alpha);
      if ((M * N) % 4 == 0 && out.offset() % 4 == 0) {  // out is contiguous, as the kernels write it
        struct { uint32_t n4, slices, out_off4, dst; } p{u32(M * N / 4, "size"), uint32_t(S),
                                                       u32(out.offset() / 4, "offset"), type_code("matmul", out)};
        return launch(out, "sum_slices", {buffer_of(partial), buffer_of(out)}, p, M * N / 4);
      }
      return into_float32(out, [&](const Tensor& o) { gpu::reduce(ReduceOp::Sum, partial, 1, S, M * N, o); });
    }
  }
  MatmulParams p = matmul_params(a, b, out, M, N, K, bt, tiles_n, alpha);
  std::string kernel = tile == 128 ? "matmul128" : "matmul";
  std::vector<uint32_t> layout;  // specialization constants: the tiled kernels' types, the tensor-core kernels' layout
  if (is_half(a) && !coop) layout = {type_code("matmul", a), type_code("matmul", out)};
  if (coop) {
    const bool cm2 = cm2_matmul(a, b, M, N, K, bt);
    kernel = std::string(cm2 ? "matmul_cm2_" : "matmul_coop_") + (a.dtype() == DType::Float16 ? "f16" : "bf16") +
             (out.dtype() == DType::Float32 ? "_f32" : "");
    // The operands' layouts as specialization constants (see the kernels): fixed when the
    // pipeline is made, they leave one path in the inner loop (4096^3 on an H100: 214 TFLOP/s
    // against 160 when the kernel chose its path at run time).
    const auto m8 = [](int64_t v) { return v % 8 == 0; };
    const bool a_offsets = m8(p.a_off) && m8(p.a_batch) && m8(p.a_outer);
    const bool b_offsets = m8(p.b_off) && m8(p.b_batch) && m8(p.b_outer);
    if (cm2) {
      const bool a_rows = p.csa == 1, b_rows = p.csb == 1;
      const bool aligned = m8(a_rows ? p.rsa : p.csa) && m8(b_rows ? p.rsb : p.csb) && K % 32 == 0 && a_offsets &&
                           b_offsets;  // 32: BK of matmul_cm2.glsl
      layout = {a_rows, b_rows, aligned};
    } else {
      const bool a_kmaj = p.csa == 1 || p.rsa != 1, b_kmaj = p.rsb == 1 && p.csb != 1;
      const bool a_fast = (a_kmaj ? p.csa == 1 && m8(p.rsa) && m8(K) : m8(p.csa) && m8(M)) && a_offsets;
      const bool b_fast = (b_kmaj ? m8(p.csb) && m8(K) : p.csb == 1 && m8(p.rsb) && m8(N)) && b_offsets;
      const int64_t c_word = out.dtype() == DType::Float32 ? 4 : 8;  // elements in 128 bits
      layout = {a_kmaj, a_fast, b_kmaj, b_fast, N % c_word == 0 && out.offset() % c_word == 0};
      // 256 x 128 tiles (TILE_M256 in matmul_coop.glsl) where there are enough of them for a few
      // waves of workgroups (one per SM). On an H100: 4096^3 264 against 212 TFLOP/s, GPT's
      // 16384 x 384 @ 384 x 1536 180 against 156, its batched attention products 61-63 against
      // 52-59; but 16384 x 1536 @ 1536 x 384, 192 tiles of 256 rows, 175 against 204.
      constexpr int64_t kTallTiles = 256;
      const int64_t tall = ((M + 255) / 256) * tiles_n * batch;
      if (tall >= kTallTiles) {
        kernel += "_m256";
        tiles = tall;
      }
    }
  }
  rt().dispatch(a.device().index, kernel, {buffer_of(a), buffer_of(b), buffer_of(out)}, &p, sizeof p,
                uint32_t(std::min<int64_t>(tiles, 65535)), layout);
}

MatmulParams matmul_params(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K,
                           const MatmulBatch& bt, int64_t tiles_n, float alpha) {
  const Strides &sa = a.strides(), &sb = b.strides();
  return {u32(M, "size"), u32(N, "size"), u32(K, "size"), u32(bt.outer * bt.inner, "batch"), u32(a.offset(), "offset"),
          u32(b.offset(), "offset"), u32(out.offset(), "offset"), u32(tiles_n, "tiles"),
          int32_t(sa[sa.size() - 2]), int32_t(sa.back()), int32_t(sb[sb.size() - 2]), int32_t(sb.back()),
          int32_t(bt.a_inner), int32_t(bt.b_inner), u32(bt.inner, "batch"), int32_t(bt.a_outer), int32_t(bt.b_outer),
          alpha};
}

bool matmul_epilogue(MatmulEpilogue e, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& aux,
                     float alpha) {
  return vendor::matmul_epilogue(e, a, b, out, aux, alpha);
}

// One dispatch covers the two innermost batch dimensions (a stride per operand for each);
// further outer batch dimensions, rare in practice, loop here.
void matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Shape& batch, double alpha_in) {
  if (out.dtype() == DType::Float64 && alpha_in != 1.0) {  // the kernels' alpha is a float: scale after
    matmul(a, b, out, batch, 1.0);
    Tensor s = Tensor::empty({}, DType::Float64, out.device());
    fill(s, alpha_in);
    return binary(BinaryOp::Mul, out, s, out);
  }
  const float alpha = float(alpha_in);
  if (vendor::matmul(a, b, out, batch, alpha)) return;  // cuBLASLt, on NVIDIA with pcp[cuda]
  const int64_t M = a.shape()[a.ndim() - 2], K = a.shape()[a.ndim() - 1], N = b.shape()[b.ndim() - 1];
  if (is_half(a) && !tensor_core_matmul(a, out, N)) {
    // float16/bfloat16 without tensor-core kernels: the tiled kernels read the 16-bit operands
    // (into a float32 stand-in for an odd-width 16-bit result); on Metal, widened copies.
    if (!tiled_reads_16bit(a, b))
      return into_float32(out, [&](const Tensor& o) { matmul(widened(a), widened(b), o, batch, alpha); });
    if (!tiled_writes(out, N)) return into_float32(out, [&](const Tensor& o) { matmul(a, b, o, batch, alpha); });
  }
  auto batch_stride = [&](const Tensor& t, size_t d) {
    const size_t lead = batch.size() - (t.ndim() - 2);
    return d < lead || t.shape()[d - lead] == 1 ? int64_t(0) : t.strides()[d - lead];
  };
  const size_t nd = batch.size(), loop_dims = nd > 2 ? nd - 2 : 0;
  MatmulBatch bt;
  if (nd >= 1) bt.inner = batch[nd - 1], bt.a_inner = batch_stride(a, nd - 1), bt.b_inner = batch_stride(b, nd - 1);
  if (nd >= 2) bt.outer = batch[nd - 2], bt.a_outer = batch_stride(a, nd - 2), bt.b_outer = batch_stride(b, nd - 2);
  int64_t loops = 1;
  for (size_t d = 0; d < loop_dims; ++d) loops *= batch[d];
  for (int64_t o = 0; o < loops; ++o) {
    int64_t oa = a.offset(), ob = b.offset(), rem = o;
    for (int d = int(loop_dims) - 1; d >= 0; --d) {
      const int64_t i = rem % batch[d];
      rem /= batch[d];
      oa += i * batch_stride(a, size_t(d));
      ob += i * batch_stride(b, size_t(d));
    }
    matmul(a.alias(a.shape(), a.strides(), oa), b.alias(b.shape(), b.strides(), ob),
           out.alias(out.shape(), out.strides(), o * bt.outer * bt.inner * M * N), M, N, K, bt, alpha);
  }
}

}  // namespace pcp::gpu
