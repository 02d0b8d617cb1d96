// Reductions: sum, max, min, argmax, argmin as primitives; mean, var, logsumexp composed.
#include <algorithm>
#include <cmath>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

const char* reduce_name(ReduceOp op) {
  static const char* names[] = {"sum", "max", "min", "argmax", "argmin"};
  return names[int(op)];
}

std::vector<int> resolve_axes(const Tensor& x, const Axes& axes, const char* op) {
  std::vector<int> out;
  if (!axes) {
    for (int i = 0; i < x.ndim(); ++i) out.push_back(i);
    return out;
  }
  return normalize_axes(*axes, x.ndim(), op);
}

Shape reduced_shape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int i = 0; i < int(s.size()); ++i) {
    bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!r) out.push_back(s[i]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// g reshaped to keepdims form and broadcast back to the input's shape.
Tensor expand_back(const Tensor& g, const Shape& in_shape, const std::vector<int>& axes) {
  return broadcast_to(reshape(g, reduced_shape(in_shape, axes, true)), in_shape);
}

class Reduce : public Primitive {
 public:
  Reduce(ReduceOp op, std::vector<int> axes, bool keepdims) : op_(op), axes_(std::move(axes)), keepdims_(keepdims) {}
  const char* name() const override { return reduce_name(op_); }
  Attributes attributes() const override { return {{"axes", std::vector<int64_t>(axes_.begin(), axes_.end())}, {"keepdims", keepdims_}}; }
  bool vjp_reads_inputs() const override { return op_ != ReduceOp::Sum; }
  bool vjp_reads_output() const override { return op_ != ReduceOp::Sum; }

  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const TensorSpec& x = in[0];
    if (op_ != ReduceOp::Sum)
      for (int a : axes_)
        if (x.shape[size_t(a)] == 0)
          fail<ValueError>(name(), ": zero-size reduction over axes of shape ", shape_str(x.shape),
                           " has no identity");
    DType dt = (op_ == ReduceOp::ArgMax || op_ == ReduceOp::ArgMin) ? DType::Int64 : x.dtype;
    return {{reduced_shape(x.shape, axes_, keepdims_), dt, x.device}};
  }

  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor& x = in[0];
    int64_t R = 1;
    for (int a : axes_) R *= x.shape()[a];
    if (R == 0) return {zeros(specs[0].shape, specs[0].dtype, x.device())};  // an empty sum
    Tensor out = empty(specs[0]);
    // View x as (O, R, I): directly when the reduced axes are adjacent and x is contiguous,
    // else by moving the reduced axes last and copying.
    bool adjacent = axes_.empty() || axes_.back() - axes_.front() + 1 == int(axes_.size());
    Tensor src = x;
    int64_t O = 1, I = 1;
    if (adjacent && x.is_contiguous()) {
      for (int i = 0; i < (axes_.empty() ? x.ndim() : axes_.front()); ++i) O *= x.shape()[i];
      for (int i = axes_.empty() ? x.ndim() : axes_.back() + 1; i < x.ndim(); ++i) I *= x.shape()[i];
    } else {
      std::vector<int64_t> perm;
      for (int i = 0; i < x.ndim(); ++i)
        if (std::find(axes_.begin(), axes_.end(), i) == axes_.end()) perm.push_back(i);
      for (int a : axes_) perm.push_back(a);
      NoGradGuard no_grad;
      src = copy(permute(x, perm));
      O = x.numel() / R;
    }
    backend::reduce(op_, src, O, R, I, out);
    return {out};
  }

  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                          const std::vector<Tensor>& gs, const std::vector<bool>&) override {
    const Tensor &x = in[0], &y = outs[0], &g = gs[0];
    if (op_ == ReduceOp::Sum) return {expand_back(g, x.shape(), axes_)};
    // max/min: the gradient goes to the extreme elements, split evenly between ties.
    Tensor mask = astype(eq(x, expand_back(y, x.shape(), axes_)), g.dtype());
    std::vector<int64_t> ax(axes_.begin(), axes_.end());
    Tensor count = sum(mask, ax, true);
    return {mul(div(mask, count), expand_back(g, x.shape(), axes_))};
  }

 private:
  ReduceOp op_;
  std::vector<int> axes_;
  bool keepdims_;
};

Tensor reduce(ReduceOp op, const Tensor& x, const Axes& axes, bool keepdims) {
  const char* name = reduce_name(op);
  if (!x.defined()) fail<ValueError>(name, ": got an undefined tensor");
  std::vector<int> ax = resolve_axes(x, axes, name);
  Tensor src = x;
  if (op == ReduceOp::Sum && !is_floating(x.dtype())) src = astype(x, DType::Int64);
  return pcp::apply<Reduce>({src}, op, ax, keepdims);
}

int64_t count_of(const Tensor& x, const std::vector<int>& axes) {
  int64_t n = 1;
  for (int a : axes) n *= x.shape()[a];
  return n;
}

}  // namespace

Tensor sum(const Tensor& x, const Axes& axes, bool keepdims) { return reduce(ReduceOp::Sum, x, axes, keepdims); }

// Logical reductions have identities (any of nothing is false, all of nothing true), so empty
// axes are fine, unlike max and min.
static Tensor logical_reduce(const Tensor& x, const Axes& axes, bool keepdims, bool is_all) {
  const char* op = is_all ? "all" : "any";
  if (!x.defined()) fail<ValueError>(op, ": got an undefined tensor");
  Tensor b = astype(x, DType::Bool);
  std::vector<int> ax = resolve_axes(b, axes, op);
  if (count_of(b, ax) == 0) return full(reduced_shape(b.shape(), ax, keepdims), is_all ? 1.0 : 0.0, DType::Bool, b.device());
  // The GPU reduces float32: the largest (smallest) of the 0/1 values, exactly.
  if (b.device().is_gpu())
    return astype(reduce(is_all ? ReduceOp::Min : ReduceOp::Max, astype(b, DType::Float32), axes, keepdims), DType::Bool);
  return reduce(is_all ? ReduceOp::Min : ReduceOp::Max, b, axes, keepdims);
}
Tensor any(const Tensor& x, const Axes& axes, bool keepdims) { return logical_reduce(x, axes, keepdims, false); }
Tensor all(const Tensor& x, const Axes& axes, bool keepdims) { return logical_reduce(x, axes, keepdims, true); }
Tensor max(const Tensor& x, const Axes& axes, bool keepdims) { return reduce(ReduceOp::Max, x, axes, keepdims); }
Tensor min(const Tensor& x, const Axes& axes, bool keepdims) { return reduce(ReduceOp::Min, x, axes, keepdims); }

// The type mean and var compute in, as NumPy's: integers and bools in float64 (an int64 sum could
// overflow, float32 would round), float16 and bfloat16 in float32 (their sums overflow at 65504
// and 3.4e38 respectively long before the mean does); the result returns to a 16-bit input's type.
static DType averaging_type(DType dt) {
  if (!is_floating(dt)) return DType::Float64;
  return dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float32 : dt;
}

Tensor mean(const Tensor& x, const Axes& axes, bool keepdims) {
  if (!x.defined()) fail<ValueError>("mean: got an undefined tensor");
  const int64_t n = count_of(x, resolve_axes(x, axes, "mean"));
  Tensor m = div(sum(astype(x, averaging_type(x.dtype())), axes, keepdims), weak_scalar(double(n)));
  return is_floating(x.dtype()) ? astype(m, x.dtype()) : m;
}

Tensor var(const Tensor& x, const Axes& axes, double ddof, bool keepdims) {
  if (!x.defined()) fail<ValueError>("var: got an undefined tensor");
  Tensor xf = astype(x, averaging_type(x.dtype()));
  const int64_t n = count_of(xf, resolve_axes(xf, axes, "var"));
  Tensor d = sub(xf, mean(xf, axes, true));
  // NumPy: inf or nan when n <= ddof.
  Tensor v = div(sum(square(d), axes, keepdims), weak_scalar(std::max(double(n) - ddof, 0.0)));
  return is_floating(x.dtype()) ? astype(v, x.dtype()) : v;
}

Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdims) {
  if (!x.defined()) fail<ValueError>("logsumexp: got an undefined tensor");
  Tensor xf = astype(x, to_floating(x.dtype()));
  std::vector<int> ax = resolve_axes(xf, axes, "logsumexp");
  if (count_of(xf, ax) == 0) return full(reduced_shape(xf.shape(), ax, keepdims), -INFINITY, xf.dtype());
  // Shift by the (constant) max for stability; rows whose max is not finite (all -inf, or
  // holding +inf or NaN) shift by 0, so that logsumexp([inf, 1]) is inf rather than inf - inf.
  Tensor m = max(xf, axes, true).detach();
  m = where(eq(sub(m, m), weak_scalar(0.0)), m, weak_scalar(0.0));
  Tensor r = add(log(sum(exp(sub(xf, m)), axes, true)), m);
  if (keepdims) return r;
  return reshape(r, reduced_shape(xf.shape(), resolve_axes(xf, axes, "logsumexp"), false));
}

// Index of the extreme value along `axis`, or in the flattened tensor when axis is None.
static Tensor arg_reduce(ReduceOp op, const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  if (!x.defined()) fail<ValueError>(reduce_name(op), ": got an undefined tensor");
  if (axis) return reduce(op, x, std::vector<int64_t>{*axis}, keepdims);
  Tensor r = reduce(op, reshape(x, {-1}), std::vector<int64_t>{0}, false);
  return keepdims ? reshape(r, Shape(x.ndim(), 1)) : r;
}

Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce(ReduceOp::ArgMax, x, axis, keepdims);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce(ReduceOp::ArgMin, x, axis, keepdims);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  int lead = x.ndim() - int(shape.size());
  if (lead < 0) fail<ValueError>("sum_to: cannot reduce shape ", shape_str(x.shape()), " to ", shape_str(shape));
  std::vector<int64_t> axes;
  for (int i = 0; i < x.ndim(); ++i) {
    if (i < lead) axes.push_back(i);
    else if (shape[i - lead] == 1 && x.shape()[i] != 1) axes.push_back(i);
    else if (shape[i - lead] != x.shape()[i])
      fail<ValueError>("sum_to: cannot reduce shape ", shape_str(x.shape()), " to ", shape_str(shape));
  }
  return reshape(sum(x, axes, true), shape);
}

namespace {
// The column sums of many float32 matrices in one node: a plan's batched layer norm weight sums
// (plan/layer_norm_sums.cpp), one dispatch on a GPU; each sum in a fixed order.
class SumRowsMulti : public Primitive {
 public:
  const char* name() const override { return "sum_rows_multi"; }
  Attributes attributes() const override { return {}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    std::vector<TensorSpec> out;
    for (const TensorSpec& s : in) out.push_back({{s.shape[1]}, DType::Float32, s.device});
    return out;
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    std::vector<Tensor> xs, out;
    for (size_t i = 0; i < in.size(); ++i) {
      xs.push_back(contiguous(in[i]));
      out.push_back(empty(specs[i]));
      if (!in[i].device().is_gpu()) cpu::reduce(ReduceOp::Sum, xs[i], 1, xs[i].shape()[0], xs[i].shape()[1], out[i]);
    }
    if (!in.empty() && in[0].device().is_gpu()) gpu::sum_rows_multi(xs, out);
    return out;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                          const std::vector<bool>&) override {
    fail<NotImplementedError>("sum_rows_multi: made by plans only, whose backward is in the plan already");
  }
};

// Plan files make it again by name (ops/primitive.h).
const bool registered = [] {
  register_primitive("sum_rows_multi", {.make = [](const std::string&, const Attributes&, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<SumRowsMulti>());
  }, .inputs = {}, .check = [](const NodeCheck& c) {
    c.require(!c.in.empty(), "no inputs");
    for (const TensorSpec& s : c.in)
      c.require(s.shape.size() == 2 && s.dtype == DType::Float32 && s.device == c.in[0].device,
                "inputs must be float32 matrices on one device");
  }, .gpu = true});
  for (int i = 0; i <= int(ReduceOp::ArgMin); ++i)
    register_primitive(reduce_name(ReduceOp(i)), {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
      ReduceOp op = ReduceOp::Sum;
      for (int k = 0; k <= int(ReduceOp::ArgMin); ++k)
        if (n == reduce_name(ReduceOp(k))) op = ReduceOp(k);
      const std::vector<int64_t> axes = attr_ints(n, a, "axes");
      return std::shared_ptr<Primitive>(
          std::make_shared<Reduce>(op, std::vector<int>(axes.begin(), axes.end()), attr_bool(n, a, "keepdims")));
    }, .inputs = {1}, .check = [](const NodeCheck& c) {
      const std::vector<int64_t> axes = attr_ints(c.op, c.attrs, "axes");
      c.require(std::is_sorted(axes.begin(), axes.end()) && std::adjacent_find(axes.begin(), axes.end()) == axes.end(),
                "axes must be sorted and unique");
      for (int64_t x : axes) c.require(x >= 0 && x < c.ndim(0), "an axis out of range");
    }, .gpu = true, .autocast = ReduceOp(i) == ReduceOp::Sum ? CastPolicy::Float32 : CastPolicy::Keep});
  return true;
}();
}  // namespace

}  // namespace pcp
