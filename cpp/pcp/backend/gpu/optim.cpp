// GPU optimizer updates, one dispatch per parameter, and the gradient-norm clip.
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

Tensor clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double eps) {
  // Each gradient's sum of squares in kParts partial sums (one dispatch per gradient), all of
  // them summed in a fixed order by one workgroup (deterministic), then one multiply per
  // gradient by the factor, read on the GPU: no wait for the norm.
  constexpr int64_t kParts = 64;
  const Device dev = grads[0].device();
  Tensor parts = Tensor::empty({int64_t(grads.size()) * kParts}, DType::Float32, dev);
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    require_f32("clip_grad_norm", g);
    struct { uint32_t n, x_off, out_off, parts; } q{u32(g.numel(), "size"), u32(g.offset(), "offset"),
                                                    u32(int64_t(i) * kParts, "offset"), uint32_t(kParts)};
    rt().dispatch(dev.index, "sum_squares", {buffer_of(g), buffer_of(parts)}, &q, sizeof q, uint32_t(kParts));
  }
  Tensor out = Tensor::empty({2}, DType::Float32, dev);  // norm, factor
  struct { uint32_t n, out_off; float max_norm, eps; } q{u32(parts.numel(), "size"), 0, float(max_norm), float(eps)};
  rt().dispatch(dev.index, "clip_scale", {buffer_of(parts), buffer_of(out)}, &q, sizeof q, 1);
  const Tensor factor = out.alias({}, {}, 1);
  for (const Tensor& g : grads)
    if (g.numel()) binary(BinaryOp::Mul, g, factor, g);
  return out.alias({}, {}, 0);
}

}  // namespace pcp::gpu
