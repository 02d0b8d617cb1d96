// The Vulkan runtime: runs the embedded SPIR-V kernels on every Vulkan device (NVIDIA, AMD, Intel,
// Mesa's lavapipe). libvulkan is loaded with dlopen, so the library imports and lists no GPU
// where Vulkan is missing.
//
// One in-order command buffer per device records uploads, copies and dispatches, each followed
// by a full memory barrier; it is submitted when it grows long, when the GPU has run out of work,
// or at a synchronisation point.
// Buffers released while recorded work may still use them go back to a cache that only that
// same stream reuses, after the barrier, so reuse is ordered; memory is freed only after a wait.
#include "pcp/backend/vulkan/vulkan_device.h"

namespace pcp::gpu {
namespace {

using namespace vulkan;

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

  bool open(VkPhysicalDevice p, Device& d, bool create) { return open_device(f_, instance_, p, d, create); }

  void* lib_ = nullptr;
  Fns f_;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::vector<std::unique_ptr<Device>> devices_;
  std::mutex open_mu_;  // device_at's creation, which also writes f_
};

}  // namespace

Runtime* create_runtime() { return new VulkanRuntime(); }

}  // namespace pcp::gpu
