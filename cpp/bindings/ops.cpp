// Module-level op functions: argument conversion to the C++ ops, nothing else.
#include "convert.h"
#include "pcp/core/error.h"

namespace pcp::bindings {

void bind_ops(py::module_& m) {
  using py::arg;
  auto T = [](py::handle h, const char* op) { return to_tensor(h, op); };

  // Creation.
  auto dt_or = [](py::handle dt, DType d) { return dt.is_none() ? d : to_dtype(dt); };
  auto dev_or = [](py::handle dev, Device d) { return dev.is_none() ? d : parse_device(py::str(dev)); };
  // Creation functions without a device= argument build on the CPU and move (one copy).
  auto placed = [=](Tensor t, py::handle dev) { return to_device(t, dev_or(dev, default_device())); };
  m.def("zeros", [=](py::object shape, py::object dtype, py::object device) {
    return zeros(to_shape(shape), dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("ones", [=](py::object shape, py::object dtype, py::object device) {
    return ones(to_shape(shape), dt_or(dtype, kDefaultFloat), dev_or(device, default_device()));
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("full", [=](py::object shape, py::object value, py::object dtype, py::object device) {
    Tensor v = to_tensor(value, "full");
    DType d = dtype.is_none() ? (v.weak() ? (is_floating(v.dtype()) ? kDefaultFloat : v.dtype()) : v.dtype()) : to_dtype(dtype);
    const Device dev = dev_or(device, default_device());
    if (dev.is_gpu() && v.ndim() == 0) return full(to_shape(shape), v.item_double(), d, dev);
    Tensor out = full(to_shape(shape), 0.0, d);
    index_assign(out, {}, v);
    return to_device(out, dev);
  }, arg("shape"), arg("fill_value"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("zeros_like", [=](const Tensor& x, py::object dtype, py::object device) {
    return zeros(x.shape(), dt_or(dtype, x.dtype()), dev_or(device, x.device()));
  }, arg("x"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("ones_like", [=](const Tensor& x, py::object dtype, py::object device) {
    return ones(x.shape(), dt_or(dtype, x.dtype()), dev_or(device, x.device()));
  }, arg("x"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("arange", [=](py::object start, py::object stop, py::object step, py::object dtype, py::object device) {
    // arange(stop) or arange(start, stop[, step]); all-int arguments give int64, like NumPy.
    bool any_float = py::isinstance<py::float_>(start) || py::isinstance<py::float_>(stop) ||
                     py::isinstance<py::float_>(step);
    double lo = stop.is_none() ? 0.0 : start.cast<double>();
    double hi = stop.is_none() ? start.cast<double>() : stop.cast<double>();
    DType d = dtype.is_none() ? (any_float ? kDefaultFloat : kDefaultInt) : to_dtype(dtype);
    return placed(arange(lo, hi, step.cast<double>(), d), device);
  }, arg("start"), arg("stop") = py::none(), arg("step") = 1, arg("dtype") = py::none(), arg("device") = py::none());
  m.def("eye", [=](int64_t n, std::optional<int64_t> mm, int64_t k, py::object dtype, py::object device) {
    return placed(eye(n, mm.value_or(n), k, dt_or(dtype, kDefaultFloat)), device);
  }, arg("n"), arg("m") = py::none(), arg("k") = 0, arg("dtype") = py::none(), arg("device") = py::none());
  m.def("rand", [=](py::object shape, py::object dtype, py::object device) {
    return placed(rand(to_shape(shape), dt_or(dtype, kDefaultFloat)), device);
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none(),
     "Uniform [0, 1) from the seeded counter-based generator");
  m.def("randn", [=](py::object shape, py::object dtype, py::object device) {
    return placed(randn(to_shape(shape), dt_or(dtype, kDefaultFloat)), device);
  }, arg("shape"), arg("dtype") = py::none(), arg("device") = py::none(),
     "Standard normal from the seeded counter-based generator");
  m.def("randint", [=](int64_t low, int64_t high, py::object shape, py::object dtype, py::object device) {
    return placed(randint(low, high, to_shape(shape), dt_or(dtype, kDefaultInt)), device);
  }, arg("low"), arg("high"), arg("shape"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("asarray", [=](py::handle data, py::object dtype, py::object device) {
    Tensor t = to_tensor(data, "tensor");
    if (t.weak()) {  // a Python scalar: its own dtype (float -> float32)
      Tensor s = astype(t, is_floating(t.dtype()) ? kDefaultFloat : t.dtype());
      t = s.is_same(t) ? copy(t) : s;
      t.impl()->weak = false;
    }
    t = dtype.is_none() ? t : astype(t, to_dtype(dtype));
    return device.is_none() ? t : to_device(t, parse_device(py::str(device)));
  }, arg("data"), arg("dtype") = py::none(), arg("device") = py::none());
  m.def("to_device", [](const Tensor& x, const std::string& device) { return to_device(x, parse_device(device)); },
        arg("x"), arg("device"), "A copy of x on device ('cpu', 'gpu', 'vulkan:0', ...); x itself when already there");
  m.def("copy", &copy, arg("x"));

  // Elementwise.
#define PCP_UNARY(name) m.def(#name, [=](py::handle x) { return name(T(x, #name)); }, arg("x"))
  PCP_UNARY(neg); PCP_UNARY(abs); PCP_UNARY(exp); PCP_UNARY(log); PCP_UNARY(sqrt); PCP_UNARY(rsqrt);
  PCP_UNARY(sin); PCP_UNARY(cos); PCP_UNARY(tanh); PCP_UNARY(sigmoid); PCP_UNARY(relu); PCP_UNARY(silu);
  PCP_UNARY(square); PCP_UNARY(sign); PCP_UNARY(erf); PCP_UNARY(logical_not);
#undef PCP_UNARY
  m.def("gelu", [=](py::handle x, const std::string& approximate) {
    if (approximate != "none" && approximate != "tanh")
      fail<ValueError>("gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
    return gelu(T(x, "gelu"), approximate == "tanh");
  }, arg("x"), arg("approximate") = "none");
#define PCP_BINARY(name) \
  m.def(#name, [=](py::handle a, py::handle b) { return name(T(a, #name), T(b, #name)); }, arg("a"), arg("b"))
  PCP_BINARY(add); PCP_BINARY(sub); PCP_BINARY(mul); PCP_BINARY(div); PCP_BINARY(pow); PCP_BINARY(maximum);
  PCP_BINARY(minimum); PCP_BINARY(eq); PCP_BINARY(ne); PCP_BINARY(lt); PCP_BINARY(le); PCP_BINARY(gt);
  PCP_BINARY(ge); PCP_BINARY(logical_and); PCP_BINARY(logical_or); PCP_BINARY(matmul);
#undef PCP_BINARY
  m.def("where", [=](py::handle c, py::handle a, py::handle b) {
    return where(T(c, "where"), T(a, "where"), T(b, "where"));
  }, arg("condition"), arg("x"), arg("y"));
  m.def("clip", [=](py::handle x, py::handle lo, py::handle hi) {
    return clip(T(x, "clip"), to_tensor_or_none(lo, "clip"), to_tensor_or_none(hi, "clip"));
  }, arg("x"), arg("min") = py::none(), arg("max") = py::none());
  m.def("astype", [=](py::handle x, py::object dtype) { return astype(T(x, "astype"), to_dtype(dtype)); },
        arg("x"), arg("dtype"));

  // Reductions.
#define PCP_REDUCE(name)                                                                          \
  m.def(#name, [=](py::handle x, py::object axis, bool keepdims) {                                \
    return name(T(x, #name), to_axes(axis), keepdims);                                            \
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false)
  PCP_REDUCE(sum); PCP_REDUCE(mean); PCP_REDUCE(max); PCP_REDUCE(min); PCP_REDUCE(logsumexp);
#undef PCP_REDUCE
  m.def("var", [=](py::handle x, py::object axis, int64_t ddof, bool keepdims) {
    return var(T(x, "var"), to_axes(axis), ddof, keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("ddof") = 0, arg("keepdims") = false);
  m.def("argmax", [=](py::handle x, std::optional<int64_t> axis, bool keepdims) {
    return argmax(T(x, "argmax"), axis, keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false);
  m.def("argmin", [=](py::handle x, std::optional<int64_t> axis, bool keepdims) {
    return argmin(T(x, "argmin"), axis, keepdims);
  }, arg("x"), arg("axis") = py::none(), arg("keepdims") = false);
  m.def("sum_to", [](const Tensor& x, py::object shape) { return sum_to(x, to_shape(shape)); }, arg("x"), arg("shape"));

  // Shape.
  m.def("reshape", [](const Tensor& x, py::object shape) { return reshape(x, to_shape(shape)); }, arg("x"), arg("shape"));
  m.def("flatten", &flatten, arg("x"), arg("start_axis") = 0, arg("end_axis") = -1);
  m.def("transpose", [](const Tensor& x, py::object axes) {
    return axes.is_none() ? transpose(x) : transpose(x, to_shape(axes));
  }, arg("x"), arg("axes") = py::none());
  m.def("permute", [](const Tensor& x, py::object axes) { return permute(x, to_shape(axes)); }, arg("x"), arg("axes"));
  m.def("swapaxes", &swapaxes, arg("x"), arg("axis1"), arg("axis2"));
  m.def("squeeze", [](const Tensor& x, py::object axis) { return squeeze(x, to_axes(axis)); }, arg("x"),
        arg("axis") = py::none());
  m.def("unsqueeze", &unsqueeze, arg("x"), arg("axis"));
  m.def("expand_dims", &unsqueeze, arg("x"), arg("axis"));
  m.def("broadcast_to", [](const Tensor& x, py::object shape) { return broadcast_to(x, to_shape(shape)); }, arg("x"),
        arg("shape"));
  m.def("contiguous", &contiguous, arg("x"));
  m.def("concatenate", [=](py::sequence xs, int64_t axis) {
    std::vector<Tensor> ts;
    for (py::handle h : xs) ts.push_back(T(h, "concatenate"));
    return concatenate(ts, axis);
  }, arg("tensors"), arg("axis") = 0);
  m.def("stack", [=](py::sequence xs, int64_t axis) {
    std::vector<Tensor> ts;
    for (py::handle h : xs) ts.push_back(T(h, "stack"));
    return stack(ts, axis);
  }, arg("tensors"), arg("axis") = 0);
  m.def("split", [](const Tensor& x, py::object sections, int64_t axis) {
    if (py::isinstance<py::int_>(sections)) return split(x, sections.cast<int64_t>(), axis);
    return split_at(x, to_shape(sections), axis);
  }, arg("x"), arg("indices_or_sections"), arg("axis") = 0);
  m.def("tril", &tril, arg("x"), arg("k") = 0);
  m.def("triu", &triu, arg("x"), arg("k") = 0);

  // Indexing.
  m.def("take", [=](const Tensor& x, py::handle idx, std::optional<int64_t> axis) {
    return take(x, T(idx, "take"), axis);
  }, arg("x"), arg("indices"), arg("axis") = py::none());
  m.def("embedding", [=](const Tensor& w, py::handle idx) { return embedding(w, T(idx, "embedding")); },
        arg("weight"), arg("indices"));
  m.def("one_hot", [=](py::handle idx, int64_t n, py::object dtype) {
    return one_hot(T(idx, "one_hot"), n, dtype.is_none() ? kDefaultFloat : to_dtype(dtype));
  }, arg("indices"), arg("num_classes"), arg("dtype") = py::none());

  // Neural network.
  m.def("softmax", &softmax, arg("x"), arg("axis") = -1);
  m.def("log_softmax", &log_softmax, arg("x"), arg("axis") = -1);
  m.def("layer_norm", [](const Tensor& x, py::object w, py::object b, double eps) {
    return layer_norm(x, to_tensor_or_none(w, "layer_norm"), to_tensor_or_none(b, "layer_norm"), eps);
  }, arg("x"), arg("weight") = py::none(), arg("bias") = py::none(), arg("eps") = 1e-5);
  m.def("cross_entropy", [=](const Tensor& logits, py::handle targets, int64_t ignore_index, const std::string& red) {
    return cross_entropy(logits, T(targets, "cross_entropy"), ignore_index, reduction_from_name(red));
  }, arg("logits"), arg("targets"), arg("ignore_index") = -100, arg("reduction") = "mean",
     "Cross-entropy of logits (..., C) against integer targets (...), classes on the last axis");
  m.def("dropout", &dropout, arg("x"), arg("p") = 0.5, arg("training") = true);
  m.def("scaled_dot_product_attention", &scaled_dot_product_attention, arg("q"), arg("k"), arg("v"),
        arg("causal") = false, arg("scale") = py::none(), arg("dropout_p") = 0.0,
        "softmax(scale q k^T [causal]) v over (..., T, D); dropout_p drops attention weights (pass 0 when evaluating)");
  m.def("qkv_attention", &qkv_attention, arg("qkv"), arg("num_heads"), arg("causal") = false,
        arg("scale") = py::none(), arg("dropout_p") = 0.0,
        "Multi-head self-attention on a packed (B, T, 3C) projection (q, k, v side by side): (B, T, C)");
}

}  // namespace pcp::bindings
