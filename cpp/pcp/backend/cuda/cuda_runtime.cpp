// The CUDA runtime: PCP's GPU backend on NVIDIA GPUs through CUDA's driver API, so that NVIDIA's
// libraries (cuBLASLt, cuDNN: gpu/vendor/) run in the same context and stream as PCP's own kernels.
// The kernels are the same sources every GPU runs (metal/*.comp), translated to CUDA C++ at build
// time (metal/glsl_to_cuda.py) and compiled by NVRTC at first use, for this GPU's architecture;
// the cubins are kept in a disk cache. libcuda and NVRTC load at run time (no CUDA toolkit at
// build time): where they, a CUDA device or cuBLASLt are missing, the Vulkan runtime runs instead.
//
// Execution is one in-order stream per device: launches, copies and library calls queue there,
// and memory is allocated and freed in stream order (cuMemAllocAsync / cuMemFreeAsync), so a
// buffer released while queued work still uses it is reused only after that work.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "pcp/backend/cuda/compile.h"
#include "pcp/backend/cuda/driver.h"
#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

using namespace pcp::cuda;

constexpr uint32_t kMaxBindings = 12;  // as the Vulkan runtime's

// A device buffer (Buffer is each runtime's own type; this one's is a device pointer).
struct CudaBuffer {
  CUdeviceptr ptr = 0;
  size_t size = 0;
};
CudaBuffer* cuda_buffer(const Buffer* b) { return reinterpret_cast<CudaBuffer*>(const_cast<Buffer*>(b)); }

// 64-bit FNV-1a, twice with different bases: the disk cache's key.
std::string cache_key(const std::vector<std::string>& parts) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (const std::string& s : parts)
    for (unsigned char c : s + '\0') a = (a ^ c) * 0x100000001b3ull, b = (b ^ c) * 0x100000001b3ull;
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return text;
}

// Where compiled kernels are kept: $PCP_CACHE_DIR/cuda, else $XDG_CACHE_HOME/pcp/cuda, else
// ~/.cache/pcp/cuda; "" when none can be made (then nothing is cached).
std::string cache_dir() {
  std::string base;
  if (const char* d = std::getenv("PCP_CACHE_DIR")) base = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME")) base = std::string(x) + "/pcp";
  else if (const char* h = std::getenv("HOME")) base = std::string(h) + "/.cache/pcp";
  if (base.empty()) return "";
  std::string dir = base + "/cuda", path;
  std::stringstream ss(dir);
  for (std::string part; std::getline(ss, part, '/');) {
    path += part + "/";
    if (!part.empty()) mkdir(path.c_str(), 0755);
  }
  return access(dir.c_str(), W_OK) == 0 ? dir : "";
}

// The cubin of a kernel for `arch` (e.g. 90) with its specialization constants, from the disk
// cache (unless `cached` is false) or compiled by NVRTC now.
std::string compile(const KernelSource& k, const std::vector<uint32_t>& constants, int arch, bool cached = true) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) fail<RuntimeError>("cuda: ", n.error);
  std::vector<std::string> options = {"-arch=sm_" + std::to_string(arch), "-default-device", "-std=c++17",
                                      "-diag-suppress=177"};
  for (size_t i = 0; i < constants.size(); ++i)
    options.push_back("-DPCP_SPEC_" + std::to_string(i) + "=" + std::to_string(constants[i]) + "u");
  std::vector<std::string> key_parts = {k.name, k.cuda, cuda_kernel_header(), n.version};
  key_parts.insert(key_parts.end(), options.begin(), options.end());
  static const std::string dir = cache_dir();
  const std::string file = dir.empty() ? "" : dir + "/" + k.name + "-" + cache_key(key_parts) + ".cubin";
  if (!file.empty() && cached) {
    std::ifstream in(file, std::ios::binary);
    if (in) return std::string(std::istreambuf_iterator<char>(in), {});
  }
  const char* header = cuda_kernel_header();
  const char* header_name = "pcp_glsl.h";
  nvrtcProgram prog = nullptr;
  if (n.fns.nvrtcCreateProgram(&prog, k.cuda, (std::string(k.name) + ".cu").c_str(), 1, &header, &header_name) != 0)
    fail<RuntimeError>("cuda: nvrtcCreateProgram failed for kernel ", k.name);
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());
  const nvrtcResult r = n.fns.nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  std::string cubin;
  if (r == 0) {
    size_t size = 0;
    n.fns.nvrtcGetCUBINSize(prog, &size);
    cubin.resize(size);
    n.fns.nvrtcGetCUBIN(prog, cubin.data());
  } else {
    size_t size = 0;
    n.fns.nvrtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    n.fns.nvrtcGetProgramLog(prog, log.data());
    n.fns.nvrtcDestroyProgram(&prog);
    fail<RuntimeError>("cuda: NVRTC ", n.version, " could not compile kernel ", k.name, " for sm_", arch, ": ",
                       n.fns.nvrtcGetErrorString(r), "\n", log.substr(0, 4000));
  }
  n.fns.nvrtcDestroyProgram(&prog);
  if (!file.empty()) {  // written whole, then renamed: another process never reads half a file
    const std::string tmp = file + ".tmp" + std::to_string(getpid());
    std::ofstream(tmp, std::ios::binary).write(cubin.data(), std::streamsize(cubin.size()));
    std::rename(tmp.c_str(), file.c_str());
  }
  return cubin;
}

struct Function {
  CUfunction fn = nullptr;
  uint32_t bindings = 0, local_size = 0;
  const char* name = nullptr;
};

struct Timed {
  const char* name;
  CUevent start, end;
};

struct Device {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  DeviceInfo info;
  int arch = 0;  // compute capability, 90 for Hopper
  std::atomic<bool> created{false};
  std::mutex mu;
  std::unordered_map<std::string, Function> functions;  // name#constants -> the loaded kernel
  bool profiling = false;
  uint64_t commands = 0;  // Runtime::commands
  std::vector<Timed> timed;
  std::vector<CUevent> events;  // free

  CUevent event() {
    if (!events.empty()) {
      CUevent e = events.back();
      events.pop_back();
      return e;
    }
    CUevent e;
    check(cu().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    return e;
  }

  // Queues fn on the stream, between two timestamps while profiling.
  template <class F>
  void timed_run(const char* name, F fn) {
    ++commands;
    if (!profiling) return fn();
    Timed t{name, event(), event()};
    check(cu().cuEventRecord(t.start, stream), "cuEventRecord");
    fn();
    check(cu().cuEventRecord(t.end, stream), "cuEventRecord");
    timed.push_back(t);
  }

  const Function& function(const std::string& name, uint32_t nbuf, const std::vector<uint32_t>& constants) {
    std::string key = name;
    for (size_t i = 0; i < constants.size(); ++i) key += (i ? "," : "#") + std::to_string(constants[i]);
    if (const Function* cached = cached_pipeline(functions, key, nbuf)) return *cached;
    const KernelSource& k = kernel_named(name);
    if (!k.cuda) fail<NotImplementedError>("gpu kernel ", name, " has no CUDA translation (tensor-core kernels are Vulkan only)");
    CUmodule module;
    if (cu().cuModuleLoadData(&module, compile(k, constants, arch).data()) != CUDA_SUCCESS)  // a damaged cache file:
      check(cu().cuModuleLoadData(&module, compile(k, constants, arch, false).data()), "cuModuleLoadData");  // again
    Function f;
    check(cu().cuModuleGetFunction(&f.fn, module, "pcp_main"), "cuModuleGetFunction");
    f.bindings = nbuf;
    f.local_size = k.local_size;
    f.name = k.name;
    return functions.emplace(key, f).first->second;
  }
};

class CudaRuntime : public Runtime {
 public:
  explicit CudaRuntime(int count) {
    for (int i = 0; i < count; ++i) {
      auto d = std::make_unique<Device>();
      check(cu().cuDeviceGet(&d->dev, i), "cuDeviceGet");
      char name[256] = {};
      cu().cuDeviceGetName(name, sizeof name - 1, d->dev);
      d->info.name = name;
      d->info.buffer_addresses = true;
      d->info.wide = find_kernel("unary_f64") != nullptr;
      if (!d->info.wide) d->info.wide_missing = "the float64 kernels (not in this build)";
      size_t bytes = 0;
      cu().cuDeviceTotalMem(&bytes, d->dev);
      d->info.memory_bytes = bytes;
      CUuuid id;
      if (cu().cuDeviceGetUuid(&id, d->dev) == CUDA_SUCCESS)
        for (int b = 0; b < 16; ++b) {
          char hex[3];
          std::snprintf(hex, sizeof hex, "%02x", unsigned(uint8_t(id.bytes[b])));
          d->info.uuid += hex;
        }
      char pci[32] = {};
      if (cu().cuDeviceGetPCIBusId(pci, sizeof pci - 1, d->dev) == CUDA_SUCCESS) {
        d->info.pci_bus = pci;
        for (char& c : d->info.pci_bus) c = char(std::tolower(static_cast<unsigned char>(c)));
      }
      int major = 0, minor = 0;
      cu().cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
      cu().cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
      d->arch = major * 10 + minor;
      d->info.tensor_core_note = "the CUDA runtime: 16-bit products run through cuBLASLt, attention through cuDNN";
      devices_.push_back(std::move(d));
    }
  }

  const char* api() const override { return "cuda"; }
  int arch(int device) const { return devices_.at(device)->arch; }
  int device_count() const override { return int(devices_.size()); }
  DeviceInfo device_info(int device) const override { return devices_.at(device)->info; }

  Buffer* allocate(int device, size_t nbytes) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    auto b = std::make_unique<CudaBuffer>();
    b->size = nbytes;
    const CUresult r = cu().cuMemAllocAsync(&b->ptr, std::max<size_t>(nbytes, 4), d.stream);
    if (r != CUDA_SUCCESS) {
      if (r == CUDA_ERROR_OUT_OF_MEMORY) fail<MemoryError>("cuda: out of device memory allocating ", nbytes, " bytes");
      check(r, "cuMemAllocAsync");
    }
    return reinterpret_cast<Buffer*>(b.release());
  }

  void release(int device, Buffer* buffer) override {
    Device& d = device_at(device);
    std::unique_ptr<CudaBuffer> b(cuda_buffer(buffer));
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    cu().cuMemFreeAsync(b->ptr, d.stream);  // after the work queued so far
  }

  void upload(int device, Buffer* dst, size_t off, const void* src, size_t n) override {
    if (n == 0) return;
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    // From pageable memory the driver stages src before returning, so the caller may reuse it.
    d.timed_run("upload", [&] {
      check(cu().cuMemcpyHtoDAsync(cuda_buffer(dst)->ptr + off, src, n, d.stream), "cuMemcpyHtoDAsync");
    });
  }

  void download(int device, const Buffer* src, size_t off, void* dst, size_t n) override {
    if (n == 0) return;
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    d.timed_run("download", [&] {
      check(cu().cuMemcpyDtoHAsync(dst, cuda_buffer(src)->ptr + off, n, d.stream), "cuMemcpyDtoHAsync");
    });
    check(cu().cuStreamSynchronize(d.stream), "cuStreamSynchronize");
  }

  uint64_t commands(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    return d.commands;
  }

  void copy(int device, const Buffer* src, size_t so, Buffer* dst, size_t doff, size_t n) override {
    if (n == 0) return;
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    d.timed_run("copy", [&] {
      check(cu().cuMemcpyDtoDAsync(cuda_buffer(dst)->ptr + doff, cuda_buffer(src)->ptr + so, n, d.stream),
            "cuMemcpyDtoDAsync");
    });
  }

  void dispatch(int device, const std::string& kernel, const std::vector<Buffer*>& buffers, const void* push,
                size_t push_bytes, uint32_t groups_x, const std::vector<uint32_t>& constants = {},
                const std::vector<Buffer*>& /*addressed: stream order covers them*/ = {}) override {
    if (groups_x == 0) return;
    if (push_bytes > kMaxPushBytes) fail<ValueError>("gpu kernel ", kernel, ": ", push_bytes, " push-constant bytes");
    check_push_constants(kernel, push_bytes);
    if (buffers.empty() || buffers.size() > kMaxBindings)
      fail<ValueError>("gpu kernel ", kernel, ": ", buffers.size(), " buffers (1 to ", kMaxBindings, ")");
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    const Function& f = d.function(kernel, uint32_t(buffers.size()), constants);
    CUdeviceptr ptrs[kMaxBindings];
    void* args[kMaxBindings + 1];
    for (size_t i = 0; i < buffers.size(); ++i) ptrs[i] = cuda_buffer(buffers[i])->ptr, args[i] = &ptrs[i];
    alignas(16) unsigned char pc[kMaxPushBytes] = {};
    std::memcpy(pc, push, push_bytes);
    args[buffers.size()] = pc;
    d.timed_run(f.name, [&] {
      check(cu().cuLaunchKernel(f.fn, std::min<uint32_t>(groups_x, 65535), 1, 1, f.local_size, 1, 1, 0, d.stream,
                                args, nullptr),
            f.name);
    });
  }

  void synchronize(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    check(cu().cuStreamSynchronize(d.stream), "cuStreamSynchronize");
  }

  bool set_profiling(int device, bool on) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.profiling = on;
    return true;
  }

  std::vector<KernelTime> profile(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    check(cu().cuStreamSynchronize(d.stream), "cuStreamSynchronize");
    std::map<std::string, KernelTime> by_name;
    for (const Timed& t : d.timed) {
      float ms = 0;
      if (cu().cuEventElapsedTime(&ms, t.start, t.end) == CUDA_SUCCESS) {
        KernelTime& k = by_name[t.name];
        k.name = t.name;
        k.count++;
        k.seconds += ms * 1e-3;
      }
      d.events.push_back(t.start);
      d.events.push_back(t.end);
    }
    d.timed.clear();
    std::vector<KernelTime> out;
    for (auto& [name, t] : by_name) out.push_back(t);
    std::sort(out.begin(), out.end(), [](const KernelTime& a, const KernelTime& b) { return a.seconds > b.seconds; });
    return out;
  }

  void run_library(int device, const char* name, const std::function<void(void* stream)>& work) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    ContextScope scope(d.ctx);
    d.timed_run(name, [&] { work(d.stream); });
  }

  uint64_t address(const Buffer* b) override { return cuda_buffer(b)->ptr; }

 private:
  // The device with its context and stream made on first use: a process that uses one GPU of
  // several makes none on the others.
  Device& device_at(int device) {
    Device& d = *devices_.at(device);
    if (!d.created.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> g(open_mu_);
      if (!d.ctx) {
        check(cu().cuDevicePrimaryCtxRetain(&d.ctx, d.dev), "cuDevicePrimaryCtxRetain");
        ContextScope scope(d.ctx);
        check(cu().cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      }
      d.created.store(true, std::memory_order_release);
    }
    return d;
  }

  std::vector<std::unique_ptr<Device>> devices_;
  std::mutex open_mu_;
};

}  // namespace

Runtime* create_cuda_runtime(std::string& why) {
  const char* mode = std::getenv("PCP_GPU_RUNTIME");
  const std::string m = mode ? mode : "auto";
  if (m == "vulkan" || m == "metal") return why = "PCP_GPU_RUNTIME=" + m, nullptr;
  if (const char* v = std::getenv("PCP_GPU_VENDOR"); v && std::string(v) == "0" && m == "auto")
    return why = "PCP_GPU_VENDOR=0", nullptr;
  if (m != "auto" && m != "cuda")
    throw std::runtime_error("PCP_GPU_RUNTIME must be auto, cuda or vulkan, got '" + m + "'");
  const bool required = m == "cuda";
  auto refuse = [&](const std::string& reason) -> Runtime* {
    if (required) throw std::runtime_error("PCP_GPU_RUNTIME=cuda, but " + reason);
    why = reason;
    return nullptr;
  };
  if (!driver().error.empty()) return refuse(driver().error);
  int count = 0;
  if (cu().cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) return refuse("no CUDA device");
  const auto& kernels = all_kernels();
  if (kernels.empty() || !std::any_of(kernels.begin(), kernels.end(), [](const KernelSource& k) { return k.cuda; }))
    return refuse("this build of PCP has no CUDA kernels");
  // An NVIDIA GPU without NVIDIA's libraries: say so once, where the user can add them.
  const auto hint = [&](const std::string& reason) {
    if (!required) warn_once("cuda-runtime", reason + ": PCP runs on the GPU through Vulkan, with its own kernels "
                                                      "for products and attention (pip install 'pcp[cuda]' for "
                                                      "NVIDIA's, faster)");
    return refuse(reason);
  };
  if (!nvrtc().error.empty()) return hint(nvrtc().error);
  if (!required) {  // chosen on its own only where products run through cuBLASLt
    const Library lt = load_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"});
    if (!lt.handle) return hint("cuBLASLt not found (" + lt.error + ")");
  }
  auto rt = std::make_unique<CudaRuntime>(count);
  // NVRTC must compile for every GPU here (an older one may not know a newer architecture).
  for (int i = 0; i < count; ++i) {
    try {
      compile(kernel_named("fill"), {}, rt->arch(i));
    } catch (const std::exception& e) {
      return hint(std::string("NVRTC ") + nvrtc().version + " cannot compile for sm_" + std::to_string(rt->arch(i)) +
                  " (" + e.what() + ")");
    }
  }
  return rt.release();
}

}  // namespace pcp::gpu

namespace pcp::cuda {

std::string compile_kernel(const std::string& name, const std::vector<uint32_t>& constants, int arch) {
  const gpu::KernelSource& k = gpu::kernel_named(name);
  if (!k.cuda) fail<NotImplementedError>("gpu kernel ", name, " has no CUDA translation");
  return gpu::compile(k, constants, arch);
}

}  // namespace pcp::cuda
