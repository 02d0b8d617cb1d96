// The user-visible operations. Each validates its inputs, infers the output's shape and
// dtype, and reaches the backend through a primitive (see primitive.h).
#pragma once
#include <optional>
#include <vector>

#include "pcp/core/op_kinds.h"
#include "pcp/core/random.h"
#include "pcp/core/tensor.h"

namespace pcp {

using Axes = std::optional<std::vector<int64_t>>;  // nullopt: every axis

// ---- creation (creation.cpp)
Tensor zeros(const Shape& shape, DType dtype = kDefaultFloat, Device device = cpu_device());
Tensor ones(const Shape& shape, DType dtype = kDefaultFloat, Device device = cpu_device());
Tensor full(const Shape& shape, double value, DType dtype = kDefaultFloat, Device device = cpu_device());
Tensor full_int(const Shape& shape, int64_t value, DType dtype = kDefaultInt);
Tensor zeros_like(const Tensor& x);
Tensor ones_like(const Tensor& x);
Tensor scalar(double value, DType dtype = kDefaultFloat);
Tensor weak_scalar(double value);        // a Python float: float64 storage, weak type
Tensor weak_scalar_int(int64_t value);   // a Python int
Tensor weak_scalar_bool(bool value);     // a Python bool
// `value` (a scalar or a tensor broadcast to shape) in every element; dtype: the value's (a
// Python float's: the default float) unless given.
Tensor full(const Shape& shape, const Tensor& value, std::optional<DType> dtype, Device device = cpu_device());
// A Python scalar's tensor with its own dtype, as creation functions give it (a float: float32);
// any other tensor as it is.
Tensor strong(const Tensor& t);
Tensor arange(double start, double stop, double step, DType dtype, Device device = cpu_device());
// Exact for any int64 bounds.
Tensor arange_int(int64_t start, int64_t stop, int64_t step, DType dtype, Device device = cpu_device());
Tensor eye(int64_t n, int64_t m, int64_t k, DType dtype = kDefaultFloat, Device device = cpu_device());
// The seeded counter-based generator (core/random.h): uniform [0, 1), standard normal, integers.
Tensor rand(const Shape& shape, DType dtype = kDefaultFloat, Device device = cpu_device());
Tensor randn(const Shape& shape, DType dtype = kDefaultFloat, Device device = cpu_device());
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = kDefaultInt, Device device = cpu_device());
Tensor copy(const Tensor& x);  // a new contiguous tensor with x's values (differentiable)
Tensor to_device(const Tensor& x, Device device);  // a copy on `device` (x itself when already there)

// ---- elementwise (elementwise.cpp)
Tensor unary(UnaryOp op, const Tensor& x);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approximation = false);
Tensor silu(const Tensor& x);
Tensor square(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor round(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor logical_not(const Tensor& x);
Tensor bitwise_not(const Tensor& x);  // integers and bools (logical not)

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// Integers bit by bit, bools logically (NumPy's &, |, ^); floats raise TypeError.
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
// a << b and a >> b on integers (bools and floats raise TypeError); a shift by a negative count
// or by the type's width or more gives 0 (-1 for a negative a shifted right), as NumPy.
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
// Floating functions of two arguments (integers are taken as floats), with C's special cases.
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Tensor& b);   // |a| with b's sign bit
Tensor nextafter(const Tensor& a, const Tensor& b);  // the next representable value after a toward b
// Floored division and its remainder, as Python's // and %: the remainder takes b's sign. Integer
// division by zero gives 0, as NumPy.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);  // lo or hi may be undefined
Tensor astype(const Tensor& x, DType dtype);                       // no-op handle when equal
// A Python scalar (weak 0-d tensor) about to become `dtype` must keep its value, as NumPy 2
// requires: OverflowError when an integer does not fit, ValueError for NaN or inf to an integer.
void check_scalar_fits(const Tensor& scalar, DType dtype, const char* op);

// ---- reductions (reduce.cpp)
Tensor sum(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor mean(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor max(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor min(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor any(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor all(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Tensor var(const Tensor& x, const Axes& axes = std::nullopt, double ddof = 0, bool keepdims = false);
Tensor logsumexp(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
// Sums a broadcast gradient back down to `shape` (the inverse of broadcast_to).
Tensor sum_to(const Tensor& x, const Shape& shape);

// ---- sorting, scans and searches (sort.cpp); GPU tensors are computed on the host for now
// Indices that sort x along axis, stable (equal values keep their order, descending too); NaNs
// order above every number (last ascending, first descending).
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false);
Tensor sort(const Tensor& x, int64_t axis = -1, bool descending = false);  // differentiable
// x's elements at indices along axis (the other axes broadcast), as NumPy's; differentiable.
Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis);
// Running sums and products along axis (the flattened x when none); ints and bools count in
// int64. Differentiable (products exactly at zeros).
Tensor cumsum(const Tensor& x, std::optional<int64_t> axis = std::nullopt);
Tensor cumprod(const Tensor& x, std::optional<int64_t> axis = std::nullopt);
Tensor prod(const Tensor& x, const Axes& axes = std::nullopt, bool keepdims = false);
// Where each value would go in the 1-D ascending `sorted`: before its equals, or after (right).
Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right = false);
// The distinct values of x, ascending (NaNs each distinct), each one's first flat index, each
// element's value index (x's shape) and the counts; int64 indices (int32 on a GPU, whose
// tensors the host computes).
std::vector<Tensor> unique_all(const Tensor& x);

// ---- linear algebra (linalg.cpp)
Tensor matmul(const Tensor& a, const Tensor& b);
// alpha * (a @ b), the scale applied as the product is written (no pass of its own): attention's
// softmax scale. a and b at least 2-D.
Tensor matmul(const Tensor& a, const Tensor& b, double alpha);

// ---- shape and views (shape_ops.cpp)
Tensor reshape(const Tensor& x, const Shape& shape);  // one -1 allowed; a view when strides allow
Tensor flatten(const Tensor& x, int64_t start_axis = 0, int64_t end_axis = -1);
Tensor transpose(const Tensor& x, std::optional<std::vector<int64_t>> axes = std::nullopt);
Tensor permute(const Tensor& x, const std::vector<int64_t>& axes);
Tensor swapaxes(const Tensor& x, int64_t a, int64_t b);
Tensor squeeze(const Tensor& x, const Axes& axes = std::nullopt);
Tensor unsqueeze(const Tensor& x, int64_t axis);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor contiguous(const Tensor& x);  // x itself when already contiguous
Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
std::vector<Tensor> split(const Tensor& x, int64_t sections, int64_t axis = 0);
std::vector<Tensor> split_at(const Tensor& x, const std::vector<int64_t>& indices, int64_t axis = 0);
Tensor tril(const Tensor& x, int64_t k = 0);
Tensor triu(const Tensor& x, int64_t k = 0);

// ---- indexing (index.cpp)
struct SliceSpec {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};
// One item of a subscript: an integer, a slice, None (new axis), Ellipsis, or an integer tensor.
struct IndexItem {
  enum Kind { Int, Slice, NewAxis, Ellipsis, Array } kind;
  int64_t index = 0;
  SliceSpec slice;
  Tensor array;
};
Tensor index(const Tensor& x, const std::vector<IndexItem>& items);
// x[items] = value, in place (no autograd through x).
void index_assign(const Tensor& x, const std::vector<IndexItem>& items, const Tensor& value);
// Strided view x[start:stop:step] along one axis.
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step = 1);
Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis = std::nullopt);
Tensor embedding(const Tensor& weight, const Tensor& indices);
// Zeros of `shape` with `src` added at `indices` along `axis` (the gradient of take).
Tensor scatter_add(const Shape& shape, const Tensor& indices, const Tensor& src, int64_t axis);
Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype = kDefaultFloat);
// idx (integers, any device) as host int64 in [0, size), negatives counted from the end (or,
// without `negatives`, refused); an IndexError names `op` (one of "index", "one_hot",
// "take_along_axis") and `axis` otherwise. A primitive, so a plan checks each call's indices.
Tensor check_indices(const Tensor& idx, int64_t size, int64_t axis, const char* op, bool negatives = true);

// ---- neural network (nn.cpp)
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// Softmax over the last axis of attention scores (..., T, S) where query row i sees keys 0..i.
Tensor causal_softmax(const Tensor& scores);
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
enum class Reduction { None, Mean, Sum };
Reduction reduction_from_name(const std::string& name);
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100,
                     Reduction reduction = Reduction::Mean);
Tensor dropout(const Tensor& x, double p, bool training = true);
// Dropout with the mask of the global generator's draws at (key, start), which dropout() reserves
// and then uses the same way: the fused attention's mask applied by ops (its double backward).
Tensor dropout_with(const Tensor& x, double p, uint64_t key, uint64_t start);
// The same with a draw the op reads when it runs (core/random.h: a plan draws it again).
Tensor dropout_with(const Tensor& x, double p, RandomDrawPtr draw);
// softmax(scale q k^T [causal mask]) v; dropout_p drops attention weights (training only, as
// PyTorch's dropout_p: pass 0 at evaluation).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false,
                                    std::optional<double> scale = std::nullopt, double dropout_p = 0.0);
// Multi-head self-attention on a packed (B, T, 3C) projection (q, k, v side by side, as GPT-2's
// c_attn produces): (B, T, C), heads of C / num_heads. Its gradient is one (B, T, 3C) tensor.
// Which attention a GPU runs: Auto (the fused kernels only where the composed path's T x T
// scores would exceed 256 MiB), Fused (wherever they fit) or Composed (never the kernels).
enum class GpuAttention { Auto, Fused, Composed };
void set_gpu_attention(GpuAttention mode);
Tensor qkv_attention(const Tensor& qkv, int64_t num_heads, bool causal = false,
                     std::optional<double> scale = std::nullopt, double dropout_p = 0.0);

}  // namespace pcp
