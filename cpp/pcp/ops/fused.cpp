#include "pcp/ops/fused.h"

#include <algorithm>
#include <bit>
#include <iterator>

#include "pcp/backend/cpu/cpu_backend.h"
#include "pcp/backend/gpu/ops.h"
#include "pcp/core/error.h"
#include "pcp/ops/ops.h"

namespace pcp {

bool fusable_unary(UnaryOp op) { return op != UnaryOp::LogicalNot && op != UnaryOp::BitwiseNot; }
// The GPU kernels compute in float32: integer-only ops (bitwise, shifts) and comparisons stay out.
bool fusable_binary(BinaryOp op) {
  return op <= BinaryOp::GeluTanhGrad || (op >= BinaryOp::Atan2 && op <= BinaryOp::FloorDivide);
}

namespace {
// The types of a program's registers as plan files number them: float32, float16, bfloat16.
constexpr DType kRegisterTypes[] = {DType::Float32, DType::Float16, DType::BFloat16};
int64_t type_number(DType t) { return std::find(std::begin(kRegisterTypes), std::end(kRegisterTypes), t) - std::begin(kRegisterTypes); }
DType type_numbered(int64_t k) {
  if (k < 0 || k > 2) fail<ValueError>("fused_elementwise: type ", k, " is not 0 (float32), 1 (float16) or 2 (bfloat16)");
  return kRegisterTypes[k];
}
}  // namespace

FusedElementwise::FusedElementwise(FusedProgram program) : program_(std::move(program)) {
  // A plan file's program is checked before anything runs it.
  const auto fail_if = [](bool bad, const char* what) {
    if (bad) fail<ValueError>("fused_elementwise: ", what);
  };
  const FusedProgram& p = program_;
  fail_if(p.n_inputs < 1 || p.code.empty() || p.outputs.empty(), "needs inputs, instructions and outputs");
  fail_if(!p.input_types.empty() && int(p.input_types.size()) != p.n_inputs, "has input types for other inputs");
  for (DType t : p.input_types) fail_if(!is_compute_float(t), "an input type other than float32, float16, bfloat16");
  for (size_t i = 0; i < p.code.size(); ++i) {
    const FusedProgram::Instr& c = p.code[i];
    const int defined = p.first_result() + int(i);  // registers written before instruction i
    fail_if(c.a < 0 || c.a >= defined || (c.binary && (c.b < 0 || c.b >= defined)), "reads a register not yet written");
    fail_if(c.binary ? !(c.op >= 0 && c.op <= int(kLastBinaryOp) && fusable_binary(BinaryOp(c.op)))
                     : !(c.op == FusedProgram::kConvert ||
                         (c.op >= 0 && c.op <= int(kLastUnaryOp) && fusable_unary(UnaryOp(c.op)))),
            "an op it cannot run");
    fail_if(!is_compute_float(c.type), "an instruction type other than float32, float16, bfloat16");
  }
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    const int r = p.outputs[j];
    fail_if(r < p.first_result() || r >= p.first_result() + int(p.code.size()), "outputs a register it does not write");
    fail_if(std::find(p.outputs.begin(), p.outputs.begin() + std::ptrdiff_t(j), r) != p.outputs.begin() + std::ptrdiff_t(j),
            "outputs a register twice");
  }
  for (int64_t d : p.shape) fail_if(d < 0, "a negative dimension");
}

namespace {
std::vector<int64_t> immediate_bits(const std::vector<float>& values) {
  std::vector<int64_t> bits;
  for (float v : values) bits.push_back(int64_t(std::bit_cast<uint32_t>(v)));
  return bits;
}
}  // namespace

Attributes FusedElementwise::attributes() const {
  std::vector<int64_t> code, types, input_types;
  bool typed = false;
  for (const FusedProgram::Instr& c : program_.code) {
    code.insert(code.end(), {int64_t(c.binary), c.op, c.a, c.b});
    types.push_back(type_number(c.type));
  }
  for (int k = 0; k < program_.n_inputs; ++k) input_types.push_back(type_number(program_.input_type(k)));
  for (int64_t t : types) typed = typed || t;
  for (int64_t t : input_types) typed = typed || t;
  Attributes a{{"shape", program_.shape}, {"inputs", int64_t(program_.n_inputs)}, {"code", code},
               {"immediates", immediate_bits(program_.immediates)},
               {"outputs", std::vector<int64_t>(program_.outputs.begin(), program_.outputs.end())}};
  if (typed) {  // float32 programs: as before
    a["types"] = types;
    a["input_types"] = input_types;
  }
  return a;
}

std::vector<TensorSpec> FusedElementwise::infer(const std::vector<TensorSpec>& in) const {
  if (int(in.size()) != program_.n_inputs)
    fail<ValueError>("fused_elementwise: takes ", program_.n_inputs, " inputs, got ", in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const TensorSpec& s = in[k];
    if (s.dtype != program_.input_type(int(k)) || s.device != in[0].device)
      fail<ValueError>("fused_elementwise: input ", k, " must be ", dtype_name(program_.input_type(int(k))), " on ",
                       in[0].device.str(), ", got ", dtype_name(s.dtype), " on ", s.device.str());
    if (broadcast_shapes(s.shape, program_.shape, "fused_elementwise") != program_.shape)
      fail<ValueError>("fused_elementwise: an input ", shape_str(s.shape), " does not broadcast to ",
                       shape_str(program_.shape));
  }
  std::vector<TensorSpec> out;
  for (size_t j = 0; j < program_.outputs.size(); ++j)
    out.push_back({program_.shape, program_.output_type(int(j)), in[0].device});
  return out;
}

std::vector<Tensor> FusedElementwise::forward(const std::vector<Tensor>& in, const std::vector<TensorSpec>& specs) {
  std::vector<Tensor> out;
  for (const TensorSpec& s : specs) out.push_back(empty(s));
  if (in[0].device().is_gpu()) {
    std::vector<Tensor> dense;  // the GPU kernel reads contiguous inputs
    for (const Tensor& t : in) dense.push_back(contiguous(t));
    gpu::fused_elementwise(program_, dense, out);
  } else {
    cpu::fused_elementwise(program_, in, out);
  }
  return out;
}

namespace {
const bool registered = register_primitive("fused_elementwise", {.make = [](const std::string& n, const Attributes& a,
                                                                    const SharedState&) {
  FusedProgram p;
  p.shape = attr_ints(n, a, "shape");
  p.n_inputs = int(attr_int(n, a, "inputs"));
  const std::vector<int64_t> code = attr_ints(n, a, "code");
  if (code.size() % 4) fail<ValueError>("fused_elementwise: code of ", code.size(), " numbers (4 per instruction)");
  for (size_t i = 0; i < code.size(); i += 4)
    p.code.push_back({code[i] != 0, int(code[i + 1]), int(code[i + 2]), int(code[i + 3])});
  for (int64_t r : attr_ints(n, a, "outputs")) p.outputs.push_back(int(r));
  if (a.count("types")) {  // 0 float32, 1 float16, 2 bfloat16; absent: all float32
    const std::vector<int64_t> types = attr_ints(n, a, "types"), inputs = attr_ints(n, a, "input_types");
    if (types.size() != p.code.size() || int64_t(inputs.size()) != p.n_inputs)
      fail<ValueError>("fused_elementwise: ", types.size(), " instruction types for ", p.code.size(),
                       " instructions, ", inputs.size(), " input types for ", p.n_inputs, " inputs");
    for (size_t i = 0; i < types.size(); ++i) p.code[i].type = type_numbered(types[i]);
    for (int64_t t : inputs) p.input_types.push_back(type_numbered(t));
  }
  if (a.count("immediates"))  // float32 bit patterns (exact, where decimals would round)
    for (int64_t bits : attr_ints(n, a, "immediates")) {
      if (bits < 0 || bits > 0xFFFFFFFFll) fail<ValueError>("fused_elementwise: an immediate is not 32 bits");
      p.immediates.push_back(std::bit_cast<float>(uint32_t(bits)));
    }
  return std::shared_ptr<Primitive>(std::make_shared<FusedElementwise>(std::move(p)));
}, .inputs = {}, .check = [](const NodeCheck& c) { c.require(!c.in.empty(), "no inputs"); },
   .gpu = true});  // within the GPU kernel's limits (kGpuFused*), which the fusion pass keeps
}  // namespace

}  // namespace pcp
