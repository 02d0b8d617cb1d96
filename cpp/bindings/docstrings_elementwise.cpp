// The docstrings of PCP's elementwise functions (docstrings.cpp holds the rest, and says what
// every docstring gives): most share their family's text (one argument, two, a comparison, a
// rounding) around what the function computes and a doctest.
#include <string>
#include <unordered_map>

#include "named.h"

namespace pcp::bindings {

namespace {

// The text shared by the elementwise functions of one argument.
std::string unary(const char* what, const char* example, const char* result) {
  return std::string(what) +
         "\n\nArgs:\n    x: a tensor (or anything pcp.asarray takes) of any shape; integer and bool inputs"
         " are promoted to float32 where the result is fractional.\n\nReturns:\n    A new tensor of x's"
         " shape. On a GPU, float16 and bfloat16 are computed in float32 and rounded once.\n\nRaises:\n"
         "    TypeError: x is not a tensor, an array, a list or a number.\n\nExample:\n    >>> " +
         example + "\n    " + result + "\n";
}

// The text shared by the elementwise functions of two arguments.
std::string binary(const char* what, const char* example, const char* result) {
  return std::string(what) +
         "\n\nArgs:\n    a, b: tensors, arrays, lists or Python numbers; their shapes broadcast as NumPy's do,"
         " and their dtypes promote as in PyTorch and JAX (a Python number is weak: it takes the tensor's"
         " dtype).\n\nReturns:\n    A new tensor of the broadcast shape and the promoted dtype.\n\nRaises:\n"
         "    ValueError: the shapes do not broadcast (the message names both shapes).\n    TypeError: an"
         " argument is not a tensor, an array, a list or a number.\n\nExample:\n    >>> " +
         example + "\n    " + result + "\n";
}

// The text shared by the elementwise comparisons and logical / bitwise functions of two arguments.
std::string compare(const char* what, const char* returns, const char* example, const char* result) {
  return std::string(what) +
         "\n\nArgs:\n    a, b: tensors, arrays, lists or Python numbers whose shapes broadcast as NumPy's do."
         "\n\nReturns:\n    " + returns + "\n\nRaises:\n    ValueError: the shapes do not broadcast.\n"
         "    TypeError: an argument is not a tensor, an array, a list or a number, or (bitwise) not\n"
         "        an integer or bool tensor.\n\nExample:\n    >>> " + example + "\n    " + result + "\n";
}

// Rounding: integers come back as they are, bool is refused.
std::string rounding(const char* what, const char* example, const char* result) {
  return std::string(what) +
         "\n\nArgs:\n    x: a tensor (or anything pcp.asarray takes) of any shape and numeric dtype.\n\nReturns:\n"
         "    A new tensor of x's shape and dtype (an integer tensor's values are already whole).\n\nRaises:\n"
         "    TypeError: x is a bool tensor, or not a tensor, an array, a list or a number.\n\nExample:\n    >>> " +
         example + "\n    " + result + "\n";
}

}  // namespace

void add_elementwise_docs(std::unordered_map<std::string, std::string>& docs) {
  docs.insert({
      {"exp", unary("e to the power x, elementwise.", "pcp.exp(pcp.tensor([0.0, 1.0])).tolist()",
                    "[1.0, 2.7182817459106445]")},
      {"log", unary("The natural logarithm of x, elementwise (-inf at 0, nan below).",
                    "pcp.log(pcp.tensor([1.0, 4.0])).tolist()", "[0.0, 1.3862943649291992]")},
      {"sqrt", unary("The square root of x, elementwise (nan below 0).", "pcp.sqrt(pcp.tensor([4.0, 9.0])).tolist()",
                     "[2.0, 3.0]")},
      {"tanh", unary("The hyperbolic tangent of x, elementwise.", "pcp.tanh(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"abs", unary("The absolute value of x, elementwise.", "pcp.abs(pcp.tensor([-2.0, 3.0])).tolist()",
                    "[2.0, 3.0]")},
      {"relu", unary("max(x, 0), elementwise.", "pcp.relu(pcp.tensor([-1.0, 2.0])).tolist()", "[0.0, 2.0]")},
      {"sigmoid", unary("1 / (1 + exp(-x)), elementwise.", "pcp.sigmoid(pcp.tensor([0.0])).tolist()", "[0.5]")},
      {"cos", unary("The cosine of x (radians), elementwise.", "pcp.cos(pcp.tensor([0.0])).tolist()", "[1.0]")},
      {"sin", unary("The sine of x (radians), elementwise.", "pcp.sin(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"erf", unary("The error function of x, elementwise.", "pcp.erf(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"floor", rounding("The largest integer not above x, elementwise.", "pcp.floor(pcp.tensor([-1.5, 2.5])).tolist()", "[-2.0, 2.0]")},
      {"ceil", rounding("The smallest integer not below x, elementwise.", "pcp.ceil(pcp.tensor([-1.5, 2.5])).tolist()", "[-1.0, 3.0]")},
      {"trunc", rounding("x rounded toward zero, elementwise.", "pcp.trunc(pcp.tensor([-1.5, 2.5])).tolist()", "[-1.0, 2.0]")},
      {"round", rounding("x rounded to the nearest integer, halves to even, elementwise.", "pcp.round(pcp.tensor([0.5, 1.5, -2.5])).tolist()", "[0.0, 2.0, -2.0]")},
      {"tan", unary("The tangent of x (radians), elementwise.", "pcp.tan(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"asin", unary("The inverse sine of x, in [-pi/2, pi/2], elementwise (nan outside [-1, 1]).", "pcp.asin(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"acos", unary("The inverse cosine of x, in [0, pi], elementwise (nan outside [-1, 1]).", "pcp.acos(pcp.tensor([1.0])).tolist()", "[0.0]")},
      {"atan", unary("The inverse tangent of x, in [-pi/2, pi/2], elementwise.", "pcp.atan(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"sinh", unary("The hyperbolic sine of x, elementwise.", "pcp.sinh(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"cosh", unary("The hyperbolic cosine of x, elementwise.", "pcp.cosh(pcp.tensor([0.0])).tolist()", "[1.0]")},
      {"asinh", unary("The inverse hyperbolic sine of x, elementwise.", "pcp.asinh(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"acosh", unary("The inverse hyperbolic cosine of x, elementwise (nan below 1).", "pcp.acosh(pcp.tensor([1.0])).tolist()", "[0.0]")},
      {"atanh", unary("The inverse hyperbolic tangent of x, elementwise (+-inf at +-1, nan beyond).", "pcp.atanh(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"expm1", unary("exp(x) - 1, elementwise, accurate for x near 0.", "pcp.expm1(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"log1p", unary("log(1 + x), elementwise, accurate for x near 0.", "pcp.log1p(pcp.tensor([0.0])).tolist()", "[0.0]")},
      {"log2", unary("The base-2 logarithm of x, elementwise.", "pcp.log2(pcp.tensor([8.0])).tolist()", "[3.0]")},
      {"log10", unary("The base-10 logarithm of x, elementwise.", "pcp.log10(pcp.tensor([100.0])).tolist()", "[2.0]")},
      {"neg", unary("-x, elementwise (the unary - operator).", "pcp.neg(pcp.tensor([1.0, -2.0])).tolist()",
                    "[-1.0, 2.0]")},
      {"rsqrt", unary("1 / sqrt(x), elementwise (inf at 0).", "pcp.rsqrt(pcp.tensor([4.0])).tolist()", "[0.5]")},
      {"sign", unary("-1, 0 or 1 by the sign of x, elementwise (nan stays nan).",
                     "pcp.sign(pcp.tensor([-3.0, 0.0, 2.0])).tolist()", "[-1.0, 0.0, 1.0]")},
      {"silu", unary("x * sigmoid(x), elementwise (also called swish).", "pcp.silu(pcp.tensor([0.0])).tolist()",
                     "[0.0]")},
      {"square", unary("x * x, elementwise.", "pcp.square(pcp.tensor([3.0])).tolist()", "[9.0]")},
      {"pow", binary("a to the power b, elementwise with broadcasting (the ** operator).",
                     "pcp.pow(pcp.tensor([2.0, 3.0]), 2).tolist()", "[4.0, 9.0]")},
      {"maximum", binary("The larger of a and b, elementwise (nan if either is nan).",
                         "pcp.maximum(pcp.tensor([1.0, 5.0]), 3.0).tolist()", "[3.0, 5.0]")},
      {"minimum", binary("The smaller of a and b, elementwise (nan if either is nan).",
                         "pcp.minimum(pcp.tensor([1.0, 5.0]), 3.0).tolist()", "[1.0, 3.0]")},
      {"eq", compare("a == b, elementwise.", "A bool tensor of the broadcast shape.",
                     "pcp.eq(pcp.tensor([1, 2]), pcp.tensor([1, 3])).tolist()", "[True, False]")},
      {"ne", compare("a != b, elementwise.", "A bool tensor of the broadcast shape.",
                     "pcp.ne(pcp.tensor([1, 2]), pcp.tensor([1, 3])).tolist()", "[False, True]")},
      {"lt", compare("a < b, elementwise.", "A bool tensor of the broadcast shape.",
                     "pcp.lt(pcp.tensor([1, 2]), 2).tolist()", "[True, False]")},
      {"le", compare("a <= b, elementwise.", "A bool tensor of the broadcast shape.",
                     "pcp.le(pcp.tensor([1, 2]), 2).tolist()", "[True, True]")},
      {"gt", compare("a > b, elementwise.", "A bool tensor of the broadcast shape.",
                     "pcp.gt(pcp.tensor([1, 2]), 2).tolist()", "[False, False]")},
      {"ge", compare("a >= b, elementwise.", "A bool tensor of the broadcast shape.",
                     "pcp.ge(pcp.tensor([1, 2]), 2).tolist()", "[False, True]")},
      {"logical_and", compare("The truth of a and b, elementwise (non-zero is true).", "A bool tensor.",
                              "pcp.logical_and(pcp.tensor([True, False]), True).tolist()", "[True, False]")},
      {"logical_or", compare("The truth of a or b, elementwise (non-zero is true).", "A bool tensor.",
                             "pcp.logical_or(pcp.tensor([True, False]), False).tolist()", "[True, False]")},
      {"logical_xor", compare("The truth of a xor b, elementwise (non-zero is true).", "A bool tensor.",
                              "pcp.logical_xor(pcp.tensor([True, False]), True).tolist()", "[False, True]")},
      {"bitwise_and", compare("a & b on integers and bools, elementwise.", "A tensor in the promoted dtype.",
                              "pcp.bitwise_and(pcp.tensor([12]), 10).tolist()", "[8]")},
      {"bitwise_or", compare("a | b on integers and bools, elementwise.", "A tensor in the promoted dtype.",
                             "pcp.bitwise_or(pcp.tensor([12]), 10).tolist()", "[14]")},
      {"bitwise_xor", compare("a ^ b on integers and bools, elementwise.", "A tensor in the promoted dtype.",
                              "pcp.bitwise_xor(pcp.tensor([12]), 10).tolist()", "[6]")},
      {"bitwise_left_shift", compare("a << b on integers, elementwise (a count below 0 or of the type's width or\n"
                                     "more gives 0).", "A tensor in the promoted integer dtype.",
                                     "pcp.bitwise_left_shift(pcp.tensor([1, 3]), 2).tolist()", "[4, 12]")},
      {"bitwise_right_shift", compare("a >> b on integers, elementwise, keeping the sign (a count below 0 or of the\n"
                                      "type's width or more gives 0, or -1 for negative a).",
                                      "A tensor in the promoted integer dtype.",
                                      "pcp.bitwise_right_shift(pcp.tensor([12, -12]), 2).tolist()", "[3, -3]")},
      {"atan2", binary("The angle of the point (b, a) from the x axis, in [-pi, pi], elementwise (integers are\n"
                       "taken as floats; zeros and infinities as C's atan2).",
                       "round(pcp.atan2(pcp.tensor([1.0]), pcp.tensor([-1.0])).item(), 4)", "2.3562")},
      {"hypot", binary("sqrt(a**2 + b**2), elementwise, without overflow in the squares.",
                       "pcp.hypot(pcp.tensor([3.0]), 4.0).tolist()", "[5.0]")},
      {"copysign", binary("The magnitude of a with the sign bit of b, elementwise (integers are taken as floats).",
                          "pcp.copysign(pcp.tensor([2.0, 3.0]), pcp.tensor([-0.0, 1.0])).tolist()", "[-2.0, 3.0]")},
      {"nextafter", binary("The next representable value after a toward b, in a's floating dtype, elementwise.",
                           "pcp.nextafter(pcp.tensor([1.0]), 2.0).item() - 1.0 == 2.0 ** -23", "True")},
      {"remainder", binary("a - b * floor_divide(a, b), elementwise: Python's %, whose result takes b's sign\n"
                           "(integer division by zero gives 0, as NumPy).",
                           "pcp.remainder(pcp.tensor([7, -7]), 3).tolist()", "[1, 2]")},
      {"floor_divide", binary("a / b rounded toward -inf, elementwise: Python's // (integer division by zero gives\n"
                              "0, as NumPy; on floats it gives a / b).",
                              "pcp.floor_divide(pcp.tensor([7.0, -7.0]), 2).tolist()", "[3.0, -4.0]")},
      {"logical_not", unary("The truth of not x, elementwise (non-zero is true); a bool tensor.",
                            "pcp.logical_not(pcp.tensor([0, 2])).tolist()", "[True, False]")},
      {"add", binary("a + b, elementwise with broadcasting (the + operator).",
                     "pcp.add(pcp.tensor([[1.0], [2.0]]), pcp.tensor([10.0, 20.0])).tolist()",
                     "[[11.0, 21.0], [12.0, 22.0]]")},
      {"sub", binary("a - b, elementwise with broadcasting (the - operator).",
                     "pcp.sub(pcp.tensor([5.0, 7.0]), 2).tolist()", "[3.0, 5.0]")},
      {"mul", binary("a * b, elementwise with broadcasting (the * operator).",
                     "pcp.mul(pcp.tensor([1.5, 2.0]), pcp.tensor([2.0, 3.0])).tolist()", "[3.0, 6.0]")},
      {"div", binary("a / b, elementwise with broadcasting (true division: integers give float32).",
                     "pcp.div(pcp.tensor([3, 4]), 2).tolist()", "[1.5, 2.0]")},
  });
}

}  // namespace pcp::bindings
