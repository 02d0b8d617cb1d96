// The host-side GPU layer: one interface over the GPU APIs. Ops talk to this layer only; the
// Vulkan runtime (backend/vulkan/) and the Metal runtime (backend/metal/) implement it.
//
// Kernel contract (every kernel in metal/*.comp follows it, so both runtimes bind alike):
//  - storage buffers at set 0, bindings 1..n, in the order of the `buffers` argument of
//    dispatch(); whole buffers are bound and element offsets travel in the push constants;
//  - one push-constant block of at most kMaxPushBytes. SPIRV-Cross translates with
//    --msl-decoration-binding, so in Metal binding i is [[buffer(i)]] and the push constants,
//    which carry no binding, are [[buffer(0)]] (set with setBytes); binding 0 is left free for
//    them. tests/test_gpu_kernels.py checks every kernel;
//  - a 1-D workgroup of kernel_local_size(name) invocations along x (y and z are 1).
// Execution is asynchronous: dispatches and copies are recorded into one in-order command
// stream per device, submitted when it grows long or at a synchronisation point
// (download(), synchronize()). Commands that use a common buffer run in recording order (the
// Vulkan runtime puts a barrier between them); commands on disjoint buffers may overlap.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pcp::gpu {

constexpr size_t kMaxPushBytes = 128;

// An opaque device buffer owned by a runtime.
struct Buffer;

struct DeviceInfo {
  std::string name;        // e.g. "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)"
  // A software implementation running on the CPU (Vulkan's VK_PHYSICAL_DEVICE_TYPE_CPU: Mesa's
  // lavapipe/llvmpipe, SwiftShader): correct, but far slower than the CPU backend for training.
  bool software = false;
  uint64_t memory_bytes;   // device-local memory
  // Tensor-core matmuls (metal/coop/, Vulkan only): VK_KHR_cooperative_matrix 16x16x16 products
  // of float16 / bfloat16 with float32 accumulation, and the kernel built in.
  bool tensor_core_f16 = false, tensor_core_bf16 = false;
  // VK_NV_cooperative_matrix2 (workgroup scope, tensor addressing): the matmul_cm2 kernels run.
  bool coopmat2 = false;
  std::string tensor_core_note;  // why they are not, when they are not
  // The device's identity across processes and APIs: the driver's UUID as 32 hex digits (the
  // same as CUDA's and nvidia-smi's for an NVIDIA GPU), and its PCI address "dddd:bb:dd.f"
  // where the driver reports one (VK_EXT_pci_bus_info); empty when unknown.
  std::string uuid, pci_bus;
  // Buffers have device addresses (Vulkan 1.2's bufferDeviceAddress; always on CUDA): the
  // multi-tensor kernels (metal/addr/) run, one dispatch over a table of tensors.
  bool buffer_addresses = false;
  // float64 and int64 arithmetic in kernels (Vulkan's shaderFloat64 and shaderInt64; always on
  // CUDA; never on Metal): the kernels of metal/wide/ run where the device has both. What it
  // lacks, by Vulkan's feature names, for errors ("shaderFloat64"); empty when it has both.
  bool wide = false;
  std::string wide_missing;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual const char* api() const = 0;  // "vulkan" or "metal"
  virtual int device_count() const = 0;
  virtual DeviceInfo device_info(int device) const = 0;

  // Device memory. release() may be called while recorded work still uses the buffer: the
  // runtime keeps it alive until that work has completed.
  virtual Buffer* allocate(int device, size_t nbytes) = 0;
  virtual void release(int device, Buffer* buffer) = 0;

  // Host <-> device copies through staging memory. upload() is recorded into the stream (the
  // source is copied before it returns); download() waits for all recorded work first.
  virtual void upload(int device, Buffer* dst, size_t dst_offset, const void* src, size_t nbytes) = 0;
  virtual void download(int device, const Buffer* src, size_t src_offset, void* dst, size_t nbytes) = 0;
  virtual void copy(int device, const Buffer* src, size_t src_offset, Buffer* dst, size_t dst_offset,
                    size_t nbytes) = 0;

  // Whether dispatch() takes specialization constants (the Metal runtime does not).
  virtual bool specializes() const { return true; }

  // Records one kernel launch of groups_x workgroups along x. `constants` specialize the kernel:
  // its `layout(constant_id = i)` constant takes constants[i] (32-bit), so the driver compiles a
  // pipeline with them folded in (one per distinct list, cached); a kernel's own defaults hold
  // where the list is shorter. Vulkan only: the Metal runtime refuses a non-empty list.
  // `addressed` are the buffers the kernel reaches by device address (metal/addr/ kernels, from a
  // table in one of `buffers`): ordered like bound buffers. Only where buffer_addresses.
  virtual void dispatch(int device, const std::string& kernel, const std::vector<Buffer*>& buffers,
                        const void* push, size_t push_bytes, uint32_t groups_x,
                        const std::vector<uint32_t>& constants = {}, const std::vector<Buffer*>& addressed = {}) = 0;
  // Submits the stream and waits for it to finish.
  virtual void synchronize(int device) = 0;
  // Commands (kernels, copies, transfers, library calls) recorded for the device since it was
  // created, a replayed command list counting its commands: what a step costs in launches.
  virtual uint64_t commands(int /*device*/) { return 0; }

  // Command lists, how a plan replays (plan/command_replay.h). After begin_capture(), the
  // commands this device records go into a list of their own instead of the stream, until
  // end_capture() appends the list to the stream (it runs once, as recorded) and returns it;
  // replay() appends it again, as often as wanted, at no per-command cost. A list keeps the
  // buffers, push constants and uploaded bytes it was recorded with; it starts after everything
  // recorded before it and completes before anything recorded after it. While capturing, a
  // download or synchronize raises ValueError (the host cannot read what has not run), and only
  // one thread may record on the device. begin_capture() returns false where lists are not
  // supported (Metal). abort_capture() drops a list being recorded: none of it runs.
  struct CommandList;
  virtual bool begin_capture(int /*device*/) { return false; }
  // Whether a list is being recorded on the device: what is recorded now runs only with it.
  virtual bool capturing(int /*device*/) { return false; }
  virtual CommandList* end_capture(int device);
  virtual void abort_capture(int device);
  virtual void replay(int device, CommandList* list);
  // Frees a list once the work recorded so far, which may replay it, has completed.
  virtual void free_list(int device, CommandList* list);

  // Kernel timing from GPU timestamps: while on, every command's time on the device is added to
  // its kernel's total ("copy", "upload" and "download" for transfers). Returns false where the
  // runtime or device cannot time. profile() waits for the device, returns the totals sorted by
  // time and clears them.
  struct KernelTime {
    std::string name;
    uint64_t count;
    double seconds;
  };
  virtual bool set_profiling(int /*device*/, bool /*on*/) { return false; }
  virtual std::vector<KernelTime> profile(int /*device*/) { return {}; }

  // NVIDIA's libraries (gpu/vendor/) on the CUDA runtime: run_library runs `work`, which queues
  // a library call on the CUDA stream it is given, in stream order with the device's other
  // commands (its context current, timed under `name` while profiling); address() is a buffer's
  // device address (also on Vulkan where DeviceInfo::buffer_addresses; else 0). Other runtimes
  // have no libraries (run_library raises RuntimeError).
  virtual void run_library(int device, const char* name, const std::function<void(void* stream)>& work);
  virtual uint64_t address(const Buffer* /*b*/) { return 0; }
};

// The runtime of this machine, or nullptr when no GPU API or no device is available. Created on
// first use; never throws. On NVIDIA GPUs with NVIDIA's libraries installed (pcp[cuda]) it is
// the CUDA runtime (backend/cuda/), unless PCP_GPU_RUNTIME=vulkan; elsewhere the backend that
// is built (Vulkan on Linux and Windows, Metal on macOS).
Runtime* runtime();
// Defined by the backend that is built (Vulkan, Metal or none): a new runtime, or an exception
// saying why there is none. runtime() calls it once, when there is no CUDA runtime.
Runtime* create_runtime();
// The CUDA runtime (backend/cuda/cuda_runtime.cpp): a new one, or nullptr with the reason in
// `why`. PCP_GPU_RUNTIME: unset or "auto" (where libcuda, a CUDA device, NVRTC and cuBLASLt
// load), "vulkan" (never), "cuda" (required: an exception saying why it cannot start).
Runtime* create_cuda_runtime(std::string& why);
// Why runtime() is null, for error messages ("libvulkan.so.1 not found", ...).
std::string unavailable_reason();
// The runtime, for code that needs one: a ValueError saying why when there is none.
Runtime& rt();

// Compiled kernels embedded in the library (generated at build time from metal/*.comp).
struct KernelSource {
  const char* name;
  const uint32_t* spirv;
  size_t spirv_words;
  const char* msl;  // Metal Shading Language from SPIRV-Cross, or nullptr when not generated
  uint32_t local_size;
  const char* cuda;  // CUDA C++ from metal/glsl_to_cuda.py, or nullptr (the tensor-core kernels)
};
// metal/cuda/glsl.h, which every kernel's CUDA source includes as "pcp_glsl.h".
const char* cuda_kernel_header();
const KernelSource* find_kernel(const std::string& name);  // nullptr when unknown
const KernelSource& kernel_named(const std::string& name);  // a ValueError when unknown
const std::vector<KernelSource>& all_kernels();

// The size in bytes of a kernel's push-constant block, read from its SPIR-V (0 when it has none).
uint32_t push_constant_bytes(const KernelSource& kernel);
// A ValueError when the host's push-constant struct for a kernel is not the size of the block
// the kernel declares: the C++ structs and the GLSL blocks are two definitions of one layout,
// and every dispatch (every GPU test, in CI on lavapipe) checks that they agree.
void check_push_constants(const std::string& kernel, size_t push_bytes);

// A ValueError when a kernel is dispatched with another buffer count than its pipeline has.
void check_bindings(const std::string& name, uint32_t pipeline_bindings, uint32_t nbuf);

// The runtimes' pipeline caches: the pipeline built for `name` (checked against nbuf), or
// nullptr when it is not built yet.
template <class Pipelines>
const typename Pipelines::mapped_type* cached_pipeline(const Pipelines& pipelines, const std::string& name,
                                                       uint32_t nbuf) {
  auto it = pipelines.find(name);
  if (it == pipelines.end()) return nullptr;
  check_bindings(name, it->second.bindings, nbuf);
  return &it->second;
}

}  // namespace pcp::gpu
