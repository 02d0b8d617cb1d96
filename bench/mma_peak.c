// The tensor-core throughput a Vulkan compute kernel reaches on this GPU (VK_KHR_cooperative_matrix,
// 16 x 16 x 16, float32 accumulation): the ceiling for PCP's GEMM and attention kernels, to set
// against cuBLAS (bench/gpu.py). Runs bench/mma_peak.comp in two modes: fragments held in
// registers (the MMA rate alone) and reloaded from shared memory every step (a GEMM's inner loop);
// and bench/mma_peak_cm2.comp, the same with VK_NV_cooperative_matrix2's workgroup-scope matrices.
//
//   glslc --target-env=vulkan1.3 -O -DBF16 bench/mma_peak.comp -o /tmp/bf16_2x4.spv
//   glslc --target-env=vulkan1.3 -O -DBF16 -DFM=4 -DFN=4 bench/mma_peak.comp -o /tmp/bf16_4x4.spv
//   glslc --target-env=vulkan1.3 -O -DBF16 bench/mma_peak_cm2.comp -o /tmp/cm2_128.spv
//   cc -O2 -I<vulkan headers> bench/mma_peak.c -o /tmp/mma_peak -l:libvulkan.so.1
//   /tmp/mma_peak "bf16 2x4" 64 /tmp/bf16_2x4.spv "bf16 4x4" 128 /tmp/bf16_4x4.spv "cm2 128x128" 128 /tmp/cm2_128.spv
//
// Each kernel is given as a label, its 16 x 16 x 16 products per workgroup step (8 subgroups of
// FM x FN; BM x BN x 32 / 4096 for the workgroup-scope kernel) and its SPIR-V file.
//
// The cooperative-matrix and bfloat16 structures are declared with the registry's values, as in
// PCP's runtime, so Debian 12's Vulkan headers (1.3.239) suffice.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

typedef struct {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix, cooperativeMatrixRobustBufferAccess;
} CoopFeatures;
typedef struct {
  VkStructureType sType;
  void* pNext;
  VkBool32 workgroupScope, flexibleDimensions, reductions, conversions, perElementOperations, tensorAddressing,
      blockLoads;
} Coopmat2Features;
typedef struct {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderBFloat16Type, shaderBFloat16DotProduct, shaderBFloat16CooperativeMatrix;
} Bf16Features;

#define CHECK(call)                                                        \
  do {                                                                     \
    VkResult r_ = (call);                                                  \
    if (r_ != VK_SUCCESS) {                                                \
      fprintf(stderr, "mma_peak: %s failed (VkResult %d)\n", #call, r_);   \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint32_t* read_file(const char* path, size_t* bytes) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "mma_peak: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *bytes = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint32_t* data = malloc(*bytes);
  if (fread(data, 1, *bytes, f) != *bytes) exit(1);
  fclose(f);
  return data;
}

static VkDevice dev;
static VkPhysicalDevice phys;
static VkQueue queue;
static uint32_t family;

static uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if ((bits >> i & 1) && (mp.memoryTypes[i].propertyFlags & want) == want) return i;
  fprintf(stderr, "mma_peak: no host-visible memory\n");
  exit(1);
}

static VkBuffer make_buffer(VkDeviceSize size, VkDeviceMemory* mem, void** mapped) {
  VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer b;
  CHECK(vkCreateBuffer(dev, &bi, NULL, &b));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b, &req);
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  CHECK(vkAllocateMemory(dev, &ai, NULL, mem));
  CHECK(vkBindBufferMemory(dev, b, *mem, 0));
  CHECK(vkMapMemory(dev, *mem, 0, size, 0, mapped));
  return b;
}

// Best-of-5 TFLOP/s of one kernel (a SPIR-V file) in one mode.
static double run(const char* spv, int products, int smem, uint32_t groups, uint32_t iters, VkBuffer in, VkBuffer out) {
  size_t bytes;
  uint32_t* code = read_file(spv, &bytes);
  VkShaderModuleCreateInfo mi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = bytes;
  mi.pCode = code;
  VkShaderModule module;
  CHECK(vkCreateShaderModule(dev, &mi, NULL, &module));
  free(code);

  VkDescriptorSetLayoutBinding binds[2] = {{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
                                           {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
  VkDescriptorSetLayoutCreateInfo li = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = 2;
  li.pBindings = binds;
  VkDescriptorSetLayout set_layout;
  CHECK(vkCreateDescriptorSetLayout(dev, &li, NULL, &set_layout));
  VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &set_layout;
  VkPipelineLayout layout;
  CHECK(vkCreatePipelineLayout(dev, &pli, NULL, &layout));

  uint32_t spec[2] = {iters, (uint32_t)smem};
  VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
  VkSpecializationInfo si = {2, entries, sizeof spec, spec};
  VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &si;
  ci.layout = layout;
  VkPipeline pipeline;
  CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &pipeline));

  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
  VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &ps;
  VkDescriptorPool pool;
  CHECK(vkCreateDescriptorPool(dev, &dpi, NULL, &pool));
  VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &set_layout;
  VkDescriptorSet set;
  CHECK(vkAllocateDescriptorSets(dev, &dai, &set));
  VkDescriptorBufferInfo infos[2] = {{in, 0, VK_WHOLE_SIZE}, {out, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[2];
  for (int i = 0; i < 2; ++i) {
    VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = (uint32_t)i;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &infos[i];
    writes[i] = w;
  }
  vkUpdateDescriptorSets(dev, 2, writes, 0, NULL);

  VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = family;
  VkCommandPool cmd_pool;
  CHECK(vkCreateCommandPool(dev, &cpi, NULL, &cmd_pool));
  VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = cmd_pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  CHECK(vkAllocateCommandBuffers(dev, &cai, &cmd));
  VkCommandBufferBeginInfo bbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  CHECK(vkBeginCommandBuffer(cmd, &bbi));
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  vkCmdDispatch(cmd, groups, 1, 1);
  CHECK(vkEndCommandBuffer(cmd));

  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {  // the first is a warm-up
    VkSubmitInfo sub = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    sub.commandBufferCount = 1;
    sub.pCommandBuffers = &cmd;
    const double t0 = now();
    CHECK(vkQueueSubmit(queue, 1, &sub, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(queue));
    const double t = now() - t0;
    if (rep > 0 && t < best) best = t;
  }
  vkDestroyCommandPool(dev, cmd_pool, NULL);
  vkDestroyDescriptorPool(dev, pool, NULL);
  vkDestroyPipeline(dev, pipeline, NULL);
  vkDestroyPipelineLayout(dev, layout, NULL);
  vkDestroyDescriptorSetLayout(dev, set_layout, NULL);
  vkDestroyShaderModule(dev, module, NULL);
  const double flops = 2.0 * 16 * 16 * 16 * products * (double)iters * groups;
  return flops / best / 1e12;
}

int main(int argc, char** argv) {
  if (argc < 4 || (argc - 1) % 3) {
    fprintf(stderr, "usage: mma_peak LABEL PRODUCTS FILE.spv [LABEL PRODUCTS FILE.spv ...]\n");
    return 2;
  }
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ii = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ii.pApplicationInfo = &app;
  VkInstance inst;
  CHECK(vkCreateInstance(&ii, NULL, &inst));
  uint32_t n = 8;
  VkPhysicalDevice devs[8];
  CHECK(vkEnumeratePhysicalDevices(inst, &n, devs));
  if (n == 0) {
    fprintf(stderr, "mma_peak: no Vulkan device\n");
    return 1;
  }
  phys = devs[0];
  VkPhysicalDeviceProperties props;
  for (uint32_t i = 0; i < n; ++i) {  // the first discrete GPU, else the first device
    vkGetPhysicalDeviceProperties(devs[i], &props);
    if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
      phys = devs[i];
      break;
    }
  }
  vkGetPhysicalDeviceProperties(phys, &props);

  uint32_t qn = 16;
  VkQueueFamilyProperties qf[16];
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &qn, qf);
  for (family = 0; family < qn && !(qf[family].queueFlags & VK_QUEUE_COMPUTE_BIT); ++family) {}
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;

  uint32_t en = 0;
  CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &en, NULL));
  VkExtensionProperties* ext = malloc(en * sizeof *ext);
  CHECK(vkEnumerateDeviceExtensionProperties(phys, NULL, &en, ext));
  int coop_ext = 0, bf16 = 0, cm2 = 0;
  for (uint32_t i = 0; i < en; ++i) {
    coop_ext |= !strcmp(ext[i].extensionName, "VK_KHR_cooperative_matrix");
    bf16 |= !strcmp(ext[i].extensionName, "VK_KHR_shader_bfloat16");
    cm2 |= !strcmp(ext[i].extensionName, "VK_NV_cooperative_matrix2");
  }
  if (!coop_ext) {
    fprintf(stderr, "mma_peak: %s has no VK_KHR_cooperative_matrix\n", props.deviceName);
    return 1;
  }
  Bf16Features bff = {(VkStructureType)1000141000, NULL, VK_TRUE, VK_FALSE, VK_TRUE};
  Coopmat2Features cm2f = {(VkStructureType)1000593000, bf16 ? &bff : NULL};
  if (cm2) {  // what the device has of it
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cm2f};
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    cm2f.pNext = bf16 ? &bff : NULL;
  }
  CoopFeatures coop = {(VkStructureType)1000506000, cm2 ? (void*)&cm2f : bf16 ? (void*)&bff : NULL, VK_TRUE, VK_FALSE};
  VkPhysicalDeviceVulkan12Features v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &coop};
  v12.shaderFloat16 = VK_TRUE;
  v12.vulkanMemoryModel = VK_TRUE;
  v12.vulkanMemoryModelDeviceScope = VK_TRUE;
  VkPhysicalDeviceVulkan11Features v11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
  v11.storageBuffer16BitAccess = VK_TRUE;
  const char* exts[3] = {"VK_KHR_cooperative_matrix", NULL, NULL};
  uint32_t n_exts = 1;
  if (bf16) exts[n_exts++] = "VK_KHR_shader_bfloat16";
  if (cm2) exts[n_exts++] = "VK_NV_cooperative_matrix2";
  VkDeviceCreateInfo di = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &v11};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = n_exts;
  di.ppEnabledExtensionNames = exts;
  CHECK(vkCreateDevice(phys, &di, NULL, &dev));
  vkGetDeviceQueue(dev, family, 0, &queue);

  const uint32_t groups = 132 * 16, iters = 16384;  // 16 workgroups an SM of an H100/H200
  VkDeviceMemory in_mem, out_mem;
  void *in_map, *out_map;
  VkBuffer in = make_buffer(264 * 16, &in_mem, &in_map);
  VkBuffer out = make_buffer((VkDeviceSize)groups * 8 * 256 * 4, &out_mem, &out_map);
  uint16_t* h = in_map;
  for (int i = 0; i < 264 * 8; ++i) h[i] = (uint16_t)(0x2000 + (i % 7));  // small, nonzero
  h[2] = h[3] = 0xFFFF;  // x[0].y, the step that never comes
  printf("# %s, Vulkan cooperative matrices 16x16x16, float32 accumulation, %u workgroups of 256\n", props.deviceName,
         groups);
  for (int k = 1; k + 2 < argc; k += 3)
    for (int smem = 0; smem < 2; ++smem)
      printf("%-12s %-40s %7.1f TFLOP/s\n", argv[k], smem ? "fragments loaded from shared memory" : "fragments in registers",
             run(argv[k + 2], atoi(argv[k + 1]), smem, groups, iters, in, out));
  return 0;
}
