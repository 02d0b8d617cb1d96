// GPU optimizer updates and the gradient-norm clip over lists of parameters: one dispatch for
// the whole list through a table of the tensors' device addresses (metal/addr/), or, where the
// runtime has no buffer addresses (Metal), one dispatch per tensor.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/core/error.h"

namespace pcp::gpu {
namespace {

constexpr int64_t kChunk = 4096;  // CHUNK in metal/addr/tensors.glsl

// The tensors of one multi-tensor dispatch (Entry in metal/addr/tensors.glsl): per tensor the
// device addresses of up to four float32 tensors of its length (a parameter, its gradient, its
// state), numbered in chunks of kChunk elements. Empty tensors are left out.
struct Table {
  Tensor entries;                // on the device
  std::vector<Buffer*> buffers;  // the buffers the kernel reaches through it
  uint32_t count = 0, chunks = 0;
};

using Row = std::array<const Tensor*, 4>;  // nullptr: not used by the kernel

// Whether `rows` can go through one table: the runtime has buffer addresses, every length fits
// the kernels' 32-bit chunk arithmetic, and the chunks number fewer than 2^32.
// PCP_GPU_MULTI_TENSOR=0 takes the one-dispatch-per-tensor kernels (the tests compare the two).
bool tabled(Device dev, const std::vector<Row>& rows) {
  const char* env = std::getenv("PCP_GPU_MULTI_TENSOR");
  if ((env && env[0] == '0') || !rt().device_info(dev.index).buffer_addresses) return false;
  int64_t chunks = 0;
  for (const Row& r : rows) {
    if (r[0]->numel() > int64_t(std::numeric_limits<uint32_t>::max()) - kChunk) return false;
    chunks += (r[0]->numel() + kChunk - 1) / kChunk;
  }
  return chunks <= int64_t(std::numeric_limits<uint32_t>::max());
}

// A table's words on the device. A training loop hands the same tensors every step, so recent
// tables are kept by content (addresses and lengths: the same words are the same table, whatever
// tensors they came from) and uploaded once. Not while a command list is recorded: its upload
// runs only with the list.
Tensor uploaded_table(Device dev, const std::vector<int32_t>& words) {
  if (rt().capturing(dev.index)) return upload_ints(words, dev);
  static std::mutex mu;
  static auto* recent = new std::vector<std::pair<std::vector<int32_t>, Tensor>>;  // never destroyed (exit order)
  std::lock_guard<std::mutex> g(mu);
  for (const auto& [w, t] : *recent)
    if (w == words && t.device() == dev) return t;
  if (recent->size() >= 8) recent->erase(recent->begin());
  recent->push_back({words, upload_ints(words, dev)});
  return recent->back().second;
}

Table table(Device dev, const std::vector<Row>& rows) {
  Table t;
  std::vector<int32_t> words;
  for (const Row& r : rows) {
    const int64_t n = r[0]->numel();
    if (!n) continue;
    uint32_t e[12] = {};
    for (size_t k = 0; k < 4; ++k) {
      if (!r[k]) continue;
      Buffer* b = buffer_of(*r[k]);
      const uint64_t at = rt().address(b) + uint64_t(r[k]->offset()) * 4;
      e[2 * k] = uint32_t(at), e[2 * k + 1] = uint32_t(at >> 32);
      if (std::find(t.buffers.begin(), t.buffers.end(), b) == t.buffers.end()) t.buffers.push_back(b);
    }
    e[8] = uint32_t(n), e[9] = t.chunks;
    words.insert(words.end(), reinterpret_cast<const int32_t*>(e), reinterpret_cast<const int32_t*>(e) + 12);
    t.chunks += uint32_t((n + kChunk - 1) / kChunk);
    ++t.count;
  }
  if (t.count) t.entries = uploaded_table(dev, words);
  return t;
}

// One launch of a metal/addr/ kernel over a table, the table bound first, `more` after it.
template <class P>
void launch_table(Device dev, const char* kernel, const Table& t, const P& push, std::vector<Buffer*> more = {}) {
  static_assert(sizeof(P) <= kMaxPushBytes);
  more.insert(more.begin(), buffer_of(t.entries));
  rt().dispatch(dev.index, kernel, more, &push, sizeof(P), std::min(t.chunks, max_groups()), {}, t.buffers);
}

}  // namespace

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
