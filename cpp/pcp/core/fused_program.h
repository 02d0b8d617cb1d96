// The program of a fused elementwise op (ops/fused.h): plain data the backends run.
#pragma once
#include <algorithm>
#include <vector>

#include "pcp/core/dtype.h"
#include "pcp/core/shape.h"

namespace pcp {

// Registers 0 .. n_inputs-1 are the inputs (broadcast to `shape`), then the immediates (constant
// scalars), then instruction i writes register n_inputs + immediates.size() + i from registers a
// (and b, for a binary op). Registers hold float32; an input of float16 or bfloat16 is widened
// (exactly), and an instruction of such a type rounds its float32 result to it, as the op alone
// would (computed in float32, rounded once), so that a fused chain keeps every rounding of the
// unfused ops. An output has its instruction's type.
struct FusedProgram {
  static constexpr int kConvert = -1;  // a unary op: register a as it is, rounded to the type
  struct Instr {
    bool binary;
    int op;  // UnaryOp or BinaryOp (core/op_kinds.h), or kConvert
    int a, b;
    DType type = DType::Float32;  // float32, float16 or bfloat16
  };
  Shape shape;
  int n_inputs = 0;
  std::vector<DType> input_types;  // one per input (float32, float16 or bfloat16); empty: float32
  std::vector<float> immediates;
  std::vector<Instr> code;
  std::vector<int> outputs;  // the registers the op outputs, in order

  int first_result() const { return n_inputs + int(immediates.size()); }
  DType input_type(int k) const { return input_types.empty() ? DType::Float32 : input_types[size_t(k)]; }
  DType output_type(int j) const { return code[size_t(outputs[size_t(j)] - first_result())].type; }
};

// What the GPU's fused kernel (metal/fused.comp) takes: at most 4 inputs, 8 immediates, 2
// outputs, 12 instructions; each input one block of the output's dimensions, read at
// (i / div) % period of the flat output index i.
constexpr int kGpuFusedInputs = 4, kGpuFusedImmediates = 8, kGpuFusedOutputs = 2, kGpuFusedCode = 12;
inline bool gpu_fused_input(const Shape& in, const Shape& out, int64_t* div = nullptr, int64_t* period = nullptr) {
  if (in.size() > out.size()) return false;
  const size_t lead = out.size() - in.size();
  size_t first = out.size(), last = 0;  // the input's dimensions above 1
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1) first = std::min(first, lead + i), last = lead + i;
  int64_t d = 1, n = 1;
  for (size_t j = 0; j < out.size(); ++j) {
    const bool inside = first <= j && j <= last;
    if (inside && in[j - lead] != out[j]) return false;  // a 1 between broadcast dimensions
    if (inside) n *= out[j];
    if (j > last || first == out.size()) d *= out[j];
  }
  if (div) *div = first == out.size() ? 1 : d;
  if (period) *period = n;
  return true;
}

}  // namespace pcp
