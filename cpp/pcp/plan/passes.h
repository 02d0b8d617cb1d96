// Passes over a traced plan, each on its own: they shrink the graph without changing what a
// replay computes or does.
#pragma once
#include <vector>

#include "pcp/plan/plan.h"

namespace pcp::plan {

// Nodes whose inputs are all constants (captured tensors the traced code made and no step writes,
// and values folded before) become captured constants themselves: their outputs as traced,
// `traced[id]` (defined for every value such a node makes). Nodes that write their inputs or
// draw random numbers stay. `constant` ends as every constant value (those folded included,
// those a step writes not). Returns how many nodes were folded.
int fold_constants(Plan& plan, const std::vector<Tensor>& traced, std::vector<bool>& constant);

// Merges nodes that apply the same primitive (name and attributes) to the same inputs: later
// readers of the second read the first's outputs. Nodes that write their inputs or draw random
// numbers are never merged, and nothing is merged across a node that writes its inputs (the
// inputs may have changed). Returns how many nodes were merged away.
int eliminate_common_subexpressions(Plan& plan);

// Removes nodes none of whose outputs is read (by a later node, an output or a .grad effect),
// unless they write their inputs, and captured tensors nothing reads. Returns how many nodes.
int eliminate_dead_code(Plan& plan);

// Casts between float32 and a 16-bit type folded into the ops around them, where the ops
// take it (Primitive::with_output_dtype / with_input_dtype): a float32 result only cast to 16
// bits is written in them by its op (layer norm's output, cross-entropy's gradient), and a
// 16-bit value only read through a float32 cast is read as it is by its readers (a layer norm
// gradient's g, cross-entropy's logits). The results are the same bits. Returns how many casts.
int fold_casts(Plan& plan);

// Residual adds folded into the layer norms around them: an add read by a layer norm (its
// residual form: on a GPU one kernel adds, writes the sum, which later nodes read, and
// normalizes it), and an add of a layer norm gradient's gx to another gradient (the gradient's
// accumulate form: it writes the sum). Same bits. Returns how many adds.
int fuse_residual_layer_norm(Plan& plan);

// A tanh GELU of a product (directly or through a reshape) folded into the product as its
// gelu_tanh epilogue, which writes the GELU and the product (kept for the gradient); a GELU
// gradient whose incoming gradient is a product read by nothing else, as the product's
// dgelu_tanh epilogue. cuBLASLt runs each as one call (GELU computed from the product's float32
// accumulator: at most a 16-bit rounding apart); elsewhere the same ops run apart, same bits.
// Returns how many.
int fuse_product_epilogues(Plan& plan);

// Groups of elementwise ops (unary math, binary arithmetic, gelu's gradients and casts, in
// float32, float16 and bfloat16) whose intermediate values nothing else reads become one
// fused_elementwise node each (ops/fused.h): on the CPU run in cache-sized blocks, on a GPU in
// one dispatch (groups within the kernel's limits: core/fused_program.h). Captured 0-d values in
// `constant` become immediates of the program. Returns how many groups were fused.
int fuse_elementwise(Plan& plan, const std::vector<bool>& constant = {});

// The casts left after fold_casts and fuse_elementwise, between float32, float16 and bfloat16
// on a GPU, gathered into as few cast_multi nodes as the plan's order allows (one dispatch
// each): a cast may run anywhere after its input is made and before its output is first read,
// never across a node that writes its inputs. Autocast's casts of the weights at a step's start
// and of their gradients at its end become one node each. Same bits. Returns how many casts.
int batch_casts(Plan& plan);

// Layer norm gradients on a GPU (float32 rows of up to 2048) write their kernel's partial rows
// (the partial_rows form), and one sum_rows_multi node sums those of as many as the plan's order
// allows, before their weight gradients are first read: one dispatch where each took one. The
// same sums in the same order. Returns how many gradients.
int batch_layer_norm_sums(Plan& plan);

}  // namespace pcp::plan
