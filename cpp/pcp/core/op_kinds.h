// The kinds of the elementwise and reduction primitives, shared by ops/ and every backend (the
// CPU kernel table, the GPU kernels), so that backends need not include the op layer.
#pragma once

namespace pcp {

enum class UnaryOp {
  Neg, Abs, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Relu, Gelu, GeluTanh, Silu, Square, Sign, Erf,
  LogicalNot, BitwiseNot,
  // The Array API standard's: rounding (the identity on integers), inverse and hyperbolic
  // trigonometry, and the logarithms and exponentials accurate near their zeros.
  Floor, Ceil, Trunc, Round, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Expm1, Log1p, Log2, Log10
};
constexpr UnaryOp kLastUnaryOp = UnaryOp::Log10;
// GeluGrad / GeluTanhGrad(x, g) = g * gelu'(x): the fused first-order gradients of gelu.
// The numbering is shared with the GPU kernels (metal/binary_ops.glsl, compare.comp): append only.
enum class BinaryOp {
  Add, Sub, Mul, Div, Pow, Maximum, Minimum, GeluGrad, GeluTanhGrad, Eq, Ne, Lt, Le, Gt, Ge,
  BitwiseAnd, BitwiseOr, BitwiseXor,
  // The Array API standard's: floating (atan2 .. nextafter), floored division and its remainder
  // (Python's: the remainder takes the divisor's sign), and shifts of integers.
  Atan2, Hypot, Copysign, Nextafter, Remainder, FloorDivide, LeftShift, RightShift
};
constexpr BinaryOp kLastBinaryOp = BinaryOp::RightShift;
enum class ReduceOp { Sum, Max, Min, ArgMax, ArgMin };

}  // namespace pcp
