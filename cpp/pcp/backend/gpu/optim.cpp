// GPU optimizer updates and the gradient-norm clip over lists of parameters: one dispatch for
// the whole list through a table of the tensors' device addresses (metal/addr/), or, where the
// runtime has no buffer addresses (Metal), one dispatch per tensor.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/multi_tensor.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

void adam(const std::vector<Tensor>& p, const std::vector<Tensor>& g, const std::vector<Tensor>& m,
          const std::vector<Tensor>& v, float lr, double b1, double b2, float eps, float wd, float bc1, float bc2,
          bool decoupled) {
  if (p.empty()) return;
  std::vector<Row> rows;
  for (size_t i = 0; i < p.size(); ++i) {
    require_f32("adam", p[i]);
    require_f32("adam", g[i]);
    rows.push_back({&p[i], &g[i], &m[i], &v[i]});
  }
  const Device dev = p[0].device();
  const float omb1 = float(1.0 - b1), omb2 = float(1.0 - b2), inv_bc1 = 1.0f / bc1, inv_sqrt_bc2 = 1.0f / std::sqrt(bc2);
  if (!tabled(dev, rows)) {
    for (size_t i = 0; i < p.size(); ++i) {
      if (!p[i].numel()) continue;
      struct {
        uint32_t n, p_off, g_off, m_off, v_off, decoupled;
        float lr, b1, b2, omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2;
      } q{u32(p[i].numel(), "size"), u32(p[i].offset(), "offset"), u32(g[i].offset(), "offset"),
          u32(m[i].offset(), "offset"), u32(v[i].offset(), "offset"), decoupled, lr, float(b1), float(b2), omb1, omb2,
          eps, wd, inv_bc1, inv_sqrt_bc2};
      launch(p[i], "adam", {buffer_of(p[i]), buffer_of(g[i]), buffer_of(m[i]), buffer_of(v[i])}, q, p[i].numel());
    }
    return;
  }
  const Table t = table(dev, rows);
  if (!t.count) return;
  struct {
    uint32_t count, chunks, decoupled;
    float lr, b1, b2, omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2;
  } q{t.count, t.chunks, decoupled, lr, float(b1), float(b2), omb1, omb2, eps, wd, inv_bc1, inv_sqrt_bc2};
  launch_table(dev, "adam_multi", t, q);
}

void sgd(const std::vector<Tensor>& p, const std::vector<Tensor>& g, const std::vector<Tensor>& buf, float lr,
         float momentum, float dampening, float wd, bool nesterov, bool first_step) {
  if (p.empty()) return;
  const bool has_buf = !buf.empty();
  std::vector<Row> rows;
  for (size_t i = 0; i < p.size(); ++i) {
    require_f32("sgd", p[i]);
    require_f32("sgd", g[i]);
    rows.push_back({&p[i], &g[i], has_buf ? &buf[i] : nullptr, nullptr});
  }
  const Device dev = p[0].device();
  if (!tabled(dev, rows)) {
    for (size_t i = 0; i < p.size(); ++i) {
      if (!p[i].numel()) continue;
      struct {
        uint32_t n, p_off, g_off, b_off, has_momentum, nesterov, first_step;
        float lr, momentum, dampening, wd;
      } q{u32(p[i].numel(), "size"), u32(p[i].offset(), "offset"), u32(g[i].offset(), "offset"),
          has_buf ? u32(buf[i].offset(), "offset") : 0, has_buf, nesterov, first_step, lr, momentum, dampening, wd};
      launch(p[i], "sgd", {buffer_of(p[i]), buffer_of(g[i]), has_buf ? buffer_of(buf[i]) : buffer_of(p[i])}, q,
             p[i].numel());
    }
    return;
  }
  const Table t = table(dev, rows);
  if (!t.count) return;
  struct {
    uint32_t count, chunks, has_momentum, nesterov, first_step;
    float lr, momentum, dampening, wd;
  } q{t.count, t.chunks, has_buf, nesterov, first_step, lr, momentum, dampening, wd};
  launch_table(dev, "sgd_multi", t, q);
}

Tensor clip_grad_norm(const std::vector<Tensor>& grads, double max_norm, double eps) {
  // Partial sums of squares, summed in a fixed order by one workgroup (deterministic) into the
  // norm and the factor, which the last pass reads on the GPU: no wait for the norm.
  const Device dev = grads[0].device();
  std::vector<Row> rows;
  for (const Tensor& g : grads) {
    require_f32("clip_grad_norm", g);
    rows.push_back({&g, nullptr, nullptr, nullptr});
  }
  Tensor out = Tensor::empty({2}, DType::Float32, dev);  // norm, factor
  auto norm_and_factor = [&](const Tensor& parts, uint32_t n) {
    struct { uint32_t n, out_off; float max_norm, eps; } q{n, 0, float(max_norm), float(eps)};
    rt().dispatch(dev.index, "clip_scale", {buffer_of(parts), buffer_of(out)}, &q, sizeof q, 1);
  };
  if (tabled(dev, rows)) {
    const Table t = table(dev, rows);
    Tensor parts = Tensor::empty({std::max<int64_t>(t.chunks, 1)}, DType::Float32, dev);  // one per chunk
    if (t.count) {
      struct { uint32_t count, chunks; } q{t.count, t.chunks};
      launch_table(dev, "sum_squares_multi", t, q, {buffer_of(parts)});
    }
    norm_and_factor(parts, t.chunks);  // no chunks: norm 0, factor 1
    if (t.count) {
      struct { uint32_t count, chunks, factor_off; } q{t.count, t.chunks, 1};
      launch_table(dev, "scale_multi", t, q, {buffer_of(out)});
    }
    return out.alias({}, {}, 0);
  }
  constexpr int64_t kParts = 64;  // per gradient, one dispatch each
  Tensor parts = Tensor::empty({int64_t(grads.size()) * kParts}, DType::Float32, dev);
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    struct { uint32_t n, x_off, out_off, parts; } q{u32(g.numel(), "size"), u32(g.offset(), "offset"),
                                                    u32(int64_t(i) * kParts, "offset"), uint32_t(kParts)};
    rt().dispatch(dev.index, "sum_squares", {buffer_of(g), buffer_of(parts)}, &q, sizeof q, uint32_t(kParts));
  }
  norm_and_factor(parts, u32(parts.numel(), "size"));
  const Tensor factor = out.alias({}, {}, 1);
  for (const Tensor& g : grads)
    if (g.numel()) binary(BinaryOp::Mul, g, factor, g);
  return out.alias({}, {}, 0);
}

}  // namespace pcp::gpu
