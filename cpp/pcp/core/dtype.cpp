#include "pcp/core/dtype.h"

#include "pcp/core/error.h"

namespace pcp {

size_t itemsize(DType dt) {
  switch (dt) {
    case DType::Bool: return 1;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Float16: return 2;
    case DType::BFloat16: return 2;
    case DType::Float32: return 4;
    case DType::Float64: return 8;
  }
  return 0;
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

DType dtype_from_name(const std::string& n) {
  if (n == "bool") return DType::Bool;
  if (n == "int32" || n == "i32") return DType::Int32;
  if (n == "int64" || n == "i64" || n == "int") return DType::Int64;
  if (n == "float16" || n == "f16" || n == "half") return DType::Float16;
  if (n == "bfloat16" || n == "bf16") return DType::BFloat16;
  if (n == "float32" || n == "f32" || n == "float") return DType::Float32;
  if (n == "float64" || n == "f64" || n == "double") return DType::Float64;
  fail<TypeError>("unknown dtype '", n,
                  "': expected one of bool, int32, int64, float16, bfloat16, float32, float64");
}

bool is_floating(DType dt) { return dt >= DType::Float16; }
bool is_integral(DType dt) { return dt == DType::Int32 || dt == DType::Int64; }

int dtype_category(DType dt) {
  if (dt == DType::Bool) return 0;
  if (is_integral(dt)) return 1;
  return 2;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // float16 and bfloat16 have no common 16-bit type.
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  return a > b ? a : b;
}

DType result_type(DType a, bool a_weak, DType b, bool b_weak) {
  if (a_weak == b_weak) return promote_types(a, b);
  DType strong = a_weak ? b : a;
  DType weak = a_weak ? a : b;
  if (dtype_category(weak) <= dtype_category(strong)) return strong;
  return dtype_category(weak) == 2 ? kDefaultFloat : kDefaultInt;
}

DType to_floating(DType dt) { return is_floating(dt) ? dt : kDefaultFloat; }

}  // namespace pcp
