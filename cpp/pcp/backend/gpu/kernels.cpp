#include <string>

#include "pcp/backend/gpu/runtime.h"

namespace pcp::gpu {

const KernelSource* find_kernel(const std::string& name) {
  for (const KernelSource& k : all_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace pcp::gpu
