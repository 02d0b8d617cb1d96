#include "pcp/plan/trace.h"

#include "pcp/plan/passes.h"

#include "pcp/core/error.h"
#include "pcp/core/trace_hooks.h"

namespace pcp::plan {
namespace {

thread_local Trace* g_active = nullptr;

std::string shape_of(const Tensor& t) { return shape_str(t.shape()) + " " + dtype_name(t.dtype()); }

void on_record(const std::shared_ptr<Primitive>& prim, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
  g_active->record(prim, in, out);
}

void on_host_read(const Tensor& t, const char* what) {
  // a kernel's own read, memory the code made that no op has read, or a constant it computed
  if (forward_depth() > 0 || !g_active->knows(t) || g_active->is_constant(t)) return;
  fail<ValueError>("pcp.compile: ", what, " of a traced tensor ", shape_of(t),
                   " inside the compiled function: a plan cannot replay a value read on the host (compute "
                   "with tensors instead, or move the read out of the function)");
}

void on_random_draw(const char* what) {
  fail<ValueError>("pcp.compile: ", what, " draws random numbers inside the compiled function, which its plan "
                   "would replay as constants (draw them outside and pass them in; dropout is replayed with fresh "
                   "masks)");
}

void on_inplace_write(const Tensor& t, const char* what) {
  // A primitive's own write (an optimizer step applied at the top level is a node the plan
  // redoes), or memory the function made and no op has read yet (building a constant). A write
  // to a parameter, an argument or a traced value otherwise would not be redone by a replay.
  if (forward_depth() > 0 || (!g_active->knows(t) && g_active->made_here(t))) return;
  fail<ValueError>("pcp.compile: ", what, " writes in place to a tensor ", shape_of(t),
                   " that the compiled function did not make (or has already used); a plan cannot replay in-place "
                   "writes yet");
}

void on_storage_created(const Storage* s) { g_active->note_storage(s); }

void on_replayable_draw(const RandomDrawPtr& d) { g_active->note_draw(d); }

}  // namespace

Trace* Trace::active() { return g_active; }

Trace::Trace(const std::vector<Tensor>& args) : plan_(std::make_shared<Plan>()) {
  if (g_active) fail<RuntimeError>("pcp.compile: a trace is already open on this thread");
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined()) fail<ValueError>("pcp.compile: argument ", i, " is an undefined tensor");
    if (const int id = impl_value(args[i]); id >= 0) {  // the same tensor passed twice: one value
      plan_->args.push_back(id);
    } else {
      plan_->args.push_back(add_value(args[i], false));
      grads_.push_back({args[i], args[i].impl()->grad, args[i].impl()->grad != nullptr, int(i)});
    }
    plan_->arg_strides.push_back(args[i].strides());
  }
  g_active = this;
  open_ = true;
  set_trace_recorder(on_record);
  TraceHooks& h = trace_hooks();
  h.host_read = on_host_read;
  h.random_draw = on_random_draw;
  h.inplace_write = on_inplace_write;
  h.storage_created = on_storage_created;
  h.replayable_draw = on_replayable_draw;
}

Trace::~Trace() { close(); }

void Trace::close() {
  if (!open_) return;
  open_ = false;
  g_active = nullptr;
  set_trace_recorder(nullptr);
  trace_hooks() = TraceHooks{};
}

bool Trace::made_here(const Tensor& t) const { return made_.count(t.storage().get()) > 0; }
void Trace::note_storage(const Storage* s) { made_.insert(s); }
void Trace::note_draw(const RandomDrawPtr& d) { plan_->draws.push_back(d); }

bool Trace::knows(const Tensor& t) const {
  Trace& self = const_cast<Trace&>(*this);  // forgets dead entries as it looks
  return self.impl_value(t) >= 0 || self.storage_values(t) != nullptr;
}

bool Trace::is_constant(const Tensor& t) {
  if (const int id = impl_value(t); id >= 0) return foldable_[size_t(id)].defined();
  const std::vector<int>* ids = storage_values(t);
  return ids && std::all_of(ids->begin(), ids->end(), [&](int id) { return foldable_[size_t(id)].defined(); });
}

int Trace::impl_value(const Tensor& t) {
  auto it = by_impl_.find(t.impl());
  if (it == by_impl_.end()) return -1;
  if (it->second.second.expired()) {  // that tensor is gone; t is another at its address
    by_impl_.erase(it);
    return -1;
  }
  return it->second.first;
}

const std::vector<int>* Trace::storage_values(const Tensor& t) {
  auto it = by_storage_.find(t.storage().get());
  if (it == by_storage_.end()) return nullptr;
  if (it->second.first.expired()) {
    by_storage_.erase(it);
    return nullptr;
  }
  return &it->second.second;
}

int Trace::add_value(const Tensor& t, bool foldable) {
  const int id = int(plan_->values.size());
  plan_->values.push_back(spec_of(t));
  seen_.push_back({t.shape(), t.strides(), t.offset(), t.dtype()});
  foldable_.push_back(foldable ? t : Tensor());
  by_impl_[t.impl()] = {id, t.impl_ptr()};
  auto& on_storage = by_storage_[t.storage().get()];
  if (on_storage.first.expired()) on_storage = {t.storage(), {}};
  on_storage.second.push_back(id);
  return id;
}

int Trace::value_of(const Tensor& t) {
  if (!t.defined()) return -1;
  if (const int id = impl_value(t); id >= 0) return id;
  if (const std::vector<int>* ids = storage_values(t)) {
    // The view's base: a value with the same view (detach()), else one whose memory holds the
    // view's (a multi-output op's outputs may share one buffer), else the first on the storage.
    const auto span = [](const Seen& v) {
      std::pair<int64_t, int64_t> s;
      view_span(v.shape, v.strides, v.offset, &s.first, &s.second);
      return s;
    };
    const Seen view{t.shape(), t.strides(), t.offset(), t.dtype()};
    int base_id = ids->front();
    for (int id : *ids) {
      const Seen& v = seen_[size_t(id)];
      if (v.shape == view.shape && v.strides == view.strides && v.offset == view.offset) {
        by_impl_[t.impl()] = {id, t.impl_ptr()};  // the same view under another handle
        return id;
      }
      if (base_id == ids->front() && span(v).first <= span(view).first && span(view).second <= span(v).second)
        base_id = id;
    }
    const Seen& base = seen_[size_t(base_id)];
    if (base.dtype != t.dtype())
      fail<ValueError>("pcp.compile: a tensor ", shape_of(t), " reinterprets the memory of a traced ",
                       shape_str(base.shape), " ", dtype_name(base.dtype), "; a plan cannot replay that");
    auto prim = std::make_shared<AliasView>(t.shape(), t.strides(), t.offset() - base.offset, base.strides);
    const int id = add_value(t, foldable_[size_t(base_id)].defined());
    plan_->nodes.push_back({prim, {base_id}, {id}});
    return id;
  }
  const int id = add_value(t, made_here(t));  // read from outside: captured by reference
  plan_->captured.push_back({id, t});
  grads_.push_back({t, t.impl()->grad, t.impl()->grad != nullptr});
  return id;
}

void Trace::record(const std::shared_ptr<Primitive>& prim, const std::vector<Tensor>& in,
                   const std::vector<Tensor>& out) {
  Node n{prim, {}, {}};
  for (const Tensor& t : in) n.inputs.push_back(value_of(t));
  // Outputs that fold_constants may turn into constants (its rule, seen before any write).
  bool foldable = !prim->writes_inputs() && !prim->draws_random();
  for (int id : n.inputs) foldable = foldable && (id < 0 || foldable_[size_t(id)].defined());
  for (const Tensor& t : out) n.outputs.push_back(t.defined() ? add_value(t, foldable) : -1);
  if (prim->writes_inputs())  // what it writes (an optimizer's state) is no longer a constant
    for (int id : n.inputs)
      if (id >= 0) foldable_[size_t(id)] = Tensor();
  for (int id : n.outputs)
    if (id < 0) fail<RuntimeError>("pcp.compile: ", prim->name(), " produced an undefined output");
  plan_->nodes.push_back(std::move(n));
}

std::shared_ptr<Plan> Trace::finish(const std::vector<Tensor>& outputs) {
  if (!open_) fail<RuntimeError>("pcp.compile: the trace is already closed");
  for (const Tensor& t : outputs) {
    if (!t.defined()) fail<ValueError>("pcp.compile: the function returned an undefined tensor");
    plan_->outputs.push_back(value_of(t));
  }
  // .grad left on captured tensors becomes an effect of the plan. Gradients accumulated into a
  // .grad the tensor had before would add that old tensor on every replay: refused. So is a
  // .grad set on an argument: a replay's arguments are other tensors.
  for (const auto& [t, was, had_grad, arg] : grads_) {
    const std::shared_ptr<TensorImpl> before = was.lock();  // null if gone: then not the .grad now
    const TensorImpl* now = t.impl()->grad.get();
    if (had_grad ? before && now == before.get() : !now) continue;  // unchanged
    if (arg >= 0)
      fail<ValueError>("pcp.compile: the compiled function set the .grad of its argument ", arg, " ", shape_of(t),
                       " (backward() or an assignment); a plan sets .grad only on tensors it reads from outside, "
                       "such as parameters: return the gradient instead (pcp.grad, pcp.value_and_grad)");
    if (before && impl_value(Tensor(before)) >= 0)
      fail<ValueError>("pcp.compile: backward() inside the compiled function added to the .grad a tensor ",
                       shape_of(t), " had before the call; a replay would add that old gradient again: call "
                       "optimizer.zero_grad() (or set .grad = None) inside the compiled function");
    plan_->grads.push_back({t, now ? value_of(Tensor(t.impl()->grad)) : -1});
  }
  close();
  plan_->traced_nodes = int(plan_->nodes.size());
  std::vector<bool> constant(plan_->values.size(), false);  // what the code made itself and no step writes
  for (const auto& [id, t] : plan_->captured) constant[id] = made_here(t);
  fold_constants(*plan_, foldable_, constant);
  eliminate_common_subexpressions(*plan_);
  eliminate_dead_code(*plan_);
  fuse_residual_layer_norm(*plan_);
  fold_casts(*plan_);
  fuse_product_epilogues(*plan_);
  if (fuse_elementwise(*plan_, constant)) eliminate_dead_code(*plan_);  // drops the scalars now immediates
  batch_casts(*plan_);
  batch_layer_norm_sums(*plan_);
  for (const auto& [id, t] : plan_->captured)
    if (made_here(t)) plan_->constants.push_back(id);
  plan_->check();  // the passes kept every node's inputs made before it and its shapes
  plan_->plan_releases();
  return plan_;
}

}  // namespace pcp::plan
