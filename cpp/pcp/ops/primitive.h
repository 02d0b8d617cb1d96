// A primitive is one differentiable computation: it knows its name, how to compute its
// output on the inputs' device, and its VJP rule written with other ops (so gradients are
// themselves differentiable and run on any device). Every op reaches a backend through
// `apply`, the single dispatch path where autodiff recording (and later tracing) hooks in.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pcp/core/tensor.h"

namespace pcp {

class Primitive {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;
  // Computes the output (allocating it, or viewing an input) from validated inputs.
  virtual Tensor forward(const std::vector<Tensor>& inputs) = 0;
  // Cotangents of the inputs given the output's cotangent `g`. Returns one entry per input;
  // entries with needs[i] == false may be left undefined. The engine reduces broadcast
  // gradients to each input's shape and casts them to its dtype.
  virtual std::vector<Tensor> vjp(const std::vector<Tensor>& inputs, const Tensor& output, const Tensor& g,
                                  const std::vector<bool>& needs);
  // Whether forward() has a GPU path; apply() refuses GPU inputs otherwise, with a clear error.
  virtual bool runs_on_gpu() const { return false; }
  // Whether vjp() reads the inputs' or the output's values (not only their shapes): backward
  // then refuses them when they were written in place after the forward pass.
  virtual bool vjp_reads_inputs() const { return true; }
  virtual bool vjp_reads_output() const { return true; }
};

// Per-primitive call counts and forward times, collected at the dispatch point while enabled.
struct OpProfile {
  int64_t calls = 0;
  double seconds = 0;
};
void set_profiling(bool on, bool record_shapes = false);  // record_shapes: one entry per op and input shapes
std::vector<std::pair<std::string, OpProfile>> profile_results();  // sorted by time, descending
void reset_profile();

// Called around a long CPU forward (inputs of 32K elements or more): the Python bindings
// release the GIL there, so other Python threads run beside a large matmul or reduction.
// enter() returns what exit() needs; both must be cheap and safe to call from any thread.
struct BlockingHooks {
  void* (*enter)() = nullptr;
  void (*exit)(void*) = nullptr;
};
void set_blocking_hooks(BlockingHooks hooks);

// Runs `prim` on `inputs`, recording a graph node when grad mode is on and an input requires grad.
Tensor apply(std::shared_ptr<Primitive> prim, std::vector<Tensor> inputs);

template <class P, class... Args>
Tensor apply(std::vector<Tensor> inputs, Args&&... args) {
  return pcp::apply(std::shared_ptr<Primitive>(std::make_shared<P>(std::forward<Args>(args)...)), std::move(inputs));
}

}  // namespace pcp
