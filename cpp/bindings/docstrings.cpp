// The docstrings of PCP's module functions (and of the Tensor methods bound with them), by name:
// what `help(pcp.softmax)` prints and the API reference (docs/) renders. Each says what the
// function computes, its arguments' shapes and dtypes, what it returns, what it raises, and gives
// an example that tests/test_docs.py runs as a doctest. Functions missing here keep pybind11's
// signature line alone.
#include <cstring>
#include <string>
#include <unordered_map>

#include "named.h"

namespace pcp::bindings {

namespace {

// The text shared by the reductions over axes.
std::string reduction(const char* what, const char* returns, const char* example, const char* result) {
  return std::string(what) +
         "\n\nArgs:\n    x: a tensor of any shape.\n    axis: an int, a tuple of ints, or None (the default) for"
         " every axis;\n        negative counts from the end.\n    keepdims: keep the reduced axes with length 1"
         " (default False).\n\nReturns:\n    " + returns + "\n\nRaises:\n    IndexError: an axis out of range"
         " for x.\n    ValueError: an axis named twice.\n\nExample:\n    >>> " + example + "\n    " + result + "\n";
}

const std::unordered_map<std::string, std::string>& table() {
  static const std::unordered_map<std::string, std::string> docs = [] {
    std::unordered_map<std::string, std::string> d = {
      {"argsort",
       "The indices that sort x along `axis`, stably: equal values keep their order (descending too);\n"
       "NaNs order above every number. A GPU tensor is sorted on the host (no GPU kernel yet).\n\nArgs:\n    x: a tensor.\n"
       "    axis: the axis to sort along (default -1).\n    descending: largest first (default False).\n"
       "    stable: accepted for the Array API standard; the sort is always stable.\n\n"
       "Returns:\n    An int64 tensor of x's shape.\n\nRaises:\n    IndexError: axis out of range for x.\n"
       "\n"
       "Example:\n    >>> pcp.argsort(pcp.tensor([3.0, 1.0, 2.0])).tolist()\n    [1, 2, 0]\n"},
      {"sort",
       "x sorted along `axis` (x taken at argsort's indices: differentiable), NaNs last ascending.\n\n"
       "Args:\n    x: a tensor.\n    axis: the axis to sort along (default -1).\n"
       "    descending: largest first (default False).\n    stable: accepted; the sort is always stable.\n\n"
       "Returns:\n    A tensor of x's shape and dtype.\n\nRaises:\n    IndexError: axis out of range for x.\n"
       "\n"
       "Example:\n    >>> pcp.sort(pcp.tensor([3, 1, 2]), descending=True).tolist()\n    [3, 2, 1]\n"},
      {"take_along_axis",
       "x's elements at `indices` along `axis`, the other axes broadcast between them (NumPy's\n"
       "take_along_axis; negative indices count from the end). Differentiable in x.\n\n"
       "Args:\n    x: a tensor.\n    indices: an integer tensor with as many dimensions as x.\n"
       "    axis: the axis the indices pick along.\n\n"
       "Returns:\n    A tensor of x's dtype and the broadcast shape.\n\n"
       "Raises:\n    ValueError: the dimensions differ, or the other axes do not broadcast.\n"
       "    IndexError: an index out of range.\n\n"
       "Example:\n    >>> pcp.take_along_axis(pcp.tensor([[5, 6], [7, 8]]), pcp.tensor([[1], [0]]), 1).tolist()\n"
       "    [[6], [7]]\n"},
      {"cumsum",
       "Running sums of x along `axis` (of the flattened x when axis is None). Integers and bools\n"
       "count in int64; 16-bit floats in float32, rounded back. Differentiable. A GPU tensor is\n"
       "summed on the host (no GPU kernel yet).\n\n"
       "Args:\n    x: a tensor.\n    axis: an int, or None (default) for the flattened x.\n\n"
       "Returns:\n    A tensor of x's shape (flattened when axis is None).\n\n"
       "Raises:\n    IndexError: axis out of range for x.\n\n"
       "Example:\n    >>> pcp.cumsum(pcp.tensor([1, 2, 3])).tolist()\n    [1, 3, 6]\n"},
      {"cumprod",
       "Running products of x along `axis` (of the flattened x when axis is None). Integers and bools\n"
       "count in int64. Differentiable, exactly where x has zeros. A GPU tensor is computed on\n"
       "the host (no GPU kernel yet).\n\n"
       "Args:\n    x: a tensor.\n    axis: an int, or None (default) for the flattened x.\n\n"
       "Returns:\n    A tensor of x's shape (flattened when axis is None).\n\n"
       "Raises:\n    IndexError: axis out of range for x.\n\n"
       "Example:\n    >>> pcp.cumprod(pcp.tensor([1.0, 2.0, 3.0])).tolist()\n    [1.0, 2.0, 6.0]\n"},
      {"prod", reduction("The product of x's elements over `axis` (1 for an empty one); integers and bools count\n"
                         "in int64. Differentiable, exactly where x has zeros. A GPU tensor is computed on the\n"
                         "host (no GPU kernel yet).",
                         "A tensor without the reduced axes, of x's floating dtype or int64.",
                         "pcp.prod(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1).tolist()", "[2.0, 12.0]")},
      {"searchsorted",
       "Where each of `values` would be inserted into the ascending 1-D `sorted` to keep it sorted:\n"
       "before the equal elements (side='left') or after them ('right'). NaNs order last. GPU tensors\n"
       "are searched on the host (no GPU kernel yet).\n\n"
       "Args:\n    sorted: a 1-D tensor in ascending order (not checked).\n"
       "    values: a tensor of any shape.\n    side: 'left' (default) or 'right'.\n\n"
       "Returns:\n    An int64 tensor of values' shape.\n\n"
       "Raises:\n    ValueError: sorted is not 1-D, or side is neither 'left' nor 'right'.\n\n"
       "Example:\n    >>> pcp.searchsorted(pcp.tensor([1, 3, 5]), pcp.tensor([3, 6])).tolist()\n    [1, 3]\n"},
      {"unique",
       "The distinct values of x, ascending, as NumPy's unique (NaNs are each distinct, as the\n"
       "Array API standard says; -0.0 equals 0.0). For a GPU tensor the host finds them (the count\n"
       "depends on the data) and the indices come back as int32.\n\n"
       "Args:\n    x: a tensor (flattened).\n    return_index: also each value's first flat index in x.\n"
       "    return_inverse: also each element's index into the values (x's shape).\n"
       "    return_counts: also how often each value occurs.\n\n"
       "Returns:\n    The values (a 1-D tensor of x's dtype), or a tuple of them and the int64 tensors\n"
       "    asked for, in that order.\n\nRaises:\n    ValueError: a GPU tensor of 2**31 elements or more (its indices are int32).\n\n"
       "Example:\n    >>> pcp.unique(pcp.tensor([3, 1, 3, 2])).tolist()\n    [1, 2, 3]\n"},
      {"max", reduction("The largest of x's elements over `axis` (a NaN wins).",
                        "A tensor of x's dtype without the reduced axes.",
                        "pcp.max(pcp.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=1).tolist()", "[5.0, 3.0]")},
      {"min", reduction("The smallest of x's elements over `axis` (a NaN wins).",
                        "A tensor of x's dtype without the reduced axes.",
                        "pcp.min(pcp.tensor([[1.0, 5.0], [3.0, 2.0]]), axis=0).tolist()", "[1.0, 2.0]")},
      {"logsumexp", reduction("log(sum(exp(x))) over `axis`, computed without overflow (max + log sum exp(x - max)).",
                              "A floating tensor without the reduced axes.",
                              "round(pcp.logsumexp(pcp.tensor([0.0, 0.0])).item(), 4)", "0.6931")},
      {"any", reduction("Whether any element over `axis` is true (non-zero).", "A bool tensor without the reduced axes.",
                        "pcp.any(pcp.tensor([False, True])).item()", "True")},
      {"all", reduction("Whether every element over `axis` is true (non-zero).",
                        "A bool tensor without the reduced axes.", "pcp.all(pcp.tensor([False, True])).item()",
                        "False")},
      {"argmax",
       "The index of the largest element along `axis` (the first of equals), or in the flattened x when\n"
       "axis is None.\n\nArgs:\n    x: a tensor.\n    axis: an int, or None (default) for the flattened tensor.\n"
       "    keepdims: keep the reduced axis with length 1 (default False).\n\n"
       "Returns:\n    An int64 tensor without the reduced axis.\n\n"
       "Raises:\n    IndexError: axis out of range for x.\n    ValueError: an empty axis (no maximum).\n\n"
       "Example:\n    >>> pcp.argmax(pcp.tensor([1.0, 3.0, 2.0])).item()\n    1\n"},
      {"argmin",
       "The index of the smallest element along `axis` (the first of equals), or in the flattened x when\n"
       "axis is None.\n\nArgs:\n    x: a tensor.\n    axis: an int, or None (default) for the flattened tensor.\n"
       "    keepdims: keep the reduced axis with length 1 (default False).\n\n"
       "Returns:\n    An int64 tensor without the reduced axis.\n\n"
       "Raises:\n    IndexError: axis out of range for x.\n    ValueError: an empty axis (no minimum).\n\n"
       "Example:\n    >>> pcp.argmin(pcp.tensor([1.0, 3.0, 0.5])).item()\n    2\n"},
      {"var",
       "The variance of x's elements over `axis`: the mean of squared deviations, divided by n - ddof.\n\n"
       "Args:\n    x: a tensor of any shape.\n    axis: an int, a tuple of ints, or None (default) for every axis.\n"
       "    ddof: delta degrees of freedom (default 0; 1 gives the unbiased estimate).\n"
       "    keepdims: keep the reduced axes with length 1 (default False).\n\n"
       "Returns:\n    A floating tensor without the reduced axes (NaN where n - ddof <= 0).\n\n"
       "Raises:\n    IndexError: an axis out of range for x.\n    ValueError: an axis named twice.\n\n"
       "Example:\n    >>> pcp.var(pcp.tensor([1.0, 2.0, 3.0, 4.0])).item()\n    1.25\n"},
      {"ones",
       "A new tensor filled with 1.\n\nArgs:\n    shape: an int or a sequence of non-negative ints.\n"
       "    dtype: the element type (default float32).\n"
       "    device: 'cpu', 'gpu', 'vulkan:N' (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A tensor of that shape, dtype and device.\n\n"
       "Raises:\n    ValueError: a negative dimension, or a size that overflows.\n\n"
       "Example:\n    >>> pcp.ones((2,), dtype=pcp.int32).tolist()\n    [1, 1]\n"},
      {"full",
       "A new tensor filled with one value.\n\nArgs:\n    shape: an int or a sequence of non-negative ints.\n"
       "    fill_value: a number (or 0-d tensor).\n"
       "    dtype: the element type (default: the value's, int64 for a Python int, float32 for a float).\n"
       "    device: where to create it (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A tensor of that shape.\n\n"
       "Raises:\n    ValueError: a negative dimension, or a size that overflows.\n\n"
       "Example:\n    >>> pcp.full((2,), 7).tolist()\n    [7, 7]\n"},
      {"zeros_like",
       "A new tensor of zeros with x's shape, and x's dtype and device unless given.\n\n"
       "Args:\n    x: a tensor.\n    dtype: the element type (default x's).\n    device: where (default x's).\n\n"
       "Returns:\n    A tensor of x's shape.\n\nRaises:\n    ValueError: an unknown device.\n\n"
       "Example:\n    >>> pcp.zeros_like(pcp.ones((2,), dtype=pcp.int32)).tolist()\n    [0, 0]\n"},
      {"ones_like",
       "A new tensor of ones with x's shape, and x's dtype and device unless given.\n\n"
       "Args:\n    x: a tensor.\n    dtype: the element type (default x's).\n    device: where (default x's).\n\n"
       "Returns:\n    A tensor of x's shape.\n\nRaises:\n    ValueError: an unknown device.\n\n"
       "Example:\n    >>> pcp.ones_like(pcp.zeros((1, 2))).tolist()\n    [[1.0, 1.0]]\n"},
      {"eye",
       "A 2-D tensor with ones on a diagonal and zeros elsewhere.\n\n"
       "Args:\n    n: rows.\n    m: columns (default n).\n    k: the diagonal: 0 the main one, positive above it, negative below.\n"
       "    dtype: the element type (default float32).\n    device: where (default: pcp.get_default_device()).\n\n"
       "Returns:\n    An (n, m) tensor.\n\nRaises:\n    ValueError: a negative n or m.\n\n"
       "Example:\n    >>> pcp.eye(2).tolist()\n    [[1.0, 0.0], [0.0, 1.0]]\n"},
      {"rand",
       "Samples from the uniform distribution on [0, 1), drawn by the seeded counter-based generator\n"
       "(pcp.random.seed): the same values for the same seed on every device.\n\n"
       "Args:\n    shape: an int or a sequence of ints.\n    dtype: a floating type (default float32).\n"
       "    device: where (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A tensor of that shape.\n\nRaises:\n    ValueError: a negative dimension.\n\n"
       "Example:\n    >>> pcp.random.seed(0)\n    >>> x = pcp.rand((1000,))\n    >>> bool(((x >= 0) & (x < 1)).all())\n"
       "    True\n"},
      {"randn",
       "Samples from the standard normal distribution, drawn by the seeded counter-based generator\n"
       "(pcp.random.seed): the same values for the same seed on every device.\n\n"
       "Args:\n    shape: an int or a sequence of ints.\n    dtype: a floating type (default float32).\n"
       "    device: where (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A tensor of that shape.\n\nRaises:\n    ValueError: a negative dimension.\n\n"
       "Example:\n    >>> pcp.random.seed(0)\n    >>> abs(pcp.randn((10000,)).mean().item()) < 0.05\n    True\n"},
      {"randint",
       "Integers drawn uniformly from [low, high) by the seeded counter-based generator\n"
       "(pcp.random.seed), the same on every device.\n\n"
       "Args:\n    low, high: the range (high > low).\n    shape: an int or a sequence of ints.\n"
       "    dtype: an integer type (default int64).\n    device: where (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A tensor of that shape.\n\nRaises:\n    ValueError: high <= low, or a negative dimension.\n\n"
       "Example:\n    >>> pcp.random.seed(0)\n    >>> bool(((pcp.randint(0, 3, (100,)) >= 0) & (pcp.randint(0, 3, (100,)) < 3)).all())\n"
       "    True\n"},
      {"astype",
       "x converted to another dtype: a copy (as NumPy's astype). Floats to integers truncate toward\n"
       "zero; float32 to float16 or bfloat16 rounds to nearest even.\n\n"
       "Args:\n    x: a tensor.\n    dtype: a pcp dtype, its name ('bfloat16'), or a NumPy dtype.\n\n"
       "Returns:\n    A tensor of x's shape in that dtype.\n\nRaises:\n    TypeError: an unknown dtype.\n\n"
       "Example:\n    >>> pcp.astype(pcp.tensor([1.7, -1.7]), pcp.int32).tolist()\n    [1, -1]\n"},
      {"clip",
       "x limited to [min, max] elementwise; either bound may be None (no limit) and broadcasts.\n\n"
       "Args:\n    x: a tensor.\n    min: the lower bound, a number or tensor, or None.\n"
       "    max: the upper bound, a number or tensor, or None.\n\n"
       "Returns:\n    A tensor of the broadcast shape.\n\nRaises:\n    ValueError: shapes that do not broadcast.\n\n"
       "Example:\n    >>> pcp.clip(pcp.tensor([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()\n    [0.0, 0.5, 1.0]\n"},
      {"gelu",
       "The Gaussian error linear unit, x * Phi(x): exact (erf) by default, or GPT-2's tanh\n"
       "approximation with approximate='tanh' (PyTorch's F.gelu).\n\n"
       "Args:\n    x: a floating tensor.\n    approximate: 'none' (default) or 'tanh'.\n\n"
       "Returns:\n    A tensor of x's shape.\n\nRaises:\n    ValueError: another approximate.\n\n"
       "Example:\n    >>> [round(v, 4) for v in pcp.gelu(pcp.tensor([0.0, 1.0])).tolist()]\n    [0.0, 0.8413]\n"},
      {"dropout",
       "Inverted dropout: each element is zeroed with probability p and the rest scaled by 1 / (1 - p),\n"
       "so the expectation is unchanged; x itself when not training. The mask comes from the seeded\n"
       "generator, the same on the CPU and the GPU.\n\n"
       "Args:\n    x: a floating tensor.\n    p: the probability of dropping (default 0.5).\n"
       "    training: apply dropout (default True); False returns x.\n\n"
       "Returns:\n    A tensor of x's shape.\n\nRaises:\n    ValueError: p outside [0, 1].\n\n"
       "Example:\n    >>> pcp.dropout(pcp.ones(4), 0.5, training=False).tolist()\n    [1.0, 1.0, 1.0, 1.0]\n"},
      {"qkv_attention",
       "Multi-head self-attention on a packed projection: qkv (B, T, 3C) holds q, k and v side by side\n"
       "(GPT-2's c_attn output); heads are read in place, no split copies, and the result is merged\n"
       "back to (B, T, C). The same attention as scaled_dot_product_attention.\n\n"
       "Args:\n    qkv: (B, T, 3C), C divisible by num_heads.\n    num_heads: H; each head is C / H wide.\n"
       "    causal: query t attends to keys 0..t only (default False).\n"
       "    scale: multiplies the scores (default 1 / sqrt(C / H)).\n"
       "    dropout_p: the probability of dropping an attention weight (default 0).\n\n"
       "Returns:\n    (B, T, C).\n\n"
       "Raises:\n    ValueError: qkv not (B, T, 3C) with C divisible by num_heads, num_heads not positive, or\n"
       "        dropout_p outside [0, 1].\n\n"
       "Example:\n    >>> pcp.qkv_attention(pcp.ones((1, 2, 12)), 2, causal=True).shape\n    (1, 2, 4)\n"},
      {"one_hot",
       "One-hot rows of integer class indices: out[..., c] = 1 where indices == c.\n\n"
       "Args:\n    indices: an integer tensor of any shape, values in [0, num_classes).\n"
       "    num_classes: C.\n    dtype: the element type (default float32).\n\n"
       "Returns:\n    indices.shape + (C,).\n\n"
       "Raises:\n    IndexError: an index outside [0, C).\n    TypeError: indices that are not integers.\n\n"
       "Example:\n    >>> pcp.one_hot(pcp.tensor([0, 2]), 3).tolist()\n    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]\n"},
      {"take",
       "Elements of x at integer indices along an axis (NumPy's take): the flattened x when axis is None.\n\n"
       "Args:\n    x: a tensor.\n    indices: an integer tensor of any shape (negative counts from the end).\n"
       "    axis: an int, or None (default).\n\n"
       "Returns:\n    x.shape[:axis] + indices.shape + x.shape[axis + 1:] (indices.shape when axis is None).\n\n"
       "Raises:\n    IndexError: an index out of bounds, or axis out of range.\n\n"
       "Example:\n    >>> pcp.take(pcp.arange(10, 15), pcp.tensor([4, 0])).tolist()\n    [14, 10]\n"},
      {"stack",
       "The tensors joined along a new axis.\n\n"
       "Args:\n    tensors: a sequence of tensors of one shape.\n    axis: where the new axis goes (default 0).\n\n"
       "Returns:\n    A tensor of one more dimension, of length len(tensors) along `axis`.\n\n"
       "Raises:\n    ValueError: no tensors, shapes that differ, or tensors on different devices.\n\n"
       "Example:\n    >>> pcp.stack([pcp.zeros(2), pcp.ones(2)], axis=1).shape\n    (2, 2)\n"},
      {"split",
       "x cut along an axis into a list of views: into n equal sections, or at the given indices (as\n"
       "NumPy's split; indices beyond the axis clamp).\n\n"
       "Args:\n    x: a tensor.\n    indices_or_sections: an int n dividing the axis, or a sequence of split points.\n"
       "    axis: the axis to cut (default 0).\n\n"
       "Returns:\n    A list of tensors.\n\n"
       "Raises:\n    ValueError: n does not divide the axis.\n    TypeError: split points that are not ints.\n\n"
       "Example:\n    >>> [a.tolist() for a in pcp.split(pcp.arange(6), [1, 4])]\n    [[0], [1, 2, 3], [4, 5]]\n"},
      {"squeeze",
       "x without axes of length 1 (all of them, or those given): a view.\n\n"
       "Args:\n    x: a tensor.\n    axis: an int, a tuple of ints, or None (default) for every length-1 axis.\n\n"
       "Returns:\n    A view of x.\n\n"
       "Raises:\n    ValueError: a named axis whose length is not 1.\n    IndexError: an axis out of range.\n\n"
       "Example:\n    >>> pcp.squeeze(pcp.zeros((1, 3, 1))).shape\n    (3,)\n"},
      {"unsqueeze",
       "x with a new axis of length 1 at `axis` (NumPy's expand_dims): a view.\n\n"
       "Args:\n    x: a tensor.\n    axis: the new axis's position in the result (negative counts from its end).\n\n"
       "Returns:\n    A view of x with one more dimension.\n\nRaises:\n    IndexError: axis out of range.\n\n"
       "Example:\n    >>> pcp.unsqueeze(pcp.zeros(3), 0).shape\n    (1, 3)\n"},
      {"swapaxes",
       "x with two axes exchanged: a view.\n\n"
       "Args:\n    x: a tensor.\n    axis1, axis2: the axes to exchange.\n\n"
       "Returns:\n    A view of x.\n\nRaises:\n    IndexError: an axis out of range.\n\n"
       "Example:\n    >>> pcp.swapaxes(pcp.zeros((2, 3, 4)), 0, 2).shape\n    (4, 3, 2)\n"},
      {"flatten",
       "x with the axes start_axis..end_axis merged into one (a view where the strides allow).\n\n"
       "Args:\n    x: a tensor.\n    start_axis: the first axis to merge (default 0).\n"
       "    end_axis: the last axis to merge (default -1).\n\n"
       "Returns:\n    A tensor of the merged shape.\n\nRaises:\n    IndexError: an axis out of range.\n\n"
       "Example:\n    >>> pcp.flatten(pcp.zeros((2, 3, 4)), 1).shape\n    (2, 12)\n"},
      {"broadcast_to",
       "x broadcast to a shape, as NumPy's broadcast_to: a read-only view repeating x's elements.\n\n"
       "Args:\n    x: a tensor.\n    shape: the target shape; x's axes align with its last ones.\n\n"
       "Returns:\n    A view of that shape.\n\nRaises:\n    ValueError: x's shape does not broadcast to it.\n\n"
       "Example:\n    >>> pcp.broadcast_to(pcp.tensor([1, 2]), (2, 2)).tolist()\n    [[1, 2], [1, 2]]\n"},
      {"tril",
       "x with the elements above the k-th diagonal zeroed (of its last two axes).\n\n"
       "Args:\n    x: a tensor of at least 2 dimensions.\n    k: the diagonal (default 0; positive above the main one).\n\n"
       "Returns:\n    A tensor of x's shape.\n\nRaises:\n    ValueError: x has fewer than 2 dimensions.\n\n"
       "Example:\n    >>> pcp.tril(pcp.ones((2, 2))).tolist()\n    [[1.0, 0.0], [1.0, 1.0]]\n"},
      {"triu",
       "x with the elements below the k-th diagonal zeroed (of its last two axes).\n\n"
       "Args:\n    x: a tensor of at least 2 dimensions.\n    k: the diagonal (default 0; positive above the main one).\n\n"
       "Returns:\n    A tensor of x's shape.\n\nRaises:\n    ValueError: x has fewer than 2 dimensions.\n\n"
       "Example:\n    >>> pcp.triu(pcp.ones((2, 2))).tolist()\n    [[1.0, 1.0], [0.0, 1.0]]\n"},
      {"to_device",
       "x on a device: a copy there, or x itself when it is already there.\n\n"
       "Args:\n    x: a tensor.\n    device: 'cpu', 'gpu' (the first GPU), 'gpu:N' or 'vulkan:N'.\n\n"
       "Returns:\n    A tensor of x's shape and dtype on that device.\n\n"
       "Raises:\n    ValueError: an unknown device, or a GPU this machine does not have.\n\n"
       "Example:\n    >>> pcp.to_device(pcp.ones(2), 'cpu').tolist()\n    [1.0, 1.0]\n"},
      {"asarray",
       "A tensor from data: a Tensor as it is (no copy), else a new tensor holding the data's values,\n"
       "as NumPy's asarray. Python ints give int64, floats float32, bools bool; NumPy arrays keep\n"
       "their dtype (float64 stays float64).\n\n"
       "Args:\n    data: a Tensor, a NumPy array or scalar, a (nested) list or tuple, or a number.\n"
       "    dtype: convert to this dtype (default: as above).\n    device: put it there (default: where it is, or the CPU).\n\n"
       "Returns:\n    A tensor.\n\n"
       "Raises:\n    TypeError: data of another type, or an unknown dtype.\n    ValueError: ragged nested lists.\n\n"
       "Example:\n    >>> pcp.asarray([[1, 2], [3, 4]]).dtype\n    pcp.int64\n"},
      {"bitwise_not",
       "~x on integers and bools, elementwise (the ~ operator).\n\n"
       "Args:\n    x: an integer or bool tensor.\n\nReturns:\n    A tensor of x's shape and dtype.\n\n"
       "Raises:\n    TypeError: a floating tensor.\n\n"
       "Example:\n    >>> pcp.bitwise_not(pcp.tensor([0, 2])).tolist()\n    [-1, -3]\n"},
      {"sum_to",
       "x summed over its broadcast axes down to `shape`: the reverse of broadcast_to, as a gradient\n"
       "of a broadcast operand needs.\n\n"
       "Args:\n    x: a tensor.\n    shape: a shape that broadcasts to x's.\n\n"
       "Returns:\n    A tensor of that shape.\n\nRaises:\n    ValueError: shape does not broadcast to x's.\n\n"
       "Example:\n    >>> pcp.sum_to(pcp.ones((2, 3)), (3,)).tolist()\n    [2.0, 2.0, 2.0]\n"},
      {"permute",
       "x with its axes in the given order (PyTorch's permute, NumPy's transpose with axes): a view.\n\n"
       "Args:\n    x: a tensor.\n    axes: a permutation of range(x.ndim).\n\n"
       "Returns:\n    A view of x.\n\nRaises:\n    ValueError: axes is not a permutation of x's axes.\n\n"
       "Example:\n    >>> pcp.permute(pcp.zeros((2, 3, 4)), (1, 2, 0)).shape\n    (3, 4, 2)\n"},
      {"expand_dims",
       "x with a new axis of length 1 at `axis` (NumPy's name for unsqueeze): a view.\n\n"
       "Args:\n    x: a tensor.\n    axis: the new axis's position in the result.\n\n"
       "Returns:\n    A view of x with one more dimension.\n\nRaises:\n    IndexError: axis out of range.\n\n"
       "Example:\n    >>> pcp.expand_dims(pcp.zeros(3), -1).shape\n    (3, 1)\n"},
      {"contiguous",
       "x in row-major order in memory of its own: x itself when it already is, else a copy.\n\n"
       "Args:\n    x: a tensor.\n\nReturns:\n    A contiguous tensor equal to x.\n\n"
       "Raises:\n    TypeError: x is not a tensor.\n\n"
       "Example:\n    >>> pcp.contiguous(pcp.zeros((2, 3)).T).is_contiguous()\n    True\n"},
      {"copy",
       "A copy of x in new memory (x.clone()); differentiable.\n\n"
       "Args:\n    x: a tensor.\n\nReturns:\n    A new contiguous tensor equal to x, on x's device.\n\n"
       "Raises:\n    TypeError: x is not a tensor.\n\n"
       "Example:\n    >>> pcp.copy(pcp.tensor([1, 2])).tolist()\n    [1, 2]\n"},
      {"from_numpy",
       "A tensor sharing memory with a NumPy array: writes to either show in the other. A read-only,\n"
       "unaligned or byte-swapped array is copied instead, with a warning.\n\n"
       "Args:\n    array: a NumPy array of a dtype PCP has (bool, int32, int64, float16, float32, float64).\n\n"
       "Returns:\n    A CPU tensor of the array's shape and dtype.\n\n"
       "Raises:\n    TypeError: not a NumPy array, or a dtype PCP does not have.\n\n"
       "Example:\n    >>> import numpy as np\n    >>> a = np.zeros(2, np.float32)\n    >>> t = pcp.from_numpy(a)\n"
       "    >>> a[0] = 5.0\n    >>> t.tolist()\n    [5.0, 0.0]\n"},
      {"from_dlpack",
       "A tensor sharing memory with any DLPack producer on the CPU (a PyTorch tensor, a NumPy array, a\n"
       "JAX array), without a copy.\n\n"
       "Args:\n    obj: an object with __dlpack__ (or a DLPack capsule).\n\n"
       "Returns:\n    A CPU tensor viewing the producer's memory.\n\n"
       "Raises:\n    TypeError: not a DLPack producer, or a dtype PCP does not have.\n"
       "    ValueError: memory not on the CPU, or a malformed shape or strides.\n\n"
       "Example:\n    >>> import numpy as np\n    >>> pcp.from_dlpack(np.arange(3)).tolist()\n    [0, 1, 2]\n"},
      {"gpu_info",
       "What PCP knows of a GPU: its name, API, memory and identity (its UUID, as CUDA and nvidia-smi\n"
       "give it, and PCI address), whether float16 / bfloat16 matmuls run on\n"
       "tensor cores there (and why not: tensor_core_note), which heads its flash attention takes on\n"
       "tensor cores, and the kernels this build has.\n\n"
       "Args:\n    device: 'gpu' (the first GPU, default), 'gpu:N' or 'vulkan:N'.\n\n"
       "Returns:\n    A dict: name, software (a software implementation on the CPU, such as Mesa's lavapipe:\n"
       "    correct but far slower than the CPU backend for training), api, memory_bytes, uuid (32 hex\n"
       "    digits; '' when unknown), pci_bus\n"
       "    ('dddd:bb:dd.f'; '' when the driver does not say), tensor_core_float16, tensor_core_bfloat16,\n"
       "    tensor_core_note, cooperative_matrix2, buffer_addresses (optimizers update all parameters\n"
       "    in one dispatch), float64 (float64 and int64 run here: Vulkan's shaderFloat64 and shaderInt64,\n"
       "    or CUDA) and float64_note (why not, '' when they do), tensor_core_attention ('bfloat16 and float16', 'float16' or 'none'), vendor (NVIDIA's libraries on this GPU, pcp[cuda]: a dict of matmul\n"
       "    ('cuBLASLt' or None), attention ('cuDNN' or None), cublaslt and cudnn (the files loaded and\n"
       "    their versions, '' when not loaded) and note (why they are not used, '' when they are)),\n"
       "    kernels.\n\n"
       "Raises:\n    ValueError: not a GPU, or no GPU on this machine (the message says why).\n\n"
       "Example:\n    >>> if len(pcp.devices()) > 1:  # a GPU\n    ...     assert \"matmul\" in pcp.gpu_info()[\"kernels\"]\n"},
      {"synchronize",
       "Waits until the work recorded for a GPU has finished (GPU work runs asynchronously; reading a\n"
       "value with item() or numpy() waits by itself). For timing, and before measuring memory.\n\n"
       "Args:\n    device: a GPU, or None (default) for every GPU; 'cpu' returns at once.\n\n"
       "Returns:\n    None.\n\nRaises:\n    ValueError: an unknown device.\n\n"
       "Example:\n    >>> pcp.synchronize()\n"},
      {"memory_stats",
       "The caching allocator's statistics for a device: active_bytes (held by tensors), peak_bytes\n"
       "(the most active since the last reset), cached_bytes (freed, kept for reuse), num_allocs and\n"
       "num_cache_hits.\n\n"
       "Args:\n    device: 'cpu', a GPU, or None (default) for the default device.\n\n"
       "Returns:\n    A dict of ints.\n\nRaises:\n    ValueError: an unknown device.\n\n"
       "Example:\n    >>> sorted(pcp.memory_stats('cpu'))\n"
       "    ['active_bytes', 'cached_bytes', 'num_allocs', 'num_cache_hits', 'peak_bytes']\n"},
      {"is_grad_enabled",
       "Whether operations record the autograd graph now (False inside pcp.no_grad). It raises nothing.\n\n"
       "Returns:\n    A bool.\n\nExample:\n    >>> pcp.is_grad_enabled()\n    True\n"},
      {"set_grad_enabled",
       "Turns graph recording on or off for this thread (what pcp.no_grad and pcp.enable_grad do for a\n"
       "scope).\n\nArgs:\n    enabled: True to record.\n\nReturns:\n    None.\n\n"
       "Raises:\n    TypeError: enabled is not a bool.\n\n"
       "Example:\n    >>> pcp.set_grad_enabled(True)\n"},
      {"set_default_device",
       "The device creation functions (zeros, tensor, randn, ...) use when not given device=.\n\n"
       "Args:\n    device: 'cpu', 'gpu', 'gpu:N' or 'vulkan:N'.\n\nReturns:\n    None.\n\n"
       "Raises:\n    ValueError: an unknown device, or a GPU this machine does not have.\n\n"
       "Example:\n    >>> pcp.set_default_device('cpu')\n"},
      {"get_default_device",
       "The device creation functions use when not given device= (see set_default_device). It raises\n"
       "nothing.\n\nReturns:\n    Its canonical name, e.g. 'cpu' or 'vulkan:0'.\n\n"
       "Example:\n    >>> pcp.get_default_device()\n    'cpu'\n"},
      {"set_float32_matmul_precision",
       "How float32 matmuls may compute where NVIDIA's libraries run them (pcp[cuda] on an NVIDIA\n"
       "GPU), as torch.set_float32_matmul_precision: 'highest' (the default) in float32, 'high' or\n"
       "'medium' in TF32 on tensor cores (10-bit mantissas, float32 accumulation). PCP's own kernels\n"
       "always compute float32 in float32.\n\n"
       "Args:\n    precision: 'highest', 'high' or 'medium'.\n\nReturns:\n    None.\n\n"
       "Raises:\n    ValueError: another string.\n\n"
       "Example:\n    >>> pcp.set_float32_matmul_precision('highest')\n"},
      {"get_float32_matmul_precision",
       "The float32 matmul precision set_float32_matmul_precision chose: 'highest' or 'high'. It\n"
       "raises nothing.\n\nReturns:\n    A str.\n\n"
       "Example:\n    >>> pcp.get_float32_matmul_precision()\n    'highest'\n"},
      {"set_num_threads",
       "The number of threads CPU kernels use (the default: one per core).\n\n"
       "Args:\n    n: threads; 0 or less restores the default.\n\nReturns:\n    None.\n\n"
       "Raises:\n    TypeError: n is not an int.\n\n"
       "Example:\n    >>> pcp.set_num_threads(0)\n"},
      {"get_num_threads",
       "The number of threads CPU kernels use. It raises nothing.\n\n"
       "Returns:\n    A positive int.\n\nExample:\n    >>> pcp.get_num_threads() >= 1\n    True\n"},
      {"cpu_features",
       "Which CPU kernels this machine runs: the instruction set chosen at start-up ('avx512',\n"
       "'avx2', 'neon' or 'baseline'; PCP_SIMD overrides it), those available, the thread count, and\n"
       "whether bfloat16 matmuls use AVX512_BF16. It raises nothing.\n\n"
       "Returns:\n    A dict: isa, available, threads, bf16_matmul.\n\n"
       "Example:\n    >>> sorted(pcp.cpu_features())\n    ['available', 'bf16_matmul', 'isa', 'threads']\n"},
      {"clear_cache",
       "Returns a device's cached free blocks to the system (the caching allocator keeps freed memory\n"
       "for reuse); tensors in use are untouched. On a GPU it waits for the device first.\n\n"
       "Args:\n    device: 'cpu', a GPU, or None (default) for the default device.\n\nReturns:\n    None.\n\n"
       "Raises:\n    ValueError: an unknown device.\n\nExample:\n    >>> pcp.clear_cache('cpu')\n"},
      {"reset_peak_memory_stats",
       "Starts a device's peak_bytes (memory_stats) again from its current active bytes.\n\n"
       "Args:\n    device: 'cpu', a GPU, or None (default) for the default device.\n\nReturns:\n    None.\n\n"
       "Raises:\n    ValueError: an unknown device.\n\nExample:\n    >>> pcp.reset_peak_memory_stats('cpu')\n"},
      {"Tensor",
       "An n-dimensional array with automatic differentiation: a cheap handle to refcounted storage on\n"
       "a device, with a shape, strides and a dtype. Views (reshape, transpose, slicing, broadcast_to)\n"
       "share storage; operators (``+ - * / @ **``, comparisons, ``~ & | ^``) and the methods named\n"
       "like pcp's functions (x.sum(axis=0), x.softmax()) call those functions. A tensor made with\n"
       "requires_grad=True records the operations on it, and backward() fills the .grad of such\n"
       "leaves.\n\n"
       "Create one with pcp.tensor, pcp.asarray, pcp.from_numpy or a creation function (pcp.zeros, ...),\n"
       "not with Tensor(...).\n\n"
       "Raises:\n    TypeError: Tensor() called directly.\n\n"
       "Example:\n    >>> x = pcp.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
       "    >>> (x @ x.T).sum().backward()\n    >>> x.grad.tolist()\n    [[8.0, 12.0], [8.0, 12.0]]\n"},
      {"DType.itemsize",
       "The bytes one element of this dtype takes. It raises nothing.\n\n"
       "Example:\n    >>> pcp.bfloat16.itemsize, pcp.int64.itemsize\n    (2, 8)\n"},
      {"DType.is_floating_point",
       "Whether this dtype holds floating-point numbers (float16, bfloat16, float32, float64). It raises\n"
       "nothing.\n\n"
       "Example:\n    >>> pcp.float16.is_floating_point, pcp.int32.is_floating_point\n    (True, False)\n"},
      {"seed",
       "Seeds the global counter-based (Philox) generator that rand, randn, randint, dropout and\n"
       "sampling draw from, and restarts its counter: the same seed gives the same numbers on every\n"
       "device and thread count.\n\n"
       "Args:\n    seed: an int in [0, 2**64).\n\nReturns:\n    None.\n\n"
       "Raises:\n    TypeError: seed is not an int.\n    ValueError: seed is negative or 2**64 or more.\n\n"
       "Example:\n    >>> pcp.random.seed(7)\n    >>> a = pcp.rand(3).tolist()\n    >>> pcp.random.seed(7)\n"
       "    >>> pcp.rand(3).tolist() == a\n    True\n"},
      {"get_rng_state",
       "The global generator's state: its seed and how many numbers it has handed out (the counter),\n"
       "which set_rng_state restores (checkpoints save it). It raises nothing.\n\n"
       "Returns:\n    A tuple (seed, offset) of ints.\n\n"
       "Example:\n    >>> pcp.random.seed(3)\n    >>> pcp.random.get_rng_state()\n    (3, 0)\n"},
      {"set_rng_state",
       "Restores the global generator to a state get_rng_state returned: the numbers drawn next are\n"
       "those drawn after that state was taken.\n\n"
       "Args:\n    seed: the seed, an int in [0, 2**64).\n    offset: the counter, an int in [0, 2**64).\n\n"
       "Returns:\n    None.\n\nRaises:\n    TypeError: an argument that is not a non-negative int.\n\n"
       "Example:\n    >>> state = pcp.random.get_rng_state()\n    >>> a = pcp.randn(2).tolist()\n"
       "    >>> pcp.random.set_rng_state(*state)\n    >>> pcp.randn(2).tolist() == a\n    True\n"},
      {"DType",
       "The element type of a tensor: pcp.bool, int32, int64, float16, bfloat16, float32 or float64.\n"
       "DType(value) converts a name ('bfloat16'), a NumPy dtype, or a DType.\n\n"
       "Args:\n    value: what to convert.\n\n"
       "Returns:\n    The DType.\n\nRaises:\n    TypeError: an unknown dtype.\n\n"
       "Example:\n    >>> pcp.DType('bfloat16') == pcp.bfloat16\n    True\n"},
      {"matmul",
       "Matrix product with NumPy's matmul rules (the @ operator): 1-D operands are promoted to a row or\n"
       "column and the added axis removed; leading (batch) axes broadcast.\n\n"
       "Args:\n    a: (..., M, K) or (K,).\n    b: (..., K, N) or (K,).\n\n"
       "Returns:\n    (..., M, N), the broadcast batch shape in front, in the promoted dtype. float16 and\n"
       "    bfloat16 accumulate in float32 (tensor cores on a GPU that has them).\n\n"
       "Raises:\n    ValueError: K differs between a and b, a 0-d operand, or batch shapes that do not\n"
       "        broadcast; the message names both shapes, e.g. 'matmul: shapes (2, 3) and (4, 5) do not\n"
       "        align: 3 != 4'.\n\n"
       "Example:\n    >>> pcp.matmul(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), pcp.tensor([1.0, 1.0])).tolist()\n"
       "    [3.0, 7.0]\n"},
      {"softmax",
       "Softmax along an axis: exp(x - max) / sum(exp(x - max)), stable for large inputs.\n\n"
       "Args:\n    x: a tensor of any shape; integer inputs are promoted to float32.\n"
       "    axis: the axis to normalise over (default -1, the last); negative counts from the end.\n\n"
       "Returns:\n    A tensor of x's shape whose values along `axis` are non-negative and sum to 1. float16\n"
       "    and bfloat16 inputs are computed in float32 and rounded once; a NaN makes its whole row NaN.\n\n"
       "Raises:\n    IndexError: axis out of range for x.\n\n"
       "Example:\n    >>> [round(v, 4) for v in pcp.softmax(pcp.tensor([1.0, 2.0, 3.0])).tolist()]\n"
       "    [0.09, 0.2447, 0.6652]\n"},
      {"log_softmax",
       "log(softmax(x)) along an axis, computed as x - max - log(sum(exp(x - max))), without the\n"
       "cancellation of taking the log of a softmax.\n\n"
       "Args:\n    x: a tensor of any shape; integer inputs are promoted to float32.\n"
       "    axis: the axis to normalise over (default -1).\n\n"
       "Returns:\n    A tensor of x's shape; exp of it sums to 1 along `axis`.\n\n"
       "Raises:\n    IndexError: axis out of range for x.\n\n"
       "Example:\n    >>> [round(v, 4) for v in pcp.log_softmax(pcp.tensor([0.0, 0.0])).tolist()]\n"
       "    [-0.6931, -0.6931]\n"},
      {"layer_norm",
       "Layer normalisation over the last axis: (x - mean) / sqrt(var + eps) * weight + bias, the\n"
       "variance biased (divided by n), as in PyTorch.\n\n"
       "Args:\n    x: (..., n), a floating tensor with at least one axis.\n"
       "    weight: (n,), the gain, or None for 1.\n    bias: (n,), the shift, or None for 0.\n"
       "    eps: added to the variance (default 1e-5); must be non-negative.\n\n"
       "Returns:\n    A tensor of x's shape (statistics in float32 for 16-bit inputs).\n\n"
       "Raises:\n    ValueError: weight or bias not of shape (n,), a 0-d x, or a negative eps.\n\n"
       "Example:\n    >>> [round(v, 3) for v in pcp.layer_norm(pcp.tensor([1.0, 3.0])).tolist()]\n"
       "    [-1.0, 1.0]\n"},
      {"cross_entropy",
       "Cross-entropy of logits against integer class targets: the mean over the targets of\n"
       "-log_softmax(logits)[target], classes on the last axis (PyTorch's F.cross_entropy on (N, C)).\n\n"
       "Args:\n    logits: (..., C) floating scores.\n"
       "    targets: (...) integers in [0, C), or ignore_index; on the CPU or on the logits' GPU.\n"
       "    ignore_index: targets equal to it add nothing and are not counted (default -100).\n"
       "    reduction: 'mean' over the counted targets (default), 'sum', or 'none'.\n\n"
       "Returns:\n    With 'mean' or 'sum' a 0-d float tensor (a mean over no counted target is NaN); with\n"
       "    'none' the per-target losses, of targets' shape (0 where ignored).\n\n"
       "Raises:\n    ValueError: targets' shape is not logits' without the class axis, or an unknown reduction.\n"
       "    IndexError: a target outside [0, C) that is not ignore_index (on a GPU, at the next\n"
       "        synchronisation, as CUDA's device asserts).\n\n"
       "Example:\n    >>> logits = pcp.tensor([[2.0, 0.0], [0.0, 2.0]])\n"
       "    >>> round(pcp.cross_entropy(logits, pcp.tensor([0, 1])).item(), 4)\n"
       "    0.1269\n"},
      {"sum",
       "The sum of x's elements over `axis` (all of them by default).\n\n"
       "Args:\n    x: a tensor of any shape.\n"
       "    axis: an int, a tuple of ints, or None for every axis; negative counts from the end.\n"
       "    keepdims: keep the summed axes with length 1 (default False).\n\n"
       "Returns:\n    A tensor of x's shape without the summed axes; bool and integer inputs sum as int64,\n"
       "    float16 and bfloat16 in float32 (rounded once).\n\n"
       "Raises:\n    IndexError: an axis out of range for x.\n    ValueError: an axis named twice.\n\n"
       "Example:\n    >>> pcp.sum(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=0).tolist()\n"
       "    [4.0, 6.0]\n"},
      {"mean",
       "The mean of x's elements over `axis` (all of them by default).\n\n"
       "Args:\n    x: a tensor of any shape.\n"
       "    axis: an int, a tuple of ints, or None for every axis.\n"
       "    keepdims: keep the reduced axes with length 1 (default False).\n\n"
       "Returns:\n    A floating tensor of x's shape without the reduced axes (NaN over no elements).\n\n"
       "Raises:\n    IndexError: an axis out of range for x.\n    ValueError: an axis named twice.\n\n"
       "Example:\n    >>> pcp.mean(pcp.tensor([[1.0, 2.0], [3.0, 4.0]]), axis=1).tolist()\n"
       "    [1.5, 3.5]\n"},
      {"reshape",
       "x with a new shape of the same number of elements: a view when the strides allow (as NumPy's\n"
       "reshape), else a copy. One dimension may be -1, inferred from the others.\n\n"
       "Args:\n    x: a tensor.\n    shape: ints, or one tuple or list of ints.\n\n"
       "Returns:\n    A tensor of the new shape holding x's elements in row-major order.\n\n"
       "Raises:\n    ValueError: the sizes differ, more than one -1, or a negative dimension.\n\n"
       "Example:\n    >>> pcp.arange(6).reshape(2, -1).tolist()\n    [[0, 1, 2], [3, 4, 5]]\n"},
      {"transpose",
       "x with its axes permuted (reversed when no axes are given): a view, no data moves.\n\n"
       "Args:\n    x: a tensor.\n    axes: a permutation of range(x.ndim), or none for the reverse order.\n\n"
       "Returns:\n    A view of x with shape [x.shape[a] for a in axes].\n\n"
       "Raises:\n    ValueError: axes is not a permutation of x's axes.\n\n"
       "Example:\n    >>> pcp.transpose(pcp.zeros((2, 3, 4)), (2, 0, 1)).shape\n    (4, 2, 3)\n"},
      {"concatenate",
       "The tensors joined along an existing axis.\n\n"
       "Args:\n    tensors: a sequence of tensors of one number of dimensions, equal in every axis but `axis`.\n"
       "    axis: the axis to join along (default 0).\n\n"
       "Returns:\n    A new tensor in the promoted dtype; its length along `axis` is the sum of theirs.\n\n"
       "Raises:\n    ValueError: no tensors, different numbers of dimensions, other axes that differ, or\n"
       "        tensors on different devices.\n\n"
       "Example:\n    >>> pcp.concatenate([pcp.ones((1, 2)), pcp.zeros((2, 2))]).shape\n    (3, 2)\n"},
      {"zeros",
       "A new tensor filled with 0.\n\n"
       "Args:\n    shape: an int or a sequence of non-negative ints.\n"
       "    dtype: the element type (default float32).\n"
       "    device: 'cpu', 'gpu', 'vulkan:N' (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A tensor of that shape, dtype and device.\n\n"
       "Raises:\n    ValueError: a negative dimension, or a size that overflows.\n\n"
       "Example:\n    >>> pcp.zeros((2, 3)).shape\n    (2, 3)\n"},
      {"arange",
       "Evenly spaced values in [start, stop), as NumPy's arange: arange(stop) or arange(start, stop,\n"
       "step). All-integer arguments give int64 and are exact; any float gives float32.\n\n"
       "Args:\n    start, stop, step: numbers (step non-zero).\n    dtype: the element type (default: as above).\n"
       "    device: where to create it (default: pcp.get_default_device()).\n\n"
       "Returns:\n    A 1-D tensor of ceil((stop - start) / step) values (none when that is not positive).\n\n"
       "Raises:\n    TypeError: an argument that is not a number.\n    ValueError: a zero step.\n\n"
       "Example:\n    >>> pcp.arange(1, 7, 2).tolist()\n    [1, 3, 5]\n"},
      {"where",
       "Elementwise choice: x where cond is true, else y, with broadcasting.\n\n"
       "Args:\n    cond: a bool tensor (or anything that converts to one).\n"
       "    x, y: tensors or numbers; their dtypes promote.\n\n"
       "Returns:\n    A tensor of the broadcast shape of cond, x and y.\n\n"
       "Raises:\n    ValueError: the shapes do not broadcast.\n\n"
       "Example:\n    >>> pcp.where(pcp.tensor([True, False]), 1.0, 0.0).tolist()\n    [1.0, 0.0]\n"},
      {"embedding",
       "Rows of a table gathered by integer indices: weight[indices] (a lookup, differentiable in\n"
       "weight, whose gradient is a scatter-add of the output's).\n\n"
       "Args:\n    weight: (V, C), the table.\n    indices: integer tensor of any shape, values in [0, V).\n\n"
       "Returns:\n    indices.shape + (C,), in weight's dtype and on weight's device.\n\n"
       "Raises:\n    IndexError: an index outside [0, V), named with its value.\n"
       "    ValueError: weight is not 2-D.\n    TypeError: indices are not integers.\n\n"
       "Example:\n    >>> w = pcp.tensor([[0.0, 0.0], [1.0, 2.0]])\n"
       "    >>> pcp.embedding(w, pcp.tensor([1, 1, 0])).tolist()\n"
       "    [[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]]\n"},
      {"scaled_dot_product_attention",
       "softmax(scale q k^T [causal]) v over the last two axes: attention as PyTorch's\n"
       "F.scaled_dot_product_attention. A fused kernel where it pays (the T x S scores are never held),\n"
       "composed of products and a softmax otherwise; under autocast on a GPU, in the autocast type.\n\n"
       "Args:\n    q: (..., T, D) queries.\n    k: (..., S, D) keys.\n    v: (..., S, Dv) values.\n"
       "    causal: query t attends to keys 0..t only (default False).\n"
       "    scale: multiplies the scores (default 1 / sqrt(D)).\n"
       "    dropout_p: the probability of dropping an attention weight (default 0).\n\n"
       "Returns:\n    (..., T, Dv), the batch axes broadcast.\n\n"
       "Raises:\n    ValueError: q and k differ in D, k and v in S, batch axes that do not broadcast, or\n"
       "        dropout_p outside [0, 1].\n\n"
       "Example:\n    >>> q = pcp.ones((1, 2, 4))\n"
       "    >>> pcp.scaled_dot_product_attention(q, q, q, causal=True).shape\n    (1, 2, 4)\n"},
    };
    add_elementwise_docs(d);  // docstrings_elementwise.cpp
    return d;
  }();
  return docs;
}

}  // namespace

const char* op_doc(const char* name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : it->second.c_str();
}

}  // namespace pcp::bindings
