// The Vulkan runtime: runs the embedded SPIR-V kernels on every Vulkan device (NVIDIA, AMD, Intel,
// Mesa's lavapipe). libvulkan is loaded with dlopen, so the library imports and lists no GPU
// where Vulkan is missing.
//
// One in-order command buffer per device records uploads, copies and dispatches, each followed
// by a full memory barrier; it is submitted when it grows long, when the GPU has run out of work,
// or at a synchronisation point.
// Buffers released while recorded work may still use them go back to a cache that only that
// same stream reuses, after the barrier, so reuse is ordered; memory is freed only after a wait.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  size_t size = 0;
  void* mapped = nullptr;  // host-visible staging buffers only
  bool readback = false;   // a staging buffer downloads go through (host-cached memory where there is some)
  uint64_t address = 0;    // its device address, where the device has bufferDeviceAddress (device memory only)
};

// A secondary command buffer recorded once and executed by any number of frames, with the
// descriptor sets and uploaded bytes its commands use (runtime.h).
struct Runtime::CommandList {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools;
  uint32_t sets = 0;               // allocated from pools
  uint32_t commands = 0;           // recorded
  std::vector<Buffer*> staging;    // the sources of its uploads
  std::vector<Buffer*> released;   // buffers released while it was recorded
};
using CommandList = Runtime::CommandList;

namespace {

// Vulkan entry points, loaded at run time.
#define PCP_VK_INSTANCE_FNS(X)                                                                      \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)              \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)               \
  X(vkCreateDevice) X(vkEnumerateDeviceExtensionProperties) X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)
#define PCP_VK_DEVICE_FNS(X)                                                                        \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer)                       \
  X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory)       \
  X(vkMapMemory) X(vkUnmapMemory) X(vkCreateCommandPool) X(vkDestroyCommandPool)                   \
  X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) \
  X(vkQueueSubmit) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences) X(vkGetFenceStatus) \
  X(vkCmdCopyBuffer) X(vkCmdPipelineBarrier) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets)        \
  X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdExecuteCommands) X(vkFreeCommandBuffers)            \
  X(vkCreateShaderModule) X(vkDestroyShaderModule)                                                  \
  X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout)         \
  X(vkDestroyPipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline)                      \
  X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkResetDescriptorPool)                    \
  X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkDeviceWaitIdle) X(vkCreateQueryPool)          \
  X(vkDestroyQueryPool) X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults)           \
  X(vkGetBufferDeviceAddress)

#define PCP_DECLARE(name) PFN_##name name = nullptr;

struct Fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PCP_VK_INSTANCE_FNS(PCP_DECLARE)
  PCP_VK_DEVICE_FNS(PCP_DECLARE)
};

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) fail<RuntimeError>("vulkan: ", what, " failed (VkResult ", int(r), ")");
}

// VK_KHR_cooperative_matrix and VK_KHR_shader_bfloat16, declared here with the registry's values
// because the Vulkan headers of older distributions (Debian 12: 1.3.239) predate them.
struct CoopMatrixProperties {  // VkCooperativeMatrixPropertiesKHR
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  int32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  int32_t scope;  // VkScopeKHR
};
struct CoopMatrixFeatures {  // VkPhysicalDeviceCooperativeMatrixFeaturesKHR
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix, cooperativeMatrixRobustBufferAccess;
};
struct Bfloat16Features {  // VkPhysicalDeviceShaderBfloat16FeaturesKHR
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderBFloat16Type, shaderBFloat16DotProduct, shaderBFloat16CooperativeMatrix;
};
struct Coopmat2Features {  // VkPhysicalDeviceCooperativeMatrix2FeaturesNV
  VkStructureType sType;
  void* pNext;
  VkBool32 workgroupScope, flexibleDimensions, reductions, conversions, perElementOperations, tensorAddressing,
      blockLoads;
};
using PFN_GetCoopMatrixProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopMatrixProperties*);
constexpr auto kCoopMatrixFeatures = VkStructureType(1000506000), kCoopMatrixProperties = VkStructureType(1000506001),
               kBfloat16Features = VkStructureType(1000141000), kCoopmat2Features = VkStructureType(1000593000);
constexpr int32_t kFloat16 = 0, kFloat32 = 1, kBfloat16 = 1000141000, kScopeSubgroup = 3;

constexpr uint32_t kMaxDispatchesPerSubmit = 512;
// A frame goes to the GPU as soon as it holds this many dispatches and the GPU has finished
// everything submitted before (else it grows up to kMaxDispatchesPerSubmit): the GPU starts on
// a training step while the host is still recording it, instead of after 512 dispatches.
constexpr uint32_t kMinDispatchesPerSubmit = 16;
constexpr uint32_t kMaxSetsPerPool = kMaxDispatchesPerSubmit;
constexpr uint32_t kMaxBindings = 12;  // storage buffers a kernel binds (attention's backward: 9)
constexpr uint32_t kFrames = 3;  // command buffers in flight per device

struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  const char* name = nullptr;
};

// One command buffer with what it keeps alive. Frames are used round robin: while one is being
// recorded, up to kFrames - 1 earlier ones may still run on the GPU.
struct Frame {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool dpool = VK_NULL_HANDLE;
  bool submitted = false;
  // Profiling: timestamp 0 when recording began, timestamp i + 1 after command i completed.
  VkQueryPool queries = VK_NULL_HANDLE;
  bool timed = false;
  std::vector<const char*> commands;
  std::vector<Buffer*> staging;   // returned to the staging cache when the frame completes
  std::vector<Buffer*> released;  // destroyed when the frame completes
  std::vector<CommandList*> lists;  // freed when the frame completes
};

struct Device {
  Fns* f = nullptr;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  DeviceInfo info;
  VkCommandPool pool = VK_NULL_HANDLE;
  Frame frames[kFrames];
  uint32_t current = 0, last_submitted = kFrames;  // kFrames: nothing submitted yet
  VkCommandBuffer cmd = VK_NULL_HANDLE;             // frames[current].cmd while recording
  bool recording = false;
  uint32_t recorded = 0;
  uint64_t total_commands = 0;  // Runtime::commands
  CommandList* capturing = nullptr;  // the list commands go into instead of the frame (begin_capture)
  std::unordered_map<std::string, Pipeline> pipelines;
  std::multimap<size_t, Buffer*> staging_cache, readback_cache;  // host-visible buffers by size (Buffer::readback)
  std::mutex mu;
  std::atomic<bool> created{false};  // the logical device exists (VulkanRuntime::device_at)
  bool can_time = false, profiling = false;
  // Set when PCP_VULKAN_PIPELINE_STATS=1 and the device can report them (print_statistics).
  PFN_vkGetPipelineExecutableStatisticsKHR get_statistics = nullptr;
  double ns_per_tick = 1.0;
  uint64_t tick_mask = ~uint64_t(0);
  std::map<std::string, Runtime::KernelTime> times;
  std::unordered_set<const Buffer*> since_barrier;  // used by commands since the last barrier (order)
  const bool serial = [] {  // PCP_GPU_SERIAL=1: a barrier after every command
    const char* v = std::getenv("PCP_GPU_SERIAL");
    return v && v[0] == '1';
  }();

  // The first memory type among type_bits with the properties wanted, or -1.
  int memory_type(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    VkPhysicalDeviceMemoryProperties mp;
    f->vkGetPhysicalDeviceMemoryProperties(phys, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((type_bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return int(i);
    return -1;
  }

  uint32_t find_memory(uint32_t type_bits, VkMemoryPropertyFlags want) const {
    const int i = memory_type(type_bits, want);
    if (i < 0) fail<RuntimeError>("vulkan: no memory type with properties ", int(want));
    return uint32_t(i);
  }

  Buffer* make_buffer(size_t nbytes, bool host, bool readback = false) {
    auto b = std::make_unique<Buffer>();
    b->size = nbytes;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = std::max<size_t>(nbytes, 4);
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    const bool addressed = !host && info.buffer_addresses;  // multi-tensor kernels reach it by address
    if (addressed) bi.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (f->vkCreateBuffer(dev, &bi, nullptr, &b->buffer) != VK_SUCCESS)  // too large for the device, or no memory
      fail<MemoryError>("vulkan: cannot create a buffer of ", nbytes, " bytes");
    VkMemoryRequirements req;
    f->vkGetBufferMemoryRequirements(dev, b->buffer, &req);
    VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, addressed ? &flags : nullptr};
    ai.allocationSize = req.size;
    const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    // The CPU reads a download's staging memory: host-cached memory reads at memcpy speed, where
    // the write-combined kind uploads want (NVIDIA lists it first) reads at a fraction of it.
    const int cached = readback ? memory_type(req.memoryTypeBits, visible | VK_MEMORY_PROPERTY_HOST_CACHED_BIT) : -1;
    ai.memoryTypeIndex = !host         ? find_memory(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
                         : cached >= 0 ? uint32_t(cached)
                                       : find_memory(req.memoryTypeBits, visible);
    b->readback = readback;
    VkResult r = f->vkAllocateMemory(dev, &ai, nullptr, &b->memory);
    if (r != VK_SUCCESS) {
      f->vkDestroyBuffer(dev, b->buffer, nullptr);
      fail<MemoryError>("vulkan: out of ", host ? "host-visible" : "device", " memory allocating ", nbytes, " bytes");
    }
    check(f->vkBindBufferMemory(dev, b->buffer, b->memory, 0), "vkBindBufferMemory");
    if (host) check(f->vkMapMemory(dev, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory");
    if (addressed) {
      VkBufferDeviceAddressInfo at{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, b->buffer};
      b->address = f->vkGetBufferDeviceAddress(dev, &at);
    }
    return b.release();
  }

  void destroy_buffer(Buffer* b) {
    if (b->mapped) f->vkUnmapMemory(dev, b->memory);
    f->vkDestroyBuffer(dev, b->buffer, nullptr);
    f->vkFreeMemory(dev, b->memory, nullptr);
    delete b;
  }

  // Waits for a submitted frame and recycles what it kept alive.
  void retire(Frame& fr) {
    if (!fr.submitted) return;
    check(f->vkWaitForFences(dev, 1, &fr.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    fr.submitted = false;
    if (fr.timed) collect_times(fr);
    check(f->vkResetCommandBuffer(fr.cmd, 0), "vkResetCommandBuffer");
    check(f->vkResetDescriptorPool(dev, fr.dpool, 0), "vkResetDescriptorPool");
    for (Buffer* b : fr.staging) (b->readback ? readback_cache : staging_cache).emplace(b->size, b);
    fr.staging.clear();
    for (Buffer* b : fr.released) destroy_buffer(b);
    fr.released.clear();
    for (CommandList* l : fr.lists) destroy_list(l);
    fr.lists.clear();
  }

  VkDescriptorPool make_descriptor_pool() {
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxSetsPerPool * kMaxBindings};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = kMaxSetsPerPool;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &ps;
    VkDescriptorPool pool;
    check(f->vkCreateDescriptorPool(dev, &pi, nullptr, &pool), "vkCreateDescriptorPool");
    return pool;
  }

  // Where a dispatch's descriptor set comes from: the frame's pool, reset when the frame
  // completes, or while capturing the list's own pools, which live as long as the list.
  VkDescriptorPool descriptor_pool() {
    if (!capturing) return frames[current].dpool;
    if (capturing->sets++ % kMaxSetsPerPool == 0) capturing->pools.push_back(make_descriptor_pool());
    return capturing->pools.back();
  }

  void destroy_list(CommandList* l) {
    f->vkFreeCommandBuffers(dev, pool, 1, &l->cmd);
    for (VkDescriptorPool p : l->pools) f->vkDestroyDescriptorPool(dev, p, nullptr);
    for (Buffer* b : l->staging) (b->readback ? readback_cache : staging_cache).emplace(b->size, b);
    for (Buffer* b : l->released) release_later(b);
    delete l;
  }

  // Host reads and waits cannot be recorded into a command list.
  void refuse_while_capturing(const char* what) {
    if (capturing)
      fail<ValueError>("gpu: ", what, " while a command list is being recorded (a plan cannot record a read of "
                       "device memory on the host)");
  }

  // Stops recording into the list: later commands go to the frames again.
  CommandList* stop_capture() {
    CommandList* l = capturing;
    capturing = nullptr;
    since_barrier.clear();
    cmd = recording ? frames[current].cmd : VK_NULL_HANDLE;
    return l;
  }

  // Appends a recorded list to the stream, ordered after everything before it and before
  // everything after it. It counts as its commands towards submitting the frame.
  void execute(CommandList* l) {
    begin();
    full_barrier();
    f->vkCmdExecuteCommands(cmd, 1, &l->cmd);
    full_barrier();
    recorded += l->commands;
    total_commands += l->commands;
    recorded_command("command list");
    --total_commands;  // its commands count, not the one that executes them
  }

  void collect_times(Frame& fr) {
    const uint32_t n = uint32_t(fr.commands.size());
    std::vector<uint64_t> ticks(n + 1);
    check(f->vkGetQueryPoolResults(dev, fr.queries, 0, n + 1, ticks.size() * 8, ticks.data(), 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    for (uint32_t i = 0; i < n; ++i) {
      auto& t = times[fr.commands[i]];
      if (t.name.empty()) t.name = fr.commands[i];
      t.count++;
      t.seconds += double((ticks[i + 1] - ticks[i]) & tick_mask) * ns_per_tick * 1e-9;
    }
    fr.commands.clear();
    fr.timed = false;
  }

  void begin() {
    if (recording || capturing) return;
    Frame& fr = frames[current];
    retire(fr);
    cmd = fr.cmd;
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(f->vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
    recording = true;
    recorded = 0;
    fr.timed = profiling;
    if (fr.timed) {
      f->vkCmdResetQueryPool(cmd, fr.queries, 0, kMaxDispatchesPerSubmit + 1);
      f->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, fr.queries, 0);
    }
  }

  // Everything recorded so far completes, its writes visible to later commands and the host,
  // before anything recorded later starts (also across frames: a barrier orders all earlier
  // commands on the queue, in submission order).
  void full_barrier() {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT;
    mb.dstAccessMask = mb.srcAccessMask | VK_ACCESS_HOST_READ_BIT;
    f->vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                VK_PIPELINE_STAGE_HOST_BIT,
                            0, 1, &mb, 0, nullptr, 0, nullptr);
    since_barrier.clear();
  }

  // Called before recording a command that reads or writes `buffers`: a barrier first where a
  // command since the last one used any of them. Commands on disjoint buffers get none, so the
  // GPU may overlap them (a model's per-parameter optimizer updates, the two products of a
  // linear layer's backward). Buffers are tracked whole, and the caching allocator hands a freed
  // buffer out again as the same Buffer, so reuse is ordered too.
  void order(const Buffer* const* buffers, size_t n) {
    for (size_t i = 0; i < n && !since_barrier.empty(); ++i)
      if (since_barrier.count(buffers[i])) full_barrier();
    since_barrier.insert(buffers, buffers + n);
  }

  // Called after recording a command. While profiling (and with PCP_GPU_SERIAL=1), a barrier
  // follows every command, so that each command's timestamp measures it alone.
  void recorded_command(const char* command) {
    ++total_commands;
    if (capturing) {
      if (serial) full_barrier();
      return void(++capturing->commands);
    }
    Frame& fr = frames[current];
    if (fr.timed || serial) full_barrier();
    if (fr.timed) {  // written once everything recorded before it has completed
      fr.commands.push_back(command);
      f->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, fr.queries, uint32_t(fr.commands.size()));
    }
    ++recorded;
    if (recorded >= kMaxDispatchesPerSubmit || (recorded >= kMinDispatchesPerSubmit && gpu_idle())) submit();
  }

  // Whether everything submitted so far has completed.
  bool gpu_idle() {
    if (last_submitted >= kFrames || !frames[last_submitted].submitted) return true;
    return f->vkGetFenceStatus(dev, frames[last_submitted].fence) == VK_SUCCESS;
  }

  // Submits the frame being recorded without waiting for it; the next frame starts recording.
  void submit() {
    if (!recording) return;
    Frame& fr = frames[current];
    if (!since_barrier.empty()) full_barrier();  // each frame ends with its work ordered and visible
    check(f->vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    recording = false;
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(f->vkResetFences(dev, 1, &fr.fence), "vkResetFences");
    check(f->vkQueueSubmit(queue, 1, &si, fr.fence), "vkQueueSubmit");
    fr.submitted = true;
    last_submitted = current;
    current = (current + 1) % kFrames;
  }

  // Submits what was recorded and waits for all of it.
  void flush() {
    refuse_while_capturing("waiting for the device");
    submit();
    for (Frame& fr : frames) retire(fr);
  }

  // Frees b once the work recorded so far, which may use it, has completed.
  void release_later(Buffer* b) {
    if (capturing) return capturing->released.push_back(b);
    if (recording) return frames[current].released.push_back(b);
    if (last_submitted < kFrames && frames[last_submitted].submitted)
      return frames[last_submitted].released.push_back(b);  // completes after every earlier frame
    destroy_buffer(b);
  }

  // A host-visible buffer of the caller's own (from the cache, or new) until it gives it back
  // (keep_until_done, or the cache); for a download (readback), in host-cached memory where
  // the device has some. The caller copies through it without the device's lock: another
  // thread's commands need not wait for that copy.
  Buffer* take_staging(size_t nbytes, bool readback) {
    auto& cache = readback ? readback_cache : staging_cache;
    auto it = cache.lower_bound(nbytes);
    if (it == cache.end() || it->first > 2 * nbytes + 65536) return make_buffer(nbytes, true, readback);
    Buffer* b = it->second;
    cache.erase(it);
    return b;
  }

  // b goes back to its cache once the frame being recorded (or the list captured) completes.
  void keep_until_done(Buffer* b) { (capturing ? capturing->staging : frames[current].staging).push_back(b); }

  // What the driver's compiler made of a pipeline (registers, spills, shared memory: the
  // statistics VK_KHR_pipeline_executable_properties reports), one line on stderr; a tuning aid.
  void print_statistics(const std::string& key, VkPipeline pipeline) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, nullptr, pipeline, 0};
    uint32_t n = 0;
    if (get_statistics(dev, &ei, &n, nullptr) != VK_SUCCESS) return;
    std::vector<VkPipelineExecutableStatisticKHR> st(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (get_statistics(dev, &ei, &n, st.data()) != VK_SUCCESS) return;
    std::string line = "pcp: pipeline " + key + ":";
    for (const auto& x : st) {
      line += std::string(" ") + x.name + "=";
      switch (x.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += x.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(x.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(x.value.u64); break;
        default: line += std::to_string(x.value.f64);
      }
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  // The pipeline of kernel `name` specialized with `constants` (runtime.h), cached under the name
  // followed by the constants ("matmul_coop_bf16#1,0,1,1").
  const Pipeline& pipeline(const std::string& name, uint32_t nbuf, const std::vector<uint32_t>& constants) {
    std::string key = name;
    for (size_t i = 0; i < constants.size(); ++i) key += (i ? "," : "#") + std::to_string(constants[i]);
    if (const Pipeline* cached = cached_pipeline(pipelines, key, nbuf)) return *cached;
    const KernelSource* src = &kernel_named(name);
    Pipeline p;
    p.bindings = nbuf;
    p.name = src->name;
    std::vector<VkDescriptorSetLayoutBinding> binds(nbuf);
    for (uint32_t i = 0; i < nbuf; ++i)
      binds[i] = {i + 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};  // see runtime.h
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = nbuf;
    li.pBindings = binds.data();
    check(f->vkCreateDescriptorSetLayout(dev, &li, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(kMaxPushBytes)};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &p.set_layout;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &pr;
    check(f->vkCreatePipelineLayout(dev, &pl, nullptr, &p.layout), "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = src->spirv_words * 4;
    mi.pCode = src->spirv;
    VkShaderModule module;
    check(f->vkCreateShaderModule(dev, &mi, nullptr, &module), "vkCreateShaderModule");
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    std::vector<VkSpecializationMapEntry> entries(constants.size());
    for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4, 4};
    const VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), constants.size() * 4, constants.data()};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module,
                "main", constants.empty() ? nullptr : &spec};
    ci.layout = p.layout;
    if (get_statistics) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    VkResult r = f->vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &p.pipeline);
    f->vkDestroyShaderModule(dev, module, nullptr);
    check(r, "vkCreateComputePipelines");
    if (get_statistics) print_statistics(key, p.pipeline);
    return pipelines.emplace(key, p).first->second;
  }
};

class VulkanRuntime : public Runtime {
 public:
  VulkanRuntime() {
    lib_ = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) lib_ = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error("libvulkan.so.1 not found (install the Vulkan loader and a driver)");
    f_.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib_, "vkGetInstanceProcAddr"));
    if (!f_.vkGetInstanceProcAddr) throw std::runtime_error("libvulkan has no vkGetInstanceProcAddr");
    f_.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(f_.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "pcp";
    app.apiVersion = VK_API_VERSION_1_3;  // the most PCP uses; devices keep their own version
    VkInstanceCreateInfo ii{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ii.pApplicationInfo = &app;
    if (f_.vkCreateInstance(&ii, nullptr, &instance_) != VK_SUCCESS)
      throw std::runtime_error("vkCreateInstance failed (no Vulkan driver?)");
#define PCP_LOAD_INSTANCE(name) f_.name = reinterpret_cast<PFN_##name>(f_.vkGetInstanceProcAddr(instance_, #name));
    PCP_VK_INSTANCE_FNS(PCP_LOAD_INSTANCE)
    uint32_t n = 0;
    f_.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
    std::vector<VkPhysicalDevice> phys(n);
    f_.vkEnumeratePhysicalDevices(instance_, &n, phys.data());
    // Real GPUs first (discrete, integrated, virtual), then CPU implementations like lavapipe.
    auto rank = [&](VkPhysicalDevice p) {
      VkPhysicalDeviceProperties pr;
      f_.vkGetPhysicalDeviceProperties(p, &pr);
      switch (pr.deviceType) {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
        default: return 3;
      }
    };
    std::stable_sort(phys.begin(), phys.end(), [&](auto a, auto b) { return rank(a) < rank(b); });
    for (VkPhysicalDevice p : phys) {
      auto d = std::make_unique<Device>();
      if (open(p, *d, false)) devices_.push_back(std::move(d));  // created on first use (device_at)
    }
    if (devices_.empty()) throw std::runtime_error("no Vulkan device with a compute queue");
  }

  ~VulkanRuntime() override {
    // Process exit: the driver may already be tearing down; keep this minimal.
    for (auto& d : devices_) {
      if (d->dev) f_.vkDeviceWaitIdle(d->dev);
    }
  }

  const char* api() const override { return "vulkan"; }
  int device_count() const override { return int(devices_.size()); }
  DeviceInfo device_info(int device) const override { return devices_.at(device)->info; }
  uint64_t address(const Buffer* b) override { return b->address; }

  Buffer* allocate(int device, size_t nbytes) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    return d.make_buffer(nbytes, false);
  }

  void release(int device, Buffer* b) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.release_later(b);
  }

  void upload(int device, Buffer* dst, size_t off, const void* src, size_t n) override {
    if (n == 0) return;
    Device& d = device_at(device);
    Buffer* s;
    {
      std::lock_guard<std::mutex> g(d.mu);
      s = d.take_staging(n, false);
    }
    std::memcpy(s->mapped, src, n);  // without the lock: s is this call's alone until recorded
    std::lock_guard<std::mutex> g(d.mu);
    d.begin();
    d.keep_until_done(s);
    const Buffer* used[] = {dst};
    d.order(used, 1);
    VkBufferCopy region{0, off, n};
    d.f->vkCmdCopyBuffer(d.cmd, s->buffer, dst->buffer, 1, &region);
    d.recorded_command("upload");
  }

  void download(int device, const Buffer* src, size_t off, void* dst, size_t n) override {
    if (n == 0) return;
    Device& d = device_at(device);
    Buffer* s;
    {
      std::lock_guard<std::mutex> g(d.mu);
      d.refuse_while_capturing("a download");
      s = d.take_staging(n, true);
      d.begin();
      const Buffer* used[] = {src};
      d.order(used, 1);
      VkBufferCopy region{off, 0, n};
      d.f->vkCmdCopyBuffer(d.cmd, src->buffer, s->buffer, 1, &region);
      d.recorded_command("download");
      d.flush();  // its barrier makes the copy visible to the host
    }
    // Without the lock: s is this call's alone (in no frame), and the copy has completed.
    std::memcpy(dst, s->mapped, n);
    std::lock_guard<std::mutex> g(d.mu);
    d.readback_cache.emplace(s->size, s);
  }

  void copy(int device, const Buffer* src, size_t so, Buffer* dst, size_t doff, size_t n) override {
    if (n == 0) return;
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.begin();
    const Buffer* used[] = {src, dst};
    d.order(used, 2);
    VkBufferCopy region{so, doff, n};
    d.f->vkCmdCopyBuffer(d.cmd, src->buffer, dst->buffer, 1, &region);
    d.recorded_command("copy");
  }

  void dispatch(int device, const std::string& kernel, const std::vector<Buffer*>& buffers, const void* push,
                size_t push_bytes, uint32_t groups_x, const std::vector<uint32_t>& constants = {},
                const std::vector<Buffer*>& addressed = {}) override {
    if (groups_x == 0) return;
    if (push_bytes > kMaxPushBytes) fail<ValueError>("gpu kernel ", kernel, ": ", push_bytes, " push-constant bytes");
    check_push_constants(kernel, push_bytes);
    if (buffers.empty() || buffers.size() > kMaxBindings)
      fail<ValueError>("gpu kernel ", kernel, ": ", buffers.size(), " buffers (1 to ", kMaxBindings, ")");
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    const Pipeline& p = d.pipeline(kernel, uint32_t(buffers.size()), constants);
    d.begin();
    d.order(buffers.data(), buffers.size());
    d.order(addressed.data(), addressed.size());
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = d.descriptor_pool();
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &p.set_layout;
    VkDescriptorSet set;
    check(d.f->vkAllocateDescriptorSets(d.dev, &ai, &set), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo infos[kMaxBindings];
    VkWriteDescriptorSet writes[kMaxBindings];
    for (size_t i = 0; i < buffers.size(); ++i) {
      infos[i] = {buffers[i]->buffer, 0, VK_WHOLE_SIZE};
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set;
      writes[i].dstBinding = uint32_t(i + 1);
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    d.f->vkUpdateDescriptorSets(d.dev, uint32_t(buffers.size()), writes, 0, nullptr);
    d.f->vkCmdBindPipeline(d.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    d.f->vkCmdBindDescriptorSets(d.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    alignas(16) unsigned char pc[kMaxPushBytes] = {};
    std::memcpy(pc, push, push_bytes);
    d.f->vkCmdPushConstants(d.cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(kMaxPushBytes), pc);
    d.f->vkCmdDispatch(d.cmd, std::min<uint32_t>(groups_x, 65535), 1, 1);
    d.recorded_command(p.name);
  }

  void synchronize(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.flush();
  }

  uint64_t commands(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    return d.total_commands;
  }

  bool capturing(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    return d.capturing != nullptr;
  }

  bool begin_capture(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    if (d.capturing) fail<ValueError>("gpu: a command list is already being recorded on device ", device);
    auto l = std::make_unique<CommandList>();
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = d.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    ai.commandBufferCount = 1;
    check(d.f->vkAllocateCommandBuffers(d.dev, &ai, &l->cmd), "vkAllocateCommandBuffers");
    VkCommandBufferInheritanceInfo inherit{VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;  // a frame may execute it while another still runs it
    bi.pInheritanceInfo = &inherit;
    if (d.f->vkBeginCommandBuffer(l->cmd, &bi) != VK_SUCCESS) {
      d.f->vkFreeCommandBuffers(d.dev, d.pool, 1, &l->cmd);
      fail<RuntimeError>("vulkan: vkBeginCommandBuffer failed for a command list");
    }
    d.capturing = l.release();
    d.cmd = d.capturing->cmd;
    d.since_barrier.clear();  // execute() puts a barrier before the list
    return true;
  }

  CommandList* end_capture(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    if (!d.capturing) fail<ValueError>("gpu: no command list is being recorded on device ", device);
    CommandList* l = d.stop_capture();
    if (d.f->vkEndCommandBuffer(l->cmd) != VK_SUCCESS) {
      d.destroy_list(l);
      fail<RuntimeError>("vulkan: vkEndCommandBuffer failed for a command list");
    }
    d.execute(l);
    return l;
  }

  void abort_capture(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    if (!d.capturing) return;
    CommandList* l = d.stop_capture();
    d.f->vkEndCommandBuffer(l->cmd);
    d.destroy_list(l);  // never submitted
  }

  void replay(int device, CommandList* l) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.refuse_while_capturing("replaying a command list");
    d.execute(l);
  }

  void free_list(int device, CommandList* l) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    if (d.recording) return d.frames[d.current].lists.push_back(l);
    if (d.last_submitted < kFrames && d.frames[d.last_submitted].submitted)
      return d.frames[d.last_submitted].lists.push_back(l);
    d.destroy_list(l);
  }

  bool set_profiling(int device, bool on) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.profiling = on && d.can_time;  // takes effect with the next command buffer
    return d.can_time;
  }

  std::vector<KernelTime> profile(int device) override {
    Device& d = device_at(device);
    std::lock_guard<std::mutex> g(d.mu);
    d.flush();
    std::vector<KernelTime> out;
    for (auto& [name, t] : d.times) out.push_back(t);
    d.times.clear();
    std::sort(out.begin(), out.end(), [](const KernelTime& a, const KernelTime& b) { return a.seconds > b.seconds; });
    return out;
  }

 private:
  // The device's UUID and, where the driver has VK_EXT_pci_bus_info, its PCI address.
  void identify(VkPhysicalDevice p, bool has_pci, DeviceInfo& info) {
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, has_pci ? &pci : nullptr};
    VkPhysicalDeviceProperties2 pr2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &ids};
    f_.vkGetPhysicalDeviceProperties2(p, &pr2);
    char text[32];
    for (uint8_t b : ids.deviceUUID) {
      std::snprintf(text, sizeof text, "%02x", b);
      info.uuid += text;
    }
    if (has_pci) {
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction);
      info.pci_bus = text;
    }
  }

  // The Device of index `device`, its logical device created on first use: a process that uses
  // one GPU of several allocates nothing on the others.
  Device& device_at(int device) {
    Device& d = *devices_.at(device);
    if (!d.created.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> g(open_mu_);
      if (!d.dev && !open(d.phys, d, true))
        throw std::runtime_error("vkCreateDevice failed on " + d.info.name);
      d.created.store(true, std::memory_order_release);
    }
    return d;
  }

  // Reads what PCP needs of p into d (false: p lacks it); with `create`, also creates the
  // logical device, its queue, command pool and frames.
  bool open(VkPhysicalDevice p, Device& d, bool create) {
    DeviceInfo scratch;  // creating: d.info, read by other threads, is not written again
    DeviceInfo& info = create ? scratch : d.info;
    d.f = &f_;
    d.phys = p;
    VkPhysicalDeviceProperties pr;
    f_.vkGetPhysicalDeviceProperties(p, &pr);
    uint32_t nq = 0;
    f_.vkGetPhysicalDeviceQueueFamilyProperties(p, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    f_.vkGetPhysicalDeviceQueueFamilyProperties(p, &nq, qs.data());
    bool found = false;
    for (uint32_t i = 0; i < nq && !found; ++i)
      if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) d.family = i, found = true;
    if (found && qs[d.family].timestampValidBits > 0 && pr.limits.timestampPeriod > 0) {
      d.can_time = true;
      d.ns_per_tick = pr.limits.timestampPeriod;
      if (qs[d.family].timestampValidBits < 64) d.tick_mask = (uint64_t(1) << qs[d.family].timestampValidBits) - 1;
    }
    if (!found || pr.limits.maxPushConstantsSize < kMaxPushBytes) return false;
    uint32_t ne = 0;
    f_.vkEnumerateDeviceExtensionProperties(p, nullptr, &ne, nullptr);
    std::vector<VkExtensionProperties> exts(ne);
    f_.vkEnumerateDeviceExtensionProperties(p, nullptr, &ne, exts.data());
    info.name = pr.deviceName;
    auto has_ext = [&](const char* name) {
      return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
      });
    };
    if (pr.apiVersion >= VK_API_VERSION_1_1) identify(p, has_ext("VK_EXT_pci_bus_info"), info);
    VkPhysicalDeviceMemoryProperties mp;
    f_.vkGetPhysicalDeviceMemoryProperties(p, &mp);
    info.memory_bytes = 0;
    for (uint32_t i = 0; i < mp.memoryHeapCount; ++i)
      if (mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        info.memory_bytes = std::max<uint64_t>(info.memory_bytes, mp.memoryHeaps[i].size);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = d.family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &prio;
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    // Tensor-core kernels (metal/coop/, SPIR-V 1.6): Vulkan 1.3, subgroups of 32, 16x16x16
    // products with float32 accumulation, and the features they use enabled.
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    if (pr.apiVersion >= VK_API_VERSION_1_2) {  // multi-tensor kernels (metal/addr/) read buffers by address
      VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
      f_.vkGetPhysicalDeviceFeatures2(p, &f2);
      info.buffer_addresses = v12.bufferDeviceAddress && find_kernel("adam_multi");
      v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    }
    CoopMatrixFeatures coop{kCoopMatrixFeatures};
    Bfloat16Features bf16{kBfloat16Features};
    Coopmat2Features cm2{kCoopmat2Features};
    std::vector<const char*> enable;
    info.tensor_core_note = !find_kernel("matmul_coop_f16") ? "not in this build (see the PCP build log)"
                              : pr.apiVersion < VK_API_VERSION_1_3 ? "the device is older than Vulkan 1.3"
                              : !has_ext("VK_KHR_cooperative_matrix") ? "no VK_KHR_cooperative_matrix"
                                                                      : "";
    if (info.tensor_core_note.empty()) {
      VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
      VkPhysicalDeviceProperties2 pr2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub};
      f_.vkGetPhysicalDeviceProperties2(p, &pr2);
      const bool bf16_ext = has_ext("VK_KHR_shader_bfloat16");
      const bool cm2_ext = has_ext("VK_NV_cooperative_matrix2") && find_kernel("matmul_cm2_f16");
      coop.pNext = &v12;
      if (bf16_ext) bf16.pNext = &coop;
      cm2.pNext = bf16_ext ? (void*)&bf16 : (void*)&coop;
      VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                   cm2_ext ? (void*)&cm2 : bf16_ext ? (void*)&bf16 : (void*)&coop};
      f_.vkGetPhysicalDeviceFeatures2(p, &f2);
      auto props = reinterpret_cast<PFN_GetCoopMatrixProperties>(
          f_.vkGetInstanceProcAddr(instance_, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
      uint32_t np = 0;
      info.tensor_core_note = !props                    ? "no vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"
                                : sub.subgroupSize != 32  ? "subgroups of " + std::to_string(sub.subgroupSize) + ", not 32"
                                : !coop.cooperativeMatrix ? "cooperativeMatrix feature off"
                                : !v12.shaderFloat16      ? "shaderFloat16 feature off"
                                : props(p, &np, nullptr) != VK_SUCCESS ? "no cooperative matrix properties"
                                                                       : "";
      if (info.tensor_core_note.empty()) {
        std::vector<CoopMatrixProperties> cp(np, CoopMatrixProperties{kCoopMatrixProperties});
        props(p, &np, cp.data());
        auto supports = [&](int32_t type) {
          return std::any_of(cp.begin(), cp.end(), [&](const CoopMatrixProperties& c) {
            return c.MSize == 16 && c.NSize == 16 && c.KSize == 16 && c.AType == type && c.BType == type &&
                   c.CType == kFloat32 && c.ResultType == kFloat32 && c.scope == kScopeSubgroup;
          });
        };
        info.tensor_core_f16 = find_kernel("matmul_coop_f16") && supports(kFloat16);
        info.tensor_core_bf16 = find_kernel("matmul_coop_bf16") && bf16_ext && bf16.shaderBFloat16Type &&
                                  bf16.shaderBFloat16CooperativeMatrix && supports(kBfloat16);
        if (!info.tensor_core_f16) info.tensor_core_note = "no 16x16x16 float16 product into float32";
        else if (!info.tensor_core_bf16) info.tensor_core_note = "float16 only (bfloat16: kernel or device lacks it)";
        for (const CoopMatrixProperties& c : cp)  // what the device offers, for that note
          if (!info.tensor_core_f16)
            info.tensor_core_note += "; offers " + std::to_string(c.MSize) + "x" + std::to_string(c.NSize) + "x" +
                                       std::to_string(c.KSize) + " types " + std::to_string(c.AType) + "," +
                                       std::to_string(c.CType) + "," + std::to_string(c.ResultType) + " scope " +
                                       std::to_string(c.scope);
      }
      if (info.tensor_core_f16 || info.tensor_core_bf16) {
        enable.push_back("VK_KHR_cooperative_matrix");
        coop = {kCoopMatrixFeatures, &v12, VK_TRUE, VK_FALSE};
        const bool memory_model = v12.vulkanMemoryModel;
        v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        v12.shaderFloat16 = VK_TRUE;
        v12.vulkanMemoryModel = memory_model;
        di.pNext = &coop;
        if (info.tensor_core_bf16) {
          enable.push_back("VK_KHR_shader_bfloat16");
          bf16 = {kBfloat16Features, &coop, VK_TRUE, VK_FALSE, VK_TRUE};
          di.pNext = &bf16;
        }
        // Workgroup-scope matrices loaded through tensor layouts (metal/coop/matmul_cm2.glsl).
        if (cm2_ext && cm2.workgroupScope && cm2.flexibleDimensions && cm2.tensorAddressing) {
          enable.push_back("VK_NV_cooperative_matrix2");
          cm2 = {kCoopmat2Features, const_cast<void*>(di.pNext), VK_TRUE, VK_TRUE, VK_FALSE, VK_FALSE, VK_FALSE, VK_TRUE,
                 VK_FALSE};
          di.pNext = &cm2;
          info.coopmat2 = true;
        }
      }
    }
    if (info.buffer_addresses) {
      if (!info.tensor_core_f16 && !info.tensor_core_bf16) {  // else v12 is in the chain already
        v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, const_cast<void*>(di.pNext)};
        di.pNext = &v12;
      }
      v12.bufferDeviceAddress = VK_TRUE;
    }
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR stats{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, const_cast<void*>(di.pNext), VK_TRUE};
    const char* want_stats = std::getenv("PCP_VULKAN_PIPELINE_STATS");
    const bool print_stats = want_stats && want_stats[0] == '1' && has_ext("VK_KHR_pipeline_executable_properties");
    if (print_stats) {
      enable.push_back("VK_KHR_pipeline_executable_properties");
      di.pNext = &stats;
    }
    di.enabledExtensionCount = uint32_t(enable.size());
    di.ppEnabledExtensionNames = enable.data();
    if (!create) return true;
    if (f_.vkCreateDevice(p, &di, nullptr, &d.dev) != VK_SUCCESS) return false;
    if (print_stats)
      d.get_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
          f_.vkGetInstanceProcAddr(instance_, "vkGetPipelineExecutableStatisticsKHR"));
// The loader's trampolines (from the instance) dispatch to the right driver for any device.
#define PCP_LOAD_DEVICE(name) f_.name = reinterpret_cast<PFN_##name>(f_.vkGetInstanceProcAddr(instance_, #name));
    PCP_VK_DEVICE_FNS(PCP_LOAD_DEVICE)
    f_.vkGetDeviceQueue(d.dev, d.family, 0, &d.queue);
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = d.family;
    check(f_.vkCreateCommandPool(d.dev, &ci, nullptr, &d.pool), "vkCreateCommandPool");
    for (Frame& fr : d.frames) {
      VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      ai.commandPool = d.pool;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      check(f_.vkAllocateCommandBuffers(d.dev, &ai, &fr.cmd), "vkAllocateCommandBuffers");
      VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      check(f_.vkCreateFence(d.dev, &fi, nullptr, &fr.fence), "vkCreateFence");
      fr.dpool = d.make_descriptor_pool();
      if (d.can_time) {
        VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = kMaxDispatchesPerSubmit + 1;
        check(f_.vkCreateQueryPool(d.dev, &qi, nullptr, &fr.queries), "vkCreateQueryPool");
      }
    }
    return true;
  }

  void* lib_ = nullptr;
  Fns f_;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Device>> devices_;
  std::mutex open_mu_;  // device_at's creation, which also writes f_
};

}  // namespace

Runtime* create_runtime() { return new VulkanRuntime(); }

}  // namespace pcp::gpu
