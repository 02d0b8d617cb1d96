#include "pcp/backend/gpu/faults.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>

#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

struct Record {
  Buffer* buffer = nullptr;
  bool armed = false;  // a kernel may have written it since the last check
};

std::mutex mu;
std::map<int, Record> records;

// Reads and clears the device's record (the device is idle: all recorded work has completed).
void raise_recorded(int device) {
  std::array<int32_t, 4> f{};
  {
    std::lock_guard<std::mutex> g(mu);
    Record& r = records[device];
    if (!r.armed) return;
    r.armed = false;
    rt().download(device, r.buffer, 0, f.data(), sizeof f);
    if (f[0] == int32_t(Fault::None)) return;
    const std::array<int32_t, 4> zero{};
    rt().upload(device, r.buffer, 0, zero.data(), sizeof zero);
  }
  switch (Fault(f[0])) {
    case Fault::CrossEntropyTarget:
      // Reported by whichever op synchronises: the message names the op that found it.
      fail<IndexError>("a GPU kernel of cross_entropy found target ", f[1], " out of range for ", f[2],
                       " classes (expected 0 <= target < ", f[2], ", or ignore_index ", f[3],
                       "), reported at this synchronisation");
    default: fail<RuntimeError>("GPU: unknown device-side fault code ", f[0]);
  }
}

}  // namespace

Buffer* fault_buffer(int device) {
  std::lock_guard<std::mutex> g(mu);
  Record& r = records[device];
  if (!r.buffer) {
    r.buffer = rt().allocate(device, 16);  // lives as long as the process
    const std::array<int32_t, 4> zero{};
    rt().upload(device, r.buffer, 0, zero.data(), sizeof zero);
  }
  r.armed = true;
  return r.buffer;
}

void synchronize(int device) {
  rt().synchronize(device);
  raise_recorded(device);
}

void download(int device, const Buffer* src, size_t src_offset, void* dst, size_t nbytes) {
  rt().download(device, src, src_offset, dst, nbytes);
  raise_recorded(device);
}

}  // namespace pcp::gpu
