#include "pcp/core/device.h"

#include <cstdlib>

#include "pcp/core/device_memory.h"
#include "pcp/core/error.h"

namespace pcp {

std::string Device::str() const {
  if (type == DeviceType::CPU) return "cpu";
  GpuBackend* rt = gpu_backend();
  return std::string(rt ? rt->api() : "gpu") + ":" + std::to_string(index);
}

namespace {
Device g_default;
}

Device default_device() { return g_default; }
void set_default_device(Device device) { g_default = device; }

Device parse_device(const std::string& name) {
  if (name == "cpu" || name == "cpu:0") return cpu_device();
  const auto colon = name.find(':');
  const std::string kind = name.substr(0, colon);
  GpuBackend* rt = gpu_backend();
  if (kind == "gpu" || kind == "vulkan" || kind == "metal" || kind == "cuda") {
    if (!rt) fail<ValueError>("device '", name, "': no GPU is available (", gpu_unavailable_reason(), ")");
    if (kind != "gpu" && kind != rt->api())
      fail<ValueError>("device '", name, "': this machine's GPU runtime is ", rt->api());
    int index = 0;
    if (colon != std::string::npos) {
      const std::string num = name.substr(colon + 1);
      char* end = nullptr;
      const long v = std::strtol(num.c_str(), &end, 10);
      if (num.empty() || *end != '\0' || v < 0) fail<ValueError>("device '", name, "': bad device index");
      if (v >= rt->device_count())  // before narrowing: 99999999999999999999 saturates strtol
        fail<ValueError>("device '", name, "': only ", rt->device_count(), " GPU(s) available");
      index = int(v);
    }
    if (index >= rt->device_count())
      fail<ValueError>("device '", name, "': only ", rt->device_count(), " GPU(s) available");
    return gpu_device(index);
  }
  fail<ValueError>("unknown device '", name, "': expected 'cpu', 'gpu', 'gpu:N' or '", rt ? rt->api() : "vulkan",
                   ":N'");
}

}  // namespace pcp
