#include "pcp/core/grad_mode.h"

namespace pcp {

static thread_local bool g_grad_enabled = true;

bool grad_enabled() { return g_grad_enabled; }
void set_grad_enabled(bool on) { g_grad_enabled = on; }

}  // namespace pcp
