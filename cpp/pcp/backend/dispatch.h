// backend::<op>: the one place a primitive's forward chooses its device's implementation of an
// operation both backends take with the same arguments (backend/shared_ops.h).
#pragma once
#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/backend/shared_ops.h"

namespace pcp::backend {

#define PCP_DISPATCH_BACKEND_OP(name, params, args, on) \
  inline void name params {                             \
    if ((on).device().is_gpu()) gpu::name args;         \
    else cpu::name args;                                \
  }
PCP_SHARED_BACKEND_OPS(PCP_DISPATCH_BACKEND_OP)
#undef PCP_DISPATCH_BACKEND_OP

}  // namespace pcp::backend
