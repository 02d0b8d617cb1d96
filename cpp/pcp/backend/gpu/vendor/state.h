// The vendor path's state per device (internal to gpu/vendor/).
#pragma once
#include <memory>

#include "pcp/backend/gpu/vendor/cuda_device.h"
#include "pcp/backend/gpu/vendor/vendor.h"

namespace pcp::gpu::vendor {

struct VendorDevice {
  std::unique_ptr<CudaDevice> cuda;
  cublasLtHandle_t lt = nullptr;  // when matmuls take cuBLASLt
  void* cudnn = nullptr;          // cudnnHandle_t, when attention takes cuDNN
  Status status;
};

// The device's state when the vendor path is on there, else nullptr.
VendorDevice* vendor_device(int index);

// cuBLASLt and cuDNN, loaded once per process: a handle for a device, or nullptr with the reason
// in `why`; `version` says which library loaded.
cublasLtHandle_t create_cublaslt(CudaDevice& d, std::string& version, std::string& why);
void* create_cudnn(CudaDevice& d, std::string& version, std::string& why);

}  // namespace pcp::gpu::vendor
