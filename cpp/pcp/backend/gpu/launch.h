// What every GPU op file shares: the runtime, buffers and push-constant packing, dispatch,
// and the float16/bfloat16 rule (the float32 kernels on widened copies, rounded once).
// Internal to backend/gpu/; the ops themselves are declared in ops.h.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "pcp/backend/gpu/ops.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/tensor.h"

namespace pcp::gpu {

constexpr int kMaxDims = 6;     // MAX_DIMS in metal/common.glsl
constexpr uint32_t kGroup = 256;  // local_size_x of every kernel

Buffer* buffer_of(const Tensor& t);
// v as a kernel's 32-bit size or offset; NotImplementedError naming `what` when it does not fit.
uint32_t u32(int64_t v, const char* what);
// The most workgroups a dispatch of the generic kernels gets: 65535 (Vulkan's guaranteed x
// limit), or fewer from PCP_GPU_MAX_GROUPS, so that tests reach the kernels' loops over the rest
// with small tensors.
uint32_t max_groups();
// Workgroups of kGroup threads for `n` items, up to max_groups() (the kernels loop over the rest).
uint32_t groups(int64_t n);
void require_f32(const char* op, const Tensor& t);
// Element type codes of the mixed-dtype kernels (T_* in metal/common.glsl).
uint32_t type_code(const char* op, const Tensor& t);
// Elements of `t` per 32-bit word: 4 bools, 2 float16/bfloat16, 1 otherwise.
int64_t per_word(const Tensor& t);
// Whether a result fills whole 32-bit words, as the kernels that write bools whole words need.
bool word_aligned(const Tensor& out);

// float16 and bfloat16 run the float32 kernels, as the CPU does: inputs are widened into float32
// copies, the kernel computes in float32 and the result is rounded once into the 16-bit output.
bool is_half(const Tensor& t);
Tensor widened(const Tensor& t);
// float32, float16 or bfloat16: the types unary4, binary4 and cast4 read and write directly.
bool wide_io(const Tensor& t);

// Shape and per-operand strides with unit dims dropped and mergeable neighbours merged.
struct Layout {
  uint32_t ndim = 0;
  uint32_t shape[kMaxDims] = {};
  int32_t strides[3][kMaxDims] = {};
};

Layout layout(const char* op, const Shape& shape, const std::vector<Strides>& strides);
// Copies a layout's shape and per-operand strides into a kernel's push-constant arrays.
void put_dims(const Layout& l, uint32_t* shape, std::initializer_list<int32_t*> strides);
// How binary4.comp reads an operand of a result of `shape`: 0 for one broadcast scalar; its
// length in vec4s when it is contiguous, on a 16-byte boundary and repeated only along leading
// dimensions of the result (the same shape, or a bias row); -1 when neither.
int64_t vec4_period(const Tensor& t, const Shape& shape);
// Whether x and out can be read and written as vec4s from the same positions.
bool vec4_aligned(const Tensor& x, const Tensor& out);

// One workgroup per row, up to the dispatch limit (the kernels loop over the rest).
void launch_rows(const Tensor& any, const char* kernel, const std::vector<Buffer*>& bufs, const void* push,
                 size_t bytes, int64_t rows);
// Host int32 values in a new tensor on `device` (uploads are recorded in stream order).
Tensor upload_ints(const std::vector<int32_t>& v, Device device);
// Checked host int64 indices as int32 on `device`.
Tensor upload_indices(const Tensor& idx, Device device);

// Push constants of every matmul kernel (metal/matmul_params.glsl): out (M x N per batch entry,
// at its offset) = a @ b over the batch, with the operands' strides and tiles_n tiles along N.
struct MatmulParams {
  uint32_t M, N, K, batch, a_off, b_off, c_off, tiles_n;
  int32_t rsa, csa, rsb, csb, a_batch, b_batch;
  uint32_t inner;
  int32_t a_outer, b_outer;
  float alpha;
};
MatmulParams matmul_params(const Tensor& a, const Tensor& b, const Tensor& out, int64_t M, int64_t N, int64_t K,
                           const MatmulBatch& bt, int64_t tiles_n, float alpha);

// Runs `kernel` into a float32 stand-in for a 16-bit result (into the result itself otherwise),
// then rounds the stand-in into the result.
template <class Kernel>
void into_float32(const Tensor& out, Kernel kernel) {
  if (!is_half(out)) return kernel(out);
  Tensor f32 = Tensor::empty(out.shape(), DType::Float32, out.device());
  kernel(f32);
  cast(f32, out);
}

// bool runs the int32 kernels of the ops that only move values (gathers, where): an int32 copy
// of a bool input, and a result computed into an int32 stand-in that is cast into the bools.
Tensor bool_as_int32(const Tensor& t);
template <class Kernel>
void into_int32(const Tensor& out, Kernel kernel) {
  if (out.dtype() != DType::Bool) return kernel(out);
  Tensor i32 = Tensor::empty(out.shape(), DType::Int32, out.device());
  kernel(i32);
  cast(i32, out);
}

template <class P>
void launch(const Tensor& any, const char* kernel, const std::vector<Buffer*>& bufs, const P& push, int64_t work) {
  static_assert(sizeof(P) <= kMaxPushBytes);
  rt().dispatch(any.device().index, kernel, bufs, &push, sizeof(P), groups(work));
}

}  // namespace pcp::gpu
