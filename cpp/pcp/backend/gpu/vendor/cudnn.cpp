// Attention through cuDNN's fused flash attention, built with its backend graph API: the graph of
// plain products, pointwise ops and reductions that cuDNN recognises as scaled dot-product
// attention (its "composite" form, as the cuDNN frontend builds it), with the causal mask from
// generated row and column indices. The forward pass writes the output and each row's
// log-sum-exp (PCP's `lse`, cuDNN's Stats); the backward pass reads them with dO. Plans are built
// once per shape and layout (cuDNN compiles them at run time) and kept.
#include <array>
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "pcp/backend/cuda/library.h"
#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/memory.h"
#include "pcp/backend/gpu/vendor/cudnn_api.h"
#include "pcp/backend/gpu/vendor/state.h"
#include "pcp/core/error.h"

namespace pcp::gpu::vendor {
namespace {

struct DnnFns {
  PCP_CUDNN_FNS(PCP_DECLARE_FN_)
};

std::string resolve(const cuda::Library& lib, DnnFns& fns) {
  std::string missing;
  PCP_CUDNN_FNS(PCP_RESOLVE_FN_)
  return missing;
}

struct DnnLibrary {
  DnnFns fns;
  std::string version, error;
};

const DnnLibrary& dnn_lib() {
  static const DnnLibrary L = [] {
    DnnLibrary L;
    // The graph library holds the handle and backend API; it finds the engines beside itself.
    const cuda::Library lib = cuda::load_library({"libcudnn_graph.so.9", "libcudnn.so.9"});
    if (!lib.handle) return L.error = "cuDNN not loaded: " + lib.error, L;
    if (const std::string missing = resolve(lib, L.fns); !missing.empty()) return L.error = lib.path + " lacks " + missing, L;
    const size_t v = L.fns.cudnnGetVersion();  // major * 10000 + minor * 100 + patch
    L.version = lib.path + " " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                std::to_string(v % 100);
    if (v < 90000) {
      L.error = L.version + " is older than 9.0";
      cuda::warn_once("cudnn-version", L.error + ": attention runs on PCP's own kernels");
    }
    return L;
  }();
  return L;
}

const DnnFns& f() { return dnn_lib().fns; }

std::string last_error() {
  char text[1024] = {};
  f().cudnnGetLastErrorString(text, sizeof text);
  return text;
}

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(int type) {
    if (f().cudnnBackendCreateDescriptor(type, &d_) != dnn::kSuccess)
      fail<RuntimeError>("cudnn: cudnnBackendCreateDescriptor(", type, ") failed");
  }
  ~Desc() {
    if (d_) f().cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  dnn::Descriptor get() const { return d_; }
  Desc& set(int attr, int type, int64_t count, const void* value) {
    if (const dnn::Status s = f().cudnnBackendSetAttribute(d_, attr, type, count, value); s != dnn::kSuccess)
      fail<RuntimeError>("cudnn: setting attribute ", attr, " failed (", s, "): ", last_error());
    return *this;
  }
  Desc& set(int attr, const Desc& other) {
    dnn::Descriptor d = other.get();
    return set(attr, dnn::TYPE_BACKEND_DESCRIPTOR, 1, &d);
  }
  Desc& finalize(const char* what) {
    if (const dnn::Status s = f().cudnnBackendFinalize(d_); s != dnn::kSuccess)
      fail<RuntimeError>("cudnn: finalizing ", what, " failed (", s, "): ", last_error());
    return *this;
  }

 private:
  dnn::Descriptor d_ = nullptr;
};

using Dims = std::array<int64_t, 4>;

// The operations of one graph and the tensors they connect, kept alive until it is finalized.
class Graph {
 public:
  const Desc& tensor(int64_t uid, int type, Dims dims, Dims strides, bool is_virtual = true, bool by_value = false) {
    auto t = std::make_unique<Desc>(dnn::TENSOR);
    const int64_t alignment = 16;
    t->set(dnn::TENSOR_DATA_TYPE, dnn::TYPE_DATA_TYPE, 1, &type)
        .set(dnn::TENSOR_DIMENSIONS, dnn::TYPE_INT64, 4, dims.data())
        .set(dnn::TENSOR_STRIDES, dnn::TYPE_INT64, 4, strides.data())
        .set(dnn::TENSOR_UNIQUE_ID, dnn::TYPE_INT64, 1, &uid)
        .set(dnn::TENSOR_BYTE_ALIGNMENT, dnn::TYPE_INT64, 1, &alignment);
    const bool yes = true;
    if (is_virtual && !by_value) t->set(dnn::TENSOR_IS_VIRTUAL, dnn::TYPE_BOOLEAN, 1, &yes);
    if (by_value) t->set(dnn::TENSOR_IS_BY_VALUE, dnn::TYPE_BOOLEAN, 1, &yes);
    t->finalize("a tensor");
    tensors_.push_back(std::move(t));
    return *tensors_.back();
  }

  void pointwise(int mode, int precision, const Desc& x, const Desc& y, const Desc* b = nullptr,
                 const Desc* t = nullptr, int64_t axis = -1) {
    Desc pw(dnn::POINTWISE);
    pw.set(dnn::POINTWISE_MODE, dnn::TYPE_POINTWISE_MODE, 1, &mode)
        .set(dnn::POINTWISE_MATH_PREC, dnn::TYPE_DATA_TYPE, 1, &precision);
    if (axis >= 0) pw.set(dnn::POINTWISE_AXIS, dnn::TYPE_INT64, 1, &axis);
    pw.finalize("a pointwise descriptor");
    auto op = std::make_unique<Desc>(dnn::OPERATION_POINTWISE);
    op->set(dnn::OPERATION_POINTWISE_PW_DESCRIPTOR, pw).set(dnn::OPERATION_POINTWISE_XDESC, x)
        .set(dnn::OPERATION_POINTWISE_YDESC, y);
    if (b) op->set(dnn::OPERATION_POINTWISE_BDESC, *b);
    if (t) op->set(dnn::OPERATION_POINTWISE_TDESC, *t);
    const float one = 1.0f;
    op->set(dnn::OPERATION_POINTWISE_ALPHA1, dnn::TYPE_FLOAT, 1, &one)
        .set(dnn::OPERATION_POINTWISE_ALPHA2, dnn::TYPE_FLOAT, 1, &one)
        .finalize("a pointwise operation");
    ops_.push_back(std::move(op));
  }

  void reduction(int op_type, const Desc& x, const Desc& y) {
    Desc r(dnn::REDUCTION);
    const int fp32 = dnn::DATA_FLOAT;
    const bool deterministic = false;
    r.set(dnn::REDUCTION_COMP_TYPE, dnn::TYPE_DATA_TYPE, 1, &fp32)
        .set(dnn::REDUCTION_OPERATOR, dnn::TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_type)
        .set(dnn::REDUCTION_IS_DETERMINISTIC, dnn::TYPE_BOOLEAN, 1, &deterministic)
        .finalize("a reduction descriptor");
    auto op = std::make_unique<Desc>(dnn::OPERATION_REDUCTION);
    op->set(dnn::OPERATION_REDUCTION_DESC, r).set(dnn::OPERATION_REDUCTION_XDESC, x)
        .set(dnn::OPERATION_REDUCTION_YDESC, y).finalize("a reduction");
    ops_.push_back(std::move(op));
  }

  void matmul(const Desc& a, const Desc& b, const Desc& c) {
    Desc m(dnn::MATMUL);
    const int fp32 = dnn::DATA_FLOAT;
    m.set(dnn::MATMUL_COMP_TYPE, dnn::TYPE_DATA_TYPE, 1, &fp32).finalize("a matmul descriptor");
    auto op = std::make_unique<Desc>(dnn::OPERATION_MATMUL);
    op->set(dnn::OPERATION_MATMUL_ADESC, a).set(dnn::OPERATION_MATMUL_BDESC, b).set(dnn::OPERATION_MATMUL_CDESC, c)
        .set(dnn::OPERATION_MATMUL_DESC, m).finalize("a matmul");
    ops_.push_back(std::move(op));
  }

  void reshape(const Desc& x, const Desc& y) {
    auto op = std::make_unique<Desc>(dnn::OPERATION_RESHAPE);
    op->set(dnn::OPERATION_RESHAPE_XDESC, x).set(dnn::OPERATION_RESHAPE_YDESC, y).finalize("a reshape");
    ops_.push_back(std::move(op));
  }

  // The operation graph, finalized for `handle`.
  std::unique_ptr<Desc> finalize(dnn::Handle handle) {
    auto g = std::make_unique<Desc>(dnn::OPERATIONGRAPH);
    std::vector<dnn::Descriptor> ops;
    for (const auto& op : ops_) ops.push_back(op->get());
    g->set(dnn::OPERATIONGRAPH_OPS, dnn::TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()), ops.data())
        .set(dnn::OPERATIONGRAPH_HANDLE, dnn::TYPE_HANDLE, 1, &handle)
        .finalize("the attention graph");
    return g;
  }

 private:
  std::vector<std::unique_ptr<Desc>> tensors_, ops_;
};

// The layout of one call: sizes, the heads' element strides (b, h, t; d is 1) of q/k/v, of o and
// dO ((B, T, H, D) contiguous), and of the gradients.
struct Layout {
  int dtype;  // dnn::DATA_BFLOAT16 or DATA_HALF
  bool causal, backward;
  int64_t B, H, T, D;
  Dims qkv, grads;
  auto key() const { return std::make_tuple(dtype, causal, backward, B, H, T, D, qkv, grads); }
  bool operator<(const Layout& o) const { return key() < o.key(); }
};

// UIDs of the tensors a call supplies (the virtual ones inside a graph take others).
enum Uid : int64_t { Q = 0, K = 1, V = 2, O = 3, SCALE = 5, STATS = 8, DO = 9, DQ = 10, DK = 11, DV = 12,
                     NEG_INF = 50, ONE = 51, SOFTMAX_SUM = 52, DQ_ACCUM = 53 };

// (B, H, T, D) heads with element strides (b, h, t) and unit d; transposed: seen as (B, H, D, T).
Dims heads(const Dims& s) { return {s[0], s[1], s[2], 1}; }
Dims transposed(const Dims& s) { return {s[0], s[1], 1, s[2]}; }

// The causal mask on the scores `s` (B, H, T, T): row >= column keeps them, else -inf.
const Desc& causal_mask(Graph& g, const Layout& l, const Desc& s, int64_t uid, int64_t fill_uid) {
  const Dims d{l.B, l.H, l.T, l.T}, st{l.H * l.T * l.T, l.T * l.T, l.T, 1};
  const Desc& row = g.tensor(uid, dnn::DATA_INT32, d, st);
  const Desc& col = g.tensor(uid + 1, dnn::DATA_INT32, d, st);
  const Desc& keep = g.tensor(uid + 2, dnn::DATA_BOOLEAN, d, st);
  const Desc& fill = g.tensor(fill_uid, dnn::DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  const Desc& out = g.tensor(uid + 3, dnn::DATA_FLOAT, d, st);
  g.pointwise(dnn::PW_GEN_INDEX, dnn::DATA_FLOAT, s, row, nullptr, nullptr, 2);
  g.pointwise(dnn::PW_GEN_INDEX, dnn::DATA_FLOAT, s, col, nullptr, nullptr, 3);
  g.pointwise(dnn::PW_CMP_GE, dnn::DATA_BOOLEAN, row, keep, &col);
  g.pointwise(dnn::PW_BINARY_SELECT, dnn::DATA_FLOAT, s, out, &fill, &keep);
  return out;
}

// softmax(scale Q K^T) V with each row's log-sum-exp (Stats).
void forward_graph(Graph& g, const Layout& l) {
  const int io = l.dtype, fp32 = dnn::DATA_FLOAT;
  const Dims bhtd{l.B, l.H, l.T, l.D}, bhdt{l.B, l.H, l.D, l.T}, bhtt{l.B, l.H, l.T, l.T}, bht1{l.B, l.H, l.T, 1};
  const Dims tt{l.H * l.T * l.T, l.T * l.T, l.T, 1}, t1{l.H * l.T, l.T, 1, 1};
  const Dims o_strides{l.T * l.H * l.D, l.D, l.H * l.D, 1};
  const Desc& v = g.tensor(V, io, bhtd, heads(l.qkv), false);
  const Desc& kt = g.tensor(K, io, bhdt, transposed(l.qkv), false);
  const Desc& q = g.tensor(Q, io, bhtd, heads(l.qkv), false);
  const Desc& scale = g.tensor(SCALE, fp32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  const Desc& stats = g.tensor(STATS, fp32, bht1, t1, false);
  const Desc& o = g.tensor(O, io, bhtd, o_strides, false);
  const Desc& s = g.tensor(4, fp32, bhtt, tt);
  const Desc& scaled = g.tensor(6, fp32, bhtt, tt);
  g.matmul(q, kt, s);
  g.pointwise(dnn::PW_MUL, fp32, s, scaled, &scale);
  const Desc& masked = l.causal ? causal_mask(g, l, scaled, 20, NEG_INF) : scaled;
  const Desc& p = g.tensor(13, io, bhtt, tt);
  const Desc& m = g.tensor(14, fp32, bht1, t1);
  const Desc& shifted = g.tensor(15, fp32, bhtt, tt);
  const Desc& e = g.tensor(16, fp32, bhtt, tt);
  const Desc& sum = g.tensor(17, fp32, bht1, t1);
  const Desc& log_sum = g.tensor(18, fp32, bht1, t1);
  g.reduction(dnn::REDUCE_MAX, masked, m);
  g.pointwise(dnn::PW_SUB, fp32, masked, shifted, &m);
  g.pointwise(dnn::PW_EXP, fp32, shifted, e);
  g.reduction(dnn::REDUCE_ADD, e, sum);
  g.pointwise(dnn::PW_LOG, fp32, sum, log_sum);
  g.pointwise(dnn::PW_ADD, fp32, m, stats, &log_sum);
  g.pointwise(dnn::PW_DIV, fp32, e, p, &sum);
  g.matmul(p, v, o);
}

// dQ, dK, dV from Q, K, V, O, dO and Stats, recomputing the probabilities.
void backward_graph(Graph& g, const Layout& l) {
  const int io = l.dtype, fp32 = dnn::DATA_FLOAT;
  const Dims bhtd{l.B, l.H, l.T, l.D}, bhdt{l.B, l.H, l.D, l.T}, bhtt{l.B, l.H, l.T, l.T}, bht1{l.B, l.H, l.T, 1};
  const Dims tt{l.H * l.T * l.T, l.T * l.T, l.T, 1}, tt_t{l.H * l.T * l.T, l.T * l.T, 1, l.T}, t1{l.H * l.T, l.T, 1, 1};
  const Dims o_strides{l.T * l.H * l.D, l.D, l.H * l.D, 1}, contiguous{l.H * l.T * l.D, l.T * l.D, l.D, 1};
  const Desc& stats = g.tensor(STATS, fp32, bht1, t1, false);
  const Desc& d_o = g.tensor(DO, io, bhtd, o_strides, false);
  const Desc& o = g.tensor(O, io, bhtd, o_strides, false);
  const Desc& vt = g.tensor(V, io, bhdt, transposed(l.qkv), false);
  const Desc& kt = g.tensor(K, io, bhdt, transposed(l.qkv), false);
  const Desc& q = g.tensor(Q, io, bhtd, heads(l.qkv), false);
  const Desc& scale = g.tensor(SCALE, fp32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  const Desc& dv = g.tensor(DV, io, bhtd, heads(l.grads), false);
  const Desc& dk = g.tensor(DK, io, bhtd, heads(l.grads), false);
  const Desc& dq = g.tensor(DQ, io, bhtd, heads(l.grads), false);
  // softmax_sum = rowsum(dO * O), the delta of the softmax gradient (kept in the workspace).
  const Desc& d_o_o = g.tensor(4, fp32, bhtd, {l.H * l.T * l.D, l.T * l.D, l.H * l.D, 1});
  const Desc& row_sum = g.tensor(6, fp32, bht1, t1);
  const Desc& one = g.tensor(ONE, fp32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  const Desc& softmax_sum = g.tensor(SOFTMAX_SUM, fp32, bht1, t1, false);
  g.pointwise(dnn::PW_MUL, fp32, d_o, d_o_o, &o);
  g.reduction(dnn::REDUCE_ADD, d_o_o, row_sum);
  g.pointwise(dnn::PW_MUL, fp32, row_sum, softmax_sum, &one);
  // P = exp(scale Q K^T - Stats), masked.
  const Desc& s = g.tensor(14, fp32, bhtt, tt);
  const Desc& scaled = g.tensor(15, fp32, bhtt, tt);
  const Desc& shifted = g.tensor(16, fp32, bhtt, tt);
  g.matmul(q, kt, s);
  g.pointwise(dnn::PW_MUL, fp32, s, scaled, &scale);
  g.pointwise(dnn::PW_SUB, fp32, scaled, shifted, &stats);
  const Desc& masked = l.causal ? causal_mask(g, l, shifted, 40, NEG_INF) : shifted;
  const Desc& p = g.tensor(22, fp32, bhtt, tt);
  g.pointwise(dnn::PW_EXP, fp32, masked, p);
  // dV = P^T dO.
  const Desc& pt = g.tensor(23, io, {l.B, l.H, l.T, l.T}, tt_t);
  g.reshape(p, pt);
  g.matmul(pt, d_o, dv);
  // dS = P * (dO V^T - softmax_sum) * scale.
  const Desc& dp = g.tensor(24, fp32, bhtt, tt);
  const Desc& dp_centered = g.tensor(25, fp32, bhtt, tt);
  const Desc& ds_unscaled = g.tensor(26, fp32, bhtt, tt);
  const Desc& ds = g.tensor(27, fp32, bhtt, tt);
  g.matmul(d_o, vt, dp);
  g.pointwise(dnn::PW_SUB, fp32, dp, dp_centered, &softmax_sum);
  g.pointwise(dnn::PW_MUL, fp32, dp_centered, ds_unscaled, &p);
  g.pointwise(dnn::PW_MUL, fp32, ds_unscaled, ds, &scale);
  // dK = dS^T Q; dQ = dS K (accumulated in float32 in the workspace, then copied).
  const Desc& dst = g.tensor(28, io, {l.B, l.H, l.T, l.T}, tt_t);
  g.reshape(ds, dst);
  g.matmul(dst, q, dk);
  const Desc& k = g.tensor(29, fp32, bhtd, contiguous);
  g.reshape(kt, k);
  const Desc& dq_accum = g.tensor(DQ_ACCUM, fp32, bhtd, contiguous, false);
  g.matmul(ds, k, dq_accum);
  g.pointwise(dnn::PW_IDENTITY, fp32, dq_accum, dq);
}

// A built plan: cuDNN's workspace, and for the backward pass the two float32 buffers before it.
struct Plan {
  std::unique_ptr<Desc> graph, plan;
  std::vector<std::unique_ptr<Desc>> configs;
  int64_t workspace = 0;
  std::string error;  // why there is none (the layout then runs on PCP's kernels)
};

struct DnnDevice {
  dnn::Handle handle = nullptr;
  std::string error;
  std::map<Layout, Plan> plans;
};

std::mutex g_mu;  // the devices and their plans
std::map<int, DnnDevice> g_devices;

DnnDevice& dnn_device(int device) {
  auto [it, made] = g_devices.try_emplace(device);
  DnnDevice& d = it->second;
  if (!made) return d;
  if (!dnn_lib().error.empty()) return d.error = dnn_lib().error, d;
  rt().run_library(device, "cuDNN setup", [&](void* stream) {
    if (f().cudnnCreate(&d.handle) != dnn::kSuccess || f().cudnnSetStream(d.handle, stream) != dnn::kSuccess)
      d.error = "cudnnCreate failed: " + last_error(), d.handle = nullptr;
  });
  return d;
}

void build(int device, DnnDevice& d, const Layout& l, Plan& p) {
  rt().run_library(device, "cuDNN setup", [&](void*) {
    try {
      Graph g;
      if (l.backward) backward_graph(g, l);
      else forward_graph(g, l);
      p.graph = g.finalize(d.handle);
      Desc heur(dnn::ENGINEHEUR);
      const int mode = dnn::kHeurModeA;
      heur.set(dnn::ENGINEHEUR_OPERATION_GRAPH, *p.graph).set(dnn::ENGINEHEUR_MODE, dnn::TYPE_HEUR_MODE, 1, &mode)
          .finalize("the engine heuristics");
      int64_t n = 0;
      f().cudnnBackendGetAttribute(heur.get(), dnn::ENGINEHEUR_RESULTS, dnn::TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr);
      std::vector<dnn::Descriptor> raw;
      for (int64_t i = 0; i < n; ++i) {
        p.configs.push_back(std::make_unique<Desc>(dnn::ENGINECFG));
        raw.push_back(p.configs.back()->get());
      }
      int64_t returned = 0;
      f().cudnnBackendGetAttribute(heur.get(), dnn::ENGINEHEUR_RESULTS, dnn::TYPE_BACKEND_DESCRIPTOR, n, &returned,
                                   raw.data());
      for (int64_t i = 0; i < returned && !p.plan; ++i) {  // the first configuration that builds
        auto plan = std::make_unique<Desc>(dnn::EXECUTION_PLAN);
        dnn::Descriptor cfg = raw[size_t(i)];
        plan->set(dnn::EXECUTION_PLAN_ENGINE_CONFIG, dnn::TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
        if (f().cudnnBackendFinalize(plan->get()) != dnn::kSuccess) continue;
        int64_t count = 0;
        f().cudnnBackendGetAttribute(plan->get(), dnn::EXECUTION_PLAN_WORKSPACE_SIZE, dnn::TYPE_INT64, 1, &count,
                                     &p.workspace);
        p.plan = std::move(plan);
      }
      if (!p.plan) p.error = "no cuDNN engine runs this attention (" + std::to_string(returned) + " tried): " + last_error();
    } catch (const RuntimeError& e) {
      p.error = e.what();
    }
  });
  if (!p.plan)
    cuda::warn_once("cudnn-plan", p.error + "; attention of that layout runs on PCP's own kernels");
}

// The plan of a layout (built on first use), or nullptr where cuDNN does not take it.
const Plan* plan_for(int device, const Layout& l, dnn::Handle* handle) {
  std::lock_guard<std::mutex> g(g_mu);
  DnnDevice& d = dnn_device(device);
  if (!d.handle) return nullptr;
  *handle = d.handle;
  auto [it, made] = d.plans.try_emplace(l);
  if (made) build(device, d, l, it->second);
  return it->second.plan ? &it->second : nullptr;
}

// The device address of element `offset` of t's buffer (the heads' offsets count from the buffer).
void* at(const Tensor& t, int64_t offset) {
  return reinterpret_cast<void*>(rt().address(buffer_of(t)) + uint64_t(offset) * itemsize(t.dtype()));
}

// Whether cuDNN can read these heads: 16-bit, D a multiple of 8 up to 128, 16-byte aligned rows.
bool takes(const AttentionHeads& a, DType dtype, const AttentionDropout& drop) {
  if (drop.p != 0.0 || (dtype != DType::BFloat16 && dtype != DType::Float16)) return false;
  if (a.D % 8 || a.D > 128) return false;
  for (int64_t s : {a.sb, a.sh, a.st, a.q_off, a.k_off, a.v_off})
    if (s % 8) return false;  // 16 bytes of 16-bit elements
  return true;
}

}  // namespace

void* cudnn(int device, std::string* version, std::string* why) {
  std::lock_guard<std::mutex> g(g_mu);
  DnnDevice& d = dnn_device(device);
  if (version) *version = d.handle ? dnn_lib().version : "";
  if (why) *why = d.error;
  return d.handle;
}

bool attention_available(DType dtype, int device) {
  return (dtype == DType::BFloat16 || dtype == DType::Float16) && enabled(device) && cudnn(device) != nullptr;
}

bool attention(const AttentionHeads& a, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
               const Tensor& lse, double scale, bool causal, const AttentionDropout& drop) {
  const int device = q.device().index;
  if (!enabled(device) || !takes(a, q.dtype(), drop)) return false;
  const Layout l{q.dtype() == DType::BFloat16 ? dnn::DATA_BFLOAT16 : dnn::DATA_HALF, causal, false, a.B, a.H, a.T, a.D,
                 {a.sb, a.sh, a.st, 1}, {0, 0, 0, 0}};
  dnn::Handle handle = nullptr;
  const Plan* p = plan_for(device, l, &handle);
  if (!p) return false;
  const float sc = float(scale), neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<int64_t> uids = {Q, K, V, O, STATS, SCALE};
  std::vector<void*> ptrs = {at(q, a.q_off), at(k, a.k_off), at(v, a.v_off), reinterpret_cast<void*>(address(o)),
                             reinterpret_cast<void*>(address(lse)), const_cast<float*>(&sc)};
  if (causal) uids.push_back(NEG_INF), ptrs.push_back(const_cast<float*>(&neg_inf));
  Buffer* ws = gpu::allocate(device, size_t(std::max<int64_t>(p->workspace, 256)));
  void* ws_ptr = reinterpret_cast<void*>(rt().address(ws));
  rt().run_library(device, "cuDNN attention", [&](void*) {
    Desc pack(dnn::VARIANT_PACK);
    pack.set(dnn::VARIANT_PACK_WORKSPACE, dnn::TYPE_VOID_PTR, 1, &ws_ptr)
        .set(dnn::VARIANT_PACK_DATA_POINTERS, dnn::TYPE_VOID_PTR, int64_t(ptrs.size()), ptrs.data())
        .set(dnn::VARIANT_PACK_UNIQUE_IDS, dnn::TYPE_INT64, int64_t(uids.size()), uids.data())
        .finalize("the variant pack");
    if (const dnn::Status s = f().cudnnBackendExecute(handle, p->plan->get(), pack.get()); s != dnn::kSuccess)
      fail<RuntimeError>("cudnn: the attention forward failed (", s, "): ", last_error());
  });
  gpu::deallocate(device, ws, size_t(std::max<int64_t>(p->workspace, 256)));  // freed after the work, in stream order
  return true;
}

bool attention_backward(const AttentionHeads& a, const AttentionHeads& grads, const Tensor& q, const Tensor& k,
                        const Tensor& v, const Tensor& o, const Tensor& go, const Tensor& lse, const Tensor& dq,
                        const Tensor& dk, const Tensor& dv, double scale, bool causal, const AttentionDropout& drop) {
  const int device = q.device().index;
  if (!enabled(device) || !takes(a, q.dtype(), drop) || !takes(grads, q.dtype(), drop)) return false;
  const Layout l{q.dtype() == DType::BFloat16 ? dnn::DATA_BFLOAT16 : dnn::DATA_HALF, causal, true, a.B, a.H, a.T, a.D,
                 {a.sb, a.sh, a.st, 1}, {grads.sb, grads.sh, grads.st, 1}};
  dnn::Handle handle = nullptr;
  const Plan* p = plan_for(device, l, &handle);
  if (!p) return false;
  const float sc = float(scale), neg_inf = -std::numeric_limits<float>::infinity(), one = 1.0f;
  // One workspace: dQ's float32 accumulator, softmax_sum, then cuDNN's own.
  const int64_t accum = a.B * a.H * a.T * a.D * 4, sums = (a.B * a.H * a.T * 4 + 255) / 256 * 256;
  const size_t bytes = size_t(accum + sums + std::max<int64_t>(p->workspace, 256));
  Buffer* ws = gpu::allocate(device, bytes);
  const uint64_t w = rt().address(ws);
  void* ws_ptr = reinterpret_cast<void*>(w + accum + sums);
  std::vector<int64_t> uids = {Q, K, V, O, DO, STATS, SCALE, ONE, DQ, DK, DV, DQ_ACCUM, SOFTMAX_SUM};
  std::vector<void*> ptrs = {at(q, a.q_off), at(k, a.k_off), at(v, a.v_off), reinterpret_cast<void*>(address(o)),
                             reinterpret_cast<void*>(address(go)), reinterpret_cast<void*>(address(lse)),
                             const_cast<float*>(&sc), const_cast<float*>(&one), at(dq, grads.q_off),
                             at(dk, grads.k_off), at(dv, grads.v_off), reinterpret_cast<void*>(w),
                             reinterpret_cast<void*>(w + accum)};
  if (causal) uids.push_back(NEG_INF), ptrs.push_back(const_cast<float*>(&neg_inf));
  rt().run_library(device, "cuDNN attention backward", [&](void*) {
    Desc pack(dnn::VARIANT_PACK);
    pack.set(dnn::VARIANT_PACK_WORKSPACE, dnn::TYPE_VOID_PTR, 1, &ws_ptr)
        .set(dnn::VARIANT_PACK_DATA_POINTERS, dnn::TYPE_VOID_PTR, int64_t(ptrs.size()), ptrs.data())
        .set(dnn::VARIANT_PACK_UNIQUE_IDS, dnn::TYPE_INT64, int64_t(uids.size()), uids.data())
        .finalize("the variant pack");
    if (const dnn::Status s = f().cudnnBackendExecute(handle, p->plan->get(), pack.get()); s != dnn::kSuccess)
      fail<RuntimeError>("cudnn: the attention backward failed (", s, "): ", last_error());
  });
  gpu::deallocate(device, ws, bytes);
  return true;
}

}  // namespace pcp::gpu::vendor
