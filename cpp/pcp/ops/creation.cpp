// Tensor creation: constants, ranges and counter-based random draws.
#include <cmath>

#include "pcp/core/grad_mode.h"
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/dispatch.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/error.h"
#include "pcp/core/random.h"
#include "pcp/ops/ops.h"
#include "pcp/ops/primitive.h"

namespace pcp {
namespace {

// Fills a float64 or int64 buffer in parallel, then casts to `dtype`.
template <class T, class F>
Tensor generate(const Shape& shape, DType dtype, F f) {
  DType buf_dt = std::is_same_v<T, double> ? DType::Float64 : DType::Int64;
  Tensor buf = Tensor::empty(shape, buf_dt);
  T* p = buf.data<T>();
  parallel_for(buf.numel(), 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] = f(i);
  });
  return astype(buf, dtype);
}

class Copy : public Primitive {
 public:
  const char* name() const override { return "copy"; }
  Attributes attributes() const override { return {}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override { return {in[0]}; }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) override {
    Tensor out = empty(specs[0]);
    backend::copy(in[0], out);
    return {out};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {gs[0]};
  }
};

// Moves values between devices; the gradient moves back.
class ToDevice : public Primitive {
 public:
  explicit ToDevice(Device device) : device_(device) {}
  const char* name() const override { return "to_device"; }
  Attributes attributes() const override { return {{"device", device_.str()}}; }
  bool vjp_reads_inputs() const override { return false; }  // only shapes, devices, dtypes
  bool vjp_reads_output() const override { return false; }
  std::vector<TensorSpec> infer(const std::vector<TensorSpec>& in) const override {
    return {{in[0].shape, in[0].dtype, device_}};
  }
  std::vector<Tensor> forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>&) override {
    return {gpu::to_device(in[0], device_)};
  }
  std::vector<Tensor> vjp(const std::vector<Tensor>& in, const std::vector<Tensor>&, const std::vector<Tensor>& gs,
                          const std::vector<bool>&) override {
    return {to_device(gs[0], in[0].device())};
  }

 private:
  Device device_;
};

}  // namespace

// A tensor of `shape` filled with one value of type T (double or int64, so ints stay exact).
template <class T>
Tensor fill(const Shape& shape, T value, DType dtype, Device device = cpu_device()) {
  check_shape(shape, "full");
  if (device.is_gpu()) {
    Tensor out = Tensor::empty(shape, dtype, device);
    gpu::fill(out, double(value));
    return out;
  }
  Tensor v = Tensor::empty({}, std::is_same_v<T, double> ? DType::Float64 : DType::Int64);
  *v.data<T>() = value;
  Tensor out = Tensor::empty(shape, dtype);
  cpu::cast_copy(v, out);
  return out;
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  return fill<double>(shape, value, dtype, device);
}
Tensor full_int(const Shape& shape, int64_t value, DType dtype) { return fill<int64_t>(shape, value, dtype); }

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  check_shape(shape, "zeros");
  return full(shape, 0.0, dtype, device);
}
Tensor ones(const Shape& shape, DType dtype, Device device) {
  check_shape(shape, "ones");
  return full(shape, 1.0, dtype, device);
}
Tensor zeros_like(const Tensor& x) { return zeros(x.shape(), x.dtype(), x.device()); }
Tensor ones_like(const Tensor& x) { return ones(x.shape(), x.dtype(), x.device()); }
Tensor scalar(double value, DType dtype) { return full({}, value, dtype); }

Tensor weak_scalar(double value) {
  Tensor t = full({}, value, DType::Float64);
  t.impl()->weak = true;
  return t;
}
Tensor weak_scalar_int(int64_t value) {
  Tensor t = full_int({}, value, DType::Int64);
  t.impl()->weak = true;
  return t;
}
Tensor weak_scalar_bool(bool value) {
  Tensor t = full({}, value ? 1.0 : 0.0, DType::Bool);
  t.impl()->weak = true;
  return t;
}

static Tensor arange_int_on_host(int64_t start, int64_t stop, int64_t step, DType dtype);

static Tensor arange_on_host(double start, double stop, double step, DType dtype) {
  if (step == 0) fail<ValueError>("arange: step must be nonzero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    fail<ValueError>("arange: start, stop and step must be finite, got ", start, ", ", stop, ", ", step);
  const double count = std::ceil((stop - start) / step);
  if (count >= 9.2e18) fail<MemoryError>("arange: ", count, " elements would not fit in memory");
  const int64_t n = std::max<int64_t>(0, int64_t(count));
  if (!is_floating(dtype) && (std::fabs(start) >= 9.2e18 || std::fabs(start + double(n) * step) >= 9.2e18))
    fail<OverflowError>("arange: values from ", start, " to ", stop, " do not fit in ", dtype_name(dtype));
  if (!is_floating(dtype)) return arange_int_on_host(int64_t(start), int64_t(start) + n * int64_t(step), int64_t(step), dtype);
  return generate<double>({n}, dtype, [&](int64_t i) { return start + double(i) * step; });
}

static Tensor arange_int_on_host(int64_t start, int64_t stop, int64_t step, DType dtype) {
  if (step == 0) fail<ValueError>("arange: step must be nonzero");
  // The count in 128 bits: stop - start may not fit in int64.
  const __int128 span = __int128(stop) - start;
  const __int128 count = span == 0 || (span > 0) != (step > 0) ? 0 : (span + step - (step > 0 ? 1 : -1)) / step;
  if (count > INT64_MAX) fail<MemoryError>("arange: ", int64_t(count >> 64), "*2**64 elements would not fit in memory");
  const int64_t n = int64_t(count);
  if (n > 0 && dtype == DType::Int32) {
    const int64_t last = start + (n - 1) * step;
    if (std::min(start, last) < INT32_MIN || std::max(start, last) > INT32_MAX)
      fail<OverflowError>("arange: values from ", start, " to ", last, " do not fit in int32");
  }
  return generate<int64_t>({n}, dtype, [&](int64_t i) { return start + i * step; });
}

static Tensor eye_on_host(int64_t n, int64_t m, int64_t k, DType dtype) {
  if (n < 0 || m < 0) fail<ValueError>("eye: negative size (", n, ", ", m, ")");
  return generate<double>({n, m}, dtype, [&](int64_t i) { return (i % (m ? m : 1)) - i / (m ? m : 1) == k ? 1.0 : 0.0; });
}

// Element i of a uniform draw uses Philox counter (start + i / 4), word i % 4.
static Tensor rand_on_host(const Shape& shape, DType dtype) {
  check_shape(shape, "rand");
  if (!is_floating(dtype)) fail<TypeError>("rand: dtype must be floating, got ", dtype_name(dtype));
  Generator& g = Generator::global();
  int64_t n = numel(shape);
  uint64_t key = g.initial_seed();
  if (dtype == DType::Float64) {
    uint64_t start = g.reserve(uint64_t(n + 1) / 2, "rand");
    return generate<double>(shape, dtype, [&](int64_t i) {
      uint32_t w[4];
      Philox::generate(key, 0, start + uint64_t(i) / 2, w);
      int j = int(i % 2) * 2;
      return uints_to_unit_double(w[j], w[j + 1]);
    });
  }
  uint64_t start = g.reserve(uint64_t(n + 3) / 4, "rand");
  Tensor buf = Tensor::empty(shape, DType::Float32);
  float* p = buf.data<float>();
  // As many random bits as the target's mantissa holds, so the cast cannot round up to 1.0.
  const int bits = dtype == DType::Float16 ? 11 : dtype == DType::BFloat16 ? 8 : 24;
  const float scale = std::ldexp(1.0f, -bits);
  parallel_for((n + 3) / 4, 4096, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      uint32_t w[4];
      Philox::generate(key, 0, start + uint64_t(c), w);
      for (int j = 0; j < 4 && c * 4 + j < n; ++j) p[c * 4 + j] = float(w[j] >> (32 - bits)) * scale;
    }
  });
  return astype(buf, dtype);
}

// Box-Muller: counter (start + i / 2) gives the pair of normals for elements 2j, 2j+1.
static Tensor randn_on_host(const Shape& shape, DType dtype) {
  check_shape(shape, "randn");
  if (!is_floating(dtype)) fail<TypeError>("randn: dtype must be floating, got ", dtype_name(dtype));
  Generator& g = Generator::global();
  int64_t n = numel(shape);
  uint64_t key = g.initial_seed();
  uint64_t start = g.reserve(uint64_t(n + 1) / 2, "randn");
  return generate<double>(shape, dtype, [&](int64_t i) {
    uint32_t w[4];
    Philox::generate(key, 0, start + uint64_t(i) / 2, w);
    double u1 = uints_to_unit_double(w[0], w[1]), u2 = uints_to_unit_double(w[2], w[3]);
    double r = std::sqrt(-2.0 * std::log1p(-u1));
    double theta = 6.283185307179586 * u2;
    return i % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
  });
}

static Tensor randint_on_host(int64_t low, int64_t high, const Shape& shape, DType dtype) {
  check_shape(shape, "randint");
  if (high <= low) fail<ValueError>("randint: high (", high, ") must be greater than low (", low, ")");
  if (dtype == DType::Int32 && (low < INT32_MIN || high - 1 > INT32_MAX))
    fail<OverflowError>("randint: [", low, ", ", high, ") does not fit in int32");
  if (dtype == DType::Bool && (low < 0 || high > 2))
    fail<OverflowError>("randint: [", low, ", ", high, ") does not fit in bool");
  Generator& g = Generator::global();
  int64_t n = numel(shape);
  uint64_t key = g.initial_seed();
  uint64_t start = g.reserve(uint64_t(n + 1) / 2, "randint");
  uint64_t range = uint64_t(high) - uint64_t(low);
  return generate<int64_t>(shape, dtype, [&](int64_t i) {
    uint32_t w[4];
    Philox::generate(key, 0, start + uint64_t(i) / 2, w);
    int j = int(i % 2) * 2;
    uint64_t r = (uint64_t(w[j]) << 32) | w[j + 1];
    return int64_t(uint64_t(low) + r % range);
  });
}

// Values made on the host (the generators and closed forms run there), then moved: one copy.
Tensor arange(double start, double stop, double step, DType dtype, Device device) {
  return to_device(arange_on_host(start, stop, step, dtype), device);
}
Tensor arange_int(int64_t start, int64_t stop, int64_t step, DType dtype, Device device) {
  return to_device(arange_int_on_host(start, stop, step, dtype), device);
}
Tensor eye(int64_t n, int64_t m, int64_t k, DType dtype, Device device) {
  return to_device(eye_on_host(n, m, k, dtype), device);
}
Tensor rand(const Shape& shape, DType dtype, Device device) { return to_device(rand_on_host(shape, dtype), device); }
Tensor randn(const Shape& shape, DType dtype, Device device) { return to_device(randn_on_host(shape, dtype), device); }
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device) {
  return to_device(randint_on_host(low, high, shape, dtype), device);
}

Tensor full(const Shape& shape, const Tensor& value, std::optional<DType> dtype, Device device) {
  if (!value.defined()) fail<ValueError>("full: got an undefined fill value");
  // A Python float fills the default float dtype; an int or bool, or a tensor, its own.
  const DType d = dtype ? *dtype : value.weak() && is_floating(value.dtype()) ? kDefaultFloat : value.dtype();
  check_scalar_fits(value, d, "full");
  if (device.is_gpu() && value.ndim() == 0) return full(shape, value.item_double(), d, device);
  Tensor out = full(shape, 0.0, d);
  index_assign(out, {}, value);  // broadcasts value, or names full and the shapes when it cannot
  return to_device(out, device);
}

Tensor strong(const Tensor& t) {
  if (!t.defined() || !t.weak()) return t;
  Tensor s = astype(t, is_floating(t.dtype()) ? kDefaultFloat : t.dtype());
  if (s.is_same(t)) s = copy(t);
  s.impl()->weak = false;
  return s;
}

Tensor copy(const Tensor& x) { return pcp::apply<Copy>({x}); }

Tensor to_device(const Tensor& x, Device device) {
  if (!x.defined()) fail<ValueError>("to: got an undefined tensor");
  if (x.device() == device) return x;
  return pcp::apply<ToDevice>({x}, device);
}

namespace {
// Plan files make these again by name (ops/primitive.h).
const bool registered = register_primitive("copy", {.make = [](const std::string&, const Attributes&, const SharedState&) {
  return std::shared_ptr<Primitive>(std::make_shared<Copy>());
}, .inputs = {1}, .gpu = true}) && register_primitive("to_device", {.make = [](const std::string& n, const Attributes& a, const SharedState&) {
  return std::shared_ptr<Primitive>(std::make_shared<ToDevice>(parse_device(attr_str(n, a, "device"))));
}, .inputs = {1}, .gpu = true});
}  // namespace

}  // namespace pcp
