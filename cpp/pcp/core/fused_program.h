// The program of a fused elementwise op (ops/fused.h): plain data the backends run.
#pragma once
#include <vector>

#include "pcp/core/shape.h"

namespace pcp {

// Registers 0 .. n_inputs-1 are the inputs (broadcast to `shape`); instruction i writes
// register n_inputs + i from registers a (and b, for a binary op). All float32.
struct FusedProgram {
  struct Instr {
    bool binary;
    int op;  // UnaryOp or BinaryOp (core/op_kinds.h)
    int a, b;
  };
  Shape shape;
  int n_inputs = 0;
  std::vector<Instr> code;
  std::vector<int> outputs;  // the registers the op outputs, in order
};

}  // namespace pcp
