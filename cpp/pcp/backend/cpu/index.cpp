// CPU host code of the gathers and their gradient (ops/index.cpp), over contiguous tensors
// viewed as (O, N, I) around the indexed axis, with checked host int64 indices.
#include <algorithm>
#include <cstring>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"

namespace pcp::cpu {

void gather(const Tensor& x, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  const int64_t P = idx.numel(), O = out.numel() / std::max<int64_t>(P * I, 1);
  const size_t row = size_t(I) * x.itemsize();
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  const int64_t* ip = idx.data<int64_t>();
  parallel_for(O * P, std::max<int64_t>(1, 65536 / std::max<int64_t>(I, 1)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / P, p = t % P;
      std::memcpy(dst + size_t(t) * row, src + (size_t(o) * N + size_t(ip[p])) * row, row);
    }
  });
}

void scatter_add(const Tensor& src_in, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  // Sums in float64 for float64, else in float32 (16-bit floats are widened, then rounded once).
  const DType acc = src_in.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor src = src_in;
  if (src.dtype() != acc) {
    src = Tensor::empty(src_in.shape(), acc);
    cast_copy(src_in, src);
  }
  Tensor sum = out.dtype() == acc ? out : Tensor::empty(out.shape(), acc);
  std::memset(sum.raw_data(), 0, size_t(sum.numel()) * sum.itemsize());
  const int64_t P = idx.numel(), O = out.numel() / std::max<int64_t>(N * I, 1);
  const int64_t* ip = idx.data<int64_t>();
  auto run = [&](auto* dst, const auto* s) {
    // Threads own disjoint column ranges of I, so repeated indices never race.
    parallel_for(I, std::max<int64_t>(16, 65536 / std::max<int64_t>(O * P, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = 0; o < O; ++o)
        for (int64_t p = 0; p < P; ++p) {
          auto* d = dst + (o * N + ip[p]) * I;
          const auto* sr = s + (o * P + p) * I;
          for (int64_t i = b; i < e; ++i) d[i] += sr[i];
        }
    });
  };
  if (acc == DType::Float64) run(sum.data<double>(), src.data<double>());
  else run(sum.data<float>(), src.data<float>());
  if (!sum.is_same(out)) cast_copy(sum, out);
}

}  // namespace pcp::cpu
