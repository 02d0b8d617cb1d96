// Tracing: runs a function once, eagerly, and records every primitive it applies (through the
// ops layer's trace recorder) into a Plan. Arguments are named up front; any other tensor the
// code reads becomes a captured value (held by reference), and a tensor it made from a traced
// one without an op (detach(), a view of the same memory) an alias of it. What a replay could
// not redo fails at once, naming the op: reading a traced tensor's values on the host, drawing
// random numbers the plan would keep as constants (rand, randn; dropout's draws are recorded and
// drawn again on each replay), writing a traced tensor in place, and adding to a .grad the
// traced code did not set.
//
// Tracing runs the ops for real (the first call's results are the eager ones): each op still
// validates and infers its shapes before it runs, so a bad shape is reported at trace time with
// the op's name. One trace at a time per thread.
#pragma once
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pcp/plan/plan.h"

namespace pcp::plan {

class Trace {
 public:
  explicit Trace(const std::vector<Tensor>& args);  // opens the trace on this thread
  ~Trace();                                          // closes it (finished or not)
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Ends the trace with the function's outputs and returns the plan.
  std::shared_ptr<Plan> finish(const std::vector<Tensor>& outputs);

  static Trace* active();  // this thread's open trace, or nullptr
  // Hooks (ops/primitive.h, core/trace_hooks.h).
  void record(const std::shared_ptr<Primitive>& prim, const std::vector<Tensor>& in, const std::vector<Tensor>& out);
  bool knows(const Tensor& t) const;
  // Whether t is a value computed from constants the code made alone, never written in place
  // since: reading it on the host reads what every replay would compute.
  bool is_constant(const Tensor& t);
  bool made_here(const Tensor& t) const;  // its memory was allocated during the trace
  void note_storage(const Storage* s);
  void note_draw(const RandomDrawPtr& d);
  void close();  // ends the trace without a plan (the function raised); finish() closes too

 private:
  int add_value(const Tensor& t, bool foldable);
  int impl_value(const Tensor& t);  // the value t's TensorImpl is, or -1
  const std::vector<int>* storage_values(const Tensor& t);  // the values on t's storage, or null
  int value_of(const Tensor& t);  // the value a tensor is: known, an alias of one, or captured

  std::shared_ptr<Plan> plan_;
  // What the trace knows of each value's tensor, without keeping it alive (a trace holds no more
  // memory than the eager run it watches): tensors and storages by address, each with a weak
  // reference that says whether the address still means that object.
  struct Seen {
    Shape shape;
    Strides strides;
    int64_t offset;
    DType dtype;
  };
  std::vector<Seen> seen_;  // value id ->
  std::unordered_map<const TensorImpl*, std::pair<int, std::weak_ptr<TensorImpl>>> by_impl_;
  std::unordered_map<const Storage*, std::pair<std::weak_ptr<Storage>, std::vector<int>>> by_storage_;
  // Values that may fold into constants (computed from constants the code made): kept, since
  // fold_constants captures their traced values; undefined for the others.
  std::vector<Tensor> foldable_;
  // Captured tensors and arguments, and their .grad when first seen (not kept alive:
  // zero_grad() frees it).
  struct GradBefore {
    Tensor tensor;
    std::weak_ptr<TensorImpl> grad;
    bool had_grad;
    int arg = -1;  // its argument index, or -1 for a captured tensor
  };
  std::vector<GradBefore> grads_;
  std::unordered_set<const Storage*> made_;  // storages allocated during the trace
  bool open_ = false;
};

}  // namespace pcp::plan
