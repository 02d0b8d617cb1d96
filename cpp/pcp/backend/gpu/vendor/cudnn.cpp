// Attention through cuDNN: not yet (PCP's own attention kernels run).
#include "pcp/backend/gpu/vendor/state.h"

namespace pcp::gpu::vendor {

void* cudnn(int, std::string* version, std::string* why) {
  if (version) *version = "";
  if (why) *why = "cuDNN attention is not built yet";
  return nullptr;
}

bool attention_available(DType, int) { return false; }

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
