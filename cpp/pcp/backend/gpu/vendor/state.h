// The vendor libraries per device (internal to gpu/vendor/).
#pragma once
#include <string>

#include "pcp/backend/gpu/vendor/cublaslt_api.h"
#include "pcp/backend/gpu/vendor/vendor.h"

namespace pcp::gpu::vendor {

// Whether the vendor path may run on a device now: the CUDA runtime, and not set_enabled(false).
bool enabled(int device);

// Each library loaded once per process: a handle for a device (made on first use, in the
// device's context), or nullptr with the reason in `why`; `version` says which file loaded.
cublasLtHandle_t cublaslt(int device, std::string* version = nullptr, std::string* why = nullptr);
void* cudnn(int device, std::string* version = nullptr, std::string* why = nullptr);

// A tensor's device address (the CUDA runtime's buffers).
uint64_t address(const Tensor& t);

}  // namespace pcp::gpu::vendor
