// The Vulkan runtime's devices (vulkan_runtime.cpp): the loaded entry points, a device's
// frames (command buffers in flight), its barrier tracking, staging memory and pipelines.
#pragma once
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

namespace vulkan {


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

inline void check(VkResult r, const char* what) {
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

// Reads what PCP needs of p into d (false: p lacks it); with `create`, also creates the
// logical device, its queue, command pool and frames (vulkan_open.cpp).
bool open_device(Fns& f, VkInstance instance, VkPhysicalDevice p, Device& d, bool create);

}  // namespace vulkan
}  // namespace pcp::gpu
