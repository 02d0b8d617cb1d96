#include "pcp/backend/gpu/vendor/vendor.h"

#include <atomic>
#include <cstring>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/vendor/state.h"

namespace pcp::gpu::vendor {
namespace {
std::atomic<bool> g_enabled{true};
}  // namespace

void set_enabled(bool on) { g_enabled = on; }

bool enabled(int) { return g_enabled.load(std::memory_order_relaxed) && std::strcmp(rt().api(), "cuda") == 0; }

uint64_t address(const Tensor& t) { return rt().address(buffer_of(t)) + uint64_t(t.offset()) * itemsize(t.dtype()); }

Status status(int device) {
  Status st;
  if (std::strcmp(rt().api(), "cuda") != 0) {
    st.note = std::string("the GPU runtime is ") + rt().api() +
              ": NVIDIA's libraries run on the CUDA runtime (an NVIDIA GPU with pcp[cuda] installed)";
    return st;
  }
  std::string why_lt, why_dnn;
  st.matmul = cublaslt(device, &st.cublaslt, &why_lt) != nullptr;
  st.attention = cudnn(device, &st.cudnn, &why_dnn) != nullptr;
  st.note = !st.matmul ? why_lt : !st.attention ? why_dnn : "";
  return st;
}

}  // namespace pcp::gpu::vendor
