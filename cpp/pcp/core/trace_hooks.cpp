#include "pcp/core/trace_hooks.h"

namespace pcp {

TraceHooks& trace_hooks() {
  static thread_local TraceHooks hooks;
  return hooks;
}

}  // namespace pcp
