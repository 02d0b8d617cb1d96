// Indexing: NumPy subscripts (ints, slices, None, Ellipsis, integer and boolean tensors),
// take / embedding (gathers) and scatter_add (their gradient).
#include <algorithm>
#include <cstring>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// Indices as contiguous host int64 with negatives wrapped; IndexError names `op` when out of
// range. Indices are metadata of the gathers: they are checked on the host (a GPU index tensor is
// copied back first), and a gather of GPU data takes host indices without waiting for the GPU.
Tensor checked_indices(const Tensor& idx, int64_t size, int64_t axis, const char* op, bool negatives = true) {
  if (!is_integral(idx.dtype()))
    fail<TypeError>(op, ": indices must be an integer tensor, got ", dtype_name(idx.dtype()));
  Tensor out = Tensor::empty(idx.shape(), DType::Int64);
  cpu::cast_copy(idx.host_copy(), out);
  int64_t* p = out.data<int64_t>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t v = p[i];
    if (v < (negatives ? -size : 0) || v >= size)
      fail<IndexError>(op, ": index ", v, " is out of bounds for axis ", axis, " with size ", size,
                       negatives ? "" : " (expected 0 <= index < size)");
    if (v < 0) p[i] = v + size;
  }
  return out;
}

// The indices an op computes with, checked (checked_indices) each time it runs: in a plan the
// check replays on every call's indices rather than running once on the example's.
class CheckIndices : public Primitive {
 public:
  CheckIndices(int64_t size, int64_t axis, const char* op, bool negatives)
      : size_(size), axis_(axis), op_(op), negatives_(negatives) {}
  const char* name() const override { return "check_indices"; }
  Attributes attributes() const override {
    return {{"size", size_}, {"axis", axis_}, {"op", std::string(op_)}, {"negatives", negatives_}};
  }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{in[0].shape, DType::Int64, cpu_device()}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    return {checked_indices(in[0], size_, axis_, op_, negatives_)};
  }
  bool differentiable_output(size_t) const override { return false; }

 private:
  int64_t size_, axis_;
  const char* op_;
  bool negatives_;
};

// Views x as (O, N, I) around `axis`.
void split_dims(const Shape& s, int axis, int64_t& O, int64_t& N, int64_t& I) {
  O = 1, I = 1;
  for (int i = 0; i < axis; ++i) O *= s[i];
  N = s[axis];
  for (size_t i = axis + 1; i < s.size(); ++i) I *= s[i];
}

// out (O, P, I)[o, p, i] = x (O, N, I)[o, idx[p], i]. The indices are the second input (any
// integer tensor), checked when the gather runs, so a traced plan gathers at the indices it is
// given; `op` names the user's op in index errors.
class Take : public Primitive {
 public:
  Take(int axis, const char* op) : axis_(axis), op_(op) {}
  const char* name() const override { return "take"; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}, {"op", std::string(op_)}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const Shape& xs = in[0].shape;
    Shape s(xs.begin(), xs.begin() + axis_);
    s.insert(s.end(), in[1].shape.begin(), in[1].shape.end());
    s.insert(s.end(), xs.begin() + axis_ + 1, xs.end());
    return {{s, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor x = contiguous(in[0]);
    Tensor out = empty(specs[0]);
    int64_t O, N, I;
    split_dims(x.shape(), axis_, O, N, I);
    const Tensor idx = checked_indices(in[1], N, axis_, op_);
    backend::gather(x, idx, N, I, out);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {scatter_add(in[0].shape(), in[1], gs[0], axis_), Tensor()};
  }
  bool vjp_reads_output() const override { return false; }
  bool host_input(size_t i) const override { return i == 1; }

 private:
  int axis_;
  const char* op_;
};

// Zeros of `shape` plus src (O, P, I) added at rows idx (the second input) along axis.
class ScatterAdd : public Primitive {
 public:
  ScatterAdd(Shape shape, int axis) : shape_(std::move(shape)), axis_(axis) {}
  const char* name() const override { return "scatter_add"; }
  Attributes attributes() const override { return {{"shape", shape_}, {"axis", int64_t(axis_)}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{shape_, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    int64_t O, N, I;
    split_dims(shape_, axis_, O, N, I);
    Tensor src = contiguous(in[0]);
    Tensor out = empty(specs[0]);
    const Tensor idx = checked_indices(in[1], N, axis_, "scatter_add");
    backend::scatter_add(src, idx, N, I, out);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {pcp::apply<Take>({gs[0], in[1]}, axis_, "scatter_add"), Tensor()};
  }
  bool vjp_reads_output() const override { return false; }
  bool host_input(size_t i) const override { return i == 1; }

 private:
  Shape shape_;
  int axis_;
};

// The index tensor a gather of x takes: integers, on the host or x's device (GPU indices of
// another device's tensor are read back first: the gather checks them on the host anyway).
Tensor index_tensor(const Tensor& idx, const Tensor& x, const char* op) {
  if (!is_integral(idx.dtype())) fail<TypeError>(op, ": indices must be an integer tensor, got ", dtype_name(idx.dtype()));
  return idx.device().is_gpu() && idx.device() != x.device() ? to_device(idx, cpu_device()) : idx;
}

// Boolean mask over the leading dims of `base_shape[dim:]` -> one int64 index tensor per mask dim.
std::vector<Tensor> mask_to_indices(const Tensor& mask, const Shape& shape, int dim) {
  for (int i = 0; i < mask.ndim(); ++i)
    if (dim + i >= int(shape.size()) || shape[dim + i] != mask.shape()[i])
      fail<IndexError>("index: boolean index of shape ", shape_str(mask.shape()),
                       " does not match the indexed dimensions of shape ", shape_str(shape), " at axis ", dim);
  Tensor m = contiguous(mask.host_copy());  // a GPU mask is read back: its count is the result's shape
  const bool* p = m.data<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < m.numel(); ++i) count += p[i];
  std::vector<Tensor> out;
  for (int d = 0; d < mask.ndim(); ++d) out.push_back(Tensor::empty({count}, DType::Int64));
  Strides st = contiguous_strides(mask.shape());
  int64_t k = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    if (!p[i]) continue;
    for (int d = 0; d < mask.ndim(); ++d) out[d].data<int64_t>()[k] = (i / st[d]) % mask.shape()[d];
    ++k;
  }
  return out;
}

}  // namespace

Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis) {
  if (!x.defined() || !indices.defined()) fail<ValueError>("take: got an undefined tensor");
  if (!axis) return take(reshape(x, {-1}), indices, 0);
  int a = normalize_axis(*axis, x.ndim(), "take");
  return pcp::apply<Take>({x, index_tensor(indices, x, "take")}, a, "take");
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  if (!weight.defined() || !indices.defined()) fail<ValueError>("embedding: got an undefined tensor");
  if (weight.ndim() != 2)
    fail<ValueError>("embedding: weight must be 2-D (num_embeddings, dim), got shape ", shape_str(weight.shape()));
  if (!is_integral(indices.dtype()))
    fail<TypeError>("embedding: indices must be an integer tensor, got ", dtype_name(indices.dtype()));
  return pcp::apply<Take>({weight, index_tensor(indices, weight, "embedding")}, 0, "embedding");
}

Tensor scatter_add(const Shape& shape, const Tensor& indices, const Tensor& src, int64_t axis) {
  int a = normalize_axis(axis, int64_t(shape.size()), "scatter_add");
  const Tensor idx = index_tensor(indices, src, "scatter_add");
  Shape expect(shape.begin(), shape.begin() + a);
  expect.insert(expect.end(), indices.shape().begin(), indices.shape().end());
  expect.insert(expect.end(), shape.begin() + a + 1, shape.end());
  if (src.shape() != expect)
    fail<ValueError>("scatter_add: src has shape ", shape_str(src.shape()), ", expected ", shape_str(expect));
  if (!is_floating(src.dtype())) fail<TypeError>("scatter_add: src must be floating, got ", dtype_name(src.dtype()));
  return pcp::apply<ScatterAdd>({src, idx}, shape, a);
}

Tensor check_indices(const Tensor& idx, int64_t size, int64_t axis, const char* op, bool negatives) {
  return pcp::apply<CheckIndices>({idx}, size, axis, op, negatives);  // checked_indices refuses non-integers
}

Tensor one_hot(const Tensor& indices, int64_t num_classes, DType dtype) {
  if (!is_integral(indices.dtype()))
    fail<TypeError>("one_hot: indices must be an integer tensor, got ", dtype_name(indices.dtype()));
  if (num_classes < 0) fail<ValueError>("one_hot: num_classes must be non-negative, got ", num_classes);
  Shape out_shape = indices.shape();
  out_shape.push_back(num_classes);
  if (indices.numel() == 0) return zeros(out_shape, dtype, indices.device());
  // The classes compared are the checked ones, so a plan checks every call's (and an exported
  // module, which cannot raise, gives a row of zeros for a class out of range).
  const DType cdt = num_classes - 1 <= INT32_MAX ? indices.dtype() : DType::Int64;
  const Tensor checked =
      to_device(astype(check_indices(indices, num_classes, indices.ndim(), "one_hot", false), cdt), indices.device());
  Tensor classes = to_device(arange_int(0, num_classes, 1, cdt), indices.device());
  return astype(eq(unsqueeze(checked, -1), classes), dtype);
}

Tensor index(const Tensor& x, const std::vector<IndexItem>& items_in) {
  if (!x.defined()) fail<ValueError>("index: got an undefined tensor");
  // Dimensions each item consumes: a boolean mask one per mask axis (a 0-d mask none).
  auto consumes = [](const IndexItem& it) -> int {
    if (it.kind == IndexItem::Int || it.kind == IndexItem::Slice) return 1;
    if (it.kind == IndexItem::Array) return it.array.dtype() == DType::Bool ? it.array.ndim() : 1;
    return 0;
  };
  int ellipsis = -1, consumed = 0;
  for (size_t i = 0; i < items_in.size(); ++i) {
    if (items_in[i].kind == IndexItem::Ellipsis) {
      if (ellipsis >= 0) fail<IndexError>("index: an index can only have a single ellipsis ('...')");
      ellipsis = int(i);
    }
    consumed += consumes(items_in[i]);
  }
  if (consumed > x.ndim())
    fail<IndexError>("index: too many indices for tensor of dimension ", x.ndim(), " (shape ",
                     shape_str(x.shape()), ")");
  // Expand the Ellipsis into full slices, then boolean masks into integer index tensors.
  std::vector<IndexItem> expanded;
  for (size_t i = 0; i < items_in.size(); ++i) {
    if (int(i) == ellipsis) {
      for (int k = 0; k < x.ndim() - consumed; ++k) expanded.push_back(IndexItem{IndexItem::Slice, 0, {}, {}});
    } else {
      expanded.push_back(items_in[i]);
    }
  }
  std::vector<IndexItem> items;
  bool any_array = false;
  int dim = 0;
  for (const IndexItem& it : expanded) {
    if (it.kind == IndexItem::Array && it.array.dtype() == DType::Bool && it.array.ndim() == 0) {
      // NumPy: a 0-d mask adds an axis of length 1 (True) or 0 (False).
      items.push_back(IndexItem{IndexItem::NewAxis, 0, {}, {}});
      items.back().index = it.array.item_int() ? 1 : 0;
      items.back().array = full_int({}, 0, DType::Bool);  // marks "masked new axis"
      continue;
    }
    if (it.kind == IndexItem::Array && it.array.dtype() == DType::Bool) {
      for (Tensor& t : mask_to_indices(it.array, x.shape(), dim)) items.push_back(IndexItem{IndexItem::Array, 0, {}, t});
      dim += it.array.ndim();
      any_array = true;
      continue;
    }
    if (it.kind == IndexItem::Array) {
      if (!is_integral(it.array.dtype())) {
        if (it.array.numel() != 0)
          fail<IndexError>("index: tensors used as indices must be integer or boolean, got ",
                           dtype_name(it.array.dtype()));
        items.push_back(IndexItem{IndexItem::Array, 0, {}, astype(it.array, DType::Int64)});  // [] indexes nothing
      } else {
        items.push_back(it);
      }
      any_array = true;
    } else {
      items.push_back(it);
    }
    dim += consumes(it);
  }
  // With integer tensors present, NumPy treats plain ints as advanced indices too.
  if (any_array)
    for (IndexItem& it : items)
      if (it.kind == IndexItem::Int) {
        it.array = full_int({}, it.index, DType::Int64);
        it.kind = IndexItem::Array;
      }
  // Basic indexing as views; remember where the advanced indices sit in the result.
  Tensor y = x;
  dim = 0;
  std::vector<int64_t> squeeze_axes;
  std::vector<std::pair<int, Tensor>> arrays;  // (dim in y, indices)
  for (const IndexItem& it : items) {
    switch (it.kind) {
      case IndexItem::NewAxis:
        y = unsqueeze(y, dim);
        if (it.array.defined()) y = slice(y, dim, 0, it.index, 1);  // 0-d mask: keep 1 or 0
        dim++;
        break;
      case IndexItem::Ellipsis: break;
      case IndexItem::Slice: {
        int64_t step = it.slice.step;
        if (step == 0) fail<ValueError>("index: slice step cannot be zero");
        int64_t n = y.shape()[dim];
        int64_t start = it.slice.start ? *it.slice.start : (step > 0 ? 0 : n - 1);
        int64_t stop = it.slice.stop ? *it.slice.stop : (step > 0 ? n : -n - 1);
        y = slice(y, dim, start, stop, step);
        dim++;
        break;
      }
      case IndexItem::Int: {
        int64_t n = y.shape()[dim];
        if (it.index < -n || it.index >= n)
          fail<IndexError>("index: index ", it.index, " is out of bounds for axis ", dim, " with size ", n);
        int64_t i = it.index < 0 ? it.index + n : it.index;
        y = slice(y, dim, i, i + 1, 1);
        squeeze_axes.push_back(dim);
        dim++;
        break;
      }
      case IndexItem::Array: arrays.push_back({dim, it.array}); dim++; break;
    }
  }
  if (!squeeze_axes.empty()) y = squeeze(y, squeeze_axes);
  if (arrays.empty()) return y;
  if (arrays.size() == 1) {
    auto& [d, t] = arrays[0];
    return pcp::apply<Take>({y, index_tensor(t, y, "index")}, d, "index");
  }
  // Several index tensors: broadcast them, move their dims to the front, flatten those dims
  // into one and take from it with the combined linear index.
  Shape bshape;
  for (auto& [d, t] : arrays) bshape = broadcast_shapes(bshape, t.shape(), "index");
  std::vector<int64_t> perm;
  for (auto& [d, t] : arrays) perm.push_back(d);
  for (int i = 0; i < y.ndim(); ++i)
    if (std::find(perm.begin(), perm.end(), i) == perm.end()) perm.push_back(i);
  Tensor moved = permute(y, perm);
  Tensor linear = zeros(bshape, DType::Int64);
  int64_t stride = 1;
  for (int k = int(arrays.size()) - 1; k >= 0; --k) {
    int64_t n = y.shape()[arrays[k].first];
    Tensor idx = check_indices(arrays[k].second, n, arrays[k].first, "index");
    linear = add(linear, mul(idx, weak_scalar_int(stride)));
    stride *= n;
  }
  Tensor flat = flatten(moved, 0, int64_t(arrays.size()) - 1);
  Tensor r = take(flat, linear, 0);
  // Adjacent index tensors keep their place (NumPy rule); otherwise the result dims lead.
  bool adjacent = true;
  for (size_t k = 1; k < arrays.size(); ++k) adjacent = adjacent && arrays[k].first == arrays[k - 1].first + 1;
  int first = arrays[0].first;
  if (!adjacent || first == 0) return r;
  int nb = int(bshape.size());
  std::vector<int64_t> back;
  for (int i = 0; i < first; ++i) back.push_back(nb + i);
  for (int i = 0; i < nb; ++i) back.push_back(i);
  for (int i = nb + first; i < r.ndim(); ++i) back.push_back(i);
  return permute(r, back);
}

namespace {

// Whether x's elements overlap in memory (a broadcast view): writing one writes others.
bool has_broadcast_dims(const Tensor& x) {
  for (int d = 0; d < x.ndim(); ++d)
    if (x.shape()[d] > 1 && x.strides()[d] == 0) return true;
  return false;
}

// x[items] = value where items hold integer or boolean tensors, on the host: the selection's
// positions come from indexing a tensor of x's element numbers with the same items. Repeated
// positions take the last value, as in NumPy.
void assign_selected(const Tensor& x, const std::vector<IndexItem>& items, const Tensor& value) {
  const Tensor numbers = reshape(arange_int(0, x.numel(), 1, DType::Int64), x.shape());
  const Tensor pos = contiguous(index(numbers, items));
  check_scalar_fits(value, x.dtype(), "index_assign");
  const Tensor src = contiguous(broadcast_to(astype(value.host_copy(), x.dtype()), pos.shape()));
  const size_t isz = x.itemsize();
  char* base = static_cast<char*>(x.raw_data());
  const int64_t* p = pos.data<int64_t>();
  const char* v = static_cast<const char*>(src.raw_data());
  for (int64_t i = 0; i < pos.numel(); ++i) {
    int64_t rem = p[i], off = 0;
    for (int d = x.ndim() - 1; d >= 0; --d) {
      off += (rem % x.shape()[d]) * x.strides()[d];
      rem /= x.shape()[d];
    }
    std::memcpy(base + off * int64_t(isz), v + i * int64_t(isz), isz);
  }
}

}  // namespace

void index_assign(const Tensor& x, const std::vector<IndexItem>& items, const Tensor& value) {
  if (!x.defined() || !value.defined()) fail<ValueError>("index_assign: got an undefined tensor");
  if (x.requires_grad() && grad_enabled())
    fail<ValueError>("index_assign: in-place assignment to a tensor that requires grad; use it under no_grad()");
  if (has_broadcast_dims(x))
    fail<ValueError>("index_assign: the tensor of shape ", shape_str(x.shape()),
                     " is a broadcast view whose elements share memory; assign to a copy (.copy())");
  report_inplace_write(x, "index_assign (x[...] = value)");  // before an op here reads x
  NoGradGuard ng;
  const Tensor view = index(x, items);  // validates the items; a view unless they hold tensors
  const Shape& vs = view.shape();
  bool ok = value.ndim() <= view.ndim();
  for (int i = 0; ok && i < value.ndim(); ++i) {
    int64_t d = value.shape()[i], t = vs[vs.size() - value.ndim() + i];
    ok = d == t || d == 1;
  }
  if (!ok)
    fail<ValueError>("index_assign: cannot assign a value of shape ", shape_str(value.shape()), " to a selection of shape ",
                     shape_str(vs));
  check_scalar_fits(value, x.dtype(), "index_assign");
  // The source may overlap the destination (t[::-1] = t, t[1:] = t[:-1]): read it from a copy.
  Tensor src = value.storage() == x.storage() ? copy(value) : value;
  x.storage()->bump_version();
  const bool advanced = std::any_of(items.begin(), items.end(), [](const IndexItem& it) { return it.kind == IndexItem::Array; });
  if (advanced) {
    if (!x.device().is_gpu()) return assign_selected(x, items, src);
    // On a GPU: through a host copy, written back whole (rare enough not to need a kernel).
    Tensor host = to_device(x, cpu_device());
    assign_selected(host, items, src);
    return gpu::copy(to_device(host, x.device()), x);
  }
  if (view.device().is_gpu())
    gpu::copy(broadcast_to(to_device(astype(src, view.dtype()), view.device()), vs), view);
  else
    cpu::cast_copy(src.host_copy(), view);
}

namespace {
// Plan files make these again by name (ops/primitive.h); the op name in index errors is one of
// these (Take keeps a pointer to it).
const char* take_op(const std::string& op) {
  for (const char* known : {"take", "embedding", "index", "scatter_add", "one_hot", "take_along_axis"})
    if (op == known) return known;
  return "take";
}
void check_take(const NodeCheck& c) {
  c.require(is_integral(c.in[1].dtype), "indices must be integers");
  c.axis("axis", c.ndim(0));
}

void check_scatter_add(const NodeCheck& c) {
  c.require(is_integral(c.in[1].dtype), "indices must be integers");
  const Shape s = c.dims("shape");
  const int ax = c.axis("axis", int64_t(s.size()));
  Shape expect(s.begin(), s.begin() + ax);
  expect.insert(expect.end(), c.in[1].shape.begin(), c.in[1].shape.end());
  expect.insert(expect.end(), s.begin() + ax + 1, s.end());
  c.require(expect == c.in[0].shape, "the source does not match shape and indices");
}

const bool registered = register_primitive("take", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
  return std::shared_ptr<Primitive>(std::make_shared<Take>(int(attr_int(n, a, "axis")), take_op(attr_str(n, a, "op"))));
}, .inputs = {2}, .check = check_take, .gpu = true}) && register_primitive("scatter_add", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
  return std::shared_ptr<Primitive>(std::make_shared<ScatterAdd>(attr_ints(n, a, "shape"), int(attr_int(n, a, "axis"))));
}, .inputs = {2}, .check = check_scatter_add, .gpu = true}) && register_primitive("check_indices", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
  return std::shared_ptr<Primitive>(std::make_shared<CheckIndices>(attr_int(n, a, "size"), attr_int(n, a, "axis"),
                                                                   take_op(attr_str(n, a, "op")), attr_bool(n, a, "negatives")));
}, .inputs = {1}, .check = [](const NodeCheck& c) {
  c.require(is_integral(c.in[0].dtype), "indices must be integers");
  c.require(attr_int(c.op, c.attrs, "size") >= 0, "size is negative");
}, .gpu = true});
}  // namespace

}  // namespace pcp
