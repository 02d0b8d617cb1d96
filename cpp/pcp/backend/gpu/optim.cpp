// GPU optimizer updates, one dispatch per parameter.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

void adam(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v, float lr, double b1, double b2,
          float eps, float wd, float bc1, float bc2, bool decoupled) {
  require_f32("adam", p);
  require_f32("adam", g);
  if (!p.numel()) return;
  struct {
    uint32_t n, p_off, g_off, m_off, v_off, decoupled;
    float lr, b1, b2, omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2;
  } q{u32(p.numel(), "size"), u32(p.offset(), "offset"), u32(g.offset(), "offset"), u32(m.offset(), "offset"),
      u32(v.offset(), "offset"), decoupled, lr, float(b1), float(b2), float(1.0 - b1), float(1.0 - b2), eps, wd, 1.0f / bc1,
      1.0f / std::sqrt(bc2)};
  launch(p, "adam", {buffer_of(p), buffer_of(g), buffer_of(m), buffer_of(v)}, q, p.numel());
}

void sgd(const Tensor& p, const Tensor& g, const Tensor& buf, float lr, float momentum, float dampening, float wd,
         bool nesterov, bool first_step) {
  require_f32("sgd", p);
  require_f32("sgd", g);
  if (!p.numel()) return;
  struct {
    uint32_t n, p_off, g_off, b_off, has_momentum, nesterov, first_step;
    float lr, momentum, dampening, wd;
  } q{u32(p.numel(), "size"), u32(p.offset(), "offset"), u32(g.offset(), "offset"),
      buf.defined() ? u32(buf.offset(), "offset") : 0, buf.defined(), nesterov, first_step, lr, momentum, dampening,
      wd};
  launch(p, "sgd", {buffer_of(p), buffer_of(g), buf.defined() ? buffer_of(buf) : buffer_of(p)}, q, p.numel());
}

}  // namespace pcp::gpu
