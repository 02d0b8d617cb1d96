// GPU elementwise ops: unary math, binary arithmetic, comparisons and where.
#include "pcp/backend/gpu/ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "pcp/backend/gpu/launch.h"
#include "pcp/backend/gpu/wide.h"
#include "pcp/core/error.h"

namespace pcp::gpu {

namespace {
// int32 operands run integer kernels of their own (metal/unary_int.comp, binary_int.comp), with
// the float kernels' strided layout.
bool int32_io(const Tensor& t) { return t.dtype() == DType::Int32; }
}  // namespace

void unary(UnaryOp op, const Tensor& x, const Tensor& out) {
  if (op == UnaryOp::LogicalNot) {  // x == 0, into bools
    Tensor zero = Tensor::empty({}, x.dtype(), x.device());
    fill(zero, 0.0);
    return compare(BinaryOp::Eq, x, zero, out);
  }
  if (is_wide(x) || is_wide(out)) return wide::unary(op, x, out);
  const bool ints = int32_io(x) && int32_io(out);
  if (wide_io(x) && wide_io(out) && vec4_aligned(x, out)) {
    if (!out.numel()) return;
    struct { uint32_t n4, op, x_off4, out_off4, x_type, out_type; } p{
        u32(out.numel() / 4, "size"), uint32_t(op), u32(x.offset() / 4, "offset"), u32(out.offset() / 4, "offset"),
        type_code("unary op", x), type_code("unary op", out)};
    return launch(x, "unary4", {buffer_of(x), buffer_of(out)}, p, out.numel() / 4);
  }
  if (is_half(x)) {
    return into_float32(out, [&](const Tensor& o) { unary(op, widened(x), o); });
  }
  if (!ints) require_f32("unary op", x);
  if (!out.numel()) return;
  Layout l = layout("unary op", x.shape(), {x.strides()});
  struct {
    uint32_t n, ndim, x_off, out_off, op, shape[kMaxDims];
    int32_t strides[kMaxDims];
  } p{u32(x.numel(), "size"), l.ndim, u32(x.offset(), "offset"), u32(out.offset(), "offset"), uint32_t(op), {}, {}};
  put_dims(l, p.shape, {p.strides});
  launch(x, ints ? "unary_int" : "unary", {buffer_of(x), buffer_of(out)}, p, x.numel());
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.dtype() == DType::Bool) return compare(op, a, b, out);
  if (is_wide(a) || is_wide(b) || is_wide(out)) return wide::binary(op, a, b, out);
  // The kernels compute in float32, whose next value is not float16's or bfloat16's.
  if (op == BinaryOp::Nextafter && out.dtype() != DType::Float32)
    fail<NotImplementedError>("nextafter: ", dtype_name(out.dtype()), " is not supported on ", out.device().str(),
                              " yet (float32 only)");
  if (!out.numel()) return;
  const int64_t pa = vec4_period(a, out.shape()), pb = vec4_period(b, out.shape());
  if (wide_io(a) && wide_io(b) && wide_io(out) && pa >= 0 && pb >= 0 && out.is_contiguous() &&
      out.offset() % 4 == 0 && out.numel() % 4 == 0) {
    struct { uint32_t n4, op, out_off4, a_off, a_period, b_off, b_period, a_type, b_type, out_type; } p{
        u32(out.numel() / 4, "size"), uint32_t(op), u32(out.offset() / 4, "offset"), u32(a.offset(), "offset"),
        uint32_t(pa), u32(b.offset(), "offset"), uint32_t(pb), type_code("binary op", a), type_code("binary op", b),
        type_code("binary op", out)};
    return launch(a, "binary4", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel() / 4);
  }
  const bool ints = int32_io(a) && int32_io(b) && int32_io(out);
  Layout l = layout("binary op", out.shape(),
                    {broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())});
  if (ints) {
    struct {
      uint32_t n, ndim, a_off, b_off, out_off, op, shape[kMaxDims];
      int32_t a_strides[kMaxDims], b_strides[kMaxDims];
    } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
        u32(out.offset(), "offset"), uint32_t(op), {}, {}, {}};
    put_dims(l, p.shape, {p.a_strides, p.b_strides});
    return launch(a, "binary_int", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel());
  }
  // Strided float32 / 16-bit operands; a 16-bit result is written in whole words (pairs).
  for (const Tensor* t : {&a, &b, &out})
    if (!wide_io(*t)) require_f32("binary op", *t);
  if (is_half(out) && (!out.is_contiguous() || out.offset() % 2 || out.numel() % 2))
    return into_float32(out, [&](const Tensor& o) { binary(op, a, b, o); });
  struct {
    uint32_t n, ndim, a_off, b_off, out_off, op, shape[kMaxDims];
    int32_t a_strides[kMaxDims], b_strides[kMaxDims];
    uint32_t a_type, b_type, out_type;
  } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
      u32(out.offset(), "offset"), uint32_t(op), {}, {}, {}, type_code("binary op", a), type_code("binary op", b),
      type_code("binary op", out)};
  put_dims(l, p.shape, {p.a_strides, p.b_strides});
  launch(a, "binary", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, is_half(out) ? out.numel() / 2 : out.numel());
}

void fused_elementwise(const FusedProgram& prog, const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
  const int n_in = int(in.size()), n_out = int(out.size()), n_code = int(prog.code.size());
  const int n_imm = int(prog.immediates.size());
  if (n_in > kGpuFusedInputs || n_imm > kGpuFusedImmediates || n_out > kGpuFusedOutputs || n_code > kGpuFusedCode)
    fail<NotImplementedError>("fused_elementwise: a program of ", n_in, " inputs, ", n_imm, " immediates, ", n_code,
                              " ops and ", n_out, " outputs is beyond the GPU kernel's 4, 8, 12 and 2");
  if (!out[0].numel()) return;
  // The program specializes the kernel (metal/fused.comp); offsets and sizes are push constants.
  // constant_id: 0-3 counts and output registers, 4-15 the code, 16 the immediates' count, 17-24 their bits,
  // 25-26 the inputs' and outputs' types
  std::vector<uint32_t> constants{uint32_t(n_in), uint32_t(n_code), uint32_t(n_out), 0};
  for (int j = 0; j < n_out; ++j) constants[3] |= uint32_t(prog.outputs[size_t(j)]) << (8 * j);
  // Types (metal/fused.comp): 0 float32, 1 float16, 2 bfloat16.
  const auto type_bits = [](DType t) { return t == DType::Float16 ? 1u : t == DType::BFloat16 ? 2u : 0u; };
  for (int c = 0; c < kGpuFusedCode; ++c) {
    const FusedProgram::Instr ins = c < n_code ? prog.code[size_t(c)] : FusedProgram::Instr{false, 0, 0, 0};
    const uint32_t op = ins.op == FusedProgram::kConvert ? 127u : uint32_t(ins.op);
    constants.push_back(uint32_t(ins.binary) | op << 1 | uint32_t(ins.a) << 8 | uint32_t(ins.b) << 16 |
                        type_bits(ins.type) << 24);
  }
  constants.push_back(uint32_t(n_imm));
  for (int j = 0; j < kGpuFusedImmediates; ++j)
    constants.push_back(j < n_imm ? std::bit_cast<uint32_t>(prog.immediates[size_t(j)]) : 0u);
  uint32_t in_types = 0, out_types = 0;
  for (int k = 0; k < n_in; ++k) in_types |= type_bits(prog.input_type(k)) << (2 * k);
  bool pairs = false;  // a 16-bit output: two elements per thread, stored as one word
  for (int j = 0; j < n_out; ++j) {
    out_types |= type_bits(prog.output_type(j)) << (2 * j);
    if (is_half(out[size_t(j)])) {
      pairs = true;
      if (out[0].numel() % 2 || out[size_t(j)].offset() % 2 || !out[size_t(j)].is_contiguous())
        fail<NotImplementedError>("fused_elementwise: a 16-bit output of odd length or offset on the GPU");
    }
  }
  constants.push_back(in_types);
  constants.push_back(out_types);
  struct {
    uint32_t n, in_off[4], in_div[4], in_period[4], out_off[2];
  } p{};
  p.n = u32(out[0].numel(), "size");
  for (int j = 0; j < n_out; ++j) p.out_off[j] = u32(out[size_t(j)].offset(), "offset");
  std::vector<Buffer*> bufs;
  for (int k = 0; k < n_in; ++k) {
    const Tensor& x = in[size_t(k)];
    int64_t div = 1, period = 1;
    if (!x.is_contiguous() || !gpu_fused_input(x.shape(), prog.shape, &div, &period))
      fail<NotImplementedError>("fused_elementwise: an input ", shape_str(x.shape()), " broadcast to ",
                                shape_str(prog.shape), " in a way the GPU kernel does not read");
    p.in_off[k] = u32(x.offset(), "offset");
    p.in_div[k] = u32(div, "size");
    p.in_period[k] = u32(period, "size");
    bufs.push_back(buffer_of(x));
  }
  while (bufs.size() < 4) bufs.push_back(bufs[0]);  // unused bindings
  for (int j = 0; j < 2; ++j) bufs.push_back(buffer_of(out[size_t(j < n_out ? j : 0)]));
  rt().dispatch(out[0].device().index, "fused", bufs, &p, sizeof(p), groups(pairs ? out[0].numel() / 2 : out[0].numel()),
                constants);
}

void compare(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (is_wide(a) || is_wide(b)) return wide::compare(op, a, b, out);
  if (is_half(a) || is_half(b)) return compare(op, widened(a), widened(b), out);
  const uint32_t type = type_code("comparison", a);
  if (!out.numel()) return;
  if (!word_aligned(out)) {  // the kernel writes whole words: compare into one, then copy
    Tensor words = Tensor::empty(out.shape(), DType::Bool, out.device());
    compare(op, a, b, words);
    return cast(words, out);
  }
  Layout l = layout("comparison", out.shape(),
                    {broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())});
  struct {
    uint32_t n, ndim, a_off, b_off, out_word, op, type, shape[kMaxDims];
    int32_t a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(a.offset(), "offset"), u32(b.offset(), "offset"),
      u32(out.offset() / 4, "offset"), uint32_t(op), type, {}, {}, {}};
  put_dims(l, p.shape, {p.a_strides, p.b_strides});
  launch(a, "compare", {buffer_of(a), buffer_of(b), buffer_of(out)}, p, (out.numel() + 3) / 4);
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (is_wide(out)) return wide::where(cond, a, b, out);
  if (is_half(out)) {
    return into_float32(out, [&](const Tensor& o) { where(cond, widened(a), widened(b), o); });
  }
  if (out.dtype() == DType::Bool) {
    return into_int32(out, [&](const Tensor& o) { where(cond, bool_as_int32(a), bool_as_int32(b), o); });
  }
  if (cond.dtype() != DType::Bool || a.itemsize() != 4)
    fail<NotImplementedError>("where: ", dtype_name(a.dtype()), " values are not supported on ", a.device().str(),
                              " yet (32-bit types only)");
  if (!out.numel()) return;
  const Shape& s = out.shape();
  Layout l = layout("where", s, {broadcast_strides(cond, s), broadcast_strides(a, s),
                                 broadcast_strides(b, s)});
  struct {
    uint32_t n, ndim, c_off, a_off, b_off, out_off, shape[kMaxDims];
    int32_t c_strides[kMaxDims], a_strides[kMaxDims], b_strides[kMaxDims];
  } p{u32(out.numel(), "size"), l.ndim, u32(cond.offset(), "offset"), u32(a.offset(), "offset"),
      u32(b.offset(), "offset"), u32(out.offset(), "offset"), {}, {}, {}, {}};
  put_dims(l, p.shape, {p.c_strides, p.a_strides, p.b_strides});
  launch(a, "where", {buffer_of(cond), buffer_of(a), buffer_of(b), buffer_of(out)}, p, out.numel());
}

}  // namespace pcp::gpu
