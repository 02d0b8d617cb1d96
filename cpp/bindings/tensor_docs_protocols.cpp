// The docstrings of the Tensor class's Python protocols (len, bool, float, hash, the array and
// DLPack protocols) and operators (+, ==, &, ~, @ and their reflected forms), by Python name;
// tensor_docs.cpp holds the other members and says what every docstring gives.
#include <string>
#include <unordered_map>

#include "named.h"

namespace pcp::bindings {

namespace {

// An arithmetic operator: `expr` is the operation ("x + other"), `fn` the function it calls.
std::string arithmetic(const char* expr, const char* fn, const char* example, const char* result) {
  return std::string(expr) + ", elementwise with broadcasting: pcp." + fn +
         ".\n\nArgs:\n    other: a tensor, a NumPy array, a list or a Python number (weak: it takes this"
         " tensor's\n        dtype); arrays and lists move to this tensor's device.\n\nReturns:\n    A new tensor of"
         " the broadcast shape in the promoted dtype.\n\nRaises:\n    ValueError: the shapes do not broadcast.\n"
         "    TypeError: other is not a tensor, an array, a list or a number.\n\nExample:\n    >>> " +
         example + "\n    " + result + "\n";
}

// A comparison or bitwise operator, whose result is described by `returns`.
std::string elementwise(const char* expr, const char* fn, const char* returns, const char* raises,
                        const char* example, const char* result) {
  return std::string(expr) + ", elementwise with broadcasting: pcp." + fn +
         ".\n\nArgs:\n    other: a tensor, a NumPy array, a list or a Python number.\n\nReturns:\n    " + returns +
         "\n\nRaises:\n    ValueError: the shapes do not broadcast.\n    TypeError: " + raises +
         "\n\nExample:\n    >>> " + example + "\n    " + result + "\n";
}

// A unary operator.
std::string unary_operator(const char* expr, const char* fn, const char* returns, const char* raises,
                           const char* example, const char* result) {
  return std::string(expr) + ": pcp." + fn + ".\n\nReturns:\n    " + returns + "\n\nRaises:\n    " + raises +
         "\n\nExample:\n    >>> " + example + "\n    " + result + "\n";
}

}  // namespace

void add_protocol_docs(std::unordered_map<std::string, std::string>& docs) {
  docs.insert({
      // Python protocols.
      {"__repr__", doc_text(R"(
repr(x): the elements in NumPy's style (nested brackets, PyTorch's tensor(...) around them),
then the dtype, the device for a GPU tensor, and requires_grad when it is True. On a GPU it
waits for the values. It raises nothing.

Returns:
    A str.

Example:
    >>> pcp.tensor([1.0, 2.5])
    tensor([1., 2.5], dtype=float32)
)")},
      {"__len__", doc_text(R"(
len(x): the length of the first axis.

Returns:
    An int.

Raises:
    TypeError: a 0-d tensor (it has no first axis).

Example:
    >>> len(pcp.zeros((4, 2)))
    4
)")},
      {"__bool__", doc_text(R"(
bool(x) (and ``if x:``): the truth of a one-element tensor, non-zero being true.

Returns:
    A bool.

Raises:
    ValueError: more than one element, where the truth is ambiguous: use .any() or .all().

Example:
    >>> bool(pcp.tensor([0.5]))
    True
)")},
      {"__float__", doc_text(R"(
float(x): the value of a one-element tensor as a Python float.

Returns:
    A float.

Raises:
    ValueError: the tensor has more or fewer than one element.

Example:
    >>> float(pcp.tensor(3))
    3.0
)")},
      {"__complex__", doc_text(R"(
complex(x): the value of a one-element tensor as a Python complex (PCP's dtypes are real: its
imaginary part is 0).

Returns:
    A complex.

Raises:
    ValueError: the tensor has more or fewer than one element.

Example:
    >>> complex(pcp.tensor(1.5))
    (1.5+0j)
)")},
      {"__int__", doc_text(R"(
int(x): the value of a one-element tensor as a Python int; floats truncate toward zero, exactly
(as Python's int(float)).

Returns:
    An int.

Raises:
    ValueError: more or fewer than one element, or a NaN.
    OverflowError: an infinity.

Example:
    >>> int(pcp.tensor(-2.7))
    -2
)")},
      {"__index__", doc_text(R"(
operator.index(x): a one-element integer tensor used where Python wants an int (a list
index, range(), a slice bound).

Returns:
    An int.

Raises:
    TypeError: the tensor is not an integer or bool tensor of one element.

Example:
    >>> ["a", "b", "c"][pcp.tensor(1)]
    'b'
)")},
      {"__hash__", doc_text(R"(
hash(x): by identity of the tensor (two handles to one tensor hash alike; equal values do not),
so tensors can be set members and dict keys, as in PyTorch; == compares elementwise. It raises
nothing.

Returns:
    An int.

Example:
    >>> x = pcp.zeros(2)
    >>> {x: "weights"}[x]
    'weights'
)")},
      {"__array__", doc_text(R"(
NumPy's array protocol: np.asarray(x) and np.array(x) read the tensor through it (as numpy(),
sharing memory on the CPU; bfloat16 is widened to float32).

Args:
    dtype: convert to this NumPy dtype (default: the tensor's).
    copy: True for a copy (default None: share where possible).

Returns:
    A numpy.ndarray.

Raises:
    TypeError: a dtype NumPy does not know.

Example:
    >>> import numpy as np
    >>> np.asarray(pcp.arange(3), dtype=np.float64).tolist()
    [0.0, 1.0, 2.0]
)")},
      {"__dlpack__", doc_text(R"(
The DLPack protocol (what np.from_dlpack, torch.from_dlpack and jax.dlpack call): a capsule
that shares this CPU tensor's memory with the consumer; views with negative strides (and
copy=True) are exported as a copy.

Args:
    stream: ignored (CPU memory needs no stream).
    max_version: ignored (an unversioned capsule is returned, which every consumer accepts).
    dl_device: ignored.
    copy: True to export a copy (default None: share).

Returns:
    A 'dltensor' PyCapsule.

Raises:
    BufferError: the tensor is on a GPU (move it with .to('cpu') first).

Example:
    >>> import numpy as np
    >>> np.from_dlpack(pcp.arange(3)).tolist()
    [0, 1, 2]
)")},
      {"__dlpack_device__", doc_text(R"(
The DLPack device of this tensor: (1, 0) on the CPU; (7, index) on a Vulkan GPU and
(8, index) on a Metal one, which consumers that cannot read them refuse. It raises nothing.

Returns:
    A tuple (device type, device index).

Example:
    >>> pcp.zeros(2).__dlpack_device__()
    (1, 0)
)")},

      // Operators.
      {"__pos__", unary_operator("+x", "positive (a copy)", "A new tensor equal to x.", "Nothing.",
                                 "(+pcp.tensor([1.0, -2.0])).tolist()", "[1.0, -2.0]")},
      {"__add__", arithmetic("x + other", "add", "(pcp.tensor([1.0, 2.0]) + 1).tolist()", "[2.0, 3.0]")},
      {"__radd__", arithmetic("other + x", "add", "(1 + pcp.tensor([1.0, 2.0])).tolist()", "[2.0, 3.0]")},
      {"__sub__", arithmetic("x - other", "sub", "(pcp.tensor([1.0, 2.0]) - 1).tolist()", "[0.0, 1.0]")},
      {"__rsub__", arithmetic("other - x", "sub", "(1 - pcp.tensor([1.0, 2.0])).tolist()", "[0.0, -1.0]")},
      {"__mul__", arithmetic("x * other", "mul", "(pcp.tensor([1.0, 2.0]) * 3).tolist()", "[3.0, 6.0]")},
      {"__rmul__", arithmetic("other * x", "mul", "(3 * pcp.tensor([1.0, 2.0])).tolist()", "[3.0, 6.0]")},
      {"__truediv__", arithmetic("x / other (true division: integers give float32)", "div",
                                 "(pcp.tensor([1, 3]) / 2).tolist()", "[0.5, 1.5]")},
      {"__rtruediv__", arithmetic("other / x (true division: integers give float32)", "div",
                                  "(3 / pcp.tensor([1.0, 2.0])).tolist()", "[3.0, 1.5]")},
      {"__pow__", arithmetic("x ** other", "pow", "(pcp.tensor([2.0, 3.0]) ** 2).tolist()", "[4.0, 9.0]")},
      {"__rpow__", arithmetic("other ** x", "pow", "(2 ** pcp.tensor([1.0, 3.0])).tolist()", "[2.0, 8.0]")},
      {"__matmul__",
       doc_text(R"(
x @ other: the matrix product, pcp.matmul (NumPy's rules: 1-D operands become a row or a
column, leading batch axes broadcast).

Args:
    other: (..., K, N) or (K,), a tensor, a NumPy array or a list.

Returns:
    (..., M, N) for x of shape (..., M, K), in the promoted dtype.

Raises:
    ValueError: K differs, a 0-d operand, or batch axes that do not broadcast.

Example:
    >>> (pcp.ones((2, 3)) @ pcp.ones((3, 4))).shape
    (2, 4)
)")},
      {"__rmatmul__",
       doc_text(R"(
other @ x: the matrix product with this tensor on the right, pcp.matmul (for a NumPy array or a
list on the left).

Args:
    other: (..., M, K) or (K,), a NumPy array or a list.

Returns:
    (..., M, N) for x of shape (..., K, N), in the promoted dtype.

Raises:
    ValueError: K differs, a 0-d operand, or batch axes that do not broadcast.

Example:
    >>> ([[1.0, 2.0]] @ pcp.ones((2, 3))).tolist()
    [[3.0, 3.0, 3.0]]
)")},
      {"__eq__", elementwise("x == other", "eq", "A bool tensor of the broadcast shape (not one bool).",
                             "other is not a tensor, an array, a list or a number.",
                             "(pcp.tensor([1, 2]) == 2).tolist()", "[False, True]")},
      {"__ne__", elementwise("x != other", "ne", "A bool tensor of the broadcast shape.",
                             "other is not a tensor, an array, a list or a number.",
                             "(pcp.tensor([1, 2]) != 2).tolist()", "[True, False]")},
      {"__lt__", elementwise("x < other", "lt", "A bool tensor of the broadcast shape.",
                             "other is not a tensor, an array, a list or a number.",
                             "(pcp.tensor([1, 2]) < 2).tolist()", "[True, False]")},
      {"__le__", elementwise("x <= other", "le", "A bool tensor of the broadcast shape.",
                             "other is not a tensor, an array, a list or a number.",
                             "(pcp.tensor([1, 2]) <= 2).tolist()", "[True, True]")},
      {"__gt__", elementwise("x > other", "gt", "A bool tensor of the broadcast shape.",
                             "other is not a tensor, an array, a list or a number.",
                             "(pcp.tensor([1, 2]) > 1).tolist()", "[False, True]")},
      {"__ge__", elementwise("x >= other", "ge", "A bool tensor of the broadcast shape.",
                             "other is not a tensor, an array, a list or a number.",
                             "(pcp.tensor([1, 2]) >= 2).tolist()", "[False, True]")},
      {"__and__", elementwise("x & other on integers and bools", "bitwise_and", "A tensor in the promoted dtype.",
                              "an operand that is not an integer or bool tensor.",
                              "(pcp.tensor([True, False]) & True).tolist()", "[True, False]")},
      {"__rand__", elementwise("other & x on integers and bools", "bitwise_and", "A tensor in the promoted dtype.",
                               "an operand that is not an integer or bool tensor.",
                               "(12 & pcp.tensor([10])).tolist()", "[8]")},
      {"__or__", elementwise("x | other on integers and bools", "bitwise_or", "A tensor in the promoted dtype.",
                             "an operand that is not an integer or bool tensor.",
                             "(pcp.tensor([True, False]) | False).tolist()", "[True, False]")},
      {"__ror__", elementwise("other | x on integers and bools", "bitwise_or", "A tensor in the promoted dtype.",
                              "an operand that is not an integer or bool tensor.",
                              "(12 | pcp.tensor([10])).tolist()", "[14]")},
      {"__xor__", elementwise("x ^ other on integers and bools", "bitwise_xor", "A tensor in the promoted dtype.",
                              "an operand that is not an integer or bool tensor.",
                              "(pcp.tensor([12]) ^ 10).tolist()", "[6]")},
      {"__rxor__", elementwise("other ^ x on integers and bools", "bitwise_xor", "A tensor in the promoted dtype.",
                               "an operand that is not an integer or bool tensor.",
                               "(12 ^ pcp.tensor([10])).tolist()", "[6]")},
      {"__floordiv__", elementwise("x // other, rounded toward -inf (as Python's)", "floor_divide",
                                   "A tensor in the promoted dtype.", "an operand that is not a tensor, an array, a list or a number.",
                                   "(pcp.tensor([7, -7]) // 2).tolist()", "[3, -4]")},
      {"__rfloordiv__", elementwise("other // x, rounded toward -inf (as Python's)", "floor_divide",
                                    "A tensor in the promoted dtype.", "an operand that is not a tensor, an array, a list or a number.",
                                    "(7 // pcp.tensor([2, -2])).tolist()", "[3, -4]")},
      {"__mod__", elementwise("x % other, with other's sign (as Python's)", "remainder",
                              "A tensor in the promoted dtype.", "an operand that is not a tensor, an array, a list or a number.",
                              "(pcp.tensor([7, -7]) % 3).tolist()", "[1, 2]")},
      {"__rmod__", elementwise("other % x, with x's sign (as Python's)", "remainder",
                               "A tensor in the promoted dtype.", "an operand that is not a tensor, an array, a list or a number.",
                               "(7 % pcp.tensor([3, -3])).tolist()", "[1, -2]")},
      {"__lshift__", elementwise("x << other on integers", "bitwise_left_shift", "A tensor in the promoted dtype.",
                                 "an operand that is not an integer tensor.", "(pcp.tensor([1, 3]) << 2).tolist()",
                                 "[4, 12]")},
      {"__rlshift__", elementwise("other << x on integers", "bitwise_left_shift", "A tensor in the promoted dtype.",
                                  "an operand that is not an integer tensor.", "(1 << pcp.tensor([2, 3])).tolist()",
                                  "[4, 8]")},
      {"__rshift__", elementwise("x >> other on integers (arithmetic: the sign is kept)", "bitwise_right_shift",
                                 "A tensor in the promoted dtype.", "an operand that is not an integer tensor.",
                                 "(pcp.tensor([12, -12]) >> 2).tolist()", "[3, -3]")},
      {"__rrshift__", elementwise("other >> x on integers (arithmetic: the sign is kept)", "bitwise_right_shift",
                                  "A tensor in the promoted dtype.", "an operand that is not an integer tensor.",
                                  "(12 >> pcp.tensor([1, 2])).tolist()", "[6, 3]")},
      {"__neg__", unary_operator("-x", "neg", "A tensor of x's shape and dtype.",
                                 "TypeError: a bool tensor (use ~x).", "(-pcp.tensor([1.0, -2.0])).tolist()",
                                 "[-1.0, 2.0]")},
      {"__abs__", unary_operator("abs(x)", "abs", "A tensor of x's shape and dtype.",
                                 "TypeError: a bool tensor.", "abs(pcp.tensor([-1.5, 2.0])).tolist()", "[1.5, 2.0]")},
      {"__invert__", unary_operator("~x: logical not of a bool tensor, bitwise not of an integer one", "bitwise_not",
                                    "A tensor of x's shape and dtype.", "TypeError: a floating tensor.",
                                    "(~pcp.tensor([True, False])).tolist()", "[False, True]")},
  });
}

}  // namespace pcp::bindings
