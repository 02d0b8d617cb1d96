// What a plan file's nodes must satisfy before any of them runs (plan.h: plan_from). A traced
// plan holds them by construction (its nodes came from validated op calls); a file may hold
// anything, so each node's attributes are checked against its inputs' recorded specs here,
// and Plan::check() then proves every recorded spec is the one its node infers.
#include <algorithm>
#include <numeric>

#include "pcp/core/error.h"
#include "pcp/ops/fused.h"
#include "pcp/plan/plan.h"

namespace pcp::plan {
namespace {

struct NodeCheck {
  const NodeRecord& n;
  const std::vector<TensorSpec>& in;

  [[noreturn]] void bad(const std::string& why) const { fail<ValueError>("plan: ", n.op, " node: ", why); }
  void require(bool ok, const std::string& why) const {
    if (!ok) bad(why);
  }
  int64_t ndim(size_t i) const { return int64_t(in[i].shape.size()); }
  int axis(const char* key, int64_t nd) const {
    const int64_t a = attr_int(n.op, n.attrs, key);
    require(a >= 0 && a < nd, std::string(key) + " " + std::to_string(a) + " is out of range for " +
                                  std::to_string(nd) + " dimensions");
    return int(a);
  }
  Shape dims(const char* key) const {
    Shape s = attr_ints(n.op, n.attrs, key);
    check_shape(s, "plan");
    return s;
  }
  void same_shapes(size_t a, size_t b) const {
    require(in[a].shape == in[b].shape, "inputs " + shape_str(in[a].shape) + " and " + shape_str(in[b].shape) +
                                            " must have one shape");
  }
};

void check_node(const NodeCheck& c) {
  const std::string& op = c.n.op;
  const auto& in = c.in;
  const auto& a = c.n.attrs;
  if (binary_op_named(op)) {
    c.require(broadcast_shapes(in[0].shape, in[1].shape, "plan") == c.dims("shape"), "shape is not the inputs' broadcast");
  } else if (op == "where") {
    const Shape s = broadcast_shapes(broadcast_shapes(in[0].shape, in[1].shape, "plan"), in[2].shape, "plan");
    c.require(s == c.dims("shape"), "shape is not the inputs' broadcast");
  } else if (op == "reshape") {
    c.require(numel(c.dims("shape")) == numel(in[0].shape), "shape holds another number of elements");
  } else if (op == "permute") {
    std::vector<int64_t> perm = attr_ints(op, a, "perm"), sorted(perm.size());
    std::iota(sorted.begin(), sorted.end(), 0);
    std::sort(perm.begin(), perm.end());
    c.require(perm == sorted && int64_t(perm.size()) == c.ndim(0), "perm is not a permutation of the input's axes");
  } else if (op == "broadcast_to") {
    const Shape s = c.dims("shape");
    c.require(broadcast_shapes(in[0].shape, s, "plan") == s, "the input does not broadcast to shape");
  } else if (op == "slice" || op == "slice_scatter") {
    const bool scatter = op == "slice_scatter";
    const Shape full = scatter ? c.dims("shape") : in[0].shape;
    c.require(int64_t(full.size()) == c.ndim(0), "shape has another number of dimensions than the input");
    const int ax = c.axis("axis", c.ndim(0));
    const int64_t start = attr_int(op, a, "start"), step = attr_int(op, a, "step");
    const int64_t len = scatter ? in[0].shape[size_t(ax)] : attr_int(op, a, "len");
    for (size_t d = 0; scatter && d < full.size(); ++d)
      c.require(int(d) == ax || full[d] == in[0].shape[d], "shape does not match the input off the axis");
    c.require(step != 0 && len >= 0, "a zero step or a negative length");
    if (len > 0) {
      c.require(std::abs(start) < (int64_t(1) << 62) && std::abs(step) < (int64_t(1) << 31) && len < (int64_t(1) << 31),
                "start, step or length out of range");
      const int64_t n = full[size_t(ax)], last = start + (len - 1) * step;  // bounded above: no overflow
      c.require(start >= 0 && start < n && last >= 0 && last < n, "the slice reaches outside the axis");
    }
  } else if (op == "concatenate") {
    const int ax = c.axis("axis", c.ndim(0));
    for (size_t i = 1; i < in.size(); ++i) {
      c.require(in[i].shape.size() == in[0].shape.size() && in[i].dtype == in[0].dtype && in[i].device == in[0].device,
                "inputs differ in dimensions, dtype or device");
      for (size_t d = 0; d < in[0].shape.size(); ++d)
        c.require(int(d) == ax || in[i].shape[d] == in[0].shape[d], "inputs differ off the axis");
    }
  } else if (op == "argsort" || op == "cumulative_sum" || op == "cumulative_prod" || op == "cumulative_prod_backward") {
    c.axis("axis", std::max<int64_t>(1, c.ndim(0)));  // a 0-d input: axis 0
    if (op == "cumulative_prod_backward") c.same_shapes(0, 1);
  } else if (op == "searchsorted") {
    c.require(c.ndim(0) == 1 && in[0].dtype == in[1].dtype && in[0].device == in[1].device,
              "the sorted tensor must be 1-D, of the values' dtype and device");
  } else if (op == "cast_multi") {
    const auto float_type = [](DType t) { return t == DType::Float32 || is_half_float(t); };
    c.require(float_type(dtype_from_name(attr_str(op, a, "dtype"))), "dtype is not float32, float16 or bfloat16");
    for (const TensorSpec& s : in)
      c.require(float_type(s.dtype) && s.dtype == in[0].dtype && s.device == in[0].device,
                "inputs must share one of float32, float16 or bfloat16 and one device");
  } else if (op == "sum_rows_multi") {
    for (const TensorSpec& s : in)
      c.require(s.shape.size() == 2 && s.dtype == DType::Float32 && s.device == in[0].device,
                "inputs must be float32 matrices on one device");
  } else if (op == "split") {
    const int ax = c.axis("axis", c.ndim(0));
    const std::vector<int64_t> lengths = attr_ints(op, a, "lengths");
    int64_t total = 0;
    for (int64_t l : lengths) {
      c.require(l >= 0 && l <= in[0].shape[size_t(ax)], "a negative or too long section");
      total += l;
    }
    c.require(total == in[0].shape[size_t(ax)], "sections that do not tile the axis");
  } else if (op == "alias") {
    c.require(attr_ints(op, a, "strides").size() == c.dims("shape").size(), "strides do not match shape");
  } else if (op == "take" || op == "scatter_add") {
    c.require(is_integral(in[1].dtype), "indices must be integers");
    if (op == "take") {
      c.axis("axis", c.ndim(0));
    } else {
      const Shape s = c.dims("shape");
      const int ax = c.axis("axis", int64_t(s.size()));
      Shape expect(s.begin(), s.begin() + ax);
      expect.insert(expect.end(), in[1].shape.begin(), in[1].shape.end());
      expect.insert(expect.end(), s.begin() + ax + 1, s.end());
      c.require(expect == in[0].shape, "the source does not match shape and indices");
    }
  } else if (op == "sum" || op == "max" || op == "min" || op == "argmax" || op == "argmin") {
    std::vector<int64_t> axes = attr_ints(op, a, "axes");
    c.require(std::is_sorted(axes.begin(), axes.end()) && std::adjacent_find(axes.begin(), axes.end()) == axes.end(),
              "axes must be sorted and unique");
    for (int64_t x : axes) c.require(x >= 0 && x < c.ndim(0), "an axis out of range");
  } else if (op == "matmul") {
    c.require(c.ndim(0) >= 2 && c.ndim(1) >= 2, "inputs must be at least 2-D");
    const Shape &x = in[0].shape, &y = in[1].shape;
    c.require(x.back() == y[y.size() - 2], "inner dimensions differ");
    const Shape bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
    c.require(broadcast_shapes(bx, by, "plan") == c.dims("batch"), "batch is not the inputs' broadcast");
    // A plan's epilogue form (ops/linalg.cpp): 2-D operands; dgelu_tanh's third input is the product's shape.
    const std::string epilogue = a.count("epilogue") ? attr_str(op, a, "epilogue") : "";
    c.require(epilogue.empty() || (c.ndim(0) == 2 && c.ndim(1) == 2), "an epilogue on a batched product");
    c.require((epilogue == "dgelu_tanh") == (in.size() == 3), "a third input without the dgelu_tanh epilogue, or the other way");
    if (in.size() == 3)
      c.require(in[2].shape == Shape{x[0], y[1]} && in[2].dtype == in[0].dtype, "the GELU's input is not the product's shape and dtype");
  } else if (op == "softmax" || op == "log_softmax" || op == "softmax_backward" || op == "log_softmax_backward") {
    const int64_t T = attr_int(op, a, "causal_T");
    c.require(c.ndim(0) >= 1, "a 0-d input");
    c.require(T >= 0 && (T == 0 || rows_of(in[0].shape) % T == 0), "causal_T does not divide the rows");
    if (in.size() > 1) c.same_shapes(0, 1);
  } else if (op == "layer_norm") {
    c.require(c.ndim(0) >= 1, "a 0-d input");
    for (size_t i = 1; i < 3; ++i)
      c.require(!in[i].defined || in[i].shape == Shape{in[0].shape.back()}, "weight or bias is not the last axis");
    const bool residual = a.count("residual") && attr_bool(op, a, "residual");
    c.require(residual == (in.size() == 4), "a residual input without the residual form, or the other way");
    if (residual)
      c.require(in[3].defined && in[3].shape == in[0].shape && in[0].dtype == DType::Float32 &&
                    is_compute_float(in[3].dtype),
                "the residual is not x's shape or x is not float32");
  } else if (op == "layer_norm_backward") {
    c.require(c.ndim(0) >= 1, "a 0-d input");
    c.same_shapes(0, 2);
    if (a.count("low_dtype")) c.require(in[0].dtype == DType::Float32, "a 16-bit copy of a gradient that is not float32");
    if (a.count("partial_rows"))
      c.require(in[0].dtype == DType::Float32 && attr_int(op, a, "partial_rows") >= 1,
                "partial rows of a gradient that is not float32, or fewer than one");
    const bool g_fits = in[2].dtype == in[0].dtype ||  // or 16-bit for float32 x: a folded cast
                        (in[0].dtype == DType::Float32 && is_half_float(in[2].dtype));
    c.require(g_fits && (!in[1].defined || in[1].dtype == in[0].dtype) && in[3].dtype == DType::Float32 &&
              in[4].dtype == DType::Float32, "dtypes that do not fit");
    Shape rows(in[0].shape.begin(), in[0].shape.end() - 1);
    rows.push_back(1);
    c.require(!in[1].defined || in[1].shape == Shape{in[0].shape.back()}, "weight is not the last axis");
    c.require(in[3].shape == rows && in[4].shape == rows, "statistics are not one per row");
    const bool accumulate = a.count("accumulate") && attr_bool(op, a, "accumulate");
    c.require(accumulate == (in.size() == 6), "an accumulated gradient without the accumulate form, or the other way");
    if (accumulate)
      c.require(in[5].defined && in[5].shape == in[0].shape && in[5].dtype == DType::Float32 &&
                    in[0].dtype == DType::Float32, "the accumulated gradient is not float32 of x's shape");
  } else if (op == "cross_entropy" || op == "cross_entropy_backward") {
    const TensorSpec& t = in[op == "cross_entropy" ? 1 : 2];
    c.require(c.ndim(0) >= 1 && is_integral(t.dtype), "logits must be at least 1-D and targets integers");
    c.require(t.shape == Shape(in[0].shape.begin(), in[0].shape.end() - 1), "targets do not match the logits' rows");
    if (op == "cross_entropy_backward") c.require(in[1].shape == t.shape, "the gradient does not match the targets");
  } else if (op == "attention" || op == "attention_backward") {
    const int64_t heads = attr_int(op, a, "packed_heads");
    const size_t n_qkv = heads ? 1 : 3;
    Shape q_shape, lse_shape;  // q's (B, H, T, D) and the per-row statistics (B, H, T)
    if (heads) {
      c.require(c.ndim(0) == 3 && heads > 0 && in[0].shape[2] % (3 * heads) == 0, "a packed input (B, T, 3 H D)");
      const Shape& x = in[0].shape;
      q_shape = {x[0], heads, x[1], x[2] / 3 / heads};
    } else {
      c.require(c.ndim(0) == 4 && c.ndim(1) == 4 && c.ndim(2) == 4, "q, k, v must be 4-D");
      c.same_shapes(0, 1);  // self-attention: the kernels take T from q
      c.same_shapes(1, 2);
      q_shape = in[0].shape;
    }
    lse_shape = {q_shape[0], q_shape[1], q_shape[2]};
    for (size_t i = 1; i < n_qkv; ++i)
      c.require(in[i].dtype == in[0].dtype, "q, k and v differ in dtype");
    c.require(in[0].device.is_gpu() || in[0].dtype == DType::Float32, "the CPU kernels take float32");
    if (op == "attention_backward") {  // (q, k, v | qkv), o, lse, g, mask
      const Shape o_shape = heads ? Shape{q_shape[0], q_shape[2], q_shape[1] * q_shape[3]} : q_shape;
      const TensorSpec &o = in[n_qkv], &lse = in[n_qkv + 1], &g = in[n_qkv + 2];
      c.require(o.shape == o_shape && g.shape == o_shape && o.dtype == in[0].dtype && g.dtype == in[0].dtype,
                "o or its gradient does not match q");
      c.require(lse.shape == lse_shape && lse.dtype == DType::Float32, "the log-sum-exp is not one per row");
      c.require(in[n_qkv + 3].dtype == DType::Int32, "the dropout mask is not int32");
    }
  } else if (op == "adam_step" || op == "adamw_step" || op == "sgd_step") {
    const size_t k = op == "sgd_step" ? (attr_double(op, a, "momentum") != 0.0 ? 3 : 2) : 4;
    c.require(in.size() % k == 0, "inputs are not whole parameter groups");
    const size_t n = in.size() / k;
    for (size_t i = 0; i < in.size(); ++i)
      c.require(in[i].dtype == DType::Float32 && in[i].shape == in[i % n].shape, "state that does not match its parameter");
  } else if (op == "clip_grad_norm") {
    for (const TensorSpec& s : in) c.require(s.dtype == DType::Float32, "gradients must be float32");
  }
}

}  // namespace

void check_node_record(const NodeRecord& n, const std::vector<TensorSpec>& in) { check_node(NodeCheck{n, in}); }

}  // namespace pcp::plan
