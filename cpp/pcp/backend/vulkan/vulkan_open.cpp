// Opening a Vulkan device (vulkan_device.h): its queue family, extensions, features and memory,
// what PCP's kernels may use on it (DeviceInfo), and with `create` the logical device.
#include "pcp/backend/vulkan/vulkan_device.h"

namespace pcp::gpu::vulkan {

namespace {

// The device's UUID and, where the driver has VK_EXT_pci_bus_info, its PCI address.
void identify(Fns& f, VkPhysicalDevice p, bool has_pci, DeviceInfo& info) {
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, has_pci ? &pci : nullptr};
  VkPhysicalDeviceProperties2 pr2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &ids};
  f.vkGetPhysicalDeviceProperties2(p, &pr2);
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

}  // namespace

bool open_device(Fns& f, VkInstance instance, VkPhysicalDevice p, Device& d, bool create) {
  DeviceInfo scratch;  // creating: d.info, read by other threads, is not written again
  DeviceInfo& info = create ? scratch : d.info;
  d.f = &f;
  d.phys = p;
  VkPhysicalDeviceProperties pr;
  f.vkGetPhysicalDeviceProperties(p, &pr);
  uint32_t nq = 0;
  f.vkGetPhysicalDeviceQueueFamilyProperties(p, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  f.vkGetPhysicalDeviceQueueFamilyProperties(p, &nq, qs.data());
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
  f.vkEnumerateDeviceExtensionProperties(p, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  f.vkEnumerateDeviceExtensionProperties(p, nullptr, &ne, exts.data());
  info.name = pr.deviceName;
  info.software = pr.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  auto has_ext = [&](const char* name) {
    return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) {
      return std::strcmp(e.extensionName, name) == 0;
    });
  };
  if (pr.apiVersion >= VK_API_VERSION_1_1) identify(f, p, has_ext("VK_EXT_pci_bus_info"), info);
  VkPhysicalDeviceMemoryProperties mp;
  f.vkGetPhysicalDeviceMemoryProperties(p, &mp);
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
    f.vkGetPhysicalDeviceFeatures2(p, &f2);
    info.buffer_addresses = v12.bufferDeviceAddress && find_kernel("adam_multi");
    v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  }
  // float64 and int64 kernels (metal/wide/): both features, or neither kernel family.
  // PCP_VULKAN_HIDE_FEATURES="shaderFloat64,..." treats the listed features as missing (tests).
  VkPhysicalDeviceFeatures core{};
  if (pr.apiVersion >= VK_API_VERSION_1_1) {
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f.vkGetPhysicalDeviceFeatures2(p, &f2);
    const char* hide = std::getenv("PCP_VULKAN_HIDE_FEATURES");
    const auto has = [&](VkBool32 on, const char* name) { return on && !(hide && std::strstr(hide, name)); };
    for (auto [on, name] : {std::pair{f2.features.shaderFloat64, "shaderFloat64"},
                            std::pair{f2.features.shaderInt64, "shaderInt64"}})
      if (!has(on, name)) info.wide_missing += std::string(info.wide_missing.empty() ? "" : " and ") + name;
    if (!find_kernel("unary_f64")) info.wide_missing = "the float64 kernels (not in this build)";
    info.wide = info.wide_missing.empty();
    core.shaderFloat64 = core.shaderInt64 = info.wide ? VK_TRUE : VK_FALSE;
    di.pEnabledFeatures = &core;
  } else {
    info.wide_missing = "Vulkan 1.1";
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
    f.vkGetPhysicalDeviceProperties2(p, &pr2);
    const bool bf16_ext = has_ext("VK_KHR_shader_bfloat16");
    const bool cm2_ext = has_ext("VK_NV_cooperative_matrix2") && find_kernel("matmul_cm2_f16");
    coop.pNext = &v12;
    if (bf16_ext) bf16.pNext = &coop;
    cm2.pNext = bf16_ext ? (void*)&bf16 : (void*)&coop;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                 cm2_ext ? (void*)&cm2 : bf16_ext ? (void*)&bf16 : (void*)&coop};
    f.vkGetPhysicalDeviceFeatures2(p, &f2);
    auto props = reinterpret_cast<PFN_GetCoopMatrixProperties>(
        f.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
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
  if (f.vkCreateDevice(p, &di, nullptr, &d.dev) != VK_SUCCESS) return false;
  if (print_stats)
    d.get_statistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
        f.vkGetInstanceProcAddr(instance, "vkGetPipelineExecutableStatisticsKHR"));
// The loader's trampolines (from the instance) dispatch to the right driver for any device.
#define PCP_LOAD_DEVICE(name) f.name = reinterpret_cast<PFN_##name>(f.vkGetInstanceProcAddr(instance, #name));
  PCP_VK_DEVICE_FNS(PCP_LOAD_DEVICE)
  f.vkGetDeviceQueue(d.dev, d.family, 0, &d.queue);
  VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  ci.queueFamilyIndex = d.family;
  check(f.vkCreateCommandPool(d.dev, &ci, nullptr, &d.pool), "vkCreateCommandPool");
  for (Frame& fr : d.frames) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = d.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(f.vkAllocateCommandBuffers(d.dev, &ai, &fr.cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(f.vkCreateFence(d.dev, &fi, nullptr, &fr.fence), "vkCreateFence");
    fr.dpool = d.make_descriptor_pool();
    if (d.can_time) {
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = kMaxDispatchesPerSubmit + 1;
      check(f.vkCreateQueryPool(d.dev, &qi, nullptr, &fr.queries), "vkCreateQueryPool");
    }
  }
  return true;
}

}  // namespace pcp::gpu::vulkan
