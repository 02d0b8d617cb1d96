// The docstrings of the Tensor class's own members (properties, conversions, autograd entry
// points, indexing, operators, protocols), by Python name: what help(pcp.Tensor.item) prints and
// the API reference renders. The methods that are also module functions (x.sum(), x.softmax())
// share the function's text from docstrings.cpp. Every entry has an example that
// tests/test_docs.py runs as a doctest.
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "named.h"

namespace pcp::bindings {

namespace {

const std::unordered_map<std::string, std::string>& table() {
  static const std::unordered_map<std::string, std::string> docs = [] {
    std::unordered_map<std::string, std::string> d = {
      // Properties.
      {"shape", doc_text(R"(
The length of each axis, a tuple of ints (``()`` for a 0-d tensor).

Example:
    >>> pcp.zeros((2, 3)).shape
    (2, 3)
)")},
      {"ndim", doc_text(R"(
The number of axes, len(shape).

Example:
    >>> pcp.zeros((2, 3)).ndim
    2
)")},
      {"size", doc_text(R"(
The number of elements, the product of shape (1 for a 0-d tensor), as NumPy's ``size``
attribute (PyTorch's ``x.size()`` is ``x.shape`` here).

Example:
    >>> pcp.zeros((2, 3)).size
    6
)")},
      {"dtype", doc_text(R"(
The element type, a pcp.DType (pcp.float32, pcp.int64, ...).

Example:
    >>> pcp.tensor([1, 2]).dtype
    pcp.int64
)")},
      {"device", doc_text(R"(
The device that holds the elements, by its canonical name: 'cpu', or a GPU's such as
'vulkan:0' or 'metal:0'.

Example:
    >>> pcp.zeros(2).device
    'cpu'
)")},
      {"strides", doc_text(R"(
For each axis, how many elements apart its neighbours lie in storage: a tuple of ints, in
elements (NumPy's are in bytes). Views such as x.T change strides, not data; a broadcast axis
has stride 0 and a reversed one a negative stride.

Example:
    >>> x = pcp.zeros((2, 3))
    >>> x.strides, x.T.strides
    ((3, 1), (1, 3))
)")},
      {"itemsize", doc_text(R"(
The bytes one element takes: 1 for bool, 2 for float16 and bfloat16, 4 for int32 and float32,
8 for int64 and float64.

Example:
    >>> pcp.zeros(3, dtype=pcp.float16).itemsize
    2
)")},
      {"nbytes", doc_text(R"(
The bytes of this tensor's elements, size * itemsize (a view counts its own elements, not the
storage it shares).

Example:
    >>> pcp.zeros((2, 3)).nbytes
    24
)")},
      {"requires_grad", doc_text(R"(
Whether operations on this tensor are recorded for backward(). Set it to True on a leaf (a
tensor you made, such as a parameter) to have backward() fill its .grad; results of recorded
operations require grad by themselves.

Raises:
    TypeError: set to True on a tensor whose dtype is not floating.
    ValueError: set to False on a tensor that is not a leaf (use detach()).

Example:
    >>> w = pcp.zeros(2)
    >>> w.requires_grad = True
    >>> (w * 2).requires_grad
    True
)")},
      {"grad", doc_text(R"(
The gradient backward() accumulated into this tensor: a tensor of its shape, dtype and device,
or None before any backward (and for tensors that are not leaves, unless retain_grad() was
called). Assign a tensor like this one, or None to clear it (what optimizer.zero_grad() does).

Raises:
    TypeError: assigning something that is not a Tensor or None, or a tensor of another dtype.
    ValueError: assigning a tensor of another shape or on another device.

Example:
    >>> w = pcp.tensor([1.0, 2.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> w.grad.tolist()
    [2.0, 4.0]
)")},
      {"is_leaf", doc_text(R"(
Whether this tensor starts the graph: True for one made by the user (pcp.tensor, pcp.zeros,
...), by an operation that recorded nothing, or by detach(); False for the result of a recorded
operation. backward() fills the .grad of the leaves that require grad.

Example:
    >>> w = pcp.ones(2).requires_grad_()
    >>> w.is_leaf, (w * 2).is_leaf
    (True, False)
)")},
      {"grad_fn", doc_text(R"(
The name of the operation that produced this tensor in the recorded graph (a string such as
'mul', where PyTorch has a node object), or None for a leaf or an unrecorded result.

Example:
    >>> w = pcp.ones(2).requires_grad_()
    >>> (w * 2).grad_fn, w.grad_fn
    ('mul', None)
)")},
      {"T", doc_text(R"(
This tensor with its axes reversed, as x.transpose(): a view, no data moves. A 0-d or 1-d
tensor is returned as it is.

Example:
    >>> pcp.zeros((2, 3)).T.shape
    (3, 2)
)")},
      {"to_device", doc_text(R"(
This tensor on `device`: itself when it is there already, else a copy there (the Array API
standard's name for x.to(device)).

Args:
    device: a pcp.device, or its name ("cpu", "gpu", "gpu:1").
    stream: must be None: PCP has no streams to name.

Returns:
    A tensor.

Raises:
    ValueError: a stream, or a device that does not exist.

Example:
    >>> x = pcp.ones((2,))
    >>> x.to_device("cpu") is x
    True
)")},
      {"__array_namespace__", doc_text(R"(
The Array API standard's namespace of PCP tensors: the module pcp.array_api.

Args:
    api_version: None, or the standard's version "2024.12".

Returns:
    The module pcp.array_api.

Raises:
    ValueError: another version of the standard.

Example:
    >>> pcp.ones((2,)).__array_namespace__().__name__
    'pcp.array_api'
)")},
      {"mT", doc_text(R"(
This tensor with its last two axes swapped: a batch of matrices, each transposed (a view).

Raises:
    IndexError: the tensor has fewer than 2 dimensions.

Example:
    >>> pcp.zeros((4, 2, 3)).mT.shape
    (4, 3, 2)
)")},

      // Autograd.
      {"requires_grad_", doc_text(R"(
Sets requires_grad in place and returns this tensor, for chaining: w = pcp.zeros(3).requires_grad_().

Args:
    requires_grad: the new value (default True).

Returns:
    This tensor.

Raises:
    TypeError: True for a tensor whose dtype is not floating.
    ValueError: False for a tensor that is not a leaf (use detach()).

Example:
    >>> pcp.zeros(3).requires_grad_().requires_grad
    True
)")},
      {"retain_grad", doc_text(R"(
Makes backward() keep this tensor's gradient in .grad although it is not a leaf (an
intermediate result); leaves keep theirs anyway. It raises nothing.

Returns:
    None.

Example:
    >>> w = pcp.tensor([1.0, 2.0], requires_grad=True)
    >>> h = w * 3
    >>> h.retain_grad()
    >>> (h * h).sum().backward()
    >>> h.grad.tolist()
    [6.0, 12.0]
)")},
      {"detach", doc_text(R"(
A tensor that shares this one's storage (writes through either show in both) but is cut off
from the graph: it does not require grad and is a leaf. It raises nothing.

Returns:
    A tensor of this shape, dtype and device.

Example:
    >>> w = pcp.ones(2, dtype=pcp.float32).requires_grad_()
    >>> d = (w * 2).detach()
    >>> d.requires_grad, d.is_leaf
    (False, True)
)")},
      {"backward", doc_text(R"(
Computes the gradient of this tensor with respect to every leaf of its graph that requires
grad, and adds it to that leaf's .grad (gradients accumulate: clear them between steps). The
graph's saved tensors are checked: one modified in place after the forward pass saved it is
refused rather than giving a wrong gradient. Unless retain_graph, each op of the graph lets go
of what it saved as soon as its gradient is taken, as in PyTorch: the activations are freed as
the pass goes, and a second backward through the graph raises. The GIL is released while it
runs.

Args:
    grad: the gradient flowing into this tensor, a tensor of its shape; may be omitted (None,
        the default) for a one-element tensor such as a loss, where it is 1.
    create_graph: record the backward pass too, so the gradients can be differentiated again
        (default False).
    retain_graph: keep what the graph saved, for another backward through it (default None:
        create_graph).

Returns:
    None.

Raises:
    ValueError: no grad for a tensor of more than one element, a grad of another shape, or this
        tensor does not require grad (nothing it came from had requires_grad=True, or it was
        computed under pcp.no_grad()).
    RuntimeError: a tensor the graph saved was modified in place since, or a backward pass
        without retain_graph went through the graph already.

Example:
    >>> w = pcp.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> loss = (w * w).sum()
    >>> loss.backward(retain_graph=True)
    >>> loss.backward()  # the gradients add up
    >>> w.grad.tolist()
    [4.0, 8.0, 12.0]
)")},

      // Conversions.
      {"item", doc_text(R"(
The value of a one-element tensor (of any shape) as a Python number: an int for integer
dtypes, a bool for bool, a float otherwise. On a GPU it waits for the value.

Returns:
    An int, float or bool.

Raises:
    ValueError: the tensor has more or fewer than one element.

Example:
    >>> pcp.tensor([[2.5]]).item()
    2.5
)")},
      {"tolist", doc_text(R"(
The elements as nested Python lists (one level per axis) of ints, floats or bools, as NumPy's
tolist; a 0-d tensor gives a plain number. float16 and bfloat16 values are widened exactly. It
raises nothing.

Returns:
    A list, or a number for a 0-d tensor.

Example:
    >>> pcp.arange(4).reshape(2, 2).tolist()
    [[0, 1], [2, 3]]
)")},
      {"numpy", doc_text(R"(
The elements as a NumPy array. On the CPU the array shares this tensor's memory (no copy:
writes through either show in both; the array keeps the memory alive), with the same shape and
strides; a GPU tensor gives a host copy. While the recorded graph saved this memory for
backward the array is read-only, so a write cannot silently spoil a gradient.

Returns:
    A numpy.ndarray of the matching dtype.

Raises:
    TypeError: a bfloat16 tensor (NumPy has no bfloat16: convert with .astype(pcp.float32)).

Example:
    >>> x = pcp.zeros(3)
    >>> a = x.numpy()
    >>> a[0] = 7.0
    >>> x.tolist()
    [7.0, 0.0, 0.0]
)")},
      {"is_contiguous", doc_text(R"(
Whether the elements lie in storage in row-major (C) order without gaps: False for most
transposed, strided or broadcast views. It raises nothing.

Returns:
    A bool.

Example:
    >>> x = pcp.zeros((2, 3))
    >>> x.is_contiguous(), x.T.is_contiguous()
    (True, False)
)")},
      {"contiguous", doc_text(R"(
This tensor if it is contiguous, else a row-major copy of it (differentiable). It raises
nothing.

Returns:
    A contiguous tensor of this shape, dtype and device.

Example:
    >>> pcp.zeros((2, 3)).T.contiguous().is_contiguous()
    True
)")},
      {"astype", doc_text(R"(
A copy converted to another dtype, as pcp.astype(x, dtype): floats to integers truncate toward
zero, wider to narrower floats round to nearest even. Differentiable between floating dtypes.

Args:
    dtype: a pcp dtype, its name ('bfloat16'), or a NumPy dtype.

Returns:
    A tensor of this shape in that dtype.

Raises:
    TypeError: an unknown dtype.

Example:
    >>> pcp.tensor([1.7, -1.7]).astype(pcp.int64).tolist()
    [1, -1]
)")},
      {"to", doc_text(R"(
This tensor on another device and/or in another dtype, as PyTorch's ``to``: x.to('gpu'),
x.to(pcp.float16), x.to('gpu', pcp.float16) or x.to(device=..., dtype=...). A move is a copy
that gradients flow back through; when nothing changes, the result shares this tensor's storage.

Args:
    device_or_dtype: a device's name ('cpu', 'gpu', 'gpu:N', 'vulkan:N') or a dtype.
    dtype_or_device: the other of the two, optionally.
    device: the device, by keyword.
    dtype: the dtype, by keyword.

Returns:
    A tensor of this shape on that device, in that dtype.

Raises:
    ValueError: an unknown device, or a GPU this machine does not have.
    TypeError: an unknown dtype, or two devices or two dtypes given.

Example:
    >>> x = pcp.arange(3).to("cpu", pcp.float32)
    >>> x.device, x.dtype
    ('cpu', pcp.float32)
)")},
      {"clone", doc_text(R"(
A copy with storage of its own, still part of the recorded graph (gradients flow back to this
tensor), as PyTorch's clone; pcp.copy(x) does the same. It raises nothing.

Returns:
    A new contiguous tensor of this shape, dtype and device.

Example:
    >>> x = pcp.zeros(2)
    >>> y = x.clone()
    >>> y[0] = 1.0
    >>> x.tolist(), y.tolist()
    ([0.0, 0.0], [1.0, 0.0])
)")},

      // Shapes (methods whose arguments differ from the module function's).
      {"reshape", doc_text(R"(
This tensor with a new shape of the same number of elements, as pcp.reshape: a view where the
strides allow, else a copy. One dimension may be -1, inferred from the others.

Args:
    *shape: the new shape, as separate ints or as one tuple or list.

Returns:
    A tensor of the new shape holding the elements in row-major order.

Raises:
    ValueError: the number of elements differs, more than one -1, or a negative dimension.

Example:
    >>> pcp.arange(6).reshape(3, 2).shape
    (3, 2)
)")},
      {"view", doc_text(R"(
The same as reshape (PyTorch's name). Unlike PyTorch's view it copies where the strides do
not allow a view, instead of raising.

Args:
    *shape: the new shape, as separate ints or as one tuple or list; one may be -1.

Returns:
    A tensor of the new shape.

Raises:
    ValueError: the number of elements differs, more than one -1, or a negative dimension.

Example:
    >>> pcp.zeros((2, 3)).view(-1).shape
    (6,)
)")},
      {"transpose", doc_text(R"(
This tensor with its axes permuted, as NumPy's ndarray.transpose (not PyTorch's, which swaps
two axes: use swapaxes for that): the axes reversed when none are given. A view.

Args:
    *axes: a permutation of range(ndim), as separate ints or one tuple; none for the reverse.

Returns:
    A view with shape [self.shape[a] for a in axes].

Raises:
    ValueError: the axes are not a permutation of this tensor's.

Example:
    >>> pcp.zeros((2, 3, 4)).transpose(1, 2, 0).shape
    (3, 4, 2)
)")},
      {"permute", doc_text(R"(
This tensor with its axes in the given order, as PyTorch's permute: a view.

Args:
    *axes: a permutation of range(ndim), as separate ints or one tuple; negative counts from
        the end.

Returns:
    A view with shape [self.shape[a] for a in axes].

Raises:
    ValueError: the axes are not a permutation (an axis repeated or missing).
    IndexError: an axis out of range.

Example:
    >>> pcp.zeros((2, 3, 4)).permute(2, 0, 1).shape
    (4, 2, 3)
)")},
      {"broadcast_to", doc_text(R"(
This tensor broadcast to a shape, as pcp.broadcast_to: a read-only view in which axes of length
1 (and new leading axes) repeat the elements (their stride is 0).

Args:
    *shape: the target shape, as separate ints or one tuple or list.

Returns:
    A view of that shape.

Raises:
    ValueError: this tensor's shape does not broadcast to it.

Example:
    >>> pcp.tensor([1, 2]).broadcast_to(2, 2).tolist()
    [[1, 2], [1, 2]]
)")},
      {"expand", doc_text(R"(
The same as broadcast_to (PyTorch's name); the target shape is given in full (no -1).

Args:
    *shape: the target shape, as separate ints or one tuple or list.

Returns:
    A read-only view of that shape.

Raises:
    ValueError: this tensor's shape does not broadcast to it, or a negative dimension.

Example:
    >>> pcp.ones((1, 3)).expand(2, 3).shape
    (2, 3)
)")},

      // Indexing.
      {"__getitem__", doc_text(R"(
x[key]: elements selected as NumPy selects them. Integers (negative count from the end),
slices (any non-zero step), None (a new axis) and ``...`` select a view of this tensor; an
integer tensor or list along an axis gathers (a copy), and a bool tensor of the indexed axes'
shape selects where it is true (a 1-D copy). Differentiable: the gradient flows back to the
selected elements.

Args:
    key: an int, a slice, None, Ellipsis, an integer or bool tensor (or list, or NumPy array),
        or a tuple of these.

Returns:
    A tensor of the selected elements.

Raises:
    IndexError: an index out of bounds, more indices than axes, a float index, or a mask whose
        shape does not match the axes it indexes.
    ValueError: a slice step of zero.
    TypeError: a key of another type (a string, a dict).

Example:
    >>> x = pcp.arange(6).reshape(2, 3)
    >>> x[1].tolist(), x[:, ::2].tolist(), x[x > 3].tolist()
    ([3, 4, 5], [[0, 2], [3, 5]], [4, 5])
)")},
      {"__setitem__", doc_text(R"(
x[key] = value: writes value into the selected elements in place (the key as in x[key]). The
value broadcasts to the selection's shape and is converted to this tensor's dtype. The write
bumps the storage's version counter, so backward() refuses a graph that saved the old values.

Args:
    key: as for x[key].
    value: a tensor, a NumPy array, a list or a Python number.

Returns:
    None.

Raises:
    ValueError: value does not broadcast to the selection, or this tensor requires grad (write
        under pcp.no_grad(), as optimizers do).
    IndexError: an index out of bounds.
    TypeError: a key or value of another type.

Example:
    >>> x = pcp.zeros(4)
    >>> x[1:3] = 5.0
    >>> x[x == 0] = -1.0
    >>> x.tolist()
    [-1.0, 5.0, 5.0, -1.0]
)")},
    };
    add_protocol_docs(d);  // tensor_docs_protocols.cpp
    return d;
  }();
  return docs;
}

}  // namespace

const char* tensor_doc(const char* name) {
  auto it = table().find(name);
  if (it == table().end()) throw std::logic_error(std::string("tensor_doc: no docstring for Tensor.") + name);
  return it->second.c_str();
}

}  // namespace pcp::bindings
