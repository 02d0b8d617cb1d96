#include "pcp/backend/cuda/driver.h"

#include "pcp/core/error.h"

namespace pcp::cuda {
namespace {

std::string resolve(const Library& lib, DriverFns& fns) {
  std::string missing;
  PCP_CUDA_FNS(PCP_RESOLVE_FN_)
  return missing;
}

std::string resolve(const Library& lib, NvrtcFns& fns) {
  std::string missing;
  PCP_NVRTC_FNS(PCP_RESOLVE_FN_)
  return missing;
}

// The first entry point still missing once cuEventElapsedTime has its fallback.
std::string resolve_rest_ok(const DriverFns& fns) {
  std::string missing;
  const auto check_one = [&](const void* f, const char* symbol) {
    if (!f && missing.empty()) missing = symbol;
  };
#define PCP_CHECK_FN_(member, symbol, type) check_one(reinterpret_cast<const void*>(fns.member), symbol);
  PCP_CUDA_FNS(PCP_CHECK_FN_)
#undef PCP_CHECK_FN_
  return missing;
}

}  // namespace

const Driver& driver() {
  static const Driver d = [] {
    Driver d;
    const Library lib = load_library({"libcuda.so.1", "libcuda.so"});
    if (!lib.handle) return d.error = "no NVIDIA driver (" + lib.error + ")", d;
    std::string missing = resolve(lib, d.fns);
    if (!d.fns.cuEventElapsedTime) {  // drivers before CUDA 12.8 have only the first version
      d.fns.cuEventElapsedTime =
          reinterpret_cast<decltype(d.fns.cuEventElapsedTime)>(find_symbol(lib, "cuEventElapsedTime"));
      if (d.fns.cuEventElapsedTime && missing == "cuEventElapsedTime_v2") missing = resolve_rest_ok(d.fns);
    }
    if (!missing.empty())
      return d.error = lib.path + " lacks " + missing + " (an NVIDIA driver older than CUDA 11.2)", d;
    if (d.fns.cuInit(0) != CUDA_SUCCESS) return d.error = "cuInit failed (no usable CUDA device)", d;
    return d;
  }();
  return d;
}

const Nvrtc& nvrtc() {
  static const Nvrtc n = [] {
    Nvrtc n;
    const Library lib = load_library({"libnvrtc.so.13", "libnvrtc.so.12"});
    if (!lib.handle) return n.error = "NVRTC not loaded: " + lib.error, n;
    if (const std::string missing = resolve(lib, n.fns); !missing.empty())
      return n.error = lib.path + " lacks " + missing, n;
    int major = 0, minor = 0;
    n.fns.nvrtcVersion(&major, &minor);
    n.version = std::to_string(major) + "." + std::to_string(minor);
    return n;
  }();
  return n;
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* msg = nullptr;
  if (cu().cuGetErrorString) cu().cuGetErrorString(r, &msg);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) fail<MemoryError>("cuda: ", what, ": out of memory");
  fail<RuntimeError>("cuda: ", what, " failed: ", msg ? msg : "unknown error", " (", r, ")");
}

ContextScope::ContextScope(CUcontext ctx) { check(cu().cuCtxPushCurrent(ctx), "cuCtxPushCurrent"); }
ContextScope::~ContextScope() {
  CUcontext popped;
  cu().cuCtxPopCurrent(&popped);
}

}  // namespace pcp::cuda
