// A recorded application of a primitive: what backward() needs to call its VJP.
#pragma once
#include <memory>
#include <vector>

#include "pcp/core/tensor.h"
#include "pcp/ops/primitive.h"

namespace pcp {

struct Node {
  std::shared_ptr<Primitive> prim;
  std::vector<Tensor> inputs;
  Tensor output;                       // detached alias of the output (no cycle back to this node)
  std::vector<bool> needs;             // which inputs need a gradient
  std::weak_ptr<TensorImpl> owner;     // the output tensor, for retain_grad()
  const char* name() const { return prim->name(); }
};

}  // namespace pcp
