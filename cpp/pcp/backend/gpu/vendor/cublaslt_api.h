// The parts of cuBLASLt's C API (cublasLt.h, library_types.h) that PCP calls, declared here so that
// a build needs no CUDA toolkit; loaded with dlopen at run time (cublaslt.cpp). Values and layouts
// are those of cublasLt.h 13, which tools/check_cuda_abi.py compares with this file.
#pragma once
#include <cstddef>
#include <cstdint>

#include "pcp/backend/cuda/driver.h"

namespace pcp::gpu::vendor {

using cuda::CUstream;

// ---- cuBLASLt (cublasLt.h, library_types.h) ----
using cublasStatus_t = int;
using cublasLtHandle_t = struct LtContext*;
using cublasLtMatmulDesc_t = struct LtMatmulDesc*;
using cublasLtMatrixLayout_t = struct LtMatrixLayout*;
using cublasLtMatmulPreference_t = struct LtMatmulPreference*;
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
enum : int {  // cublasLtMatmulDescAttributes_t
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,
};
enum : uint32_t {  // cublasLtEpilogue_t
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_GELU_AUX = 32 | 128,
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
};
enum : int {  // cublasLtMatrixLayoutAttribute_t
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
};
enum : int {  // cublasLtMatmulPreferenceAttributes_t
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
};
enum : uint32_t { CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2 };  // cublasLtReductionScheme_t

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
