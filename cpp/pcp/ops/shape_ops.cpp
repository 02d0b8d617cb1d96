// Shape ops. reshape, permute, broadcast_to and slice are views (shared storage);
// concatenate copies. squeeze, unsqueeze, transpose, stack, split, tril, triu compose them.
#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/dispatch.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// Strides for viewing (shape, strides) as new_shape without copying, if possible (NumPy's rule).
std::optional<Strides> view_strides(const Shape& shape, const Strides& strides, const Shape& new_shape) {
  if (numel(new_shape) == 0) return contiguous_strides(new_shape);
  Shape os;
  Strides ost;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) { os.push_back(shape[i]); ost.push_back(strides[i]); }
  Strides out(new_shape.size(), 0);
  size_t oi = 0, ni = 0;
  const size_t on = os.size(), nn = new_shape.size();
  while (ni < nn && oi < on) {
    if (new_shape[ni] == 1) { out[ni] = 1; ++ni; continue; }
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = os[oi], np = new_shape[ni];
    while (op != np) {
      if (np < op) { np *= new_shape[nj++]; }
      else { op *= os[oj++]; }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (ost[k] != ost[k + 1] * os[k + 1]) return std::nullopt;
    out[nj - 1] = ost[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) out[k - 1] = out[k] * new_shape[k];
    oi = oj;
    ni = nj;
  }
  for (; ni < nn; ++ni) out[ni] = 1;  // trailing ones
  return out;
}


class Reshape : public Primitive {
 public:
  explicit Reshape(Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "reshape"; }
  bool output_views_input() const override { return true; }  // (copies when it must)
  Attributes attributes() const override { return {{"shape", shape_}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{shape_, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    const Tensor& x = in[0];
    if (auto st = view_strides(x.shape(), x.strides(), shape_)) return {x.alias(shape_, *st, x.offset())};
    Tensor c = Tensor::empty(x.shape(), x.dtype(), x.device());
    backend::copy(x, c);
    return {c.alias(shape_, contiguous_strides(shape_), 0)};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {reshape(gs[0], in[0].shape())};
  }

 private:
  Shape shape_;
};

class Permute : public Primitive {
 public:
  explicit Permute(std::vector<int> perm) : perm_(std::move(perm)) {}
  const char* name() const override { return "permute"; }
  bool output_views_input() const override { return true; }
  Attributes attributes() const override { return {{"perm", std::vector<int64_t>(perm_.begin(), perm_.end())}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    Shape s(perm_.size());
    for (size_t i = 0; i < perm_.size(); ++i) s[i] = in[0].shape[size_t(perm_[i])];
    return {{s, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor& x = in[0];
    Strides st(perm_.size());
    for (size_t i = 0; i < perm_.size(); ++i) st[i] = x.strides()[perm_[i]];
    return {x.alias(specs[0].shape, st, x.offset())};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    std::vector<int64_t> inv(perm_.size());
    for (size_t i = 0; i < perm_.size(); ++i) inv[perm_[i]] = int64_t(i);
    return {permute(gs[0], inv)};
  }

 private:
  std::vector<int> perm_;
};

class BroadcastTo : public Primitive {
 public:
  explicit BroadcastTo(Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "broadcast_to"; }
  bool output_views_input() const override { return true; }
  Attributes attributes() const override { return {{"shape", shape_}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{shape_, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    return {in[0].alias(shape_, broadcast_strides(in[0], shape_), in[0].offset())};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {sum_to(gs[0], in[0].shape())};
  }

 private:
  Shape shape_;
};

class SliceScatter;
Tensor slice_scatter(const Tensor& g, const Shape& shape, int axis, int64_t start, int64_t step);

class Slice : public Primitive {
 public:
  Slice(int axis, int64_t start, int64_t len, int64_t step) : axis_(axis), start_(start), len_(len), step_(step) {}
  const char* name() const override { return "slice"; }
  bool output_views_input() const override { return true; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}, {"start", start_}, {"len", len_}, {"step", step_}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    TensorSpec out = in[0];
    out.shape[size_t(axis_)] = len_;
    return {out};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor& x = in[0];
    Strides st = x.strides();
    int64_t off = x.offset() + (len_ > 0 ? start_ * st[axis_] : 0);
    st[axis_] *= step_;
    return {x.alias(specs[0].shape, st, off)};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {slice_scatter(gs[0], in[0].shape(), axis_, start_, step_)};
  }

 private:
  int axis_;
  int64_t start_, len_, step_;
};

// Zeros of `shape` with `g` written into the slice [start : start+len*step : step] of `axis`.
class SliceScatter : public Primitive {
 public:
  SliceScatter(Shape shape, int axis, int64_t start, int64_t step)
      : shape_(std::move(shape)), axis_(axis), start_(start), step_(step) {}
  const char* name() const override { return "slice_scatter"; }
  Attributes attributes() const override { return {{"shape", shape_}, {"axis", int64_t(axis_)}, {"start", start_}, {"step", step_}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{shape_, in[0].dtype, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    Tensor out = zeros(shape_, in[0].dtype(), in[0].device());
    Strides st = out.strides();
    int64_t off = start_ * st[axis_];
    st[axis_] *= step_;
    backend::copy(in[0], out.alias(in[0].shape(), st, off));
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    // The Slice primitive directly: start + len*step may be -1 for negative steps,
    // which slice() would read as "the last element".
    return {pcp::apply<Slice>({gs[0]}, axis_, start_, in[0].shape()[axis_], step_)};
  }

 private:
  Shape shape_;
  int axis_;
  int64_t start_, step_;
};

Tensor slice_scatter(const Tensor& g, const Shape& shape, int axis, int64_t start, int64_t step) {
  return pcp::apply<SliceScatter>({g}, shape, axis, start, step);
}

class Concat : public Primitive {
 public:
  explicit Concat(int axis) : axis_(axis) {}
  const char* name() const override { return "concatenate"; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    TensorSpec out = in[0];
    out.shape[size_t(axis_)] = 0;
    for (const TensorSpec& t : in) out.shape[size_t(axis_)] += t.shape[size_t(axis_)];
    return {out};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    int64_t pos = 0;
    for (const Tensor& t : in) {
      backend::copy(t, out.alias(t.shape(), out.strides(), pos * out.strides()[axis_]));
      pos += t.shape()[axis_];
    }
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>& needs) override {
    const Tensor& g = gs[0];
    std::vector<Tensor> out;
    int64_t pos = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t n = in[i].shape()[axis_];
      out.push_back(needs[i] ? slice(g, axis_, pos, pos + n, 1) : Tensor());
      pos += n;
    }
    return out;
  }

 private:
  int axis_;
};

// Consecutive sections of `axis` that tile it, as views, in one op: its gradient is one
// concatenation of the sections' gradients, where a slice per section would scatter each into
// zeros of the whole and add them up (three fills, copies and adds of the packed qkv
// projection per attention layer).
class Split : public Primitive {
 public:
  Split(int axis, std::vector<int64_t> lengths) : axis_(axis), lengths_(std::move(lengths)) {}
  const char* name() const override { return "split"; }
  bool output_views_input() const override { return true; }
  Attributes attributes() const override { return {{"axis", int64_t(axis_)}, {"lengths", lengths_}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    std::vector<TensorSpec> out;
    for (int64_t len : lengths_) {
      TensorSpec t = in[0];
      t.shape[size_t(axis_)] = len;
      out.push_back(t);
    }
    return out;
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor& x = in[0];
    std::vector<Tensor> out;
    int64_t start = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      out.push_back(x.alias(specs[i].shape, x.strides(), x.offset() + (lengths_[i] > 0 ? start * x.strides()[axis_] : 0)));
      start += lengths_[i];
    }
    return out;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {concatenate(gs, axis_)};
  }

 private:
  int axis_;
  std::vector<int64_t> lengths_;
};

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) fail<ValueError>(op, ": got an undefined tensor");
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape_in) {
  check_defined(x, "reshape");
  Shape shape = shape_in;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail<ValueError>("reshape: only one dimension can be -1, got ", shape_str(shape_in));
      infer = int(i);
    } else if (shape[i] < 0) {
      fail<ValueError>("reshape: invalid dimension ", shape[i], " in ", shape_str(shape_in));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail<ValueError>("reshape: cannot reshape tensor of shape ", shape_str(x.shape()), " (", x.numel(),
                       " elements) into ", shape_str(shape_in));
    shape[infer] = x.numel() / known;
  }
  check_shape(shape, "reshape", x.itemsize());
  if (numel(shape) != x.numel())
    fail<ValueError>("reshape: cannot reshape tensor of shape ", shape_str(x.shape()), " (", x.numel(),
                     " elements) into shape ", shape_str(shape_in), " (", numel(shape), " elements)");
  if (shape == x.shape()) return x;
  return pcp::apply<Reshape>({x}, shape);
}

Tensor flatten(const Tensor& x, int64_t start_axis, int64_t end_axis) {
  check_defined(x, "flatten");
  if (x.ndim() == 0) {  // as a 1-d tensor of one element: axes 0 and -1 only
    normalize_axis(start_axis, 1, "flatten");
    normalize_axis(end_axis, 1, "flatten");
    return reshape(x, {1});
  }
  int s = normalize_axis(start_axis, x.ndim(), "flatten"), e = normalize_axis(end_axis, x.ndim(), "flatten");
  if (s > e) fail<ValueError>("flatten: start_axis ", start_axis, " comes after end_axis ", end_axis);
  Shape shape(x.shape().begin(), x.shape().begin() + s);
  int64_t n = 1;
  for (int i = s; i <= e; ++i) n *= x.shape()[i];
  shape.push_back(n);
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return reshape(x, shape);
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& axes) {
  check_defined(x, "permute");
  if (int(axes.size()) != x.ndim())
    fail<ValueError>("permute: axes of length ", axes.size(), " do not match a tensor of ", x.ndim(),
                     " dimensions (shape ", shape_str(x.shape()), ")");
  std::vector<int> perm;
  std::vector<bool> seen(x.ndim(), false);
  for (int64_t a : axes) {
    int n = normalize_axis(a, x.ndim(), "permute");
    if (seen[n]) fail<ValueError>("permute: axis ", a, " repeated in the permutation");
    seen[n] = true;
    perm.push_back(n);
  }
  bool identity = true;
  for (int i = 0; i < int(perm.size()); ++i) identity = identity && perm[i] == i;
  if (identity) return x;
  return pcp::apply<Permute>({x}, perm);
}

Tensor transpose(const Tensor& x, std::optional<std::vector<int64_t>> axes) {
  check_defined(x, "transpose");
  if (axes) return permute(x, *axes);
  std::vector<int64_t> rev;
  for (int i = x.ndim() - 1; i >= 0; --i) rev.push_back(i);
  return permute(x, rev);
}

Tensor swapaxes(const Tensor& x, int64_t a, int64_t b) {
  check_defined(x, "swapaxes");
  int ia = normalize_axis(a, x.ndim(), "swapaxes"), ib = normalize_axis(b, x.ndim(), "swapaxes");
  std::vector<int64_t> perm;
  for (int i = 0; i < x.ndim(); ++i) perm.push_back(i);
  std::swap(perm[ia], perm[ib]);
  return permute(x, perm);
}

Tensor squeeze(const Tensor& x, const Axes& axes) {
  check_defined(x, "squeeze");
  Shape shape;
  if (!axes) {
    for (int64_t d : x.shape())
      if (d != 1) shape.push_back(d);
  } else {
    std::vector<int> ax = normalize_axes(*axes, x.ndim(), "squeeze");
    for (int a : ax)
      if (x.shape()[a] != 1)
        fail<ValueError>("squeeze: cannot squeeze axis ", a, " of size ", x.shape()[a], " in shape ",
                         shape_str(x.shape()), " (only size-1 axes can be squeezed)");
    for (int i = 0; i < x.ndim(); ++i)
      if (std::find(ax.begin(), ax.end(), i) == ax.end()) shape.push_back(x.shape()[i]);
  }
  return reshape(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t axis) {
  check_defined(x, "unsqueeze");
  int a = normalize_axis(axis, x.ndim() + 1, "unsqueeze");
  Shape shape = x.shape();
  shape.insert(shape.begin() + a, 1);
  return reshape(x, shape);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  check_defined(x, "broadcast_to");
  if (x.shape() == shape) return x;
  check_shape(shape, "broadcast_to", x.itemsize());
  bool ok = shape.size() >= size_t(x.ndim());
  for (int i = 0; ok && i < x.ndim(); ++i) {
    int64_t d = x.shape()[i], t = shape[shape.size() - x.ndim() + i];
    ok = d == t || d == 1;
  }
  for (int64_t d : shape) ok = ok && d >= 0;
  if (!ok)
    fail<ValueError>("broadcast_to: cannot broadcast shape ", shape_str(x.shape()), " to ", shape_str(shape));
  return pcp::apply<BroadcastTo>({x}, shape);
}

Tensor contiguous(const Tensor& x) {
  check_defined(x, "contiguous");
  return x.is_contiguous() ? x : copy(x);
}

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  check_defined(x, "slice");
  int a = normalize_axis(axis, x.ndim(), "slice");
  if (step == 0) fail<ValueError>("slice: step cannot be zero");
  int64_t n = x.shape()[a];
  // Python slice semantics: clamp, then count.
  auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
  if (step > 0) {
    start = clampi(start < 0 ? start + n : start, 0, n);
    stop = clampi(stop < 0 ? stop + n : stop, 0, n);
  } else {
    start = clampi(start < 0 ? start + n : start, -1, n - 1);
    stop = clampi(stop < 0 ? stop + n : stop, -1, n - 1);
  }
  // In 128 bits: a step near 2**63 overflows the rounding-up sum.
  const __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
  const __int128 mag = step > 0 ? __int128(step) : -__int128(step);
  const int64_t len = span <= 0 ? 0 : int64_t((span + mag - 1) / mag);
  if (len == n && step == 1) return x;
  return pcp::apply<Slice>({x}, a, start, len, step);
}

Tensor concatenate(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) fail<ValueError>("concatenate: need at least one tensor");
  for (const Tensor& t : xs) check_defined(t, "concatenate");
  const Tensor& first = xs[0];
  if (first.ndim() == 0) fail<ValueError>("concatenate: zero-dimensional tensors cannot be concatenated");
  int a = normalize_axis(axis, first.ndim(), "concatenate");
  DType dt = first.dtype();
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    bool ok = t.ndim() == first.ndim();
    for (int d = 0; ok && d < t.ndim(); ++d) ok = d == a || t.shape()[d] == first.shape()[d];
    if (!ok)
      fail<ValueError>("concatenate: tensor ", i, " has shape ", shape_str(t.shape()), " but tensor 0 has shape ",
                       shape_str(first.shape()), "; all dimensions except axis ", a, " must match");
    dt = promote_types(dt, t.dtype());
  }
  if (xs.size() == 1) return xs[0];
  std::vector<Tensor> ins;
  for (const Tensor& t : xs) ins.push_back(astype(t, dt));
  return pcp::apply<Concat>(ins, a);
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) fail<ValueError>("stack: need at least one tensor");
  for (const Tensor& t : xs) check_defined(t, "stack");
  for (size_t i = 1; i < xs.size(); ++i)
    if (xs[i].shape() != xs[0].shape())
      fail<ValueError>("stack: all tensors must have the same shape, got ", shape_str(xs[0].shape()), " and ",
                       shape_str(xs[i].shape()), " (tensor ", i, ")");
  int a = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  std::vector<Tensor> ex;
  for (const Tensor& t : xs) ex.push_back(unsqueeze(t, a));
  if (ex.size() == 1) return ex[0];
  return concatenate(ex, a);
}

std::vector<Tensor> split_at(const Tensor& x, const std::vector<int64_t>& indices, int64_t axis) {
  check_defined(x, "split");
  int a = normalize_axis(axis, x.ndim(), "split");
  // Section k is [starts[k], ends[k]), empty when ends[k] <= starts[k], as in NumPy.
  const int64_t n = x.shape()[a];
  std::vector<int64_t> starts{0}, ends;
  for (int64_t idx : indices) {
    const int64_t i = idx < 0 ? std::max<int64_t>(idx, -n) + n : std::min(idx, n);
    ends.push_back(i);
    starts.push_back(i);
  }
  ends.push_back(n);
  std::vector<int64_t> lengths;
  bool tiles = true;  // ascending indices: the sections follow one another, one Split op
  for (size_t k = 0; k < ends.size(); ++k) {
    tiles = tiles && ends[k] >= starts[k];
    lengths.push_back(std::max<int64_t>(ends[k] - starts[k], 0));
  }
  if (tiles && lengths.size() > 1) return pcp::apply_all<Split>({x}, a, lengths);
  std::vector<Tensor> out;
  for (size_t k = 0; k < ends.size(); ++k) out.push_back(slice(x, a, starts[k], ends[k], 1));
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t sections, int64_t axis) {
  check_defined(x, "split");
  int a = normalize_axis(axis, x.ndim(), "split");
  if (sections <= 0) fail<ValueError>("split: number of sections must be positive, got ", sections);
  int64_t n = x.shape()[a];
  if (n % sections != 0)
    fail<ValueError>("split: axis ", a, " of size ", n, " does not divide into ", sections, " equal sections");
  std::vector<int64_t> idx;
  for (int64_t i = 1; i < sections; ++i) idx.push_back(i * (n / sections));
  return split_at(x, idx, a);
}

static Tensor triangle(const Tensor& x, int64_t k, bool lower, const char* op) {
  check_defined(x, op);
  if (x.ndim() < 2) fail<ValueError>(op, ": expected a tensor of at least 2 dimensions, got shape ", shape_str(x.shape()));
  int64_t n = x.shape()[x.ndim() - 2], m = x.shape()[x.ndim() - 1];
  Tensor rows = reshape(arange_int(0, n, 1, DType::Int64), {n, 1});
  Tensor cols = reshape(arange_int(0, m, 1, DType::Int64), {1, m});
  Tensor diff = sub(cols, rows);  // j - i
  Tensor mask = lower ? le(diff, weak_scalar_int(k)) : ge(diff, weak_scalar_int(k));  // built on the host
  return where(to_device(mask, x.device()), x, to_device(zeros({}, x.dtype()), x.device()));
}

Tensor tril(const Tensor& x, int64_t k) { return triangle(x, k, true, "tril"); }
Tensor triu(const Tensor& x, int64_t k) { return triangle(x, k, false, "triu"); }

namespace {
// Plan files make these again by name (ops/primitive.h).
// A slice (or the slice a scatter writes into `shape`): the axis in range, a non-zero step, and
// every index it reaches inside the axis.
void check_slice(const NodeCheck& c) {
  const bool scatter = c.op == "slice_scatter";
  const Shape full = scatter ? c.dims("shape") : c.in[0].shape;
  c.require(int64_t(full.size()) == c.ndim(0), "shape has another number of dimensions than the input");
  const int ax = c.axis("axis", c.ndim(0));
  const int64_t start = attr_int(c.op, c.attrs, "start"), step = attr_int(c.op, c.attrs, "step");
  const int64_t len = scatter ? c.in[0].shape[size_t(ax)] : attr_int(c.op, c.attrs, "len");
  for (size_t d = 0; scatter && d < full.size(); ++d)
    c.require(int(d) == ax || full[d] == c.in[0].shape[d], "shape does not match the input off the axis");
  c.require(step != 0 && len >= 0, "a zero step or a negative length");
  if (len > 0) {
    c.require(std::abs(start) < (int64_t(1) << 62) && std::abs(step) < (int64_t(1) << 31) && len < (int64_t(1) << 31),
              "start, step or length out of range");
    const int64_t n = full[size_t(ax)], last = start + (len - 1) * step;  // bounded above: no overflow
    c.require(start >= 0 && start < n && last >= 0 && last < n, "the slice reaches outside the axis");
  }
}

const bool registered = [] {
  register_primitive("reshape", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<Reshape>(attr_ints(n, a, "shape")));
  }, .inputs = {1}, .check = [](const NodeCheck& c) {
    c.require(numel(c.dims("shape")) == numel(c.in[0].shape), "shape holds another number of elements");
  }, .gpu = true});
  register_primitive("permute", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    const std::vector<int64_t> p = attr_ints(n, a, "perm");
    return std::shared_ptr<Primitive>(std::make_shared<Permute>(std::vector<int>(p.begin(), p.end())));
  }, .inputs = {1}, .check = [](const NodeCheck& c) {
    std::vector<int64_t> perm = attr_ints(c.op, c.attrs, "perm"), sorted(perm.size());
    std::iota(sorted.begin(), sorted.end(), 0);
    std::sort(perm.begin(), perm.end());
    c.require(perm == sorted && int64_t(perm.size()) == c.ndim(0), "perm is not a permutation of the input's axes");
  }, .gpu = true});
  register_primitive("broadcast_to", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<BroadcastTo>(attr_ints(n, a, "shape")));
  }, .inputs = {1}, .check = [](const NodeCheck& c) {
    const Shape s = c.dims("shape");
    c.require(broadcast_shapes(c.in[0].shape, s, "plan") == s, "the input does not broadcast to shape");
  }, .gpu = true});
  register_primitive("slice", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<Slice>(int(attr_int(n, a, "axis")), attr_int(n, a, "start"),
                                                              attr_int(n, a, "len"), attr_int(n, a, "step")));
  }, .inputs = {1}, .check = check_slice, .gpu = true});
  register_primitive("slice_scatter", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<SliceScatter>(attr_ints(n, a, "shape"), int(attr_int(n, a, "axis")),
                                                                     attr_int(n, a, "start"), attr_int(n, a, "step")));
  }, .inputs = {1}, .check = check_slice, .gpu = true});
  register_primitive("concatenate", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<Concat>(int(attr_int(n, a, "axis"))));
  }, .inputs = {}, .check = [](const NodeCheck& c) {
    c.require(!c.in.empty(), "no inputs");
    const int ax = c.axis("axis", c.ndim(0));
    for (size_t i = 1; i < c.in.size(); ++i) {
      const TensorSpec &x = c.in[i], &first = c.in[0];
      c.require(x.shape.size() == first.shape.size() && x.dtype == first.dtype && x.device == first.device,
                "inputs differ in dimensions, dtype or device");
      for (size_t d = 0; d < first.shape.size(); ++d)
        c.require(int(d) == ax || x.shape[d] == first.shape[d], "inputs differ off the axis");
    }
  }, .gpu = true});
  register_primitive("split", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<Split>(int(attr_int(n, a, "axis")), attr_ints(n, a, "lengths")));
  }, .inputs = {1}, .check = [](const NodeCheck& c) {
    const int ax = c.axis("axis", c.ndim(0));
    int64_t total = 0;
    for (int64_t l : attr_ints(c.op, c.attrs, "lengths")) {
      c.require(l >= 0 && l <= c.in[0].shape[size_t(ax)], "a negative or too long section");
      total += l;
    }
    c.require(total == c.in[0].shape[size_t(ax)], "sections that do not tile the axis");
  }, .gpu = true});
  return true;
}();
}  // namespace

}  // namespace pcp
