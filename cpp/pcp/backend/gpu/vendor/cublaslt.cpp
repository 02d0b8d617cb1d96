// Products through cuBLASLt on PCP's buffers. cuBLAS is column-major and PCP row-major, so the
// row-major out (M x N) = a @ b is computed as its column-major transpose out^T (N x M) =
// b^T @ a^T: each operand is read where it lies, a row-major matrix as its transpose with op N,
// a column-major one (a transposed view, such as Linear's W.T) with op T.
#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/cuda/library.h"
#include "pcp/backend/gpu/memory.h"
#include "pcp/backend/gpu/vendor/state.h"
#include "pcp/core/error.h"

namespace pcp::gpu::vendor {
namespace {

struct LtFns {
  PCP_CUBLASLT_FNS(PCP_DECLARE_FN_)
};

std::string resolve(const cuda::Library& lib, LtFns& fns) {
  std::string missing;
  PCP_CUBLASLT_FNS(PCP_RESOLVE_FN_)
  return missing;
}

struct LtLibrary {
  LtFns fns;
  std::string version, error;
};

const LtLibrary& lt() {
  static const LtLibrary L = [] {
    LtLibrary L;
    const cuda::Library lib = cuda::load_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"});
    if (!lib.handle) return L.error = "cuBLASLt not loaded: " + lib.error, L;
    if (const std::string missing = resolve(lib, L.fns); !missing.empty()) return L.error = lib.path + " lacks " + missing, L;
    const size_t v = L.fns.cublasLtGetVersion();  // major * 10000 + minor * 100 + patch
    L.version = lib.path + " " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                std::to_string(v % 100);
    if (v < 110000) {
      L.error = L.version + " is older than 11.0";
      cuda::warn_once("cublaslt-version", L.error + ": products run on PCP's own kernels");
    }
    return L;
  }();
  return L;
}

void lt_check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const char* msg = lt().fns.cublasLtGetStatusString ? lt().fns.cublasLtGetStatusString(s) : nullptr;
  fail<RuntimeError>("cublasLt: ", what, " failed: ", msg ? msg : "unknown status", " (", s, ")");
}

int cuda_type(DType t) {
  return t == DType::Float16 ? CUDA_R_16F : t == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_32F;
}

// A matrix operand as cuBLAS reads it: op(matrix) where `matrix` is rows x cols column-major
// with leading dimension ld, and batch_stride elements between the batch's matrices.
struct Operand {
  int op = CUBLAS_OP_N;
  int64_t rows = 0, cols = 0, ld = 0;
};

// The transpose of a PCP matrix of R x C with strides (rs, cs), as a cuBLAS operand: row-major
// memory is its transpose's column-major (op N); column-major memory is itself (op T). Strides
// of unit dimensions do not matter; nullopt when neither axis is contiguous.
std::optional<Operand> transposed(int64_t R, int64_t C, int64_t rs, int64_t cs) {
  if (C == 1) cs = 1;
  if (R == 1) rs = std::max<int64_t>(C, 1);
  if (cs == 1 && rs >= C) return Operand{CUBLAS_OP_N, C, R, rs};
  if (rs == 1 && cs >= R && cs >= 1) return Operand{CUBLAS_OP_T, R, C, cs};
  return std::nullopt;
}

// The largest power of two up to 256 that divides every value (addresses and byte strides):
// the alignment the heuristic may assume.
uint32_t alignment(std::initializer_list<uint64_t> values) {
  uint32_t a = 256;
  for (uint64_t v : values)
    while (a > 1 && v % a) a /= 2;
  return a;
}

// One product's configuration: what the heuristic is asked about, the key of its cache.
struct Config {
  int in_type, out_type, compute;
  Operand A, B;  // cuBLAS's A (PCP's b) and B (PCP's a)
  int64_t M, N, K, batch, stride_a, stride_b, stride_d;
  uint32_t align_a, align_b, align_d;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT, align_aux = 0;  // GELU's: an aux matrix like D
  auto key() const {
    return std::make_tuple(in_type, out_type, compute, A.op, A.rows, A.cols, A.ld, B.op, B.rows, B.cols, B.ld, M, N,
                           K, batch, stride_a, stride_b, stride_d, align_a, align_b, align_d, epilogue, align_aux);
  }
  bool operator<(const Config& o) const { return key() < o.key(); }
};

// Descriptors and the algorithm the heuristic chose for a Config (kept for the process).
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  bool ok = false;  // the heuristic found an algorithm
};

void set_aux(cublasLtMatmulDesc_t desc, uint64_t aux) {
  const void* ptr = reinterpret_cast<const void*>(aux);
  lt_check(lt().fns.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &ptr, sizeof ptr),
           "cublasLtMatmulDescSetAttribute");
}

cublasLtMatrixLayout_t layout(int type, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  const LtFns& f = lt().fns;
  cublasLtMatrixLayout_t l;
  lt_check(f.cublasLtMatrixLayoutCreate(&l, type, uint64_t(rows), uint64_t(cols), ld), "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    const int32_t count = int32_t(batch);
    lt_check(f.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
             "cublasLtMatrixLayoutSetAttribute");
    lt_check(f.cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride),
             "cublasLtMatrixLayoutSetAttribute");
  }
  return l;
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLASLt's workspace on Hopper, as PyTorch's

// A device's cuBLASLt handle and workspace, made on first use in its context.
struct LtDevice {
  cublasLtHandle_t handle = nullptr;
  uint64_t workspace = 0;
  std::string error;
};

LtDevice& lt_device(int device) {
  static std::mutex mu;
  static std::map<int, LtDevice> devices;
  std::lock_guard<std::mutex> g(mu);
  auto [it, made] = devices.try_emplace(device);
  LtDevice& d = it->second;
  if (!made) return d;
  if (!lt().error.empty()) return d.error = lt().error, d;
  // The workspace is PCP's memory, counted by memory_stats like any other; kept for the process.
  static std::vector<Buffer*> kept;
  Buffer* ws = gpu::allocate(device, kWorkspaceBytes);
  kept.push_back(ws);
  d.workspace = rt().address(ws);
  rt().run_library(device, "cublasLt setup", [&](void*) {
    if (lt().fns.cublasLtCreate(&d.handle) != CUBLAS_STATUS_SUCCESS) d.error = "cublasLtCreate failed", d.handle = nullptr;
  });
  return d;
}

// aux: the address of the epilogue's matrix (its alignment may steer the heuristic), 0 without.
Plan make_plan(int device, const LtDevice& ld, const Config& c, uint64_t aux) {
  const LtFns& f = lt().fns;
  Plan p;
  lt_check(f.cublasLtMatmulDescCreate(&p.desc, c.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  lt_check(f.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &c.A.op, sizeof c.A.op),
           "cublasLtMatmulDescSetAttribute");
  lt_check(f.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &c.B.op, sizeof c.B.op),
           "cublasLtMatmulDescSetAttribute");
  if (c.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    const int64_t aux_ld = c.N;  // D's: the aux matrix is laid out as D
    lt_check(f.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epilogue, sizeof c.epilogue),
             "cublasLtMatmulDescSetAttribute");
    lt_check(f.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld),
             "cublasLtMatmulDescSetAttribute");
    set_aux(p.desc, aux);
  }
  p.a = layout(c.in_type, c.A.rows, c.A.cols, c.A.ld, c.batch, c.stride_a);
  p.b = layout(c.in_type, c.B.rows, c.B.cols, c.B.ld, c.batch, c.stride_b);
  p.d = layout(c.out_type, c.N, c.M, c.N, c.batch, c.stride_d);
  cublasLtMatmulPreference_t pref;
  lt_check(f.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = kWorkspaceBytes;
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  // Split-K partial sums in float32 (the compute type), never in a 16-bit output type: products
  // accumulate in float32, as PCP's own kernels do.
  const uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction, sizeof reduction);
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &c.align_a, sizeof c.align_a);
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &c.align_b, sizeof c.align_b);
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &c.align_d, sizeof c.align_d);
  f.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &c.align_d, sizeof c.align_d);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  rt().run_library(device, "cublasLt setup", [&](void*) {  // the heuristic reads the current device
    f.cublasLtMatmulAlgoGetHeuristic(ld.handle, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result, &found);
  });
  f.cublasLtMatmulPreferenceDestroy(pref);
  p.ok = found > 0 && result.state == CUBLAS_STATUS_SUCCESS;
  p.algo = result.algo;
  p.workspace = result.workspaceSize;
  return p;
}

const Plan& plan_for(int device, const LtDevice& ld, const Config& c, uint64_t aux) {
  static std::mutex mu;
  static std::map<std::pair<int, Config>, Plan> plans;
  std::lock_guard<std::mutex> g(mu);
  auto key = std::make_pair(device, c);
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, make_plan(device, ld, c, aux)).first;
  return it->second;
}

bool g_allow_tf32 = false;

}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }

cublasLtHandle_t cublaslt(int device, std::string* version, std::string* why) {
  LtDevice& d = lt_device(device);
  if (version) *version = d.handle ? lt().version : "";
  if (why) *why = d.error;
  return d.handle;
}

namespace {
// A product, with epilogue (cublasLtEpilogue_t) over the matrix aux: out's shape, dtype and
// layout (GELU_AUX writes it, DGELU reads it); epilogues take single, unbatched products.
bool product(const Tensor& a_in, const Tensor& b_in, const Tensor& out, const Shape& batch, float alpha,
             uint32_t epilogue, const Tensor* aux) {
  const int device = out.device().index;
  if (!enabled(device)) return false;
  const LtDevice& ld = lt_device(device);
  if (!ld.handle) return false;
  const DType t = a_in.dtype();
  const bool half = t == DType::Float16 || t == DType::BFloat16;
  if ((t != DType::Float32 && !half) || b_in.dtype() != t || (out.dtype() != t && out.dtype() != DType::Float32))
    return false;
  const int64_t M = a_in.shape()[a_in.ndim() - 2], K = a_in.shape().back(), N = b_in.shape().back();
  if (M == 0 || N == 0 || K == 0 || !out.is_contiguous()) return false;  // K = 0: the caller fills zeros

  // The batch: dimensions of one entry dropped, neighbours merged where every operand steps
  // evenly across them; cuBLASLt takes the innermost as its strided batch and the rest loop here.
  struct Dim {
    int64_t n, sa, sb, sd;
  };
  const auto batch_dims = [&](const Tensor& a, const Tensor& b) {
    std::vector<Dim> dims;
    int64_t sd = M * N;
    for (size_t i = batch.size(); i-- > 0;) {
      const auto stride = [&](const Tensor& x) {
        const size_t lead = batch.size() - (x.ndim() - 2);
        return i < lead || x.shape()[i - lead] == 1 ? int64_t(0) : x.strides()[i - lead];
      };
      const Dim d{batch[i], stride(a), stride(b), sd};
      sd *= batch[i];
      if (d.n == 1) continue;
      if (!dims.empty()) {
        Dim& in = dims.back();
        if (d.sa == in.sa * in.n && d.sb == in.sb * in.n && d.sd == in.sd * in.n) {
          in.n *= d.n;
          continue;
        }
      }
      dims.push_back(d);
    }
    return dims;
  };
  // An operand neither of whose axes is contiguous is copied first (gpu::copy), and so are both
  // when their batch dimensions do not merge into one (attention's heads of a packed projection):
  // one strided-batch call beats a loop of small ones.
  const auto copied = [](const Tensor& x) {
    Tensor c = Tensor::empty(x.shape(), x.dtype(), x.device());
    copy(x, c);
    return c;
  };
  const auto readable = [&](const Tensor& x) {
    const size_t n = x.ndim();
    return transposed(x.shape()[n - 2], x.shape()[n - 1], x.strides()[n - 2], x.strides()[n - 1]) ? x : copied(x);
  };
  Tensor a = readable(a_in), b = readable(b_in);
  std::vector<Dim> dims = batch_dims(a, b);
  if (dims.size() > 1) {
    if (!a.is_contiguous()) a = copied(a);
    if (!b.is_contiguous()) b = copied(b);
    dims = batch_dims(a, b);
  }
  const Operand A = *transposed(K, N, b.strides()[b.ndim() - 2], b.strides().back());
  const Operand B = *transposed(M, K, a.strides()[a.ndim() - 2], a.strides().back());
  const Dim inner = dims.empty() ? Dim{1, 0, 0, M * N} : dims.front();
  if (inner.n > INT32_MAX) return false;

  const size_t in_bytes = itemsize(t), out_bytes = itemsize(out.dtype());
  const uint64_t pa = address(a), pb = address(b), pd = address(out);
  Config c{cuda_type(t), cuda_type(out.dtype()),
           t == DType::Float32 && g_allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, A, B, M, N, K,
           inner.n, inner.sb, inner.sa, inner.sd,
           alignment({pb, uint64_t(A.ld) * in_bytes, uint64_t(inner.sb) * in_bytes}),
           alignment({pa, uint64_t(B.ld) * in_bytes, uint64_t(inner.sa) * in_bytes}),
           alignment({pd, uint64_t(N) * out_bytes, uint64_t(inner.sd) * out_bytes})};
  // Outer batch entries, each an offset of a, b and out (elements).
  std::vector<std::array<int64_t, 3>> entries{{0, 0, 0}};
  for (size_t i = 1; i < dims.size(); ++i) {
    std::vector<std::array<int64_t, 3>> next;
    for (const auto& e : entries)
      for (int64_t j = 0; j < dims[i].n; ++j)
        next.push_back({e[0] + j * dims[i].sa, e[1] + j * dims[i].sb, e[2] + j * dims[i].sd});
    entries.swap(next);
  }
  for (const auto& e : entries)  // the alignments hold for every entry
    c.align_a = std::min(c.align_a, alignment({uint64_t(e[1]) * in_bytes})),
    c.align_b = std::min(c.align_b, alignment({uint64_t(e[0]) * in_bytes})),
    c.align_d = std::min(c.align_d, alignment({uint64_t(e[2]) * out_bytes}));
  uint64_t pa_aux = 0;
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    if (entries.size() != 1 || inner.n != 1 || !aux->is_contiguous() || aux->shape() != out.shape() ||
        aux->dtype() != out.dtype() || N % 8)  // cuBLASLt's aux leading dimension: a multiple of 8
      return false;
    pa_aux = address(*aux);
    c.epilogue = epilogue, c.align_aux = alignment({pa_aux});
  }
  const Plan& p = plan_for(device, ld, c, pa_aux);
  if (!p.ok) return false;
  const float zero = 0.0f;
  rt().run_library(device, epilogue == CUBLASLT_EPILOGUE_DEFAULT ? "cublasLt matmul" : "cublasLt matmul+gelu",
                   [&](void* stream) {
    if (pa_aux) set_aux(p.desc, pa_aux);  // under the device's lock: the plan's descriptor is shared
    for (const auto& e : entries) {
      const uint64_t ea = pa + uint64_t(e[0] * int64_t(in_bytes)), eb = pb + uint64_t(e[1] * int64_t(in_bytes));
      void* ed = reinterpret_cast<void*>(pd + uint64_t(e[2] * int64_t(out_bytes)));
      lt_check(lt().fns.cublasLtMatmul(ld.handle, p.desc, &alpha, reinterpret_cast<const void*>(eb), p.a,
                                       reinterpret_cast<const void*>(ea), p.b, &zero, ed, p.d, ed, p.d, &p.algo,
                                       reinterpret_cast<void*>(ld.workspace), p.workspace,
                                       static_cast<CUstream>(stream)),
               "cublasLtMatmul");
    }
  });
  return true;
}
}  // namespace

bool matmul(const Tensor& a, const Tensor& b, const Tensor& out, const Shape& batch, float alpha) {
  return product(a, b, out, batch, alpha, CUBLASLT_EPILOGUE_DEFAULT, nullptr);
}

bool matmul_epilogue(MatmulEpilogue e, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& aux,
                     float alpha) {
  return product(a, b, out, Shape{}, alpha, e == MatmulEpilogue::GeluTanh ? CUBLASLT_EPILOGUE_GELU_AUX
                                                                          : CUBLASLT_EPILOGUE_DGELU, &aux);
}

}  // namespace pcp::gpu::vendor
