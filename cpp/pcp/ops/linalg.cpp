// matmul: 1-D, 2-D and batched with broadcast batch dimensions (host code in backend/cpu/linalg.cpp).
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"
#include "pcp/ops/autocast.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// The product's epilogue, a plan's form (plan/product_epilogues.cpp): "gelu_tanh" outputs
// (gelu(a @ b), a @ b); "dgelu_tanh" takes a third input h (the GELU's input) and outputs
// gelu'(h) (a @ b). cuBLASLt runs it in one call; the CPU's float32 GEMM applies it to each block
// of the product as it finishes it (the same bits as apart); elsewhere the product and the
// elementwise op run apart, as the unfused plan ran them.
enum class Epilogue { None, GeluTanh, DGeluTanh };
const char* epilogue_name(Epilogue e) { return e == Epilogue::GeluTanh ? "gelu_tanh" : "dgelu_tanh"; }

// Inputs are at least 2-D with matching inner dims; batch dims broadcast.
class Matmul : public Primitive {
 public:
  explicit Matmul(Shape batch, double alpha = 1.0, Epilogue epilogue = Epilogue::None)
      : batch_(std::move(batch)), alpha_(alpha), epilogue_(epilogue) {}
  const char* name() const override { return "matmul"; }
  Attributes attributes() const override {
    Attributes a{{"batch", batch_}};
    if (alpha_ != 1.0) a["alpha"] = alpha_;
    if (epilogue_ != Epilogue::None) a["epilogue"] = std::string(epilogue_name(epilogue_));
    return a;
  }

  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    const Shape &a = in[0].shape, &b = in[1].shape;
    Shape s = batch_;
    s.push_back(a[a.size() - 2]);
    s.push_back(b.back());
    const TensorSpec out{s, in[0].dtype, in[0].device};
    if (epilogue_ == Epilogue::GeluTanh) return {out, out};
    return {out};
  }

  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor &a = in[0], &b = in[1];
    if (epilogue_ != Epilogue::None) return with_epilogue(a, b, specs[0], epilogue_ == Epilogue::DGeluTanh ? in[2] : Tensor());
    return {product(a, b, specs[0])};
  }


  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>& needs) override {
    if (epilogue_ != Epilogue::None)  // plans hold these forms after their gradients are traced
      fail<NotImplementedError>("matmul: no gradient of a product with the ", epilogue_name(epilogue_), " epilogue");
    const Tensor& g = gs[0];
    // A gradient comes out in its input's layout: for a transposed view such as Linear's W.T,
    // (g^T a)^T instead of a^T g, so that the gradient the transpose hands back to W is
    // contiguous and .grad needs no copy.
    Tensor ga, gb;
    const auto mm = [&](const Tensor& x, const Tensor& y) { return alpha_ == 1.0 ? matmul(x, y) : matmul(x, y, alpha_); };
    if (needs[0])
      ga = column_major(in[0]) ? swapaxes(mm(in[1], swapaxes(g, -1, -2)), -1, -2) : mm(g, swapaxes(in[1], -1, -2));
    if (needs[1])
      gb = column_major(in[1]) ? swapaxes(mm(swapaxes(g, -1, -2), in[0]), -1, -2) : mm(swapaxes(in[0], -1, -2), g);
    return {ga, gb};
  }

  Tensor product(const Tensor& a, const Tensor& b, const TensorSpec& spec) const {
    if (a.shape().back() == 0) return zeros(spec.shape, spec.dtype, spec.device);  // an empty sum
    Tensor out = empty(spec);
    if (out.numel() == 0) return out;
    backend::matmul(a, b, out, batch_, alpha_);
    return out;
  }

  // gelu_tanh: {gelu(a @ b), a @ b}; dgelu_tanh: {gelu'(h) (a @ b)}.
  std::vector<Tensor> with_epilogue(const Tensor& a, const Tensor& b, const TensorSpec& spec, const Tensor& h) const {
    const bool gelu = epilogue_ == Epilogue::GeluTanh;
    Tensor out = empty(spec), aux = gelu ? empty(spec) : h;
    const bool gpu = spec.device.is_gpu();
    const bool fused =
        out.numel() > 0 && a.shape().back() > 0 &&
        (gpu ? gpu::matmul_epilogue(gelu ? gpu::MatmulEpilogue::GeluTanh : gpu::MatmulEpilogue::DGeluTanh, a, b, out,
                                    aux, float(alpha_))
             : alpha_ == 1.0 && cpu::matmul_epilogue(gelu ? cpu::GemmEpilogue::Kind::GeluTanh
                                                          : cpu::GemmEpilogue::Kind::DGeluTanh,
                                                     a, b, out, aux));
    if (fused) return gelu ? std::vector<Tensor>{out, aux} : std::vector<Tensor>{out};
    const Tensor p = product(a, b, spec);
    if (gelu) {
      backend::unary(UnaryOp::GeluTanh, p, out);
      return {out, p};
    }
    backend::binary(BinaryOp::GeluTanhGrad, h, p, out);
    return {out};
  }

  static bool column_major(const Tensor& t) {
    const size_t n = t.ndim();
    return t.shape()[n - 1] > 1 && t.shape()[n - 2] > 1 && t.strides()[n - 2] == 1 && t.strides()[n - 1] != 1;
  }

 private:
  Shape batch_;
  double alpha_;
  Epilogue epilogue_;
};

}  // namespace

namespace {
Tensor matmul_scaled(const Tensor& a_in, const Tensor& b_in, double alpha) {
  if (!a_in.defined() || !b_in.defined()) fail<ValueError>("matmul: got an undefined tensor");
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    fail<ValueError>("matmul: inputs must have at least one dimension, got shapes ", shape_str(a_in.shape()),
                     " and ", shape_str(b_in.shape()));
  DType dt = result_type(a_in.dtype(), false, b_in.dtype(), false);
  if (dt == DType::Bool)
    fail<TypeError>("matmul: expected numeric tensors, got ", dtype_name(a_in.dtype()), " and ",
                    dtype_name(b_in.dtype()));
  // Under autocast a floating product's type is the scope's: each operand is cast once, to it.
  if (const std::optional<DType> low = autocast_dtype(); low && is_floating(dt) && dt != DType::Float64) dt = *low;
  Tensor a = a_in.ndim() == 1 ? unsqueeze(a_in, 0) : a_in;
  Tensor b = b_in.ndim() == 1 ? unsqueeze(b_in, 1) : b_in;
  int64_t ka = a.shape()[a.ndim() - 1], kb = b.shape()[b.ndim() - 2];
  if (ka != kb)
    fail<ValueError>("matmul: shapes ", shape_str(a_in.shape()), " and ", shape_str(b_in.shape()),
                     " do not align: ", ka, " != ", kb);
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes(ba, bb, "matmul");
  } catch (const ValueError&) {
    fail<ValueError>("matmul: batch dimensions of shapes ", shape_str(a_in.shape()), " and ",
                     shape_str(b_in.shape()), " cannot be broadcast together (", shape_str(ba), " vs ",
                     shape_str(bb), ")");
  }
  Tensor out;
  if (b.ndim() == 2 && a.ndim() > 2) {
    // (..., M, K) @ (K, N): one GEMM with the batch folded into M (and, through the reshape's
    // VJP, one GEMM for each gradient too) instead of a GEMM per batch element.
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(b.shape()[1]);
    Tensor flat = reshape(autocast_cast(a, dt), {numel(Shape(a.shape().begin(), a.shape().end() - 1)), ka});
    out = reshape(pcp::apply<Matmul>({flat, autocast_cast(b, dt)}, Shape{}, alpha), out_shape);
  } else {
    out = pcp::apply<Matmul>({autocast_cast(a, dt), autocast_cast(b, dt)}, batch, alpha);
  }
  if (a_in.ndim() == 1) out = squeeze(out, std::vector<int64_t>{-2});
  if (b_in.ndim() == 1) out = squeeze(out, std::vector<int64_t>{-1});
  return out;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_scaled(a, b, 1.0); }

Tensor matmul(const Tensor& a, const Tensor& b, double alpha) {
  if (a.defined() && b.defined() && (!is_floating(a.dtype()) || !is_floating(b.dtype())))
    fail<TypeError>("matmul: a scaled product takes floating tensors, got ", dtype_name(a.dtype()), " and ",
                    dtype_name(b.dtype()));
  return matmul_scaled(a, b, alpha);
}

namespace {
// Plan files make it again by name (ops/primitive.h).
void check_matmul(const NodeCheck& c) {
  c.require(c.ndim(0) >= 2 && c.ndim(1) >= 2, "inputs must be at least 2-D");
  const Shape &x = c.in[0].shape, &y = c.in[1].shape;
  c.require(x.back() == y[y.size() - 2], "inner dimensions differ");
  const Shape bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
  c.require(broadcast_shapes(bx, by, "plan") == c.dims("batch"), "batch is not the inputs' broadcast");
  // The epilogue forms: 2-D operands; dgelu_tanh's third input is the product's shape.
  const std::string epilogue = c.attrs.count("epilogue") ? attr_str(c.op, c.attrs, "epilogue") : "";
  c.require(epilogue.empty() || (c.ndim(0) == 2 && c.ndim(1) == 2), "an epilogue on a batched product");
  c.require((epilogue == "dgelu_tanh") == (c.in.size() == 3),
            "a third input without the dgelu_tanh epilogue, or the other way");
  if (c.in.size() == 3)
    c.require(c.in[2].shape == Shape{x[0], y[1]} && c.in[2].dtype == c.in[0].dtype,
              "the GELU's input is not the product's shape and dtype");
}

const bool registered = register_primitive("matmul", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
  Epilogue e = Epilogue::None;
  if (a.count("epilogue")) {
    const std::string name = attr_str(n, a, "epilogue");
    if (name != "gelu_tanh" && name != "dgelu_tanh")
      fail<ValueError>("plan: matmul has an unknown epilogue '", name, "' (gelu_tanh or dgelu_tanh)");
    e = name == "gelu_tanh" ? Epilogue::GeluTanh : Epilogue::DGeluTanh;
  }
  return std::shared_ptr<Primitive>(
      std::make_shared<Matmul>(attr_ints(n, a, "batch"), a.count("alpha") ? attr_double(n, a, "alpha") : 1.0, e));
}, .inputs = {2, 3}, .check = check_matmul, .gpu = true, .autocast = CastPolicy::Low});
}  // namespace

}  // namespace pcp
