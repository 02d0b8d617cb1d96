// Sorting, cumulative sums and products, products, sorted search and unique values. The kernels
// work along the last axis of a contiguous tensor (backend/cpu/sort.cpp); these ops move the axis
// there and back. There are no GPU kernels yet: a GPU tensor is computed on a host copy and the
// result moved back (differentiably: the copies are ops).
#include <algorithm>
#include <cstdint>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// x with `axis` moved last, contiguous, in a key dtype the kernels take (16-bit floats as
// float32, bools as int32: exact, order kept).
Tensor axis_last(const Tensor& x, int axis, bool as_key) {
  NoGradGuard no_grad;
  std::vector<int64_t> perm;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  Tensor t = x.ndim() ? permute(x, perm) : reshape(x, {1});
  if (as_key) {
    if (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16) t = astype(t, DType::Float32);
    if (x.dtype() == DType::Bool) t = astype(t, DType::Int32);
  }
  return copy(t);
}

// The inverse of axis_last on a result of the same (moved) shape: contiguous, in x's layout.
Tensor axis_back(const Tensor& t, const Shape& shape, int axis) {
  NoGradGuard no_grad;
  if (shape.empty()) return reshape(t, {});
  std::vector<int64_t> perm(shape.size());
  for (int i = 0, j = 0; i < int(shape.size()); ++i) perm[size_t(i)] = i == axis ? int64_t(shape.size()) - 1 : j++;
  return copy(permute(t, perm));
}

class Argsort : public Primitive {
 public:
  Argsort(int axis, bool descending) : axis_(axis), descending_(descending) {}
  const char* name() const override { return "argsort"; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}, {"descending", descending_}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{in[0].shape, DType::Int64, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    Tensor keys = axis_last(in[0], axis_, true);
    Tensor out = Tensor::empty(keys.shape(), DType::Int64);
    cpu::argsort(keys, out, descending_);
    return {axis_back(out, in[0].shape(), axis_)};
  }
  bool differentiable_output(size_t) const override { return false; }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                          const std::vector<bool>&) override {
    return {Tensor()};
  }

 private:
  int axis_;
  bool descending_;
};

// Running sums or products along an axis; reverse runs from the end (the sum's VJP).
class Cumulative : public Primitive {
 public:
  Cumulative(int axis, bool product, bool reverse) : axis_(axis), product_(product), reverse_(reverse) {}
  const char* name() const override { return product_ ? "cumulative_prod" : "cumulative_sum"; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}, {"reverse", reverse_}}; }
  bool vjp_reads_inputs() const override { return product_; }
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    Tensor src = axis_last(in[0], axis_, false);
    Tensor out = Tensor::empty(src.shape(), src.dtype());
    cpu::cumulative(src, out, product_, reverse_);
    return {axis_back(out, in[0].shape(), axis_)};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override;

 private:
  int axis_;
  bool product_, reverse_;
};

// The gradient of cumulative products, exact where x has zeros (no division).
class CumprodBackward : public Primitive {
 public:
  explicit CumprodBackward(int axis) : axis_(axis) {}
  const char* name() const override { return "cumulative_prod_backward"; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    Tensor x = axis_last(in[0], axis_, false), g = axis_last(in[1], axis_, false);
    Tensor out = Tensor::empty(x.shape(), x.dtype());
    cpu::cumprod_backward(x, g, out);
    return {axis_back(out, in[0].shape(), axis_)};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                          const std::vector<bool>&) override {
    fail<NotImplementedError>("cumulative_prod: second derivatives are not supported");
  }

 private:
  int axis_;
};

std::vector<Tensor> Cumulative::vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&,
                                    const std::vector<Tensor>& gs, const std::vector<bool>&) {
  if (!product_) return {pcp::apply<Cumulative>({gs[0]}, axis_, false, !reverse_)};
  return {pcp::apply<CumprodBackward>({in[0], astype(gs[0], in[0].dtype())}, axis_)};
}

class SearchSorted : public Primitive {
 public:
  explicit SearchSorted(bool right) : right_(right) {}
  const char* name() const override { return "searchsorted"; }
  Attributes attributes() const override { return {{"right", right_}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{in[1].shape, DType::Int64, in[1].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    Tensor sorted = axis_last(in[0], 0, true), values = axis_last(reshape(in[1], {-1}), 0, true);
    Tensor out = Tensor::empty(in[1].shape(), DType::Int64);
    cpu::searchsorted(sorted, values, out, right_);
    return {out};
  }
  bool differentiable_output(size_t) const override { return false; }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                          const std::vector<bool>&) override {
    return {Tensor(), Tensor()};
  }

 private:
  bool right_;
};

void check(const Tensor& x, const char* op) {
  if (!x.defined()) fail<ValueError>(op, ": got an undefined tensor");
}

// f of x on the host, on x's device: one copy each way for a GPU tensor.
template <class F>
Tensor via_host(const Tensor& x, F&& f) {
  if (!x.device().is_gpu()) return f(x);
  return to_device(f(to_device(x, cpu_device())), x.device());
}

// ints and bools count in int64 (as sum); 16-bit floats in float32, then rounded back.
DType accumulation_dtype(DType dt) {
  if (!is_floating(dt)) return DType::Int64;
  return dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float32 : dt;
}

Tensor cumulative(const Tensor& x, std::optional<int64_t> axis, bool product, const char* op) {
  check(x, op);
  if (!axis) return cumulative(reshape(x, {-1}), 0, product, op);
  const int a = normalize_axis(*axis, std::max<int64_t>(x.ndim(), 1), op);
  const DType acc = accumulation_dtype(x.dtype());
  const DType out = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  return via_host(x, [&](const Tensor& h) {
    return astype(pcp::apply<Cumulative>({astype(h, acc)}, a, product, false), out);
  });
}

}  // namespace

Tensor argsort(const Tensor& x, int64_t axis, bool descending) {
  check(x, "argsort");
  const int a = normalize_axis(axis, std::max<int64_t>(x.ndim(), 1), "argsort");
  return via_host(x, [&](const Tensor& h) { return pcp::apply<Argsort>({h}, a, descending); });
}

namespace {
// x at indices along axis; `known_in_range` skips the check of the indices (argsort's are in range).
Tensor gather_along_axis(const Tensor& x, const Tensor& indices, int64_t axis, bool known_in_range) {
  check(x, "take_along_axis");
  check(indices, "take_along_axis");
  if (indices.ndim() != x.ndim())
    fail<ValueError>("take_along_axis: indices of shape ", shape_str(indices.shape()), " for x of shape ",
                     shape_str(x.shape()), ": they must have the same number of dimensions");
  if (!is_integral(indices.dtype()))
    fail<TypeError>("take_along_axis: indices must be integers, got ", dtype_name(indices.dtype()));
  const int a = normalize_axis(axis, std::max<int64_t>(x.ndim(), 1), "take_along_axis");
  if (x.ndim() == 0) return reshape(take(x, reshape(indices, {-1}), std::nullopt), {});
  // The other axes broadcast; along `axis` the indices pick. Flat offsets into contiguous x.
  Shape shape = indices.shape(), full = x.shape();
  for (int i = 0; i < x.ndim(); ++i) {
    if (i == a) continue;
    const int64_t d = x.shape()[size_t(i)], k = indices.shape()[size_t(i)];
    if (d != k && d != 1 && k != 1)
      fail<ValueError>("take_along_axis: indices of shape ", shape_str(indices.shape()), " do not broadcast with x",
                       " of shape ", shape_str(x.shape()), " outside axis ", a);
    shape[size_t(i)] = full[size_t(i)] = d == 1 ? k : d;
  }
  const Tensor src = reshape(contiguous(broadcast_to(x, full)), {-1});
  // Offsets are computed and checked on the host (take reads host indices on any device).
  const Tensor offset = [&] {
    NoGradGuard no_grad;
    Tensor idx = astype(broadcast_to(to_device(indices, cpu_device()), shape), DType::Int64);
    const int64_t n = x.shape()[size_t(a)];
    idx = known_in_range ? idx : check_indices(idx, n, a, "take_along_axis");  // checked on every call of a plan
    Tensor total;
    int64_t stride = 1;
    for (int i = x.ndim() - 1; i >= 0; --i) {
      Shape view(size_t(x.ndim()), 1);
      view[size_t(i)] = shape[size_t(i)];
      Tensor coord = i == a ? idx : reshape(arange_int(0, shape[size_t(i)], 1, DType::Int64), view);
      Tensor term = mul(coord, weak_scalar_int(stride));
      total = total.defined() ? add(total, term) : term;
      stride *= full[size_t(i)];
    }
    return total;
  }();
  return reshape(take(src, reshape(broadcast_to(offset, shape), {-1}), 0), shape);
}
}  // namespace

Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis) {
  return gather_along_axis(x, indices, axis, false);
}

Tensor sort(const Tensor& x, int64_t axis, bool descending) {
  return gather_along_axis(x, argsort(x, axis, descending), axis, true);
}

Tensor cumsum(const Tensor& x, std::optional<int64_t> axis) { return cumulative(x, axis, false, "cumsum"); }
Tensor cumprod(const Tensor& x, std::optional<int64_t> axis) { return cumulative(x, axis, true, "cumprod"); }

Tensor prod(const Tensor& x, const Axes& axes, bool keepdims) {
  check(x, "prod");
  std::vector<int64_t> ax;
  if (axes) {
    for (int64_t a : *axes) ax.push_back(normalize_axis(a, x.ndim(), "prod"));
    std::sort(ax.begin(), ax.end());
    if (std::adjacent_find(ax.begin(), ax.end()) != ax.end()) fail<ValueError>("prod: an axis is repeated");
  } else {
    for (int i = 0; i < x.ndim(); ++i) ax.push_back(i);
  }
  // The reduced axes last and merged: the product is the running product's last element.
  std::vector<int64_t> perm;
  Shape kept, keep_shape = x.shape();
  for (int i = 0; i < x.ndim(); ++i)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) {
      perm.push_back(i);
      kept.push_back(x.shape()[size_t(i)]);
    }
  int64_t r = 1;
  for (int64_t a : ax) {
    perm.push_back(a);
    r *= x.shape()[size_t(a)];
    keep_shape[size_t(a)] = 1;
  }
  const DType out = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  Tensor result;
  if (r == 0) {
    result = ones(kept, out, x.device());  // the empty product
  } else {
    Shape merged = kept;
    merged.push_back(r);
    Tensor running = cumprod(reshape(permute(x, perm), merged), int64_t(merged.size()) - 1);
    result = reshape(slice(running, int64_t(merged.size()) - 1, r - 1, r), kept);
  }
  return keepdims ? reshape(result, keep_shape) : result;
}

Tensor searchsorted(const Tensor& sorted, const Tensor& values, bool right) {
  check(sorted, "searchsorted");
  check(values, "searchsorted");
  if (sorted.ndim() != 1)
    fail<ValueError>("searchsorted: the sorted tensor must be 1-D, got shape ", shape_str(sorted.shape()));
  const DType dt = result_type(sorted.dtype(), sorted.weak(), values.dtype(), values.weak());
  const Tensor haystack = to_device(sorted, cpu_device());
  return via_host(values, [&](const Tensor& h) {
    return pcp::apply<SearchSorted>({astype(haystack, dt), astype(h, dt)}, right);
  });
}

std::vector<Tensor> unique_all(const Tensor& x) {
  check(x, "unique");
  // Its outputs' shapes depend on the values, read on the host: a plan could only replay the
  // example's answer, so a trace refuses it here (naming unique).
  report_host_read(x, "unique (its result's size depends on the values)");
  NoGradGuard no_grad;
  if (x.device().is_gpu()) {
    // How many values there are depends on the data, so the host finds them (one copy each way,
    // as a CUDA unique synchronizes too); a GPU holds the indices as int32.
    if (x.numel() > INT32_MAX) fail<ValueError>("unique: ", x.numel(), " elements exceed int32 indices on a GPU");
    std::vector<Tensor> parts = unique_all(to_device(x, cpu_device()));
    for (size_t i = 0; i < parts.size(); ++i)
      parts[i] = to_device(i == 0 ? parts[i] : astype(parts[i], DType::Int32), x.device());
    return parts;
  }
  const Tensor flat = reshape(x, {-1});
  cpu::UniqueParts p = cpu::unique(axis_last(flat, 0, true));
  return {take(flat, p.index, 0), p.index, reshape(p.inverse, x.shape()), p.counts};
}

namespace {
// Plan files make these again by name (ops/primitive.h).
const bool registered = [] {
  // An axis of the input (axis 0 of a 0-d one).
  const auto check_axis = [](const NodeCheck& c) { c.axis("axis", std::max<int64_t>(1, c.ndim(0))); };
  register_primitive("argsort", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(
        std::make_shared<Argsort>(int(attr_int(n, a, "axis")), attr_bool(n, a, "descending")));
  }, .inputs = {1}, .check = check_axis});
  for (const char* name : {"cumulative_sum", "cumulative_prod"})
    register_primitive(name, {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
      return std::shared_ptr<Primitive>(std::make_shared<Cumulative>(
          int(attr_int(n, a, "axis")), n == "cumulative_prod", attr_bool(n, a, "reverse")));
    }, .inputs = {1}, .check = check_axis});
  register_primitive("cumulative_prod_backward", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<CumprodBackward>(int(attr_int(n, a, "axis"))));
  }, .inputs = {2}, .check = [](const NodeCheck& c) {
    c.axis("axis", std::max<int64_t>(1, c.ndim(0)));
    c.same_shapes(0, 1);
  }});
  register_primitive("searchsorted", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<SearchSorted>(attr_bool(n, a, "right")));
  }, .inputs = {2}, .check = [](const NodeCheck& c) {
    c.require(c.ndim(0) == 1 && c.in[0].dtype == c.in[1].dtype && c.in[0].device == c.in[1].device,
              "the sorted tensor must be 1-D, of the values' dtype and device");
  }});
  return true;
}();
}  // namespace

}  // namespace pcp
