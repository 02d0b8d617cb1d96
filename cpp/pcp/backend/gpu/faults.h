// Device-side checks, as CUDA's device asserts: a kernel that indexes with values living on the
// GPU (cross-entropy targets) cannot fail on the host without a round trip, so it records the first
// bad value in its device's fault record and the host raises it at the next synchronisation. The
// host must synchronise through these two functions (not the runtime's) for that to happen.
#pragma once
#include <cstddef>

#include "pcp/backend/gpu/runtime.h"

namespace pcp::gpu {

// What a kernel found; the codes are shared with the kernels (FAULT_* in metal/common.glsl).
enum class Fault : int { None = 0, CrossEntropyTarget = 1 };

// The device's fault record: four int32 words {code, value, bound, detail}, zero when nothing was
// found. Kernels write it with atomicCompSwap on word 0, so the first fault wins. Asking for it
// arms the check at the next synchronize() / download().
Buffer* fault_buffer(int device);

// rt().synchronize() / rt().download(), then the IndexError of a recorded fault, if any.
void synchronize(int device);
void download(int device, const Buffer* src, size_t src_offset, void* dst, size_t nbytes);

}  // namespace pcp::gpu
