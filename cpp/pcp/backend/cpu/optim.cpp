// CPU host code of the fused optimizer steps and gradient clipping (ops/optim.cpp): every CPU
// tensor of a list is updated in one parallel loop over their concatenation, a single dispatch
// for a whole model, its small tensors included. GPU tensors in the lists are left to gpu::.
#include <algorithm>
#include <vector>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"

namespace pcp::cpu {
namespace {

// The CPU tensors of a list laid end to end (empty ones left out): piece s is
// tensors[index[s]], at [start[s], start[s + 1]) of the concatenation.
struct Concat {
  std::vector<size_t> index;
  std::vector<int64_t> start{0};
  explicit Concat(const std::vector<Tensor>& tensors) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!tensors[i].device().is_gpu() && tensors[i].numel() > 0) {
        index.push_back(i);
        start.push_back(start.back() + tensors[i].numel());
      }
  }
  int64_t size() const { return start.back(); }
  // f(i, offset, count) for each piece of [b, e): count elements of tensors[i] from offset.
  template <class F>
  void visit(int64_t b, int64_t e, F&& f) const {
    size_t s = size_t(std::upper_bound(start.begin(), start.end(), b) - start.begin()) - 1;
    for (; b < e; ++s) {
      const int64_t n = std::min(e, start[s + 1]) - b;
      f(index[s], b - start[s], n);
      b += n;
    }
  }
};

template <class F>
void for_all_chunks(const std::vector<Tensor>& tensors, F f) {
  const Concat all(tensors);
  parallel_for(all.size(), 32768, [&](int64_t b, int64_t e) { all.visit(b, e, f); });
}

}  // namespace

void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& m,
          const std::vector<Tensor>& v, float lr, double b1, double b2, float eps, float wd, float bc1, float bc2,
          bool decoupled) {
  const auto& k = kernels();
  for_all_chunks(params, [&](size_t i, int64_t b, int64_t n) {
    k.adam_update(params[i].data<float>() + b, grads[i].data<float>() + b, m[i].data<float>() + b,
                  v[i].data<float>() + b, n, lr, float(b1), float(b2), float(1.0 - b1), float(1.0 - b2), eps, wd, bc1,
                  bc2, decoupled);
  });
}

void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs,
         float lr, float momentum, float dampening, float wd, bool nesterov, bool first_step) {
  const auto& k = kernels();
  const bool has_buf = !bufs.empty();
  for_all_chunks(params, [&](size_t i, int64_t s, int64_t n) {
    k.sgd_update(params[i].data<float>() + s, grads[i].data<float>() + s, has_buf ? bufs[i].data<float>() + s : nullptr,
                 n, lr, momentum, dampening, wd, nesterov, first_step);
  });
}

double sum_squares(const std::vector<Tensor>& xs) {
  const auto& k = kernels();
  // Partial sums over fixed blocks of the concatenation, added in block order: the same result
  // for any thread count, in one parallel pass however many tensors there are.
  constexpr int64_t block = 65536;
  const Concat all(xs);
  std::vector<double> part(size_t((all.size() + block - 1) / block), 0.0);
  parallel_for(int64_t(part.size()), 1, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p)
      all.visit(p * block, std::min(all.size(), (p + 1) * block), [&](size_t i, int64_t off, int64_t n) {
        part[size_t(p)] += k.sum_squares(xs[i].data<float>() + off, n);
      });
  });
  double total = 0;
  for (double p : part) total += p;
  return total;
}

void scale_in_place(const std::vector<Tensor>& xs, float s) {
  const auto& k = kernels();
  const char* ps = reinterpret_cast<const char*>(&s);  // the binary kernel with a broadcast operand
  for_all_chunks(xs, [&](size_t i, int64_t b, int64_t n) {
    char* x = reinterpret_cast<char*>(xs[i].data<float>() + b);
    k.binary(BinaryOp::Mul, DType::Float32, n, x, 1, x, 1, ps, 0);
  });
}

}  // namespace pcp::cpu
