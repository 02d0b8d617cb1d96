// The parts of NVIDIA's C APIs that PCP calls, declared here so that a build needs no CUDA
// toolkit: the driver API (libcuda, from the driver), cuBLASLt and cuDNN's backend API (from
// NVIDIA's pip wheels, pcp[cuda]). All are loaded with dlopen at run time (vendor/library.cpp).
// Names, values and layouts are those of NVIDIA's headers (cuda.h 13, cublasLt.h 13, cudnn_graph.h
// 9), which tools/check_vendor_abi.sh compares with this file.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pcp::gpu::vendor {

// ---- CUDA driver API (cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUexternalMemory = struct CUextMemory_st*;
using CUexternalSemaphore = struct CUextSemaphore_st*;
struct CUuuid {
  char bytes[16];
};

constexpr CUresult CUDA_SUCCESS = 0;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr int CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD = 1;
constexpr int CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD = 9;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

struct CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
  int type;
  union {
    int fd;
    struct {
      void* handle;
      const void* name;
    } win32;
    const void* nvSciBufObject;
  } handle;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_MEMORY_BUFFER_DESC {
  unsigned long long offset;
  unsigned long long size;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
  int type;
  union {
    int fd;
    struct {
      void* handle;
      const void* name;
    } win32;
    const void* nvSciSyncObj;
  } handle;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void* fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
    } keyedMutex;
    unsigned int reserved[12];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
};

struct CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS {
  struct {
    struct {
      unsigned long long value;
    } fence;
    union {
      void* fence;
      unsigned long long reserved;
    } nvSciSync;
    struct {
      unsigned long long key;
      unsigned int timeoutMs;
    } keyedMutex;
    unsigned int reserved[10];
  } params;
  unsigned int flags;
  unsigned int reserved[16];
};

// The driver's entry points PCP uses, with the symbol each is loaded from (the versioned names
// cuda.h's macros map to).
#define PCP_CUDA_FNS(X)                                                                                       \
  X(cuInit, "cuInit", CUresult (*)(unsigned))                                                                 \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult (*)(int*))                                              \
  X(cuGetErrorString, "cuGetErrorString", CUresult (*)(CUresult, const char**))                                \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult (*)(int*))                                                  \
  X(cuDeviceGet, "cuDeviceGet", CUresult (*)(CUdevice*, int))                                                  \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", CUresult (*)(CUuuid*, CUdevice))                                     \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult (*)(int*, int, CUdevice))                            \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult (*)(CUcontext*, CUdevice))                   \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult (*)(CUdevice))                          \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", CUresult (*)(CUcontext))                                           \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", CUresult (*)(CUcontext*))                                            \
  X(cuStreamCreate, "cuStreamCreate", CUresult (*)(CUstream*, unsigned))                                        \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult (*)(CUstream))                                         \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult (*)(CUstream))                                              \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr*, size_t))                                            \
  X(cuMemFree, "cuMemFree_v2", CUresult (*)(CUdeviceptr))                                                       \
  X(cuImportExternalMemory, "cuImportExternalMemory",                                                          \
    CUresult (*)(CUexternalMemory*, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC*))                                   \
  X(cuExternalMemoryGetMappedBuffer, "cuExternalMemoryGetMappedBuffer",                                        \
    CUresult (*)(CUdeviceptr*, CUexternalMemory, const CUDA_EXTERNAL_MEMORY_BUFFER_DESC*))                      \
  X(cuDestroyExternalMemory, "cuDestroyExternalMemory", CUresult (*)(CUexternalMemory))                        \
  X(cuImportExternalSemaphore, "cuImportExternalSemaphore",                                                    \
    CUresult (*)(CUexternalSemaphore*, const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC*))                             \
  X(cuSignalExternalSemaphoresAsync, "cuSignalExternalSemaphoresAsync",                                        \
    CUresult (*)(const CUexternalSemaphore*, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS*, unsigned, CUstream)) \
  X(cuWaitExternalSemaphoresAsync, "cuWaitExternalSemaphoresAsync",                                            \
    CUresult (*)(const CUexternalSemaphore*, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS*, unsigned, CUstream))   \
  X(cuEventCreate, "cuEventCreate", CUresult (*)(CUevent*, unsigned))                                          \
  X(cuEventRecord, "cuEventRecord", CUresult (*)(CUevent, CUstream))                                           \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult (*)(CUevent))                                           \
  X(cuEventElapsedTime, "cuEventElapsedTime", CUresult (*)(float*, CUevent, CUevent))                          \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult (*)(CUevent))

// ---- cuBLASLt (cublasLt.h, library_types.h) ----
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque_t*;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
enum : int { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };                    // cudaDataType
enum : int { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };          // cublasComputeType_t
enum : int { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };                                    // cublasOperation_t
enum : int {                                                                        // cublasLtMatmulDescAttributes_t
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,
};
enum : int {  // cublasLtMatrixLayoutAttribute_t
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
};
enum : int { CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 };  // cublasLtMatmulPreferenceAttributes_t
enum : int { CUBLASLT_EPILOGUE_DEFAULT = 1, CUBLASLT_EPILOGUE_BIAS = 4 };  // cublasLtEpilogue_t

#define PCP_CUBLASLT_FNS(X)                                                                                    \
  X(cublasLtCreate, "cublasLtCreate", cublasStatus_t (*)(cublasLtHandle_t*))                                   \
  X(cublasLtGetVersion, "cublasLtGetVersion", size_t (*)())                                                    \
  X(cublasLtGetStatusString, "cublasLtGetStatusString", const char* (*)(cublasStatus_t))                        \
  X(cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate", cublasStatus_t (*)(cublasLtMatmulDesc_t*, int, int))  \
  X(cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy", cublasStatus_t (*)(cublasLtMatmulDesc_t))          \
  X(cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute",                                          \
    cublasStatus_t (*)(cublasLtMatmulDesc_t, int, const void*, size_t))                                         \
  X(cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate",                                                  \
    cublasStatus_t (*)(cublasLtMatrixLayout_t*, int, uint64_t, uint64_t, int64_t))                              \
  X(cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", cublasStatus_t (*)(cublasLtMatrixLayout_t))    \
  X(cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute",                                      \
    cublasStatus_t (*)(cublasLtMatrixLayout_t, int, const void*, size_t))                                       \
  X(cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate",                                          \
    cublasStatus_t (*)(cublasLtMatmulPreference_t*))                                                            \
  X(cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy",                                        \
    cublasStatus_t (*)(cublasLtMatmulPreference_t))                                                             \
  X(cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute",                              \
    cublasStatus_t (*)(cublasLtMatmulPreference_t, int, const void*, size_t))                                   \
  X(cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic",                                          \
    cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,  \
                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,         \
                       cublasLtMatmulHeuristicResult_t*, int*))                                                 \
  X(cublasLtMatmul, "cublasLtMatmul",                                                                          \
    cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t, \
                       const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t,   \
                       void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t, CUstream))

}  // namespace pcp::gpu::vendor
