// The process-wide runtime (made by the backend that was built) and lookups of the embedded kernels.
#include <exception>
#include <string>

#include "pcp/backend/gpu/runtime.h"

namespace pcp::gpu {
namespace {
std::string g_reason;
}  // namespace

Runtime* runtime() {
  static Runtime* rt = []() -> Runtime* {
    try {
      return create_runtime();  // lives for the whole process
    } catch (const std::exception& e) {
      g_reason = e.what();
      return nullptr;
    }
  }();
  return rt;
}

std::string unavailable_reason() {
  runtime();
  return g_reason;
}

const KernelSource* find_kernel(const std::string& name) {
  for (const KernelSource& k : all_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace pcp::gpu
