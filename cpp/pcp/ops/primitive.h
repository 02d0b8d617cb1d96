// A primitive is one differentiable computation: it knows its name, the shapes, dtypes and
// devices of its outputs from those of its inputs (without running), how to compute the outputs
// on the inputs' device, and its VJP rule written with other ops (so gradients are themselves
// differentiable and run on any device). Every op reaches a backend through `apply`, the single
// dispatch path where output checking, autodiff recording (and later tracing) hook in.
//
// A primitive may have several outputs. What its VJP needs beyond the inputs (a layer norm's
// row statistics, attention's log-sum-exp) is an output too, declared not differentiable: the
// recorded node keeps every output, so nothing is stashed in the primitive object, and one
// object can be applied again (create_graph re-applies it) without clobbering state.
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "pcp/core/random.h"
#include "pcp/core/tensor.h"
#include "pcp/ops/autocast.h"

namespace pcp {

// What a tensor will be, known before any memory exists: the currency of shape inference.
struct TensorSpec {
  Shape shape;
  DType dtype = DType::Float32;
  Device device;
  bool defined = true;  // false for an optional input left out (an undefined Tensor)

  bool operator==(const TensorSpec& o) const {
    return defined == o.defined && (!defined || (shape == o.shape && dtype == o.dtype && device == o.device));
  }
};
TensorSpec spec_of(const Tensor& t);
std::vector<TensorSpec> specs_of(const std::vector<Tensor>& ts);
// A new uninitialized tensor as `spec` describes.
Tensor empty(const TensorSpec& spec);

// A primitive's settings, for plan files (python/pcp/_compile.py): numbers, flags, names, shapes.
using AttrValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>>;
using Attributes = std::map<std::string, AttrValue>;

// A number the host may change between replays of a plan (an optimizer's step count and learning
// rate): a primitive traced into a plan reads it each time it runs.
struct HostScalar {
  explicit HostScalar(double v) : value(v) {}
  double value;
};
using HostScalarPtr = std::shared_ptr<HostScalar>;

// What a primitive shares with the plan it runs in: host scalars it reads, random draws it uses.
struct SharedState {
  std::vector<HostScalarPtr> scalars;
  std::vector<RandomDrawPtr> draws;
};

struct PrimitiveRecord;

class Primitive {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;
  // The outputs' shapes, dtypes and devices from the inputs' alone; allocates and runs nothing.
  // apply() checks forward()'s outputs against it, so the two cannot disagree.
  virtual std::vector<TensorSpec> infer(const std::vector<TensorSpec>& inputs) const = 0;
  // Computes the outputs `specs` describes (allocating them, or viewing an input) from
  // validated inputs. Usually one switch on the device: cpu::<op>(...) or gpu::<op>(...).
  virtual std::vector<Tensor> forward(const std::vector<Tensor>& inputs, const std::vector<TensorSpec>& specs) = 0;
  // Cotangents of the inputs given the outputs and their cotangents (one per output; an
  // output no gradient reached gets zeros, a non-differentiable one stays undefined).
  // Returns one entry per input; entries with needs[i] == false may be left undefined. The
  // engine reduces broadcast gradients to each input's shape and casts them to its dtype.
  virtual std::vector<Tensor> vjp(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                                  const std::vector<Tensor>& cotangents, const std::vector<bool>& needs);
  // Whether gradients flow through output i (false for saved statistics and indices).
  virtual bool differentiable_output(size_t) const { return true; }
  // Its record (below), found by name() on first use: what it declares beside its class.
  const PrimitiveRecord& record() const;
  // Whether forward() has a GPU path (the record's `gpu`); apply() refuses GPU inputs otherwise.
  bool runs_on_gpu() const;
  // Whether vjp() reads the inputs' or the outputs' values (not only their shapes): backward
  // then refuses them when they were written in place after the forward pass.
  virtual bool vjp_reads_inputs() const { return true; }
  virtual bool vjp_reads_output() const { return true; }
  // Whether forward() writes into its inputs (an optimizer step): a plan keeps such a node and
  // its order even when nothing reads its outputs.
  virtual bool writes_inputs() const { return false; }
  // Whether its outputs are views of its first input's memory (reshape, slice, ...): a plan's
  // memory planning (plan/memory.h) counts no new bytes for them.
  virtual bool output_views_input() const { return false; }
  // Whether forward() uses random numbers (a dropout mask): a plan never folds it into a constant.
  virtual bool draws_random() const { return false; }
  // Whether input i may stay on the host while the others are on a GPU (a gather's indices,
  // which are checked on the host as it runs).
  virtual bool host_input(size_t) const { return false; }
  // How autocast casts the floating inputs before forward() (the record's `autocast`).
  CastPolicy cast_policy() const;
  // What make_primitive(name(), ...) needs to make this primitive again (a plan file holds it).
  virtual Attributes attributes() const { return {}; }
  virtual SharedState shared_state() const { return {}; }
  // Cast folding (plan/passes.h), for a node with input specs `in`: the primitive that writes
  // output k in the 16-bit type `to`, giving this one's result followed by astype (computed as
  // now, rounded once as it is stored), or nullptr where it cannot.
  virtual std::shared_ptr<Primitive> with_output_dtype(const std::vector<TensorSpec>& /*in*/, size_t /*k*/,
                                                       DType /*to*/) const {
    return nullptr;
  }
  // The primitive that also writes output k in the 16-bit type `to`, as a new last output (the
  // value astype would make of it), for a cast of a result that others read too; or nullptr.
  virtual std::shared_ptr<Primitive> with_extra_output(const std::vector<TensorSpec>& /*in*/, size_t /*k*/,
                                                       DType /*to*/) const {
    return nullptr;
  }
  // The primitive that takes input i in the 16-bit type `from` in place of its float32 cast
  // (widened as it is read, exactly) with the same outputs, or nullptr where it cannot.
  virtual std::shared_ptr<Primitive> with_input_dtype(const std::vector<TensorSpec>& /*in*/, size_t /*i*/,
                                                      DType /*from*/) const {
    return nullptr;
  }

 private:
  mutable std::atomic<const PrimitiveRecord*> record_{nullptr};
};

// A plan file's node as its primitive's check sees it: the attributes against the inputs'
// recorded specs (a file may hold anything; a live call's front end validated them). The helpers
// raise ValueError naming the primitive.
struct NodeCheck {
  const std::string& op;
  const Attributes& attrs;
  const std::vector<TensorSpec>& in;

  [[noreturn]] void bad(const std::string& why) const;
  void require(bool ok, const std::string& why) const {
    if (!ok) bad(why);
  }
  int64_t ndim(size_t i) const { return int64_t(in[i].shape.size()); }
  int axis(const char* key, int64_t nd) const;  // attribute `key`, an axis of nd dimensions
  Shape dims(const char* key) const;             // attribute `key`, a valid shape
  void same_shapes(size_t a, size_t b) const;
};

// A primitive's one record beside its class: how a plan file makes it again by name, the input
// counts it takes, which inputs a file may leave out, what its attributes must satisfy against
// its inputs, whether it runs on a GPU and how autocast casts its inputs. Each op family
// registers a record for each name its primitives take.
using PrimitiveMaker = std::shared_ptr<Primitive> (*)(const std::string& name, const Attributes& attrs,
                                                      const SharedState& shared);
struct PrimitiveRecord {
  PrimitiveMaker make = nullptr;
  std::vector<size_t> inputs;                   // the counts it takes; empty: any (check decides)
  void (*check)(const NodeCheck&) = nullptr;    // nullptr: nothing beyond the inputs' count
  std::vector<size_t> optional_inputs = {};     // inputs a file may leave out (-1)
  bool gpu = false;                             // forward() has a GPU path
  CastPolicy autocast = CastPolicy::Keep;       // how autocast casts its floating inputs
};
bool register_primitive(const std::string& name, PrimitiveRecord record);
// make_primitive raises ValueError for an unknown name or missing attributes.
std::shared_ptr<Primitive> make_primitive(const std::string& name, const Attributes& attrs, const SharedState& shared);
// The record registered under name, or nullptr.
const PrimitiveRecord* primitive_record(const std::string& name);
// Every registered name, sorted (an exporter checks that it covers them all).
std::vector<std::string> primitive_names();
// An attribute of a given type; ValueError naming the primitive and the key otherwise.
bool attr_bool(const std::string& prim, const Attributes& a, const char* key);
int64_t attr_int(const std::string& prim, const Attributes& a, const char* key);
double attr_double(const std::string& prim, const Attributes& a, const char* key);
std::string attr_str(const std::string& prim, const Attributes& a, const char* key);
std::vector<int64_t> attr_ints(const std::string& prim, const Attributes& a, const char* key);
// shared.scalars[i] / shared.draws[i]; ValueError when the file gave fewer.
HostScalarPtr shared_scalar(const std::string& prim, const SharedState& s, size_t i);
RandomDrawPtr shared_draw(const std::string& prim, const SharedState& s, size_t i);

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

// Tracing into plans (cpp/pcp/plan/): while a recorder is set on this thread, apply_all() reports
// each primitive it ran at the top level (not those a forward() runs inside itself), with its
// inputs after autocast and its outputs.
using TraceRecorder = void (*)(const std::shared_ptr<Primitive>& prim, const std::vector<Tensor>& inputs,
                               const std::vector<Tensor>& outputs);
void set_trace_recorder(TraceRecorder recorder);  // nullptr stops
// How many forward() calls are running on this thread (0 between primitives).
int forward_depth();
// forward() with apply()'s checks and profiling but no autocast, autodiff or tracing: how a plan
// replays a recorded primitive on the specs it recorded.
std::vector<Tensor> run_primitive(Primitive& prim, const std::vector<Tensor>& inputs,
                                  const std::vector<TensorSpec>& specs);

// Runs `prim` on `inputs` and returns all its outputs, recording a graph node when grad mode
// is on and an input requires grad.
std::vector<Tensor> apply_all(std::shared_ptr<Primitive> prim, std::vector<Tensor> inputs);
// The first output (the only one, for most primitives).
Tensor apply(std::shared_ptr<Primitive> prim, std::vector<Tensor> inputs);

template <class P, class... Args>
Tensor apply(std::vector<Tensor> inputs, Args&&... args) {
  return pcp::apply(std::shared_ptr<Primitive>(std::make_shared<P>(std::forward<Args>(args)...)), std::move(inputs));
}
template <class P, class... Args>
std::vector<Tensor> apply_all(std::vector<Tensor> inputs, Args&&... args) {
  return pcp::apply_all(std::shared_ptr<Primitive>(std::make_shared<P>(std::forward<Args>(args)...)),
                        std::move(inputs));
}

}  // namespace pcp
