// The process-wide runtime (made by the backend that was built) and lookups of the embedded kernels.
#include <exception>
#include <string>

#include "pcp/backend/gpu/runtime.h"
#include "pcp/core/error.h"

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

Runtime& rt() {
  Runtime* r = runtime();
  if (!r) fail<ValueError>("gpu: no GPU is available (", unavailable_reason(), ")");
  return *r;
}

const KernelSource* find_kernel(const std::string& name) {
  for (const KernelSource& k : all_kernels())
    if (name == k.name) return &k;
  return nullptr;
}

const KernelSource& kernel_named(const std::string& name) {
  const KernelSource* src = find_kernel(name);
  if (!src) fail<ValueError>("gpu: no kernel named '", name, "'");
  return *src;
}

void check_bindings(const std::string& name, uint32_t pipeline_bindings, uint32_t nbuf) {
  if (pipeline_bindings != nbuf)
    fail<ValueError>("gpu kernel ", name, ": dispatched with ", nbuf, " buffers, earlier with ", pipeline_bindings);
}

}  // namespace pcp::gpu
