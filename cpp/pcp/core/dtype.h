// Element types and their promotion rules (PyTorch/JAX style: Python scalars are weak).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace pcp {

// Ordered by promotion rank within the lattice bool < ints < floats.
enum class DType : uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64 };

constexpr int kNumDTypes = 7;

size_t itemsize(DType dt);
const char* dtype_name(DType dt);
DType dtype_from_name(const std::string& name);  // "float32", "f32", "int64", ...
bool is_floating(DType dt);
bool is_integral(DType dt);  // int32, int64 (not bool)
// float16 or bfloat16: stored in 16 bits, computed in float32.
inline bool is_half_float(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16; }
// float32 or a 16-bit float: what the GPU kernels and fused programs compute in float32.
inline bool is_compute_float(DType dt) { return dt == DType::Float32 || is_half_float(dt); }

// Category: 0 bool, 1 integer, 2 floating.
int dtype_category(DType dt);

// Promotion of two strong dtypes.
DType promote_types(DType a, DType b);

// Promotion when either side may be a weak (Python scalar) type: a weak operand only
// lifts the result to its category's default (int64, float32), never widens a strong one.
DType result_type(DType a, bool a_weak, DType b, bool b_weak);

// The floating type an op computes in for an input of type dt (ints become float32).
DType to_floating(DType dt);

constexpr DType kDefaultFloat = DType::Float32;
constexpr DType kDefaultInt = DType::Int64;

}  // namespace pcp
