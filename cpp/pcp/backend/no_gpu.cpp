// Built without a GPU backend (glslc or the Vulkan headers were missing at configure time).
#include <stdexcept>

#include "pcp/backend/gpu/runtime.h"

namespace pcp::gpu {

Runtime* create_runtime() {
  throw std::runtime_error("PCP was built without a GPU backend (glslc or Vulkan headers missing)");
}
const char* cuda_kernel_header() { return ""; }
const std::vector<KernelSource>& all_kernels() {
  static const std::vector<KernelSource> none;
  return none;
}

}  // namespace pcp::gpu
