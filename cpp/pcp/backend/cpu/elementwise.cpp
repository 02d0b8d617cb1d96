#include <array>
#include <cstring>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/cpu/thread_pool.h"
#include "pcp/core/error.h"

namespace pcp::cpu {

namespace {

constexpr int64_t kGrain = 32768;  // elements per thread chunk: below this, threads cost more than they save

// Walks `shape` with N operands' strides, merging dimensions that are contiguous for every
// operand, and calls fn(offsets, n, inner_strides) for each innermost run (offsets in elements).
template <size_t N, class Fn>
void strided_for(const Shape& shape, const std::array<Strides, N>& strides, Fn&& fn) {
  std::vector<int64_t> size;
  std::vector<std::array<int64_t, N>> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    std::array<int64_t, N> s;
    for (size_t k = 0; k < N; ++k) s[k] = strides[k][d];
    if (!size.empty()) {
      bool merge = true;
      for (size_t k = 0; k < N; ++k) merge = merge && st.back()[k] == s[k] * shape[d];
      if (merge) {
        size.back() *= shape[d];
        st.back() = s;
        continue;
      }
    }
    size.push_back(shape[d]);
    st.push_back(s);
  }
  const int64_t total = numel(shape);
  if (total == 0) return;
  if (size.empty()) {
    std::array<int64_t, N> zero{};
    fn(zero.data(), int64_t(1), zero.data());
    return;
  }
  const int nd = int(size.size());
  parallel_for(total, kGrain, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nd);
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % size[d];
      rem /= size[d];
    }
    std::array<int64_t, N> inner = st[nd - 1];
    int64_t pos = begin;
    while (pos < end) {
      std::array<int64_t, N> off{};
      for (int d = 0; d < nd; ++d)
        for (size_t k = 0; k < N; ++k) off[k] += idx[d] * st[d][k];
      int64_t run = std::min(size[nd - 1] - idx[nd - 1], end - pos);
      fn(off.data(), run, inner.data());
      pos += run;
      idx[nd - 1] += run;
      for (int d = nd - 1; d > 0 && idx[d] == size[d]; --d) {
        idx[d] = 0;
        idx[d - 1]++;
      }
    }
  });
}

char* ptr(const Tensor& t) { return static_cast<char*>(t.raw_data()); }

}  // namespace

void unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  const auto& k = kernels();
  char *o = ptr(out), *a = ptr(x);
  size_t so = out.itemsize(), sa = x.itemsize();
  DType dt = x.dtype();
  strided_for<2>(out.shape(), {out.strides(), broadcast_strides(x, out.shape())},
                 [&](const int64_t* off, int64_t n, const int64_t* s) {
                   k.unary(op, dt, n, o + off[0] * so, s[0], a + off[1] * sa, s[1]);
                 });
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const auto& k = kernels();
  char *o = ptr(out), *pa = ptr(a), *pb = ptr(b);
  size_t so = out.itemsize(), sa = a.itemsize();
  DType dt = a.dtype();
  strided_for<3>(out.shape(),
                 {out.strides(), broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())},
                 [&](const int64_t* off, int64_t n, const int64_t* s) {
                   k.binary(op, dt, n, o + off[0] * so, s[0], pa + off[1] * sa, s[1], pb + off[2] * sa, s[2]);
                 });
}

namespace {
// dst[0..n) = x (broadcast to `shape` with element strides st) at the flat positions s .. s+n,
// widened to float32 from x's type.
void gather_block(const char* x, DType type, const Shape& shape, const Strides& st, int64_t s, int64_t n, float* dst) {
  const auto& k = kernels();
  const size_t size = itemsize(type);
  const int nd = int(shape.size());
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t rem = s, off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    idx[size_t(d)] = rem % shape[size_t(d)];
    rem /= shape[size_t(d)];
    off += idx[size_t(d)] * st[size_t(d)];
  }
  const int64_t inner = st[size_t(nd - 1)], len = shape[size_t(nd - 1)];
  while (n > 0) {
    const int64_t run = std::min(len - idx[size_t(nd - 1)], n);
    k.cast(type, DType::Float32, run, reinterpret_cast<char*>(dst), 1, x + off * int64_t(size), inner);
    dst += run, n -= run;
    off += run * inner;
    idx[size_t(nd - 1)] += run;
    for (int d = nd - 1; d > 0 && idx[size_t(d)] == shape[size_t(d)]; --d) {  // carry
      off -= shape[size_t(d)] * st[size_t(d)];
      idx[size_t(d)] = 0;
      ++idx[size_t(d - 1)];
      off += st[size_t(d - 1)];
    }
  }
}
}  // namespace

void fused_elementwise(const FusedProgram& p, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
  const auto& k = kernels();
  const int64_t total = numel(p.shape);
  if (total == 0) return;
  constexpr int64_t kBlock = 1024;  // floats per register: the whole program's block stays in L1/L2
  // How each input is read: float32 in place (contiguous, or one value), else widened or
  // gathered per block.
  struct Source {
    const char* data;
    DType type;
    Strides st;
    int64_t step;  // elements per output element when read in place; -1: gather
  };
  std::vector<Source> src;
  for (const Tensor& t : in) {
    Strides st = broadcast_strides(t, p.shape);
    int64_t step = -1;
    if (t.numel() == 1) step = 0;
    else if (t.shape() == p.shape && t.is_contiguous()) step = 1;
    src.push_back({ptr(t), t.dtype(), st, step});
  }
  const size_t regs = size_t(p.first_result()) + p.code.size();
  std::vector<int> out_of(regs, -1);  // register -> the output it is written to
  for (size_t j = 0; j < p.outputs.size(); ++j) out_of[size_t(p.outputs[j])] = int(j);
  const int64_t grain = std::max<int64_t>(kBlock, kGrain / int64_t(p.code.size()));
  parallel_for(total, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(regs * size_t(kBlock));
    std::vector<uint16_t> rounded(static_cast<size_t>(kBlock));  // a 16-bit instruction's result, before widening again
    std::vector<const float*> ptr(regs);
    std::vector<int64_t> stride(regs, 1);
    for (int64_t s = begin; s < end; s += kBlock) {
      const int64_t n = std::min(kBlock, end - s);
      for (int i = 0; i < p.n_inputs; ++i) {
        const Source& x = src[size_t(i)];
        if (x.step >= 0 && x.type == DType::Float32) {
          ptr[size_t(i)] = reinterpret_cast<const float*>(x.data) + (x.step ? s : 0);
          stride[size_t(i)] = x.step;
        } else {
          float* dst = scratch.data() + size_t(i) * kBlock;
          if (x.step >= 0)
            k.cast(x.type, DType::Float32, x.step ? n : 1, reinterpret_cast<char*>(dst), 1,
                   x.data + (x.step ? s : 0) * int64_t(itemsize(x.type)), 1);
          else
            gather_block(x.data, x.type, p.shape, x.st, s, n, dst);
          ptr[size_t(i)] = dst;
          stride[size_t(i)] = x.step == 0 ? 0 : 1;
        }
      }
      for (size_t j = 0; j < p.immediates.size(); ++j) {  // one value, read with stride 0
        ptr[size_t(p.n_inputs) + j] = &p.immediates[j];
        stride[size_t(p.n_inputs) + j] = 0;
      }
      for (size_t c = 0; c < p.code.size(); ++c) {
        const FusedProgram::Instr& ins = p.code[c];
        const size_t r = size_t(p.first_result()) + c;
        const bool f32_out = out_of[r] >= 0 && ins.type == DType::Float32;
        float* dst = f32_out ? out[size_t(out_of[r])].data<float>() + s : scratch.data() + r * kBlock;
        char* d = reinterpret_cast<char*>(dst);
        const char* a = reinterpret_cast<const char*>(ptr[size_t(ins.a)]);
        if (ins.op == FusedProgram::kConvert)
          k.cast(DType::Float32, DType::Float32, n, d, 1, a, stride[size_t(ins.a)]);
        else if (ins.binary)
          k.binary(BinaryOp(ins.op), DType::Float32, n, d, 1, a, stride[size_t(ins.a)],
                   reinterpret_cast<const char*>(ptr[size_t(ins.b)]), stride[size_t(ins.b)]);
        else
          k.unary(UnaryOp(ins.op), DType::Float32, n, d, 1, a, stride[size_t(ins.a)]);
        if (ins.type != DType::Float32) {  // rounded once, as the op alone rounds its result
          char* h = reinterpret_cast<char*>(rounded.data());
          k.cast(DType::Float32, ins.type, n, h, 1, d, 1);
          k.cast(ins.type, DType::Float32, n, d, 1, h, 1);
          if (out_of[r] >= 0) std::memcpy(static_cast<char*>(out[size_t(out_of[r])].raw_data()) + s * 2, h, size_t(n) * 2);
        }
        ptr[r] = dst;
        stride[r] = 1;
      }
    }
  });
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  const auto& k = kernels();
  char *o = ptr(out), *pc = ptr(cond), *pa = ptr(a), *pb = ptr(b);
  size_t s = out.itemsize();
  DType dt = out.dtype();
  strided_for<4>(out.shape(),
                 {out.strides(), broadcast_strides(cond, out.shape()), broadcast_strides(a, out.shape()),
                  broadcast_strides(b, out.shape())},
                 [&](const int64_t* off, int64_t n, const int64_t* st) {
                   k.where(dt, n, o + off[0] * s, st[0], pc + off[1], st[1], pa + off[2] * s, st[2],
                           pb + off[3] * s, st[3]);
                 });
}

void cast_copy(const Tensor& src, const Tensor& dst) {
  const auto& k = kernels();
  char *o = ptr(dst), *a = ptr(src);
  size_t so = dst.itemsize(), sa = src.itemsize();
  DType from = src.dtype(), to = dst.dtype();
  strided_for<2>(dst.shape(), {dst.strides(), broadcast_strides(src, dst.shape())},
                 [&](const int64_t* off, int64_t n, const int64_t* s) {
                   if (from == to && s[0] == 1 && s[1] == 1)
                     std::memcpy(o + off[0] * so, a + off[1] * sa, size_t(n) * so);
                   else
                     k.cast(from, to, n, o + off[0] * so, s[0], a + off[1] * sa, s[1]);
                 });
}

void copy(const Tensor& x, const Tensor& out) { cast_copy(x, out); }

void reduce(ReduceOp op, const Tensor& x, int64_t O, int64_t R, int64_t I, const Tensor& out) {
  const auto& k = kernels();
  const char* px = ptr(x);
  char* po = ptr(out);
  size_t sx = x.itemsize(), so = out.itemsize();
  DType dt = x.dtype();
  if (O * I == 0) return;
  const int nt = get_num_threads();
  if (O >= 2 * nt || R * O * I < 4 * kGrain) {
    // Enough independent outer rows (or too little work to split): split over O.
    parallel_for(O, std::max<int64_t>(1, kGrain / std::max<int64_t>(R * I, 1)), [&](int64_t b, int64_t e) {
      k.reduce(op, dt, px + b * R * I * sx, e - b, R, I, po + b * I * so);
    });
    return;
  }
  // Few outer rows over a long axis: each thread reduces a slice of R, then the partials combine.
  const int64_t chunks = std::min<int64_t>(nt, R / kGrain + 1);
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
    std::vector<int64_t> part(size_t(chunks * O * I));
    parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        int64_t r0 = R * c / chunks, r1 = R * (c + 1) / chunks;
        for (int64_t o = 0; o < O; ++o)
          k.reduce(op, dt, px + (o * R + r0) * I * sx, 1, r1 - r0, I, reinterpret_cast<char*>(&part[(c * O + o) * I]));
        for (int64_t j = 0; j < O * I; ++j) part[c * O * I + j] += r0;
      }
    });
    // Combine: pick the best candidate in chunk order (earlier chunk wins ties).
    Tensor cand = Tensor::empty({chunks}, dt);
    Tensor idx = Tensor::empty({1}, DType::Int64);
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < I; ++i) {
        for (int64_t c = 0; c < chunks; ++c)
          std::memcpy(static_cast<char*>(cand.raw_data()) + c * sx, px + ((o * R + part[(c * O + o) * I + i]) * I + i) * sx, sx);
        k.reduce(op, dt, ptr(cand), 1, chunks, 1, ptr(idx));
        reinterpret_cast<int64_t*>(po)[o * I + i] = part[(idx.data<int64_t>()[0] * O + o) * I + i];
      }
    return;
  }
  Tensor part = Tensor::empty({chunks, O * I}, op == ReduceOp::Sum && is_floating(dt) ? DType::Float64 : dt);
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t r0 = R * c / chunks, r1 = R * (c + 1) / chunks;
      Tensor tmp = Tensor::empty({O * I}, dt);
      for (int64_t o = 0; o < O; ++o)
        k.reduce(op, dt, px + (o * R + r0) * I * sx, 1, r1 - r0, I, ptr(tmp) + o * I * sx);
      Tensor row = Tensor::view_of(part.storage(), {O * I}, {1}, c * O * I, part.dtype());
      cast_copy(tmp, row);
    }
  });
  // part is (chunks, O*I): reduce along chunks, then convert to the output dtype.
  Tensor comb = Tensor::empty({O * I}, part.dtype());
  k.reduce(op, part.dtype(), ptr(part), 1, chunks, O * I, ptr(comb));
  cast_copy(comb, out.numel() == O * I ? Tensor::view_of(out.storage(), {O * I}, {1}, out.offset(), out.dtype()) : out);
}

}  // namespace pcp::cpu
