// Where a tensor's storage lives. Only the CPU exists in this layer; GPU runtimes add kinds.
#pragma once
#include <string>

namespace pcp {

enum class DeviceType { CPU };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  std::string str() const { return "cpu"; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

inline Device cpu_device() { return Device{}; }
Device parse_device(const std::string& name);  // "cpu"

}  // namespace pcp
