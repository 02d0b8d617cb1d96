// Tensor: a cheap handle to a TensorImpl (storage + shape/strides/offset + autograd state).
// Copies of a Tensor share the impl; views share the storage with other shape/strides.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "pcp/core/device.h"
#include "pcp/core/dtype.h"
#include "pcp/core/shape.h"
#include "pcp/core/storage.h"
#include "pcp/core/trace_hooks.h"

namespace pcp {

struct Node;
class Tensor;
// The name of the op that recorded a node (defined by autograd/node.cpp: core does not include it).
const char* node_name(const Node& node);

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;      // in elements
  int64_t offset = 0;   // in elements
  DType dtype = DType::Float32;
  bool weak = false;    // a Python scalar: promotes by category only (see result_type)

  // Autograd state.
  bool requires_grad = false;
  bool retains_grad = false;           // keep .grad on a non-leaf
  std::shared_ptr<TensorImpl> grad;    // accumulated gradient (leaves, or retained non-leaves)
  std::shared_ptr<Node> grad_fn;       // the op that produced this tensor, if recorded
  uint32_t output_nr = 0;              // which of grad_fn's outputs this tensor is
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialized contiguous tensor from the caching allocator.
  static Tensor empty(const Shape& shape, DType dtype, Device device = cpu_device());
  // View of existing storage (no copy, no autograd).
  static Tensor view_of(std::shared_ptr<Storage> storage, const Shape& shape, const Strides& strides,
                        int64_t offset, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  const Shape& shape() const { return impl_->shape; }
  const Strides& strides() const { return impl_->strides; }
  int64_t offset() const { return impl_->offset; }
  int64_t dim(int i) const { return impl_->shape[i]; }
  int ndim() const { return int(impl_->shape.size()); }
  int64_t numel() const { return pcp::numel(impl_->shape); }
  DType dtype() const { return impl_->dtype; }
  size_t itemsize() const { return pcp::itemsize(impl_->dtype); }
  Device device() const { return impl_->storage->device(); }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  bool is_contiguous() const;
  // Whether the elements fill [offset, offset + numel) exactly, in some axis order (a
  // contiguous tensor, or a transposed or permuted view of one).
  bool is_dense() const;
  // Whether every element is the one at offset (a value broadcast: each axis longer than 1 has
  // stride 0).
  bool one_value() const;
  bool weak() const { return impl_->weak; }

  // Pointer to element [0, ..., 0] (storage data + offset); host memory only: a GPU tensor
  // throws here, so a CPU code path reached with GPU data fails cleanly instead of crashing.
  // Outside a primitive's forward(), a traced tensor's data read here is reported to the
  // tracer (core/trace_hooks.h), which refuses it: a plan would replay the value read once.
  void* raw_data() const {
    if (impl_->storage->device().is_gpu()) not_on_host();
    if (!impl_->weak) report_host_read(*this, "a read of its values on the host");
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * int64_t(itemsize());
  }
  template <class T>
  T* data() const { return static_cast<T*>(raw_data()); }

  // Autograd.
  bool requires_grad() const { return impl_->requires_grad; }
  void set_requires_grad(bool r);  // only floating leaves may require grad
  bool is_leaf() const { return impl_->grad_fn == nullptr; }
  Tensor grad() const { return impl_->grad ? Tensor(impl_->grad) : Tensor(); }
  void set_grad(const Tensor& g) { impl_->grad = g.impl_; }
  const std::shared_ptr<Node>& grad_fn() const { return impl_->grad_fn; }
  uint32_t output_nr() const { return impl_->output_nr; }
  void retain_grad() { impl_->retains_grad = true; }

  // Same storage, shape and strides, cut off from the graph.
  Tensor detach() const;
  // A raw view sharing storage, without autograd (building block of view primitives).
  Tensor alias(const Shape& shape, const Strides& strides, int64_t offset) const;

  // The same values in host memory (this tensor itself when already on the CPU); no autograd.
  Tensor host_copy() const;

  // Reads element 0 of a one-element tensor as double (or int64 for exactness).
  double item_double() const;
  int64_t item_int() const;

  std::string repr() const;

 private:
  [[noreturn]] void not_on_host() const;
  std::shared_ptr<TensorImpl> impl_;
};

// Strides of x read as if broadcast to `shape` (0 on broadcast axes).
Strides broadcast_strides(const Tensor& x, const Shape& shape);

}  // namespace pcp
