// Where a tensor's storage lives: the CPU, or GPU number `index` of the GPU runtime (Vulkan,
// Metal or CUDA, see backend/gpu/runtime.h).
#pragma once
#include <string>

namespace pcp {

enum class DeviceType { CPU, GPU };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  bool is_gpu() const { return type == DeviceType::GPU; }
  std::string str() const;  // "cpu", "vulkan:0", "metal:0", "cuda:0"
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

inline Device cpu_device() { return Device{}; }
inline Device gpu_device(int index) { return Device{DeviceType::GPU, index}; }
// "cpu", "gpu" (the first GPU), "gpu:N", "vulkan:N", "metal:N", "cuda:N" (the runtime's); a clear
// ValueError otherwise.
Device parse_device(const std::string& name);
// Where creation functions put tensors when no device is named (the CPU unless set).
Device default_device();
void set_default_device(Device device);

}  // namespace pcp
