// Module-level op functions: argument conversion to the C++ ops, nothing else.
#include "convert.h"
#include "named.h"
#include "pcp/core/error.h"

namespace pcp::bindings {

namespace {

// Binds f as the module function pcp.<name>(x, ...) and as the Tensor method x.<name>(...): one
// definition for both, the method's arguments being the function's after the first.
template <class F, class... Extra>
void def_op(py::module_& m, py::class_<Tensor>& cls, const char* name, F f, const py::arg& first,
            const Extra&... rest) {
  def(m, name, f, first, rest...);
  cls.def(name, named(name, std::move(f)), rest..., py::doc(op_doc(name) ? op_doc(name) : ""));
}

// A shape given as separate ints or as one sequence: x.reshape(2, 3) or x.reshape((2, 3)).
py::object shape_args(const py::args& args) {
  if (args.size() == 1 && (py::isinstance<py::tuple>(args[0]) || py::isinstance<py::list>(args[0])))
    return args[0];
  return args;
}

}  // namespace

void bind_ops(py::module_& m, py::class_<Tensor>& cls) {
  using py::arg;
  auto T = [](py::handle h, const char* op) { return to_tensor(h, op); };

  // Creation.
  auto dt_or = [](py::handle dt, DType d) { return dt.is_none() ? d : to_dtype(dt); };
  auto dev_or = [](py::handle dev, Device d) { return dev.is_none() ? d : parse_device(py::str(dev)); };
  def(m, "zeros", [=](py::object shape, py::object dtype, py::object device) {
    return zeros(to_shape(shape), dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "ones", [=](py::object shape, py::object dtype, py::object device) {
    return ones(to_shape(shape), dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "full", [=](py::object shape, py::object value, py::object dtype, py::object device) {
    return full(to_shape(shape), to_tensor(value, "full"), to_dtype_opt(dtype), dev_or(device, default_device()));
  }, arg("shape"), arg("fill_value"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "zeros_like", [=](const Tensor& x, py::object dtype, py::object device) {
    return zeros(x.shape(), dt_or(dtype, x.dtype()), dev_or(device, x.device()));
  }, arg("x"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "ones_like", [=](const Tensor& x, py::object dtype, py::object device) {
    return ones(x.shape(), dt_or(dtype, x.dtype()), dev_or(device, x.device()));
  }, arg("x"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "arange", [=](py::object start, py::object stop, py::object step, py::object dtype, py::object device) {
    // arange(stop) or arange(start, stop[, step]); all-int arguments give int64 and are exact, like NumPy.
    if (stop.is_none()) std::swap(start, stop), start = py::int_(0);
    for (py::handle v : {start, stop, step})
      if (!is_int_like(v) && !py::isinstance<py::float_>(v))
        fail<TypeError>("arange: start, stop and step must be numbers, got ",
                        std::string(py::str(py::type::of(v).attr("__name__"))));
    const bool ints = is_int_like(start) && is_int_like(stop) && is_int_like(step);
    const DType d = dtype.is_none() ? (ints ? kDefaultInt : kDefaultFloat) : to_dtype(dtype);
    if (ints && !is_floating(d))
      return arange_int(int_of(start, "start"), int_of(stop, "stop"), int_of(step, "step"), d, dev_or(device, default_device()));
    return arange(start.cast<double>(), stop.cast<double>(), step.cast<double>(), d, dev_or(device, default_device()));
  }, arg("start"), arg("stop") = py::none(), arg("step") = 1, arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "eye", [=](Int n, std::optional<Int> mm, Int k, py::object dtype, py::object device) {
    return eye(n, mm ? int64_t(*mm) : int64_t(n), k, dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("n"), arg("m") = py::none(), arg("k") = 0, arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "rand", [=](py::object shape, py::object dtype, py::object device) {
    return rand(to_shape(shape), dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "randn", [=](py::object shape, py::object dtype, py::object device) {
    return randn(to_shape(shape), dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "randint", [=](Int low, Int high, py::object shape, py::object dtype, py::object device) {
    return randint(low, high, to_shape(shape), dt_or(dtype, kDefaultInt), dev_or(device, default_device()));
  }, arg("low"), arg("high"), arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  // pcp.asarray, and pcp.tensor's core (_tensor: always a new tensor, errors naming "tensor").
  auto asarray_fn = [=](py::handle data, py::object dtype, py::object device, bool new_tensor) {
    Tensor t;
    if (!dtype.is_none()) {
      t = to_tensor_as(data, to_dtype(dtype), "asarray");
    } else if (py::isinstance(data, py::module_::import("numpy").attr("generic"))) {
      t = from_numpy_copy(py::module_::import("numpy").attr("asarray")(data), std::nullopt, "asarray");  // keeps its dtype
    } else {
      t = strong(to_tensor(data, "asarray"));
    }
    if (!device.is_none()) {
      const Device d = parse_device(py::str(device));
      py::gil_scoped_release release;  // an upload: other threads run while it copies
      t = to_device(t, d);
    }
    if (new_tensor && py::isinstance<Tensor>(data) && t.storage() == data.cast<Tensor>().storage()) t = copy(t.detach());
    return t;
  };
  def(m, "asarray", [=](py::handle data, py::object dtype, py::object device) {
    return asarray_fn(data, dtype, device, false);
  }, arg("data"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("_tensor", named("tensor", [=](py::handle data, py::object dtype, py::object device) {
    return asarray_fn(data, dtype, device, true);
  }), arg("data"), arg("dtype") = py::none(), arg("device") = py::none());
  def(m, "to_device", [](const Tensor& x, const Str& device) { return to_device(x, parse_device(device)); },
        arg("x"), arg("device"));
  def_op(m, cls, "copy", [](const Tensor& x) { return copy(x); }, arg("x"));
  cls.def("clone", named("clone", [](const Tensor& x) { return copy(x); }), py::doc(tensor_doc("clone")));

  // Elementwise.
#define PCP_UNARY(name) def_op(m, cls, #name, [=](py::handle x) { return name(T(x, #name)); }, arg("x"))
  PCP_UNARY(neg); PCP_UNARY(abs); PCP_UNARY(exp); PCP_UNARY(log); PCP_UNARY(sqrt); PCP_UNARY(rsqrt);
  PCP_UNARY(sin); PCP_UNARY(cos); PCP_UNARY(tanh); PCP_UNARY(sigmoid); PCP_UNARY(relu); PCP_UNARY(silu);
  PCP_UNARY(square); PCP_UNARY(sign); PCP_UNARY(erf);
  PCP_UNARY(floor); PCP_UNARY(ceil); PCP_UNARY(trunc); PCP_UNARY(round); PCP_UNARY(tan); PCP_UNARY(asin);
  PCP_UNARY(acos); PCP_UNARY(atan); PCP_UNARY(sinh); PCP_UNARY(cosh); PCP_UNARY(asinh); PCP_UNARY(acosh);
  PCP_UNARY(atanh); PCP_UNARY(expm1); PCP_UNARY(log1p); PCP_UNARY(log2); PCP_UNARY(log10);
#undef PCP_UNARY
  def(m, "logical_not", [=](py::handle x) { return logical_not(T(x, "logical_not")); }, arg("x"));
  def(m, "bitwise_not", [=](py::handle x) { return bitwise_not(T(x, "bitwise_not")); }, arg("x"));
  def_op(m, cls, "gelu", [=](py::handle x, const std::string& approximate) {
    if (approximate != "none" && approximate != "tanh")
      fail<ValueError>("gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
    return gelu(T(x, "gelu"), approximate == "tanh");
  }, arg("x"), arg("approximate") = "none");
#define PCP_BINARY(name) \
  def(m, #name, [=](py::handle a, py::handle b) { return name(T(a, #name), T(b, #name)); }, arg("a"), arg("b"))
  PCP_BINARY(add); PCP_BINARY(sub); PCP_BINARY(mul); PCP_BINARY(div); PCP_BINARY(eq); PCP_BINARY(ne);
  PCP_BINARY(lt); PCP_BINARY(le); PCP_BINARY(gt); PCP_BINARY(ge); PCP_BINARY(logical_and); PCP_BINARY(logical_or);
  PCP_BINARY(logical_xor); PCP_BINARY(bitwise_and); PCP_BINARY(bitwise_or); PCP_BINARY(bitwise_xor);
  PCP_BINARY(bitwise_left_shift); PCP_BINARY(bitwise_right_shift); PCP_BINARY(atan2); PCP_BINARY(hypot);
  PCP_BINARY(copysign); PCP_BINARY(nextafter); PCP_BINARY(remainder); PCP_BINARY(floor_divide);
#undef PCP_BINARY
#define PCP_BINARY_METHOD(name) \
  def_op(m, cls, #name, [=](py::handle a, py::handle b) { return name(T(a, #name), T(b, #name)); }, arg("a"), arg("b"))
  PCP_BINARY_METHOD(pow); PCP_BINARY_METHOD(maximum); PCP_BINARY_METHOD(minimum); PCP_BINARY_METHOD(matmul);
#undef PCP_BINARY_METHOD
  def(m, "where", [=](py::handle c, py::handle a, py::handle b) {
    return where(T(c, "where"), T(a, "where"), T(b, "where"));
  }, arg("condition"), arg("x"), arg("y"));
  def_op(m, cls, "clip", [=](py::handle x, py::handle lo, py::handle hi) {
    return clip(T(x, "clip"), to_tensor_or_none(lo, "clip"), to_tensor_or_none(hi, "clip"));
  }, arg("x"), arg("min") = py::none(), arg("max") = py::none());
  def(m, "astype", [=](py::handle x, py::object dtype) { return astype(T(x, "astype"), to_dtype(dtype)); },
        arg("x"), arg("dtype"));

  // Reductions.
#define PCP_REDUCE(name)                                                                          \
  def_op(m, cls, #name, [=](py::handle x, py::object axis, bool keepdims) {                        \
    return name(T(x, #name), to_axes(axis), keepdims);                                            \
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false)
  PCP_REDUCE(sum); PCP_REDUCE(mean); PCP_REDUCE(max); PCP_REDUCE(min); PCP_REDUCE(logsumexp); PCP_REDUCE(any);
  PCP_REDUCE(all);
#undef PCP_REDUCE
  def_op(m, cls, "var", [=](py::handle x, py::object axis, double ddof, bool keepdims) {
    return var(T(x, "var"), to_axes(axis), ddof, keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("ddof") = 0, arg("keepdims") = false);
  def_op(m, cls, "argmax", [=](py::handle x, std::optional<Int> axis, bool keepdims) {
    return argmax(T(x, "argmax"), opt(axis), keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false);
  def_op(m, cls, "argmin", [=](py::handle x, std::optional<Int> axis, bool keepdims) {
    return argmin(T(x, "argmin"), opt(axis), keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false);
  def(m, "sum_to", [](const Tensor& x, py::object shape) { return sum_to(x, to_shape(shape)); }, arg("x"), arg("shape"));
  // Sorting, scans and searches.
  def_op(m, cls, "argsort", [=](py::handle x, Int axis, bool descending, bool stable) {
    (void)stable;  // always stable
    return argsort(T(x, "argsort"), axis, descending);
  }, arg("x"), arg("axis") = -1, arg("descending") = false, arg("stable") = true);
  def_op(m, cls, "sort", [=](py::handle x, Int axis, bool descending, bool stable) {
    (void)stable;
    return sort(T(x, "sort"), axis, descending);
  }, arg("x"), arg("axis") = -1, arg("descending") = false, arg("stable") = true);
  def(m, "take_along_axis", [=](py::handle x, py::handle indices, Int axis) {
    return take_along_axis(T(x, "take_along_axis"), T(indices, "take_along_axis"), axis);
  }, arg("x"), arg("indices"), arg("axis"));
  def_op(m, cls, "cumsum", [=](py::handle x, std::optional<Int> axis) {
    return cumsum(T(x, "cumsum"), opt(axis));
  }, arg("x"), arg("axis") = py::none());
  def_op(m, cls, "cumprod", [=](py::handle x, std::optional<Int> axis) {
    return cumprod(T(x, "cumprod"), opt(axis));
  }, arg("x"), arg("axis") = py::none());
  def_op(m, cls, "prod", [=](py::handle x, py::object axis, bool keepdims) {
    return prod(T(x, "prod"), to_axes(axis), keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false);
  def(m, "searchsorted", [=](py::handle sorted, py::handle values, const std::string& side) {
    if (side != "left" && side != "right")
      fail<ValueError>("searchsorted: side must be 'left' or 'right', got '", side, "'");
    return searchsorted(T(sorted, "searchsorted"), T(values, "searchsorted"), side == "right");
  }, arg("sorted"), arg("values"), arg("side") = "left");
  def(m, "unique", [=](py::handle x, bool return_index, bool return_inverse, bool return_counts) -> py::object {
    std::vector<Tensor> parts = unique_all(T(x, "unique"));
    if (!return_index && !return_inverse && !return_counts) return py::cast(parts[0]);
    py::list out;
    out.append(parts[0]);
    if (return_index) out.append(parts[1]);
    if (return_inverse) out.append(parts[2]);
    if (return_counts) out.append(parts[3]);
    return py::tuple(out);
  }, arg("x"), arg("return_index") = false, arg("return_inverse") = false, arg("return_counts") = false);

  // Shape.
  def(m, "reshape", [](const Tensor& x, py::object shape) { return reshape(x, to_shape(shape)); }, arg("x"), arg("shape"));
  for (const char* name : {"reshape", "view"})
    cls.def(name, named("reshape", [](const Tensor& x, py::args shape) { return reshape(x, to_shape(shape_args(shape))); }),
            py::doc(tensor_doc(name)));
  def_op(m, cls, "flatten", [](const Tensor& x, Int start, Int end) { return flatten(x, start, end); }, arg("x"), arg("start_axis") = 0, arg("end_axis") = -1);
  def(m, "transpose", [](const Tensor& x, py::object axes) {
    return axes.is_none() ? transpose(x) : transpose(x, to_shape(axes));
  }, arg("x"), arg("axes") = py::none());
  cls.def("transpose", named("transpose", [](const Tensor& x, py::args axes) {
    return axes.size() == 0 ? transpose(x) : transpose(x, to_shape(shape_args(axes)));
  }), py::doc(tensor_doc("transpose")));
  def(m, "permute", [](const Tensor& x, py::object axes) { return permute(x, to_shape(axes)); }, arg("x"), arg("axes"));
  cls.def("permute", named("permute", [](const Tensor& x, py::args axes) { return permute(x, to_shape(shape_args(axes))); }),
          py::doc(tensor_doc("permute")));
  def_op(m, cls, "swapaxes", [](const Tensor& x, Int a, Int b) { return swapaxes(x, a, b); }, arg("x"), arg("axis1"), arg("axis2"));
  def_op(m, cls, "squeeze", [](const Tensor& x, py::object axis) { return squeeze(x, to_axes(axis)); }, arg("x"),
        arg("axis") = py::none());
  def_op(m, cls, "unsqueeze", [](const Tensor& x, Int axis) { return unsqueeze(x, axis); }, arg("x"), arg("axis"));
  def(m, "expand_dims", [](const Tensor& x, Int axis) { return unsqueeze(x, axis); }, arg("x"), arg("axis"));
  def(m, "broadcast_to", [](const Tensor& x, py::object shape) { return broadcast_to(x, to_shape(shape)); }, arg("x"),
        arg("shape"));
  for (const char* name : {"broadcast_to", "expand"})
    cls.def(name, named("broadcast_to", [](const Tensor& x, py::args shape) {
      return broadcast_to(x, to_shape(shape_args(shape)));
    }), py::doc(tensor_doc(name)));
  def(m, "contiguous", &contiguous, arg("x"));
  def(m, "concatenate", [=](py::sequence xs, Int axis) {
    std::vector<Tensor> ts;
    for (py::handle h : xs) ts.push_back(T(h, "concatenate"));
    return concatenate(ts, axis);
  }, arg("tensors"), arg("axis") = 0);
  def(m, "stack", [=](py::sequence xs, Int axis) {
    std::vector<Tensor> ts;
    for (py::handle h : xs) ts.push_back(T(h, "stack"));
    return stack(ts, axis);
  }, arg("tensors"), arg("axis") = 0);
  def_op(m, cls, "split", [](const Tensor& x, py::object sections, Int axis) {
    if (is_int_like(sections)) return split(x, int_of(sections, "sections"), axis);
    if (!py::isinstance<py::sequence>(sections) || py::isinstance<py::str>(sections))
      fail<TypeError>("split: indices_or_sections must be an int or a sequence of ints");
    std::vector<int64_t> at;
    for (py::handle h : sections) {
      if (!is_int_like(h)) fail<TypeError>("split: split points must be ints");
      at.push_back(int_clamped(h));  // beyond the axis they clamp, as in NumPy
    }
    return split_at(x, at, axis);
  }, arg("x"), arg("indices_or_sections"), arg("axis") = 0);
  def_op(m, cls, "tril", [](const Tensor& x, Int k) { return tril(x, k.clamped()); }, arg("x"), arg("k") = 0);
  def_op(m, cls, "triu", [](const Tensor& x, Int k) { return triu(x, k.clamped()); }, arg("x"), arg("k") = 0);

  // Indexing.
  def_op(m, cls, "take", [=](const Tensor& x, py::handle idx, std::optional<Int> axis) {
    return take(x, T(idx, "take"), opt(axis));
  }, arg("x"), arg("indices"), arg("axis") = py::none());
  def(m, "embedding", [=](const Tensor& w, py::handle idx) { return embedding(w, T(idx, "embedding")); },
        arg("weight"), arg("indices"));
  def(m, "one_hot", [=](py::handle idx, Int n, py::object dtype) {
    return one_hot(T(idx, "one_hot"), n, dtype.is_none() ? kDefaultFloat : to_dtype(dtype));
  }, arg("indices"), arg("num_classes"), arg("dtype") = py::none());

  // Neural network.
  def_op(m, cls, "softmax", [](const Tensor& x, Int axis) { return softmax(x, axis); }, arg("x"), arg("axis") = -1);
  def_op(m, cls, "log_softmax", [](const Tensor& x, Int axis) { return log_softmax(x, axis); }, arg("x"), arg("axis") = -1);
  def(m, "layer_norm", [](const Tensor& x, py::object w, py::object b, double eps) {
    return layer_norm(x, to_tensor_or_none(w, "layer_norm"), to_tensor_or_none(b, "layer_norm"), eps);
  }, arg("x"), arg("weight") = py::none(), arg("bias") = py::none(), arg("eps") = 1e-5);
  def(m, "cross_entropy", [=](const Tensor& logits, py::handle targets, Int ignore_index, const std::string& red) {
    return cross_entropy(logits, T(targets, "cross_entropy"), ignore_index, reduction_from_name(red));
  }, arg("logits"), arg("targets"), arg("ignore_index") = -100, arg("reduction") = "mean");
  def(m, "dropout", &dropout, arg("x"), arg("p") = 0.5, arg("training") = true);
  def(m, "scaled_dot_product_attention", &scaled_dot_product_attention, arg("q"), arg("k"), arg("v"),
        arg("causal") = false, arg("scale") = py::none(), arg("dropout_p") = 0.0);
  def(m, "qkv_attention", [](const Tensor& qkv, Int heads, bool causal, std::optional<double> scale, double dropout_p) {
    return qkv_attention(qkv, heads, causal, scale, dropout_p);
  }, arg("qkv"), arg("num_heads"), arg("causal") = false,
        arg("scale") = py::none(), arg("dropout_p") = 0.0,
        "Multi-head self-attention on a packed (B, T, 3C) projection (q, k, v side by side): (B, T, C)");
}

}  // namespace pcp::bindings
