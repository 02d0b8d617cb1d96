#include "pcp/backend/gpu/vendor/cuda_device.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>

#include "pcp/backend/gpu/launch.h"
#include "pcp/core/error.h"

namespace pcp::gpu::vendor {
namespace {

// libcuda, loaded once; its table stays valid for the whole process.
std::string resolve(const Library& lib, CudaFns& fns) {
  std::string missing;
  PCP_CUDA_FNS(PCP_RESOLVE_FN_)
  return missing;
}

struct Driver {
  CudaFns fns;
  std::string error;  // why it is not usable
};

const Driver& driver() {
  static const Driver d = [] {
    Driver d;
    const Library lib = load_library({"libcuda.so.1", "libcuda.so"});
    if (!lib.handle) return d.error = "no NVIDIA driver (" + lib.error + ")", d;
    const std::string missing = resolve(lib, d.fns);
    if (!missing.empty()) return d.error = lib.path + " lacks " + missing + " (driver too old)", d;
    if (d.fns.cuInit(0) != CUDA_SUCCESS) return d.error = "cuInit failed (no usable CUDA device)", d;
    return d;
  }();
  return d;
}

// A mapping of a PCP buffer into CUDA (kept with the buffer: Runtime::attach).
struct Mapping {
  CUexternalMemory memory;
  CUdeviceptr address;
};

}  // namespace

const CudaFns& cu() { return driver().fns; }

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* msg = nullptr;
  if (cu().cuGetErrorString) cu().cuGetErrorString(r, &msg);
  fail<RuntimeError>("cuda: ", what, " failed: ", msg ? msg : "unknown error", " (", r, ")");
}

ContextScope::ContextScope(CUcontext ctx) { check(cu().cuCtxPushCurrent(ctx), "cuCtxPushCurrent"); }
ContextScope::~ContextScope() {
  CUcontext popped;
  cu().cuCtxPopCurrent(&popped);
}

CudaDevice::CudaDevice(int index, const DeviceInfo& info) : index_(index) {
  if (!driver().error.empty()) fail<RuntimeError>(driver().error);
  int n = 0;
  check(cu().cuDeviceGetCount(&n), "cuDeviceGetCount");
  bool found = false;
  for (int i = 0; i < n && !found; ++i) {
    CUdevice d;
    CUuuid id;
    if (cu().cuDeviceGet(&d, i) != CUDA_SUCCESS || cu().cuDeviceGetUuid(&id, d) != CUDA_SUCCESS) continue;
    char hex[33];
    for (int b = 0; b < 16; ++b) std::snprintf(hex + 2 * b, 3, "%02x", unsigned(uint8_t(id.bytes[b])));
    if (info.uuid == hex) dev_ = d, found = true;
  }
  if (!found) fail<RuntimeError>("no CUDA device has the UUID of ", info.name, " (", info.uuid, ")");
  int major = 0, minor = 0;
  cu().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_);
  cu().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_);
  cc_ = major * 10 + minor;
  check(cu().cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  ContextScope scope(ctx_);
  check(cu().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cu().cuMemAlloc(&workspace_, kWorkspaceBytes), "cuMemAlloc (the libraries' workspace)");
}

// A device whose setup failed part way (a device in use lives as long as the process).
CudaDevice::~CudaDevice() {
  if (!ctx_) return;
  {
    ContextScope scope(ctx_);
    if (workspace_) cu().cuMemFree(workspace_);
    if (stream_) cu().cuStreamDestroy(stream_);
  }
  cu().cuDevicePrimaryCtxRelease(dev_);
}

void CudaDevice::import_timeline() {
  const int fd = rt().export_timeline(index_);
  if (fd < 0) fail<RuntimeError>("vulkan: the timeline semaphore could not be exported");
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC desc{};
  desc.type = CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
  desc.handle.fd = fd;
  ContextScope scope(ctx_);
  const CUresult r = cu().cuImportExternalSemaphore(&timeline_, &desc);
  if (r != CUDA_SUCCESS) close(fd);  // CUDA owns it once imported
  check(r, "cuImportExternalSemaphore (Vulkan's timeline semaphore)");
}

std::atomic<int> g_fail_imports{0};

void CudaDevice::fail_imports(int n) { g_fail_imports = n; }

bool CudaDevice::addresses(std::initializer_list<const Tensor*> ts, std::initializer_list<CUdeviceptr*> out) {
  try {
    auto o = out.begin();
    for (const Tensor* t : ts) **o++ = address(*t);
    return true;
  } catch (const RuntimeError& e) {
    warn_once("import", std::string(e.what()) + ": that op runs on PCP's Vulkan kernels instead");
    return false;
  }
}

CUdeviceptr CudaDevice::address(const Tensor& t) {
  Buffer* buffer = buffer_of(t);
  auto* m = static_cast<Mapping*>(rt().attached(index_, buffer));
  if (!m) {
    if (g_fail_imports > 0 && g_fail_imports-- > 0)
      fail<RuntimeError>("cuda: cuImportExternalMemory failed: an injected failure (_vendor_fail_imports)");
    uint64_t bytes = 0;
    const int fd = rt().export_memory(index_, buffer, &bytes);
    if (fd < 0) fail<RuntimeError>("vulkan: a buffer of ", t.device().str(), " could not be exported to CUDA");
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc{};
    desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    desc.handle.fd = fd;
    desc.size = bytes;
    ContextScope scope(ctx_);
    auto fresh = std::make_unique<Mapping>();
    const CUresult r = cu().cuImportExternalMemory(&fresh->memory, &desc);
    if (r != CUDA_SUCCESS) close(fd);
    check(r, "cuImportExternalMemory (a Vulkan buffer)");
    CUDA_EXTERNAL_MEMORY_BUFFER_DESC whole{};
    whole.size = bytes;
    if (const CUresult r2 = cu().cuExternalMemoryGetMappedBuffer(&fresh->address, fresh->memory, &whole);
        r2 != CUDA_SUCCESS) {
      cu().cuDestroyExternalMemory(fresh->memory);
      check(r2, "cuExternalMemoryGetMappedBuffer");
    }
    m = static_cast<Mapping*>(rt().attach(index_, buffer, fresh.get()));
    if (m == fresh.get()) {
      fresh.release();
    } else {  // another thread mapped it first
      cu().cuMemFree(fresh->address);
      cu().cuDestroyExternalMemory(fresh->memory);
    }
  }
  return m->address + CUdeviceptr(t.offset()) * CUdeviceptr(itemsize(t.dtype()));
}

CUevent CudaDevice::event() {
  {
    std::lock_guard<std::mutex> g(events_mu_);
    if (!events_.empty()) {
      CUevent e = events_.back();
      events_.pop_back();
      return e;
    }
  }
  CUevent e;
  check(cu().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return e;
}

void CudaDevice::run(const char* name, const std::function<void(CUstream)>& work) {
  const bool timed = rt().profiling(index_);
  rt().run_foreign(index_, [&](uint64_t wait) {
    ContextScope scope(ctx_);
    if (wait) {
      CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS p{};
      p.params.fence.value = wait;
      check(cu().cuWaitExternalSemaphoresAsync(&timeline_, &p, 1, stream_), "cuWaitExternalSemaphoresAsync");
    }
    if (!timed) return work(stream_);
    Timed t{name, event(), event()};
    check(cu().cuEventRecord(t.start, stream_), "cuEventRecord");
    work(stream_);
    check(cu().cuEventRecord(t.end, stream_), "cuEventRecord");
    std::lock_guard<std::mutex> g(events_mu_);
    timed_.push_back(t);
  });
}

bool CudaDevice::signal(uint64_t value) {
  ContextScope scope(ctx_);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS p{};
  p.params.fence.value = value;
  if (cu().cuSignalExternalSemaphoresAsync(&timeline_, &p, 1, stream_) == CUDA_SUCCESS) return true;
  cu().cuStreamSynchronize(stream_);  // the runtime signals from the host once this returns
  return false;
}

std::vector<Runtime::KernelTime> CudaDevice::times() {
  std::vector<Timed> timed;
  {
    std::lock_guard<std::mutex> g(events_mu_);
    timed.swap(timed_);
  }
  std::map<std::string, Runtime::KernelTime> by_name;
  ContextScope scope(ctx_);
  for (const Timed& t : timed) {
    float ms = 0;
    if (cu().cuEventSynchronize(t.end) == CUDA_SUCCESS && cu().cuEventElapsedTime(&ms, t.start, t.end) == CUDA_SUCCESS) {
      auto& k = by_name[t.name];
      k.name = t.name;
      k.count++;
      k.seconds += ms * 1e-3;
    }
  }
  std::lock_guard<std::mutex> g(events_mu_);
  for (const Timed& t : timed) events_.push_back(t.start), events_.push_back(t.end);
  std::vector<Runtime::KernelTime> out;
  for (auto& [name, k] : by_name) out.push_back(k);
  return out;
}

Runtime::Foreign CudaDevice::foreign() {
  Runtime::Foreign f;
  f.signal = [this](uint64_t value) { return signal(value); };
  f.forget = [this](void* mapping) {
    auto* m = static_cast<Mapping*>(mapping);
    ContextScope scope(ctx_);
    cu().cuMemFree(m->address);
    cu().cuDestroyExternalMemory(m->memory);
    delete m;
  };
  f.times = [this] { return times(); };
  return f;
}

}  // namespace pcp::gpu::vendor
