// Elementwise ops: unary math, binary arithmetic and comparisons, where, clip, casts.
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"
#include "pcp/ops/formula.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/fused.h"
#include "pcp/ops/primitive.h"

namespace pcp {

const char* unary_name(UnaryOp op) {
  static const char* names[] = {"neg",  "abs",     "exp",  "log",       "sqrt", "rsqrt",  "sin",
                                "cos",  "tanh",    "sigmoid", "relu",   "gelu", "gelu_tanh", "silu",
                                "square", "sign",  "erf",  "logical_not", "bitwise_not", "floor", "ceil",
                                "trunc", "round", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                                "acosh", "atanh", "expm1", "log1p", "log2", "log10"};
  return names[int(op)];
}

const char* binary_name(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul",       "div",       "pow",           "maximum",
                                "minimum", "gelu_grad", "gelu_tanh_grad", "eq", "ne", "lt", "le", "gt", "ge",
                                "bitwise_and", "bitwise_or", "bitwise_xor", "atan2", "hypot", "copysign",
                                "nextafter", "remainder", "floor_divide", "bitwise_left_shift",
                                "bitwise_right_shift"};
  return names[int(op)];
}

namespace {

// A 0-d CPU operand (a Python scalar) on the GPU of the other operands, as in PyTorch. Scalars
// that need no gradient come from a small cache of device copies, so that `x * 0.125` in every
// step does not upload its 0.125 again (one command per use, and the bytes to stage). Not while
// a trace is open: its plan must move the value it is given at each call.
Tensor scalar_on(const Tensor& s, Device device) {
  if (s.requires_grad() || trace_hooks().host_read) return to_device(s, device);
  struct Key {
    Device device;
    DType dtype;
    uint64_t bits;
    bool operator<(const Key& o) const {
      return std::tie(device.type, device.index, dtype, bits) < std::tie(o.device.type, o.device.index, o.dtype, o.bits);
    }
  };
  Key key{device, s.dtype(), 0};
  std::memcpy(&key.bits, s.raw_data(), s.itemsize());
  static std::mutex mu;
  static auto* cache = new std::map<Key, Tensor>;  // never destroyed: device memory outlives exit order
  std::lock_guard<std::mutex> g(mu);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  if (cache->size() >= 256) cache->clear();
  Tensor t = to_device(s, device).detach();
  (*cache)[key] = t;
  return t;
}

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }
bool is_bitwise(BinaryOp op) {
  return (op >= BinaryOp::BitwiseAnd && op <= BinaryOp::BitwiseXor) || op >= BinaryOp::LeftShift;
}
bool is_shift(BinaryOp op) { return op >= BinaryOp::LeftShift; }
// Ops whose integer operands are taken as floats, as NumPy does: true division and the standard's
// floating functions.
bool computes_in_floating(BinaryOp op) { return op == BinaryOp::Div || (op >= BinaryOp::Atan2 && op <= BinaryOp::Nextafter); }

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) fail<ValueError>(op, ": got an undefined tensor");
}

class Unary : public Primitive {
 public:
  explicit Unary(UnaryOp op) : op_(op) {}
  const char* name() const override { return unary_name(op_); }
  Attributes attributes() const override { return {}; }
  bool vjp_reads_inputs() const override { return op_ != UnaryOp::Neg && op_ != UnaryOp::Sign && !reads_output(); }
  bool vjp_reads_output() const override { return reads_output(); }
  bool reads_output() const {
    return op_ == UnaryOp::Exp || op_ == UnaryOp::Sqrt || op_ == UnaryOp::Rsqrt || op_ == UnaryOp::Tanh ||
           op_ == UnaryOp::Sigmoid;
  }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    backend::unary(op_, in[0], out);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                          const std::vector<Tensor>& gs, const std::vector<bool>&) override {
    const Tensor &x = in[0], &y = outs[0], &g = gs[0];
    switch (op_) {
      case UnaryOp::Neg: return {neg(g)};
      case UnaryOp::Abs: return {mul(g, sign(x))};
      case UnaryOp::Exp: return {mul(g, y)};
      case UnaryOp::Log: return {div(g, x)};
      case UnaryOp::Sqrt: return {div(mul(g, S(0.5)), y)};
      case UnaryOp::Rsqrt: return {mul(mul(g, S(-0.5)), mul(y, square(y)))};
      case UnaryOp::Sin: return {mul(g, cos(x))};
      case UnaryOp::Cos: return {neg(mul(g, sin(x)))};
      case UnaryOp::Tanh: return {mul(g, sub(S(1), square(y)))};
      case UnaryOp::Sigmoid: return {mul(g, mul(y, sub(S(1), y)))};
      case UnaryOp::Relu: return {where(gt(x, S(0)), g, S(0))};
      case UnaryOp::Square: return {mul(g, mul(x, S(2)))};
      case UnaryOp::Sign: return {zeros_like(x)};
      case UnaryOp::Erf: return {mul(g, mul(exp(neg(square(x))), S(1.1283791670955126)))};
      case UnaryOp::Silu: {
        Tensor s = sigmoid(x);
        return {mul(g, mul(s, add(S(1), mul(x, sub(S(1), s)))))};
      }
      case UnaryOp::Gelu: {
        if (!grad_enabled()) return {binary(BinaryOp::GeluGrad, x, g)};  // one fused pass
        Tensor cdf = mul(add(S(1), erf(mul(x, S(0.7071067811865476)))), S(0.5));
        Tensor pdf = mul(exp(mul(square(x), S(-0.5))), S(0.3989422804014327));
        return {mul(g, add(cdf, mul(x, pdf)))};
      }
      case UnaryOp::GeluTanh: {
        if (!grad_enabled()) return {binary(BinaryOp::GeluTanhGrad, x, g)};
        const double k = 0.7978845608028654, c = 0.044715;
        Tensor x2 = square(x);
        Tensor t = tanh(mul(mul(x, add(S(1), mul(x2, S(c)))), S(k)));
        Tensor dt = mul(sub(S(1), square(t)), mul(add(S(1), mul(x2, S(3 * c))), S(k)));
        return {mul(g, mul(add(add(S(1), t), mul(x, dt)), S(0.5)))};
      }
      case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Trunc: case UnaryOp::Round:
        return {zeros_like(x)};  // piecewise constant
      case UnaryOp::Tan: return {div(g, square(cos(x)))};
      case UnaryOp::Asin: return {div(g, sqrt(sub(S(1), square(x))))};
      case UnaryOp::Acos: return {neg(div(g, sqrt(sub(S(1), square(x)))))};
      case UnaryOp::Atan: return {div(g, add(S(1), square(x)))};
      case UnaryOp::Sinh: return {mul(g, cosh(x))};
      case UnaryOp::Cosh: return {mul(g, sinh(x))};
      case UnaryOp::Asinh: return {div(g, sqrt(add(square(x), S(1))))};
      case UnaryOp::Acosh: return {div(g, sqrt(sub(square(x), S(1))))};
      case UnaryOp::Atanh: return {div(g, sub(S(1), square(x)))};
      case UnaryOp::Expm1: return {mul(g, exp(x))};
      case UnaryOp::Log1p: return {div(g, add(x, S(1)))};
      case UnaryOp::Log2: return {div(g, mul(x, S(0.6931471805599453)))};
      case UnaryOp::Log10: return {div(g, mul(x, S(2.302585092994046)))};
      case UnaryOp::LogicalNot: case UnaryOp::BitwiseNot: break;
    }
    return {Tensor()};
  }

 private:
  UnaryOp op_;
};

class Binary : public Primitive {
 public:
  Binary(BinaryOp op, Shape shape, DType dtype) : op_(op), shape_(std::move(shape)), dtype_(dtype) {}
  const char* name() const override { return binary_name(op_); }
  Attributes attributes() const override { return {{"shape", shape_}, {"dtype", std::string(dtype_name(dtype_))}}; }
  bool vjp_reads_inputs() const override { return op_ != BinaryOp::Add && op_ != BinaryOp::Sub; }
  bool vjp_reads_output() const override {
    return op_ == BinaryOp::Div || op_ == BinaryOp::Pow || op_ == BinaryOp::Hypot || op_ == BinaryOp::Copysign;
  }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{shape_, is_comparison(op_) ? DType::Bool : dtype_, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    backend::binary(op_, in[0], in[1], out);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                          const std::vector<Tensor>& gs, const std::vector<bool>& needs) override {
    const Tensor &a = in[0], &b = in[1], &y = outs[0], &g = gs[0];
    switch (op_) {
      case BinaryOp::Add: return {g, g};
      case BinaryOp::Sub: return {g, needs[1] ? neg(g) : Tensor()};
      case BinaryOp::Mul: return {needs[0] ? mul(g, b) : Tensor(), needs[1] ? mul(g, a) : Tensor()};
      case BinaryOp::Div:
        return {needs[0] ? div(g, b) : Tensor(), needs[1] ? neg(div(mul(g, y), b)) : Tensor()};
      case BinaryOp::Pow: {
        Tensor ga, gb;
        // d/da a^b = b a^(b-1); zero where b == 0 (a^0 is constant, even at a == 0).
        if (needs[0]) ga = where(eq(b, S(0)), S(0), mul(g, mul(b, pow(a, sub(b, S(1))))));
        // d/db a^b = a^b log a; zero where a == 0 and b >= 0 (as PyTorch).
        if (needs[1]) gb = where(logical_and(eq(a, S(0)), ge(b, S(0))), S(0), mul(g, mul(y, log(a))));
        return {ga, gb};
      }
      case BinaryOp::Maximum:
      case BinaryOp::Minimum: {
        // The winner takes the gradient; ties split it evenly (as PyTorch).
        Tensor wins = op_ == BinaryOp::Maximum ? gt(a, b) : lt(a, b);
        Tensor share = add(astype(wins, g.dtype()), mul(astype(eq(a, b), g.dtype()), S(0.5)));
        Tensor ga = mul(g, share);
        return {ga, needs[1] ? sub(g, ga) : Tensor()};
      }
      case BinaryOp::Atan2: {  // d atan2(a, b) = (b da - a db) / (a^2 + b^2)
        Tensor r = add(square(a), square(b));
        return {needs[0] ? mul(g, div(b, r)) : Tensor(), needs[1] ? mul(g, neg(div(a, r))) : Tensor()};
      }
      case BinaryOp::Hypot:  // d hypot(a, b) = (a da + b db) / hypot
        return {needs[0] ? mul(g, div(a, y)) : Tensor(), needs[1] ? mul(g, div(b, y)) : Tensor()};
      case BinaryOp::Copysign:  // +-1 by whether the sign changed; 0 at a == 0 (as PyTorch); b's is 0
        return {needs[0] ? mul(g, where(eq(a, S(0)), S(0), div(y, a))) : Tensor(), needs[1] ? zeros_like(b) : Tensor()};
      case BinaryOp::Nextafter:  // a step of one ulp: the identity in a, constant in b
        return {g, needs[1] ? zeros_like(b) : Tensor()};
      case BinaryOp::Remainder:  // a - b floor(a / b)
        return {g, needs[1] ? mul(neg(g), floor_divide(a, b)) : Tensor()};
      case BinaryOp::FloorDivide:  // piecewise constant
        return {needs[0] ? zeros_like(a) : Tensor(), needs[1] ? zeros_like(b) : Tensor()};
      default: return {Tensor(), Tensor()};
    }
  }

 private:
  BinaryOp op_;
  Shape shape_;
  DType dtype_;
};

class Where : public Primitive {
 public:
  explicit Where(Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "where"; }
  Attributes attributes() const override { return {{"shape", shape_}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{shape_, in[1].dtype, in[1].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    backend::where(in[0], in[1], in[2], out);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>& needs) override {
    const Tensor& g = gs[0];
    return {Tensor(), needs[1] ? where(in[0], g, S(0)) : Tensor(), needs[2] ? where(in[0], S(0), g) : Tensor()};
  }

 private:
  Shape shape_;
};

class Cast : public Primitive {
 public:
  explicit Cast(DType to) : to_(to) {}
  const char* name() const override { return "astype"; }
  Attributes attributes() const override { return {{"dtype", std::string(dtype_name(to_))}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{in[0].shape, to_, in[0].device}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    const Tensor& x = in[0];
    Tensor out;
    if (x.device().is_gpu() && !x.is_contiguous() && x.is_dense()) {
      // A transposed (permuted) view keeps its layout, as NumPy's astype does: the cast runs
      // over flat memory, so casting a transposed weight costs what a contiguous one does.
      const int64_t n = x.numel();
      Tensor flat = Tensor::empty({n}, to_, x.device());
      gpu::cast(x.alias({n}, {1}, x.offset()), flat);
      out = flat.alias(x.shape(), x.strides(), 0);
    } else {
      out = empty(specs[0]);
      if (out.device().is_gpu())
        gpu::cast(x, out);
      else
        cpu::cast_copy(x, out);
    }
    out.impl()->weak = x.weak();
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {astype(gs[0], in[0].dtype())};
  }

 private:
  DType to_;
};

// Casts of many tensors to one type in one node: a plan's batched casts (plan/cast_batching.cpp),
// one dispatch on a GPU. Each output is what astype makes of its input, layout included.
class CastMulti : public Primitive {
 public:
  explicit CastMulti(DType to) : to_(to) {}
  const char* name() const override { return "cast_multi"; }
  Attributes attributes() const override { return {{"dtype", std::string(dtype_name(to_))}}; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    std::vector<TensorSpec> out;
    for (const TensorSpec& s : in) out.push_back({s.shape, to_, s.device});
    return out;
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    std::vector<Tensor> out, flat_in, flat_out;
    for (size_t i = 0; i < in.size(); ++i) {
      const Tensor& x = in[i];
      if (!x.device().is_gpu()) {
        out.push_back(empty(specs[i]));
        cpu::cast_copy(x, out.back());
      } else if (x.is_dense()) {  // over flat memory, the layout kept (as Cast)
        const int64_t n = x.numel();
        Tensor flat = Tensor::empty({n}, to_, x.device());
        flat_in.push_back(x.alias({n}, {1}, x.offset()));
        flat_out.push_back(flat);
        out.push_back(flat.alias(x.shape(), x.strides(), 0));
      } else {
        out.push_back(empty(specs[i]));
        gpu::cast(x, out.back());
      }
    }
    gpu::cast_multi(flat_in, flat_out);
    return out;
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                          const std::vector<bool>&) override {
    fail<NotImplementedError>("cast_multi: made by plans only, whose backward is in the plan already");
  }

 private:
  DType to_;
};

bool float_only(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: case UnaryOp::Abs: case UnaryOp::Square: case UnaryOp::Sign: case UnaryOp::Relu:
    case UnaryOp::LogicalNot: case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Trunc: case UnaryOp::Round:
      return false;
    default:
      return true;
  }
}

}  // namespace

void check_scalar_fits(const Tensor& t, DType dtype, const char* op) {
  if (!t.weak() || t.numel() != 1 || !is_integral(dtype)) return;
  const double lo = dtype == DType::Int32 ? double(INT32_MIN) : -9223372036854775808.0;
  const double hi = dtype == DType::Int32 ? double(INT32_MAX) : 9223372036854775807.0;
  if (is_integral(t.dtype())) {
    const int64_t v = t.item_int();
    if (dtype == DType::Int32 && (v < INT32_MIN || v > INT32_MAX))
      fail<OverflowError>(op, ": Python integer ", v, " is out of bounds for int32");
  } else if (is_floating(t.dtype())) {
    const double v = t.item_double();
    if (std::isnan(v) || std::isinf(v)) fail<ValueError>(op, ": cannot convert float ", v, " to ", dtype_name(dtype));
    if (v < lo || v >= hi + 1.0) fail<OverflowError>(op, ": Python float ", v, " is out of bounds for ", dtype_name(dtype));
  }
}

Tensor astype(const Tensor& x, DType dtype) {
  check_defined(x, "astype");
  if (x.dtype() == dtype) return x;
  return pcp::apply<Cast>({x}, dtype);
}

Tensor unary(UnaryOp op, const Tensor& x_in) {
  check_defined(x_in, unary_name(op));
  Tensor x = x_in;
  if (op == UnaryOp::BitwiseNot) {
    if (is_floating(x.dtype()))
      fail<TypeError>("bitwise_not: not defined for ", dtype_name(x.dtype()), " tensors (integers and bools only)");
    if (x.dtype() == DType::Bool) return logical_not(x);
    return pcp::apply<Unary>({x}, op);
  }
  if (op == UnaryOp::LogicalNot) {
    x = astype(x, DType::Bool);
    if (x.device().is_gpu()) return eq(x, weak_scalar_bool(false));
    return pcp::apply<Unary>({x}, op);  // a primitive, so that a traced plan records it
  }
  const bool rounding = op == UnaryOp::Floor || op == UnaryOp::Ceil || op == UnaryOp::Trunc || op == UnaryOp::Round;
  if (rounding && !is_floating(x.dtype()) && x.dtype() != DType::Bool) return copy(x);  // integers are whole
  if (float_only(op))
    x = astype(x, to_floating(x.dtype()));
  else if (x.dtype() == DType::Bool)
    fail<TypeError>(unary_name(op), ": not defined for bool tensors; cast with astype first");
  Tensor out = pcp::apply<Unary>({x}, op);
  out.impl()->weak = x.weak();
  return out;
}

Tensor neg(const Tensor& x) { return unary(UnaryOp::Neg, x); }
Tensor abs(const Tensor& x) { return unary(UnaryOp::Abs, x); }
Tensor exp(const Tensor& x) { return unary(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary(UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary(UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(UnaryOp::Rsqrt, x); }
Tensor sin(const Tensor& x) { return unary(UnaryOp::Sin, x); }
Tensor cos(const Tensor& x) { return unary(UnaryOp::Cos, x); }
Tensor tanh(const Tensor& x) { return unary(UnaryOp::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(UnaryOp::Sigmoid, x); }
Tensor relu(const Tensor& x) { return unary(UnaryOp::Relu, x); }
Tensor gelu(const Tensor& x, bool tanh_approximation) {
  return unary(tanh_approximation ? UnaryOp::GeluTanh : UnaryOp::Gelu, x);
}
Tensor silu(const Tensor& x) { return unary(UnaryOp::Silu, x); }
Tensor square(const Tensor& x) { return unary(UnaryOp::Square, x); }
Tensor sign(const Tensor& x) { return unary(UnaryOp::Sign, x); }
Tensor erf(const Tensor& x) { return unary(UnaryOp::Erf, x); }
Tensor floor(const Tensor& x) { return unary(UnaryOp::Floor, x); }
Tensor ceil(const Tensor& x) { return unary(UnaryOp::Ceil, x); }
Tensor trunc(const Tensor& x) { return unary(UnaryOp::Trunc, x); }
Tensor round(const Tensor& x) { return unary(UnaryOp::Round, x); }
Tensor tan(const Tensor& x) { return unary(UnaryOp::Tan, x); }
Tensor asin(const Tensor& x) { return unary(UnaryOp::Asin, x); }
Tensor acos(const Tensor& x) { return unary(UnaryOp::Acos, x); }
Tensor atan(const Tensor& x) { return unary(UnaryOp::Atan, x); }
Tensor sinh(const Tensor& x) { return unary(UnaryOp::Sinh, x); }
Tensor cosh(const Tensor& x) { return unary(UnaryOp::Cosh, x); }
Tensor asinh(const Tensor& x) { return unary(UnaryOp::Asinh, x); }
Tensor acosh(const Tensor& x) { return unary(UnaryOp::Acosh, x); }
Tensor atanh(const Tensor& x) { return unary(UnaryOp::Atanh, x); }
Tensor expm1(const Tensor& x) { return unary(UnaryOp::Expm1, x); }
Tensor log1p(const Tensor& x) { return unary(UnaryOp::Log1p, x); }
Tensor log2(const Tensor& x) { return unary(UnaryOp::Log2, x); }
Tensor log10(const Tensor& x) { return unary(UnaryOp::Log10, x); }
Tensor logical_not(const Tensor& x) { return unary(UnaryOp::LogicalNot, x); }

// A Python int operand must fit the integer type it computes in: `int32_tensor + 2**40` raises
// OverflowError, as in NumPy 2, instead of wrapping; a comparison computes in int64 instead.
DType fit_weak_int(BinaryOp op, DType dt, const Tensor& a, const Tensor& b) {
  if (!is_integral(dt) || dt == DType::Int64) return dt;
  for (const Tensor* t : {&a, &b}) {
    if (!t->weak() || t->dtype() != DType::Int64) continue;
    const int64_t v = t->item_int();
    if (v >= INT32_MIN && v <= INT32_MAX) continue;
    if (is_comparison(op)) return DType::Int64;
    fail<OverflowError>(binary_name(op), ": Python integer ", v, " is out of bounds for ", dtype_name(dt));
  }
  return dt;
}

// Bools follow NumPy: + is or, * is and, - is an error; other arithmetic counts in int64.
BinaryOp bool_op(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: case BinaryOp::BitwiseOr: return BinaryOp::Maximum;
    case BinaryOp::Mul: case BinaryOp::BitwiseAnd: return BinaryOp::Minimum;
    case BinaryOp::BitwiseXor: return BinaryOp::Ne;
    case BinaryOp::Sub:
      fail<TypeError>("sub: subtracting bools is not supported; use logical_xor (^) or cast with astype first");
    default: return op;
  }
}

Tensor binary(BinaryOp op, const Tensor& a_in, const Tensor& b_in) {
  const char* name = binary_name(op);
  check_defined(a_in, name);
  check_defined(b_in, name);
  DType dt = result_type(a_in.dtype(), a_in.weak(), b_in.dtype(), b_in.weak());
  if (computes_in_floating(op)) dt = to_floating(dt);
  if (is_bitwise(op) && is_floating(dt))
    fail<TypeError>(name, ": not defined for ", dtype_name(a_in.dtype()), " and ", dtype_name(b_in.dtype()),
                    " (integers and bools only)");
  if (is_shift(op) && (a_in.dtype() == DType::Bool || b_in.dtype() == DType::Bool))
    fail<TypeError>(name, ": not defined for ", dtype_name(a_in.dtype()), " and ", dtype_name(b_in.dtype()),
                    " (integers only)");
  if (dt == DType::Bool) op = bool_op(op);
  if (dt == DType::Bool && !is_comparison(op) && op != BinaryOp::Maximum && op != BinaryOp::Minimum)
    dt = DType::Int64;  // bool ** bool counts in int64
  dt = fit_weak_int(op, dt, a_in, b_in);
  Shape shape = broadcast_shapes(a_in.shape(), b_in.shape(), name);
  // x ** 2 is the common case: square is exact and cheaper than pow.
  if (op == BinaryOp::Pow && b_in.weak() && b_in.numel() == 1 && b_in.item_double() == 2.0 && a_in.dtype() == dt)
    return square(a_in);
  // The GPU's arithmetic kernels read float32, float16 and bfloat16 operands as they are (a
  // bfloat16 product plus a float32 residual is one pass); elsewhere operands take the result type.
  const auto as_is = [&](const Tensor& t) {
    const DType d = t.dtype();
    return t.device().is_gpu() && !t.weak() && is_floating(dt) && dt != DType::Float64 &&
           (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div) &&
           (d == DType::Float32 || d == DType::Float16 || d == DType::BFloat16);
  };
  Tensor a = as_is(a_in) ? a_in : astype(a_in, dt), b = as_is(b_in) ? b_in : astype(b_in, dt);
  // A 0-d CPU operand (a Python scalar) follows the other operand to its device, as in PyTorch.
  if (a.device() != b.device()) {
    if (a.ndim() == 0 && !a.device().is_gpu()) a = scalar_on(a, b.device());
    else if (b.ndim() == 0 && !b.device().is_gpu()) b = scalar_on(b, a.device());
  }
  Tensor out = pcp::apply<Binary>({a, b}, op, shape, dt);
  out.impl()->weak = a_in.weak() && b_in.weak();
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Pow, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return minimum(astype(a, DType::Bool), astype(b, DType::Bool));
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return maximum(astype(a, DType::Bool), astype(b, DType::Bool));
}
Tensor logical_xor(const Tensor& a, const Tensor& b) { return ne(astype(a, DType::Bool), astype(b, DType::Bool)); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return binary(BinaryOp::BitwiseAnd, a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return binary(BinaryOp::BitwiseOr, a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return binary(BinaryOp::BitwiseXor, a, b); }
Tensor bitwise_not(const Tensor& x) { return unary(UnaryOp::BitwiseNot, x); }
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b) { return binary(BinaryOp::LeftShift, a, b); }
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b) { return binary(BinaryOp::RightShift, a, b); }
Tensor atan2(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Atan2, a, b); }
Tensor hypot(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Hypot, a, b); }
Tensor copysign(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Copysign, a, b); }
Tensor nextafter(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Nextafter, a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Remainder, a, b); }
Tensor floor_divide(const Tensor& a, const Tensor& b) { return binary(BinaryOp::FloorDivide, a, b); }

Tensor where(const Tensor& cond_in, const Tensor& a_in, const Tensor& b_in) {
  check_defined(cond_in, "where");
  check_defined(a_in, "where");
  check_defined(b_in, "where");
  DType dt = result_type(a_in.dtype(), a_in.weak(), b_in.dtype(), b_in.weak());
  Shape shape = broadcast_shapes(broadcast_shapes(cond_in.shape(), a_in.shape(), "where"), b_in.shape(), "where");
  Tensor cond = astype(cond_in, DType::Bool), a = astype(a_in, dt), b = astype(b_in, dt);
  // 0-d CPU operands (Python scalars) follow the others to their GPU, as in binary().
  Device dev = cond.device().is_gpu() ? cond.device() : a.device().is_gpu() ? a.device() : b.device();
  for (Tensor* t : {&cond, &a, &b})
    if (t->device() != dev && t->ndim() == 0 && !t->device().is_gpu()) *t = scalar_on(*t, dev);
  Tensor out = pcp::apply<Where>({cond, a, b}, shape);
  out.impl()->weak = a_in.weak() && b_in.weak();
  return out;
}

Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  check_defined(x, "clip");
  if (lo.defined()) broadcast_shapes(x.shape(), lo.shape(), "clip");
  if (hi.defined()) broadcast_shapes(x.shape(), hi.shape(), "clip");
  Tensor r = x;
  if (lo.defined()) r = maximum(r, lo);
  if (hi.defined()) r = minimum(r, hi);
  return r;
}

std::optional<UnaryOp> unary_op_named(const std::string& name) {
  for (int i = 0; i <= int(kLastUnaryOp); ++i)
    if (name == unary_name(UnaryOp(i))) return UnaryOp(i);
  return std::nullopt;
}

std::optional<BinaryOp> binary_op_named(const std::string& name) {
  for (int i = 0; i <= int(kLastBinaryOp); ++i)
    if (name == binary_name(BinaryOp(i))) return BinaryOp(i);
  return std::nullopt;
}

namespace {
// Under autocast, exponentials and logarithms compute in float32 (as PyTorch's autocast lists).
CastPolicy unary_cast_policy(UnaryOp op) {
  return op == UnaryOp::Exp || op == UnaryOp::Log || op == UnaryOp::Rsqrt ? CastPolicy::Float32 : CastPolicy::Keep;
}

// Plan files make these again by name (ops/primitive.h).
const bool registered = [] {
  for (int i = 0; i <= int(kLastUnaryOp); ++i)
    register_primitive(unary_name(UnaryOp(i)), {.make = [](const std::string& n, const Attributes&, const SharedState&) {
      return std::shared_ptr<Primitive>(std::make_shared<Unary>(*unary_op_named(n)));
    }, .inputs = {1}, .gpu = true, .autocast = unary_cast_policy(UnaryOp(i))});
  for (int i = 0; i <= int(kLastBinaryOp); ++i)
    register_primitive(binary_name(BinaryOp(i)), {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
      return std::shared_ptr<Primitive>(std::make_shared<Binary>(*binary_op_named(n),
                                                                 attr_ints(n, a, "shape"),
                                                                 dtype_from_name(attr_str(n, a, "dtype"))));
    }, .inputs = {2}, .check = [](const NodeCheck& c) {
      c.require(broadcast_shapes(c.in[0].shape, c.in[1].shape, "plan") == c.dims("shape"),
                "shape is not the inputs' broadcast");
    }, .gpu = true});
  register_primitive("where", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<Where>(attr_ints(n, a, "shape")));
  }, .inputs = {3}, .check = [](const NodeCheck& c) {
    const Shape s = broadcast_shapes(broadcast_shapes(c.in[0].shape, c.in[1].shape, "plan"), c.in[2].shape, "plan");
    c.require(s == c.dims("shape"), "shape is not the inputs' broadcast");
  }, .gpu = true});
  register_primitive("astype", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<Cast>(dtype_from_name(attr_str(n, a, "dtype"))));
  }, .inputs = {1}, .gpu = true});
  register_primitive("cast_multi", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
    return std::shared_ptr<Primitive>(std::make_shared<CastMulti>(dtype_from_name(attr_str(n, a, "dtype"))));
  }, .inputs = {}, .check = [](const NodeCheck& c) {
    const auto float_type = [](DType t) { return t == DType::Float32 || is_half_float(t); };
    c.require(float_type(dtype_from_name(attr_str(c.op, c.attrs, "dtype"))), "dtype is not float32, float16 or bfloat16");
    c.require(!c.in.empty(), "no inputs");
    for (const TensorSpec& s : c.in)
      c.require(float_type(s.dtype) && s.dtype == c.in[0].dtype && s.device == c.in[0].device,
                "inputs must share one of float32, float16 or bfloat16 and one device");
  }, .gpu = true});
  return true;
}();
}  // namespace

}  // namespace pcp
