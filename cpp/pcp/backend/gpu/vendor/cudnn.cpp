// Attention through cuDNN's fused flash attention (its backend graph API).
#include "pcp/backend/gpu/vendor/state.h"

namespace pcp::gpu::vendor {

void* create_cudnn(CudaDevice&, std::string&, std::string& why) {
  why = "cuDNN attention is not built yet";
  return nullptr;
}

bool attention(const AttentionHeads&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
               double, bool, const AttentionDropout&) {
  return false;
}

bool attention_backward(const AttentionHeads&, const AttentionHeads&, const Tensor&, const Tensor&, const Tensor&,
                        const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        double, bool, const AttentionDropout&) {
  return false;
}

}  // namespace pcp::gpu::vendor
