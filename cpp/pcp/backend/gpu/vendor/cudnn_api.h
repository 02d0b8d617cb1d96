// The parts of cuDNN's C API (cudnn_graph.h: the handle and the backend graph API) that PCP calls,
// declared here so that a build needs no cuDNN headers; loaded with dlopen at run time
// (cudnn.cpp). Values are those of cudnn_graph.h 9, which tools/check_cuda_abi.py compares with
// this file.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pcp::gpu::vendor::dnn {

using Status = int;
using Handle = struct cudnnContext*;
using Descriptor = void*;
constexpr Status kSuccess = 0;

enum DescriptorType : int {
  POINTWISE = 0,
  ENGINECFG = 3,
  ENGINEHEUR = 4,
  EXECUTION_PLAN = 5,
  OPERATION_POINTWISE = 13,
  OPERATIONGRAPH = 15,
  VARIANT_PACK = 16,
  TENSOR = 17,
  MATMUL = 18,
  OPERATION_MATMUL = 19,
  REDUCTION = 21,
  OPERATION_REDUCTION = 22,
  OPERATION_RESHAPE = 31,
};

enum Attribute : int {
  POINTWISE_MODE = 0,
  POINTWISE_MATH_PREC = 1,
  POINTWISE_AXIS = 9,
  ENGINEHEUR_MODE = 200,
  ENGINEHEUR_OPERATION_GRAPH = 201,
  ENGINEHEUR_RESULTS = 202,
  EXECUTION_PLAN_ENGINE_CONFIG = 401,
  EXECUTION_PLAN_WORKSPACE_SIZE = 402,
  OPERATION_POINTWISE_PW_DESCRIPTOR = 750,
  OPERATION_POINTWISE_XDESC = 751,
  OPERATION_POINTWISE_BDESC = 752,
  OPERATION_POINTWISE_YDESC = 753,
  OPERATION_POINTWISE_ALPHA1 = 754,
  OPERATION_POINTWISE_ALPHA2 = 755,
  OPERATION_POINTWISE_TDESC = 758,
  OPERATIONGRAPH_HANDLE = 800,
  OPERATIONGRAPH_OPS = 801,
  TENSOR_BYTE_ALIGNMENT = 900,
  TENSOR_DATA_TYPE = 901,
  TENSOR_DIMENSIONS = 902,
  TENSOR_STRIDES = 903,
  TENSOR_UNIQUE_ID = 906,
  TENSOR_IS_VIRTUAL = 907,
  TENSOR_IS_BY_VALUE = 908,
  VARIANT_PACK_UNIQUE_IDS = 1000,
  VARIANT_PACK_DATA_POINTERS = 1001,
  VARIANT_PACK_WORKSPACE = 1003,
  MATMUL_COMP_TYPE = 1500,
  OPERATION_MATMUL_ADESC = 1520,
  OPERATION_MATMUL_BDESC = 1521,
  OPERATION_MATMUL_CDESC = 1522,
  OPERATION_MATMUL_DESC = 1523,
  REDUCTION_OPERATOR = 1600,
  REDUCTION_COMP_TYPE = 1601,
  REDUCTION_IS_DETERMINISTIC = 1602,
  OPERATION_REDUCTION_XDESC = 1610,
  OPERATION_REDUCTION_YDESC = 1611,
  OPERATION_REDUCTION_DESC = 1612,
  OPERATION_RESHAPE_XDESC = 2200,
  OPERATION_RESHAPE_YDESC = 2201,
};

enum AttributeType : int {
  TYPE_HANDLE = 0,
  TYPE_DATA_TYPE = 1,
  TYPE_BOOLEAN = 2,
  TYPE_INT64 = 3,
  TYPE_FLOAT = 4,
  TYPE_VOID_PTR = 6,
  TYPE_HEUR_MODE = 8,
  TYPE_POINTWISE_MODE = 14,
  TYPE_BACKEND_DESCRIPTOR = 15,
  TYPE_REDUCTION_OPERATOR_TYPE = 18,
};

enum DataType : int { DATA_FLOAT = 0, DATA_HALF = 2, DATA_INT32 = 4, DATA_BFLOAT16 = 9, DATA_BOOLEAN = 11 };
enum PointwiseMode : int {
  PW_ADD = 0,
  PW_MUL = 1,
  PW_DIV = 6,
  PW_SUB = 9,
  PW_EXP = 13,
  PW_LOG = 15,
  PW_IDENTITY = 21,
  PW_CMP_GE = 303,
  PW_GEN_INDEX = 501,
  PW_BINARY_SELECT = 601,
};
enum ReduceOp : int { REDUCE_ADD = 0, REDUCE_MAX = 3 };
constexpr int kHeurModeA = 3;

#define PCP_CUDNN_FNS(X)                                                                                     \
  X(cudnnGetVersion, "cudnnGetVersion", size_t (*)())                                                        \
  X(cudnnGetErrorString, "cudnnGetErrorString", const char* (*)(dnn::Status))                                \
  X(cudnnGetLastErrorString, "cudnnGetLastErrorString", void (*)(char*, size_t))                             \
  X(cudnnCreate, "cudnnCreate", dnn::Status (*)(dnn::Handle*))                                               \
  X(cudnnSetStream, "cudnnSetStream", dnn::Status (*)(dnn::Handle, void*))                                   \
  X(cudnnBackendCreateDescriptor, "cudnnBackendCreateDescriptor", dnn::Status (*)(int, dnn::Descriptor*))    \
  X(cudnnBackendDestroyDescriptor, "cudnnBackendDestroyDescriptor", dnn::Status (*)(dnn::Descriptor))        \
  X(cudnnBackendFinalize, "cudnnBackendFinalize", dnn::Status (*)(dnn::Descriptor))                          \
  X(cudnnBackendSetAttribute, "cudnnBackendSetAttribute",                                                   \
    dnn::Status (*)(dnn::Descriptor, int, int, int64_t, const void*))                                         \
  X(cudnnBackendGetAttribute, "cudnnBackendGetAttribute",                                                   \
    dnn::Status (*)(dnn::Descriptor, int, int, int64_t, int64_t*, void*))                                     \
  X(cudnnBackendExecute, "cudnnBackendExecute", dnn::Status (*)(dnn::Handle, dnn::Descriptor, dnn::Descriptor))

}  // namespace pcp::gpu::vendor::dnn
