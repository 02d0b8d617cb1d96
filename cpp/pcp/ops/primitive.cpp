#include "pcp/ops/primitive.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "pcp/core/grad_mode.h"
#include "pcp/ops/node.h"
#include "pcp/core/error.h"

namespace pcp {

std::vector<Tensor> Primitive::vjp(const std::vector<Tensor>&, const std::vector<Tensor>&, const std::vector<Tensor>&,
                                   const std::vector<bool>&) {
  fail<NotImplementedError>(name(), ": gradient is not defined for this op");
}

TensorSpec spec_of(const Tensor& t) {
  if (!t.defined()) return TensorSpec{{}, DType::Float32, cpu_device(), false};
  return TensorSpec{t.shape(), t.dtype(), t.device()};
}

std::vector<TensorSpec> specs_of(const std::vector<Tensor>& ts) {
  std::vector<TensorSpec> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(spec_of(t));
  return out;
}

Tensor empty(const TensorSpec& spec) { return Tensor::empty(spec.shape, spec.dtype, spec.device); }

namespace {
std::atomic<bool> g_profiling{false}, g_record_shapes{false};
std::mutex g_profile_mu;
std::unordered_map<std::string, OpProfile> g_profile;
}  // namespace

void set_profiling(bool on, bool record_shapes) {
  g_record_shapes = record_shapes;
  g_profiling = on;
}

// "matmul (768,128) (128,384)T": the op and its inputs' shapes, T marking an input whose last
// two axes are swapped in memory (a transposed view).
static std::string profile_key(const Primitive& prim, const std::vector<Tensor>& inputs) {
  std::string key = prim.name();
  if (!g_record_shapes) return key;
  for (const Tensor& in : inputs) {
    if (!in.defined()) continue;
    key += " (";
    for (int64_t d = 0; d < in.ndim(); ++d) key += (d ? "," : "") + std::to_string(in.shape()[d]);
    key += ")";
    const int64_t n = in.ndim();
    if (n >= 2 && in.shape()[n - 1] > 1 && in.shape()[n - 2] > 1 && in.strides()[n - 2] < in.strides()[n - 1]) key += "T";
  }
  return key;
}

void reset_profile() {
  std::lock_guard<std::mutex> lock(g_profile_mu);
  g_profile.clear();
}

std::vector<std::pair<std::string, OpProfile>> profile_results() {
  std::lock_guard<std::mutex> lock(g_profile_mu);
  std::vector<std::pair<std::string, OpProfile>> out(g_profile.begin(), g_profile.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  return out;
}

namespace {
BlockingHooks g_blocking;
constexpr int64_t kBlockingElements = int64_t(1) << 15;

// Runs the hooks around a scope when the inputs are large host tensors.
struct BlockingScope {
  void* state = nullptr;
  bool active = false;
  explicit BlockingScope(const std::vector<Tensor>& inputs) {
    if (!g_blocking.enter) return;
    int64_t n = 0;
    for (const Tensor& in : inputs) {
      if (!in.defined()) continue;
      if (in.device().is_gpu()) return;  // GPU ops only record commands
      n += in.numel();
    }
    if (n < kBlockingElements) return;
    state = g_blocking.enter();
    active = true;
  }
  ~BlockingScope() {
    if (active) g_blocking.exit(state);
  }
};
}  // namespace

void set_blocking_hooks(BlockingHooks hooks) { g_blocking = hooks; }

namespace {
thread_local TraceRecorder g_recorder = nullptr;
thread_local int g_forward_depth = 0;
struct ForwardDepth {
  ForwardDepth() { ++g_forward_depth; }
  ~ForwardDepth() { --g_forward_depth; }
};
}  // namespace

void set_trace_recorder(TraceRecorder recorder) { g_recorder = recorder; }
int forward_depth() { return g_forward_depth; }

static std::vector<Tensor> run_forward(Primitive& prim, const std::vector<Tensor>& inputs,
                                       const std::vector<TensorSpec>& specs) {
  ForwardDepth depth;
  BlockingScope blocking(inputs);
  if (!g_profiling) return prim.forward(inputs, specs);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Tensor> out = prim.forward(inputs, specs);
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(g_profile_mu);
  OpProfile& p = g_profile[profile_key(prim, inputs)];
  p.calls++;
  p.seconds += dt;
  return out;
}

static bool matches(const Tensor& t, const TensorSpec& s) {
  if (!t.defined() || !s.defined) return t.defined() == s.defined;
  return t.shape() == s.shape && t.dtype() == s.dtype && t.device() == s.device;
}

// forward() must produce what infer() promised: the plan layer trusts infer() alone.
static void check_outputs(const Primitive& prim, const std::vector<Tensor>& outs, const std::vector<TensorSpec>& specs) {
  bool ok = outs.size() == specs.size();
  for (size_t i = 0; ok && i < outs.size(); ++i) ok = matches(outs[i], specs[i]);
  if (ok) return;
  auto describe = [](const TensorSpec& s) {
    return s.defined ? shape_str(s.shape) + " " + dtype_name(s.dtype) + " on " + s.device.str() : std::string("none");
  };
  std::string got, want;
  for (const Tensor& t : outs) got += " " + describe(spec_of(t));
  for (const TensorSpec& s : specs) want += " " + describe(s);
  fail<RuntimeError>(prim.name(), ": internal error: forward produced", got, " but shape inference said", want);
}

std::vector<Tensor> run_primitive(Primitive& prim, const std::vector<Tensor>& inputs,
                                  const std::vector<TensorSpec>& specs) {
  std::vector<Tensor> outs = run_forward(prim, inputs, specs);
  check_outputs(prim, outs, specs);
  return outs;
}

std::vector<Tensor> apply_all(std::shared_ptr<Primitive> prim, std::vector<Tensor> inputs) {
  if (autocast_dtype()) inputs = autocast_inputs(prim->cast_policy(), std::move(inputs));
  for (size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[0].defined() && inputs[i].device() != inputs[0].device() &&
        !(prim->host_input(i) && !inputs[i].device().is_gpu()))
      fail<ValueError>(prim->name(), ": inputs are on different devices (", inputs[0].device().str(),
                       " and ", inputs[i].device().str(), ")");
  for (const Tensor& in : inputs)
    if (in.defined() && in.device().is_gpu() && !prim->runs_on_gpu())
      fail<NotImplementedError>(prim->name(), ": not implemented on ", in.device().str(),
                                " yet; move the inputs with .to('cpu')");
  const std::vector<TensorSpec> specs = prim->infer(specs_of(inputs));
  std::vector<Tensor> outs = run_forward(*prim, inputs, specs);
  check_outputs(*prim, outs, specs);
  for (Tensor& out : outs)  // each output must be a fresh handle, never an input's
    for (const Tensor& in : inputs)
      if (out.is_same(in)) out = out.detach();
  if (g_recorder && g_forward_depth == 0) g_recorder(prim, inputs, outs);
  if (!grad_enabled()) return outs;
  bool differentiable = false;
  for (size_t i = 0; i < outs.size(); ++i) differentiable |= prim->differentiable_output(i) && is_floating(outs[i].dtype());
  if (!differentiable) return outs;
  std::vector<bool> needs(inputs.size());
  bool any = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    needs[i] = inputs[i].defined() && inputs[i].requires_grad();
    any = any || needs[i];
  }
  if (!any) return outs;
  auto node = std::make_shared<Node>();
  node->prim = std::move(prim);
  node->inputs = std::move(inputs);
  node->needs = std::move(needs);
  for (const Tensor& out : outs) {
    node->outputs.push_back(out.detach());
    node->owners.push_back(out.impl_ptr());
  }
  node->save_for_backward();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!node->prim->differentiable_output(i) || !is_floating(outs[i].dtype())) continue;
    outs[i].impl()->grad_fn = node;
    outs[i].impl()->output_nr = uint32_t(i);
    outs[i].impl()->requires_grad = true;
  }
  return outs;
}

namespace {
std::map<std::string, PrimitiveRecord>& records() {
  static std::map<std::string, PrimitiveRecord> m;
  return m;
}

template <class T>
const T& attr(const std::string& prim, const Attributes& a, const char* key, const char* kind) {
  auto it = a.find(key);
  if (it == a.end()) fail<ValueError>("plan: ", prim, " needs the attribute '", key, "'");
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  fail<ValueError>("plan: ", prim, "'s attribute '", key, "' must be ", kind);
}
}  // namespace

bool register_primitive(const std::string& name, PrimitiveRecord record) {
  records()[name] = std::move(record);
  return true;
}

std::shared_ptr<Primitive> make_primitive(const std::string& name, const Attributes& attrs, const SharedState& shared) {
  const PrimitiveRecord* r = primitive_record(name);
  if (!r) fail<ValueError>("plan: no primitive is called '", name, "'");
  return r->make(name, attrs, shared);
}

const PrimitiveRecord* primitive_record(const std::string& name) {
  auto it = records().find(name);
  return it == records().end() ? nullptr : &it->second;
}

const PrimitiveRecord& Primitive::record() const {
  const PrimitiveRecord* r = record_.load(std::memory_order_relaxed);
  if (!r) {
    r = primitive_record(name());
    if (!r) fail<RuntimeError>(name(), ": internal error: the primitive has no record (register_primitive)");
    record_.store(r, std::memory_order_relaxed);
  }
  return *r;
}

bool Primitive::runs_on_gpu() const { return record().gpu; }
CastPolicy Primitive::cast_policy() const { return record().autocast; }

std::vector<std::string> primitive_names() {
  std::vector<std::string> names;
  for (const auto& [name, record] : records()) names.push_back(name);
  return names;
}

void NodeCheck::bad(const std::string& why) const { fail<ValueError>("plan: ", op, " node: ", why); }

int NodeCheck::axis(const char* key, int64_t nd) const {
  const int64_t a = attr_int(op, attrs, key);
  require(a >= 0 && a < nd, std::string(key) + " " + std::to_string(a) + " is out of range for " +
                                std::to_string(nd) + " dimensions");
  return int(a);
}

Shape NodeCheck::dims(const char* key) const {
  Shape s = attr_ints(op, attrs, key);
  check_shape(s, "plan");
  return s;
}

void NodeCheck::same_shapes(size_t a, size_t b) const {
  require(in[a].shape == in[b].shape,
          "inputs " + shape_str(in[a].shape) + " and " + shape_str(in[b].shape) + " must have one shape");
}

bool attr_bool(const std::string& p, const Attributes& a, const char* k) { return attr<bool>(p, a, k, "a bool"); }
int64_t attr_int(const std::string& p, const Attributes& a, const char* k) { return attr<int64_t>(p, a, k, "an int"); }
double attr_double(const std::string& p, const Attributes& a, const char* k) {
  auto it = a.find(k);  // an int where a float was written (1 for 1.0) is fine
  if (it != a.end())
    if (const int64_t* v = std::get_if<int64_t>(&it->second)) return double(*v);
  return attr<double>(p, a, k, "a number");
}
std::string attr_str(const std::string& p, const Attributes& a, const char* k) {
  return attr<std::string>(p, a, k, "a string");
}
std::vector<int64_t> attr_ints(const std::string& p, const Attributes& a, const char* k) {
  return attr<std::vector<int64_t>>(p, a, k, "a list of ints");
}
HostScalarPtr shared_scalar(const std::string& prim, const SharedState& s, size_t i) {
  if (i >= s.scalars.size()) fail<ValueError>("plan: ", prim, " needs host scalar ", i);
  return s.scalars[i];
}
RandomDrawPtr shared_draw(const std::string& prim, const SharedState& s, size_t i) {
  if (i >= s.draws.size()) fail<ValueError>("plan: ", prim, " needs random draw ", i);
  return s.draws[i];
}

Tensor apply(std::shared_ptr<Primitive> prim, std::vector<Tensor> inputs) {
  return std::move(apply_all(std::move(prim), std::move(inputs))[0]);
}

}  // namespace pcp
