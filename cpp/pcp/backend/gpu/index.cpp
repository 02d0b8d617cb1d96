// GPU gathers and their gradient (scatter_add, deterministic: a counting sort, no atomics).
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

void gather(const Tensor& x, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { gather(widened(x), idx, N, I, o); });
  }
  if (x.dtype() == DType::Bool) {
    return into_int32(out, [&](const Tensor& o) { gather(bool_as_int32(x), idx, N, I, o); });
  }
  if (is_wide(x)) {
    require_wide("take", x);
    return wide::gather(x, idx, N, I, out);
  }
  if (x.itemsize() != 4)
    fail<NotImplementedError>("take: ", dtype_name(x.dtype()), " is not supported on ", x.device().str(),
                              " yet (32-bit types only)");
  if (!out.numel()) return;
  Tensor i32 = upload_indices(idx, x.device());
  struct { uint32_t n, N, P, I, x_off, out_off; } p{u32(out.numel(), "size"), u32(N, "size"), u32(idx.numel(), "size"),
                                                    u32(I, "size"), u32(x.offset(), "offset"),
                                                    u32(out.offset(), "offset")};
  launch(x, "gather", {buffer_of(x), buffer_of(i32), buffer_of(out)}, p, out.numel());
}

void scatter_add(const Tensor& src, const Tensor& idx, int64_t N, int64_t I, const Tensor& out) {
  if (is_half(src)) {
    return into_float32(out, [&](const Tensor& o) { scatter_add(widened(src), idx, N, I, o); });
  }
  const bool f64 = src.dtype() == DType::Float64;
  if (f64) require_wide("scatter_add", src);
  else require_f32("scatter_add", src);
  if (!out.numel()) return;
  // Counting sort of the positions by index: plan = [segment starts (N + 1) | positions].
  const int64_t P = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  std::vector<int32_t> plan(size_t(N + 1 + P), 0);
  for (int64_t k = 0; k < P; ++k) ++plan[size_t(ip[k] + 1)];
  for (int64_t v = 0; v < N; ++v) plan[size_t(v + 1)] += plan[size_t(v)];
  std::vector<int32_t> next(plan.begin(), plan.begin() + N);
  for (int64_t k = 0; k < P; ++k) plan[size_t(N + 1 + next[size_t(ip[k])]++)] = int32_t(k);
  Tensor dev_plan = upload_ints(plan, src.device());
  struct { uint32_t n, N, P, I, src_off, out_off; } p{u32(out.numel(), "size"), u32(N, "size"), u32(P, "size"),
                                                      u32(I, "size"), u32(src.offset(), "offset"),
                                                      u32(out.offset(), "offset")};
  launch(src, f64 ? "scatter_add_f64" : "scatter_add", {buffer_of(src), buffer_of(dev_plan), buffer_of(out)}, p, out.numel());
}

}  // namespace pcp::gpu
