// The parts of CUDA's driver API (libcuda, from the NVIDIA driver) and of NVRTC (from NVIDIA's
// pip wheels, pcp[cuda]) that PCP calls, declared here so that a build needs no CUDA toolkit;
// both are loaded with dlopen at run time (library.h). Names, values and layouts are those of
// NVIDIA's headers (cuda.h and nvrtc.h 13), which tools/check_cuda_abi.py compares with this
// file and the cuBLASLt and cuDNN declarations (gpu/vendor/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "pcp/backend/cuda/library.h"

namespace pcp::cuda {

// ---- CUDA driver API (cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
struct CUuuid {
  char bytes[16];
};

constexpr CUresult CUDA_SUCCESS = 0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// The driver's entry points PCP uses, with the symbol each is loaded from (the versioned names
// cuda.h's macros map to).
#define PCP_CUDA_FNS(X)                                                                                       \
  X(cuInit, "cuInit", CUresult (*)(unsigned))                                                                 \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult (*)(int*))                                              \
  X(cuGetErrorString, "cuGetErrorString", CUresult (*)(CUresult, const char**))                                \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult (*)(int*))                                                  \
  X(cuDeviceGet, "cuDeviceGet", CUresult (*)(CUdevice*, int))                                                  \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult (*)(char*, int, CUdevice))                                    \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", CUresult (*)(size_t*, CUdevice))                                  \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", CUresult (*)(CUuuid*, CUdevice))                                     \
  X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", CUresult (*)(char*, int, CUdevice))                             \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult (*)(int*, int, CUdevice))                            \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult (*)(CUcontext*, CUdevice))                   \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", CUresult (*)(CUcontext))                                           \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", CUresult (*)(CUcontext*))                                            \
  X(cuStreamCreate, "cuStreamCreate", CUresult (*)(CUstream*, unsigned))                                        \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult (*)(CUstream))                                         \
  X(cuMemAllocAsync, "cuMemAllocAsync", CUresult (*)(CUdeviceptr*, size_t, CUstream))                          \
  X(cuMemFreeAsync, "cuMemFreeAsync", CUresult (*)(CUdeviceptr, CUstream))                                      \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr*, size_t))                                            \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult (*)(CUdeviceptr, const void*, size_t, CUstream))       \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult (*)(void*, CUdeviceptr, size_t, CUstream))             \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))       \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult (*)(CUmodule*, const void*))                                \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult (*)(CUfunction*, CUmodule, const char*))              \
  X(cuLaunchKernel, "cuLaunchKernel",                                                                          \
    CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,    \
                 void**, void**))                                                                               \
  X(cuEventCreate, "cuEventCreate", CUresult (*)(CUevent*, unsigned))                                          \
  X(cuEventRecord, "cuEventRecord", CUresult (*)(CUevent, CUstream))                                           \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult (*)(CUevent))                                           \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", CUresult (*)(float*, CUevent, CUevent))

// NVRTC, the runtime compiler (nvrtc.h): PCP's kernels are compiled from their CUDA C++ at first use.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
#define PCP_NVRTC_FNS(X)                                                                                      \
  X(nvrtcVersion, "nvrtcVersion", nvrtcResult (*)(int*, int*))                                                \
  X(nvrtcGetErrorString, "nvrtcGetErrorString", const char* (*)(nvrtcResult))                                 \
  X(nvrtcCreateProgram, "nvrtcCreateProgram",                                                                 \
    nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*))     \
  X(nvrtcDestroyProgram, "nvrtcDestroyProgram", nvrtcResult (*)(nvrtcProgram*))                               \
  X(nvrtcCompileProgram, "nvrtcCompileProgram", nvrtcResult (*)(nvrtcProgram, int, const char* const*))       \
  X(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult (*)(nvrtcProgram, size_t*))                \
  X(nvrtcGetProgramLog, "nvrtcGetProgramLog", nvrtcResult (*)(nvrtcProgram, char*))                          \
  X(nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nvrtcResult (*)(nvrtcProgram, size_t*))                          \
  X(nvrtcGetCUBIN, "nvrtcGetCUBIN", nvrtcResult (*)(nvrtcProgram, char*))

struct DriverFns {
  PCP_CUDA_FNS(PCP_DECLARE_FN_)
};
struct NvrtcFns {
  PCP_NVRTC_FNS(PCP_DECLARE_FN_)
};

// libcuda, loaded and initialised once: its entry points, or the reason it is not usable.
struct Driver {
  DriverFns fns;
  std::string error;
};
const Driver& driver();
inline const DriverFns& cu() { return driver().fns; }
// A RuntimeError naming `what` and the driver's message, unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);

// NVRTC, loaded once: its entry points and version ("13.0"), or the reason it is not usable.
struct Nvrtc {
  NvrtcFns fns;
  std::string version, error;
};
const Nvrtc& nvrtc();

// Makes a context current on this thread for a scope, and the one before current again after.
class ContextScope {
 public:
  explicit ContextScope(CUcontext ctx);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

}  // namespace pcp::cuda
