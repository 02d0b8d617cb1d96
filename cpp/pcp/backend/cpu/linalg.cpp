// CPU host code of matmul (ops/linalg.cpp): the batch loop over the packed GEMM (gemm.cpp),
// with broadcast batch dimensions and any element strides for the operands.
#include <type_traits>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"

namespace pcp::cpu {

namespace {
// One row of an integer product: sums wrap around, as NumPy's (computed in the unsigned type,
// where overflow is defined).
template <class T>
void int_gemm_row(int64_t N, int64_t K, const T* a, int64_t csa, const T* b, int64_t rsb, int64_t csb, T* c) {
  using U = std::make_unsigned_t<T>;
  std::vector<U> acc(size_t(N), U(0));
  for (int64_t k = 0; k < K; ++k) {
    const U x = U(a[k * csa]);
    const T* bk = b + k * rsb;
    for (int64_t n = 0; n < N; ++n) acc[size_t(n)] += x * U(bk[n * csb]);
  }
  for (int64_t n = 0; n < N; ++n) c[n] = T(acc[size_t(n)]);
}
}  // namespace

void matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Shape& batch, double alpha) {
  const DType dt = a.dtype();
  // alpha scales the float result before it is rounded to its type.
  const auto scaled = [&](const Tensor& t) {  // contiguous, as the GEMMs write it
    if (alpha == 1.0) return;
    if (t.dtype() == DType::Float64)
      for (int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] *= alpha;
    else if (t.dtype() == DType::Float32)
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= float(alpha);
  };
  const bool half = dt == DType::Float16 || dt == DType::BFloat16;
  const bool bf16_kernel = dt == DType::BFloat16 && has_gemm_bf16();
  if (half && !bf16_kernel) {  // computed in float32 on widened copies, rounded once
    Tensor a32 = Tensor::empty(a.shape(), DType::Float32), b32 = Tensor::empty(b.shape(), DType::Float32);
    Tensor out32 = Tensor::empty(out.shape(), DType::Float32);
    cast_copy(a, a32);
    cast_copy(b, b32);
    matmul(a32, b32, out32, batch, alpha);
    return cast_copy(out32, out);
  }
  // bfloat16 accumulates into a float32 result, rounded once at the end.
  const Tensor acc = bf16_kernel ? Tensor::empty(out.shape(), DType::Float32) : out;
  const int64_t M = a.shape()[a.ndim() - 2], K = a.shape()[a.ndim() - 1], N = b.shape()[b.ndim() - 1];
  const int64_t nb = numel(batch);
  // Batch strides of a and b broadcast to `batch`.
  auto batch_strides = [&](const Tensor& t) {
    Shape bs(t.shape().begin(), t.shape().end() - 2);
    Strides st(batch.size(), 0);
    size_t off = batch.size() - bs.size();
    for (size_t i = 0; i < bs.size(); ++i) st[off + i] = bs[i] == 1 ? 0 : t.strides()[i];
    return st;
  };
  const Strides sa = batch_strides(a), sb = batch_strides(b);
  auto offset_of = [&](int64_t idx, const Strides& st) {
    int64_t off = 0;
    for (int d = int(batch.size()) - 1; d >= 0; --d) {
      off += (idx % batch[d]) * st[d];
      idx /= batch[d];
    }
    return off;
  };
  const int64_t rsa = a.strides()[a.ndim() - 2], csa = a.strides()[a.ndim() - 1];
  const int64_t rsb = b.strides()[b.ndim() - 2], csb = b.strides()[b.ndim() - 1];
  if (dt == DType::Int32 || dt == DType::Int64) {
    const auto run = [&](auto tag) {
      using T = decltype(tag);
      parallel_for(nb * M, std::max<int64_t>(1, 65536 / std::max<int64_t>(N * K, 1)), [&](int64_t s, int64_t e) {
        for (int64_t r = s; r < e; ++r) {
          const int64_t i = r / M, m = r % M;
          int_gemm_row<T>(N, K, a.data<T>() + offset_of(i, sa) + m * rsa, csa, b.data<T>() + offset_of(i, sb), rsb,
                          csb, out.data<T>() + (i * M + m) * N);
        }
      });
    };
    return dt == DType::Int32 ? run(int32_t{}) : run(int64_t{});
  }
  auto gemm = [&](int64_t i) {
    if (bf16_kernel)
      gemm_bf16(M, N, K, a.data<BFloat16>() + offset_of(i, sa), rsa, csa, b.data<BFloat16>() + offset_of(i, sb), rsb,
                csb, acc.data<float>() + i * M * N, N);
    else if (dt == DType::Float32)
      gemm_f32(M, N, K, a.data<float>() + offset_of(i, sa), rsa, csa, b.data<float>() + offset_of(i, sb), rsb, csb,
               acc.data<float>() + i * M * N, N);
    else
      gemm_f64(M, N, K, a.data<double>() + offset_of(i, sa), rsa, csa, b.data<double>() + offset_of(i, sb), rsb, csb,
               acc.data<double>() + i * M * N, N);
  };
  // Small matrices: one per thread; large ones: each GEMM uses every thread.
  if (nb > 1 && M * N * K < (int64_t(1) << 21))
    parallel_for(nb, 1, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) gemm(i);
    });
  else
    for (int64_t i = 0; i < nb; ++i) gemm(i);
  scaled(acc);
  if (bf16_kernel) cast_copy(acc, out);
}

}  // namespace pcp::cpu
