// What the layers below tell the plan layer (cpp/pcp/plan/) while it traces a function on this
// thread: reading a tensor's values on the host, drawing random numbers and writing a tensor in
// place are things a replayed plan would not redo, so each reports itself here and the tracer
// refuses what it cannot capture (with the op's name). Outside a trace every hook is null and
// the checks cost one thread-local load.
#pragma once
#include <memory>

namespace pcp {

class Storage;
class Tensor;
struct RandomDraw;

struct TraceHooks {
  void (*host_read)(const Tensor& t, const char* what) = nullptr;  // what: "item()", "index", ...
  void (*random_draw)(const char* what) = nullptr;                  // what: the op drawing
  void (*replayable_draw)(const std::shared_ptr<RandomDraw>& d) = nullptr;  // one a plan can draw again
  void (*inplace_write)(const Tensor& t, const char* what) = nullptr;
  void (*storage_created)(const Storage* s) = nullptr;  // memory made during the trace
};

// This thread's hooks (all null unless a trace is open on it).
TraceHooks& trace_hooks();

inline void report_host_read(const Tensor& t, const char* what) {
  if (auto f = trace_hooks().host_read) f(t, what);
}
inline void report_random_draw(const char* what) {
  if (auto f = trace_hooks().random_draw) f(what);
}
inline void report_replayable_draw(const std::shared_ptr<RandomDraw>& d) {
  if (auto f = trace_hooks().replayable_draw) f(d);
}
inline void report_inplace_write(const Tensor& t, const char* what) {
  if (auto f = trace_hooks().inplace_write) f(t, what);
}
inline void report_storage_created(const Storage* s) {
  if (auto f = trace_hooks().storage_created) f(s);
}

}  // namespace pcp
