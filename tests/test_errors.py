"""Bad input raises a clear Python exception naming the op, never crashes the interpreter.

Every check asserts the exception type and (with ``match``) that the message names the op and,
where useful, what it saw (shapes, axes, values).
"""
import re

import numpy as np
import pytest

import pcp
from conftest import on_each_device

pytestmark = on_each_device


def esc(*parts):
    """A regex requiring every literal part, in order, anywhere in the message."""
    return ".*".join(re.escape(p) for p in parts)


@pytest.fixture
def x23():
    return pcp.ones((2, 3))


# ----------------------------------------------------------------------------------------------
# matmul


def test_matmul_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=esc("matmul", "(2, 3)", "(4, 5)")):
        pcp.matmul(pcp.ones((2, 3)), pcp.ones((4, 5)))
    with pytest.raises(ValueError, match=esc("matmul", "(2, 3)", "(4, 5)")):
        pcp.ones((2, 3)) @ pcp.ones((4, 5))


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 3), (2,)), ((5,), (4, 5)), ((2, 3, 4), (2, 5, 6))], ids=str)
def test_matmul_inner_dimension_mismatch(sa, sb):
    with pytest.raises(ValueError, match=esc("matmul", str(sa).replace(",)", ",)"))):
        pcp.matmul(pcp.ones(sa), pcp.ones(sb))


def test_matmul_batch_dims_not_broadcastable():
    # The message must show the shapes the user passed, not only the internal batch shapes.
    with pytest.raises(ValueError, match=esc("matmul", "(2, 3, 4)", "(3, 4, 5)")):
        pcp.matmul(pcp.ones((2, 3, 4)), pcp.ones((3, 4, 5)))


def test_matmul_zero_d():
    with pytest.raises(ValueError, match=esc("matmul", "at least one dimension")):
        pcp.matmul(pcp.tensor(2.0), pcp.ones((2,)))


def test_matmul_bool_inputs_type_error():
    with pytest.raises(TypeError, match=esc("matmul", "numeric")):
        pcp.matmul(pcp.ones((2, 2), dtype=pcp.bool_), pcp.ones((2, 2), dtype=pcp.bool_))


# ----------------------------------------------------------------------------------------------
# elementwise

BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_non_broadcastable(name):
    with pytest.raises(ValueError, match=esc(f"{name}:", "(2, 3)", "(4,)", "broadcast")):
        getattr(pcp, name)(pcp.ones((2, 3)), pcp.ones((4,)))


@pytest.mark.parametrize("op,name", [(lambda a, b: a + b, "add"), (lambda a, b: a - b, "sub"),
                                     (lambda a, b: a * b, "mul"), (lambda a, b: a / b, "div"),
                                     (lambda a, b: a ** b, "pow"), (lambda a, b: a < b, "lt"),
                                     (lambda a, b: a == b, "eq")], ids=lambda v: v if isinstance(v, str) else "")
def test_operators_non_broadcastable(op, name):
    with pytest.raises(ValueError, match=esc(name, "(3, 2)", "(3,)")):
        op(pcp.ones((3, 2)), pcp.ones((3,)))


def test_where_and_clip_non_broadcastable():
    with pytest.raises(ValueError, match="where"):
        pcp.where(pcp.ones((2, 3)) > 0, pcp.ones((3,)), pcp.ones((4,)))
    with pytest.raises(ValueError, match="where"):
        pcp.where(pcp.ones((5,)) > 0, pcp.ones((3,)), 0.0)
    # clip is built from maximum/minimum, but the user called clip: the message must say so.
    with pytest.raises(ValueError, match=esc("clip", "(2, 3)", "(2,)")):
        pcp.clip(pcp.ones((2, 3)), pcp.zeros((2,)), None)


@pytest.mark.parametrize("name", ["neg", "abs", "square", "sign", "relu"])
def test_unary_not_defined_for_bool(name):
    with pytest.raises(TypeError, match=esc(name, "bool")):
        getattr(pcp, name)(pcp.tensor([True, False]))


def test_unsupported_operand_types():
    t = pcp.ones(3)
    with pytest.raises(TypeError, match="add"):
        pcp.add(t, "a string")
    with pytest.raises(TypeError, match="mul"):
        pcp.mul(object(), t)
    with pytest.raises(TypeError, match="exp"):
        pcp.exp({"a": 1})
    with pytest.raises(OverflowError, match=esc("add", "does not fit in int64")):
        t + 2**70


def test_gelu_bad_approximation():
    with pytest.raises(ValueError, match=esc("gelu", "approximate", "fast")):
        pcp.gelu(pcp.ones(3), approximate="fast")


# ----------------------------------------------------------------------------------------------
# reductions and axes

REDUCTIONS = ["sum", "mean", "max", "min", "var", "logsumexp"]


@pytest.mark.parametrize("name", REDUCTIONS + ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [2, -3, 100])
def test_reduction_axis_out_of_range(name, axis, x23):
    with pytest.raises(IndexError, match=esc(f"{name}:", f"axis {axis}", "out of range")):
        getattr(pcp, name)(x23, axis=axis)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_axis_tuple_out_of_range_or_repeated(name, x23):
    with pytest.raises(IndexError, match=name):
        getattr(pcp, name)(x23, axis=(0, 5))
    with pytest.raises(ValueError, match=esc(name, "more than once")):
        getattr(pcp, name)(x23, axis=(1, -1))


def test_reduction_axis_on_zero_d():
    with pytest.raises(IndexError, match="sum"):
        pcp.sum(pcp.tensor(1.0), axis=0)


def test_axis_of_wrong_type(x23):
    with pytest.raises(TypeError, match="axis"):
        pcp.sum(x23, axis=1.5)
    with pytest.raises(TypeError, match="axis"):
        pcp.max(x23, axis=(0, "a"))


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_zero_size_reduction_has_no_identity(name):
    with pytest.raises(ValueError, match=esc(name, "zero-size")):
        getattr(pcp, name)(pcp.zeros((0,)))
    with pytest.raises(ValueError, match=esc(name, "zero-size")):
        getattr(pcp, name)(pcp.zeros((0, 3)), axis=0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_axis_out_of_range(name, x23):
    with pytest.raises(IndexError, match=esc(name, "axis 2")):
        getattr(pcp, name)(x23, axis=2)
    with pytest.raises(IndexError, match=esc(name, "axis -3")):
        getattr(pcp, name)(x23, axis=-3)


# ----------------------------------------------------------------------------------------------
# shapes


def test_reshape_bad_sizes(x23):
    with pytest.raises(ValueError, match=esc("reshape", "(2, 3)", "(4,)")):
        pcp.reshape(x23, (4,))
    with pytest.raises(ValueError, match=esc("reshape", "(2, 3)")):
        x23.reshape(4, -1)
    with pytest.raises(ValueError, match=esc("reshape", "only one dimension can be -1")):
        x23.reshape(-1, -1)
    with pytest.raises(ValueError, match=esc("reshape", "-2")):
        x23.reshape(-2, -3)
    with pytest.raises(ValueError, match="reshape"):
        pcp.zeros((0, 3)).reshape(-1, 0)


def test_flatten_bad_axes():
    t = pcp.ones((2, 3, 4))
    with pytest.raises(ValueError, match="flatten"):
        pcp.flatten(t, 2, 1)
    with pytest.raises(IndexError, match="flatten"):
        pcp.flatten(t, 0, 3)


def test_squeeze_errors():
    t = pcp.ones((1, 3, 1))
    with pytest.raises(ValueError, match=esc("squeeze", "axis 1", "size 3")):
        pcp.squeeze(t, 1)
    with pytest.raises(ValueError, match="squeeze"):
        t.squeeze((0, 1))
    with pytest.raises(IndexError, match=esc("squeeze", "axis 3")):
        pcp.squeeze(t, 3)


def test_unsqueeze_axis_out_of_range(x23):
    with pytest.raises(IndexError, match=esc("unsqueeze", "axis 3")):
        pcp.unsqueeze(x23, 3)
    with pytest.raises(IndexError, match=esc("unsqueeze", "axis -4")):
        pcp.unsqueeze(x23, -4)


def test_transpose_permute_swapaxes_errors():
    t = pcp.ones((2, 3, 4))
    with pytest.raises(ValueError, match=esc("permute", "length 2")):
        pcp.permute(t, (1, 0))
    with pytest.raises(ValueError, match=esc("permute", "repeated")):
        pcp.permute(t, (0, 1, 1))
    with pytest.raises(IndexError, match="permute"):
        pcp.permute(t, (0, 1, 3))
    with pytest.raises(ValueError, match=esc("transpose:", "length 2")):  # names the op called, not permute
        pcp.transpose(t, (0, 1))
    with pytest.raises(IndexError, match="swapaxes"):
        pcp.swapaxes(t, 0, 3)


def test_broadcast_to_incompatible(x23):
    with pytest.raises(ValueError, match=esc("broadcast_to", "(2, 3)", "(3, 3)")):
        pcp.broadcast_to(x23, (3, 3))
    with pytest.raises(ValueError, match=esc("broadcast_to", "(2, 3)", "(3,)")):
        pcp.broadcast_to(x23, (3,))
    with pytest.raises(ValueError, match="broadcast_to"):
        pcp.broadcast_to(pcp.ones(1), (-1,))


def test_concatenate_errors(x23):
    with pytest.raises(ValueError, match=esc("concatenate", "tensor 1", "(2, 4)", "(2, 3)")):
        pcp.concatenate([x23, pcp.ones((2, 4))], axis=0)
    with pytest.raises(ValueError, match="concatenate"):
        pcp.concatenate([x23, pcp.ones((2, 3, 1))])
    with pytest.raises(ValueError, match=esc("concatenate", "at least one")):
        pcp.concatenate([])
    with pytest.raises(ValueError, match=esc("concatenate", "zero-dimensional")):
        pcp.concatenate([pcp.tensor(1.0), pcp.tensor(2.0)])
    with pytest.raises(IndexError, match=esc("concatenate", "axis 2")):
        pcp.concatenate([x23, x23], axis=2)
    with pytest.raises(TypeError, match="concatenate"):
        pcp.concatenate([x23, "nope"])


def test_stack_errors(x23):
    with pytest.raises(ValueError, match=esc("stack", "same shape", "(2, 3)", "(3, 2)")):
        pcp.stack([x23, pcp.ones((3, 2))])
    with pytest.raises(ValueError, match=esc("stack", "at least one")):
        pcp.stack([])
    with pytest.raises(IndexError, match=esc("stack", "axis 3")):
        pcp.stack([x23, x23], axis=3)


def test_split_errors():
    t = pcp.ones((5, 4))
    with pytest.raises(ValueError, match=esc("split", "size 5", "3")):
        pcp.split(t, 3)
    with pytest.raises(ValueError, match=esc("split", "positive")):
        pcp.split(t, 0)
    with pytest.raises(IndexError, match="split"):
        pcp.split(t, 2, axis=2)


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_tril_triu_need_2d(name):
    with pytest.raises(ValueError, match=esc(name, "at least 2 dimensions", "(3,)")):
        getattr(pcp, name)(pcp.ones(3))


# ----------------------------------------------------------------------------------------------
# indexing, take, embedding


def test_getitem_int_out_of_range(x23):
    with pytest.raises(IndexError, match=esc("index", "index 2", "axis 0", "size 2")):
        x23[2]
    with pytest.raises(IndexError, match=esc("index", "-4", "axis 1", "size 3")):
        x23[0, -4]


def test_getitem_too_many_indices(x23):
    with pytest.raises(IndexError, match=esc("index", "too many indices")):
        x23[0, 0, 0]
    with pytest.raises(IndexError, match="index"):
        pcp.tensor(1.0)[0]


def test_getitem_array_index_out_of_range(x23):
    # The user called indexing, so the message must start with "index:" (as the other
    # indexing errors do), not with the name of an internal helper.
    with pytest.raises(IndexError, match="^" + esc("index:", "5", "out of bounds", "size 2")):
        x23[[0, 5]]
    with pytest.raises(IndexError, match="^" + esc("index:", "-4", "out of bounds", "size 3")):
        x23[:, [-4]]
    with pytest.raises(IndexError, match="^" + esc("index:", "3", "out of bounds", "size 3")):
        x23[[0, 1], [0, 3]]


def test_getitem_bad_index_types(x23):
    with pytest.raises(IndexError, match=esc("index", "integer or boolean", "float32")):
        x23[pcp.tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match=esc("index", "bool")):
        x23[True]
    with pytest.raises(TypeError, match="index"):
        x23["a"]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        x23[0.5:1]


def test_getitem_boolean_mask_shape_mismatch(x23):
    with pytest.raises(IndexError, match=esc("index", "boolean index of shape", "(3,)")):
        x23[pcp.tensor([True, False, True])]
    with pytest.raises(IndexError, match="index"):
        x23[np.ones((2, 4), dtype=bool)]


def test_getitem_slice_step_zero_and_double_ellipsis(x23):
    with pytest.raises(ValueError, match=esc("index", "step cannot be zero")):
        x23[::0]
    with pytest.raises(IndexError, match=esc("index", "single ellipsis")):
        x23[..., ...]


def test_setitem_errors(x23):
    with pytest.raises(ValueError, match=esc("index_assign", "(4,)", "(2, 3)")):
        x23[...] = pcp.ones(4)
    with pytest.raises(IndexError, match=esc("index_assign", "index 5 is out of bounds")):
        x23[[0, 5]] = 1.0
    with pytest.raises(ValueError, match=esc("index_assign", "broadcast view")):
        pcp.ones((1, 3)).broadcast_to((2, 3))[...] = 1.0
    w = pcp.ones(3, dtype=pcp.float32)
    w.requires_grad = True
    with pytest.raises(ValueError, match=esc("index_assign", "requires grad")):
        w[0] = 2.0


def test_take_errors():
    t = pcp.ones((3, 4))
    with pytest.raises(IndexError, match=esc("take", "index 4", "size 4")):
        pcp.take(t, [0, 4], axis=1)
    with pytest.raises(IndexError, match=esc("take", "-13", "size 12")):
        pcp.take(t, [-13])
    with pytest.raises(IndexError, match=esc("take", "axis 2", "out of range")):
        pcp.take(t, [0], axis=2)
    with pytest.raises(TypeError, match=esc("take", "integer", "float32")):
        pcp.take(t, pcp.tensor([0.0, 1.0]), axis=0)
    with pytest.raises(TypeError, match=esc("take", "integer")):
        pcp.take(t, [0.5], axis=0)
    with pytest.raises(TypeError, match=esc("take", "integer", "bool")):
        pcp.take(t, pcp.tensor([True]), axis=0)
    with pytest.raises(IndexError, match="take"):
        pcp.take(pcp.zeros((0, 2)), [0], axis=0)


def test_embedding_errors():
    w = pcp.ones((10, 4))
    with pytest.raises(IndexError, match=esc("embedding", "10", "size 10")):
        pcp.embedding(w, [1, 10])
    with pytest.raises(IndexError, match=esc("embedding", "-11")):
        pcp.embedding(w, [-11])
    with pytest.raises(TypeError, match=esc("embedding", "integer", "float32")):
        pcp.embedding(w, pcp.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match=esc("embedding", "integer")):
        pcp.embedding(w, [1.0])
    with pytest.raises(ValueError, match=esc("embedding", "2-D", "(10,)")):
        pcp.embedding(pcp.ones(10), [1])
    with pytest.raises(IndexError, match="embedding"):
        pcp.embedding(pcp.ones((0, 4)), [0])


def test_one_hot_errors():
    with pytest.raises(TypeError, match=esc("one_hot", "integer")):
        pcp.one_hot(pcp.tensor([0.0, 1.0]), 3)


# ----------------------------------------------------------------------------------------------
# neural network ops


def test_layer_norm_errors():
    x = pcp.ones((2, 5))
    with pytest.raises(ValueError, match=esc("layer_norm", "weight", "(4,)", "5")):
        pcp.layer_norm(x, pcp.ones(4))
    with pytest.raises(ValueError, match=esc("layer_norm", "bias", "(5, 1)")):
        pcp.layer_norm(x, pcp.ones(5), pcp.ones((5, 1)))
    with pytest.raises(ValueError, match=esc("layer_norm", "at least one dimension")):
        pcp.layer_norm(pcp.tensor(1.0))
    with pytest.raises(ValueError, match=esc("layer_norm", "eps")):
        pcp.layer_norm(x, eps=-1.0)


def test_cross_entropy_errors():
    logits = pcp.zeros((4, 3))
    with pytest.raises(IndexError, match=esc("cross_entropy", "target 3", "3 classes")):
        pcp.cross_entropy(logits, [0, 1, 2, 3])
    with pytest.raises(IndexError, match=esc("cross_entropy", "target -1")):
        pcp.cross_entropy(logits, [0, 1, 2, -1])
    with pytest.raises(IndexError, match=esc("cross_entropy", "target -100")):
        pcp.cross_entropy(logits, [0, 1, 2, -100], ignore_index=-1)
    with pytest.raises(ValueError, match=esc("cross_entropy", "(3,)", "(4, 3)", "(4,)")):
        pcp.cross_entropy(logits, [0, 1, 2])
    with pytest.raises(ValueError, match=esc("cross_entropy", "(4, 1)")):
        pcp.cross_entropy(logits, pcp.zeros((4, 1), dtype=pcp.int64))
    with pytest.raises(ValueError, match=esc("cross_entropy", "reduction", "average")):
        pcp.cross_entropy(logits, [0, 1, 2, 0], reduction="average")
    with pytest.raises(TypeError, match=esc("cross_entropy", "integer", "float32")):
        pcp.cross_entropy(logits, pcp.tensor([0.0, 1.0, 2.0, 0.0]))
    with pytest.raises(ValueError, match=esc("cross_entropy", "class axis")):
        pcp.cross_entropy(pcp.tensor(1.0), pcp.tensor(0))
    with pytest.raises(IndexError, match="cross_entropy"):
        pcp.cross_entropy(pcp.zeros((2, 0)), [0, 0])  # no classes at all


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan"), float("inf")])
def test_dropout_probability_out_of_range(p):
    with pytest.raises(ValueError, match=esc("dropout", "[0, 1]")):
        pcp.dropout(pcp.ones(3), p)
    with pytest.raises(ValueError, match="dropout"):
        pcp.dropout(pcp.ones(3), p, training=False)


def test_scaled_dot_product_attention_errors():
    op = "scaled_dot_product_attention"
    with pytest.raises(ValueError, match=esc(op, "last dimension", "(2, 4, 8)", "(2, 4, 6)")):
        pcp.scaled_dot_product_attention(pcp.ones((2, 4, 8)), pcp.ones((2, 4, 6)), pcp.ones((2, 4, 6)))
    with pytest.raises(ValueError, match=esc(op, "sequence length")):
        pcp.scaled_dot_product_attention(pcp.ones((4, 8)), pcp.ones((5, 8)), pcp.ones((6, 8)))
    with pytest.raises(ValueError, match=esc(op, "(..., T, D)")):
        pcp.scaled_dot_product_attention(pcp.ones(8), pcp.ones((5, 8)), pcp.ones((5, 8)))
    with pytest.raises(ValueError, match=esc(op, "(3, 4, 8)", "(2, 5, 8)")):  # batch dims do not broadcast
        pcp.scaled_dot_product_attention(pcp.ones((3, 4, 8)), pcp.ones((2, 5, 8)), pcp.ones((2, 5, 8)))
    with pytest.raises(ValueError, match=esc(op, "dropout_p must be in [0, 1], got -0.1")):
        pcp.scaled_dot_product_attention(pcp.ones((4, 8)), pcp.ones((4, 8)), pcp.ones((4, 8)), dropout_p=-0.1)


def test_qkv_attention_errors():
    op = "qkv_attention"
    with pytest.raises(ValueError, match=esc(op, "(B, T, 3 * C)", "num_heads = 2", "(2, 4, 9)")):
        pcp.qkv_attention(pcp.ones((2, 4, 9)), 2)
    with pytest.raises(ValueError, match=esc(op, "(B, T, 3 * C)", "(4, 12)")):
        pcp.qkv_attention(pcp.ones((4, 12)), 2)
    with pytest.raises(ValueError, match=esc(op, "num_heads must be positive, got 0")):
        pcp.qkv_attention(pcp.ones((2, 4, 12)), 0)
    with pytest.raises(ValueError, match=esc(op, "dropout_p must be in [0, 1], got 2")):
        pcp.qkv_attention(pcp.ones((2, 4, 12)), 2, dropout_p=2.0)


# ----------------------------------------------------------------------------------------------
# autograd entry points


@pytest.mark.parametrize("dtype", [pcp.int32, pcp.int64, pcp.bool_], ids=str)
def test_requires_grad_on_non_float(dtype):
    t = pcp.zeros(3, dtype=dtype)
    with pytest.raises(TypeError, match=esc("requires_grad", "floating", str(dtype).split(".")[-1])):
        t.requires_grad = True
    with pytest.raises(TypeError, match="requires_grad"):
        t.requires_grad_()
    with pytest.raises(TypeError, match="requires_grad"):
        pcp.tensor([1, 2], requires_grad=True)


def test_backward_non_scalar_without_grad():
    w = pcp.ones((2, 3), dtype=pcp.float32)
    w.requires_grad = True
    y = w * 2.0
    with pytest.raises(ValueError, match=esc("backward", "one-element", "(2, 3)")):
        y.backward()
    with pytest.raises(ValueError, match=esc("backward", "(3,)", "(2, 3)")):
        y.backward(pcp.ones(3))


def test_backward_on_tensor_not_requiring_grad():
    with pytest.raises(ValueError, match=esc("backward", "does not require grad")):
        pcp.ones(()).backward()
    with pytest.raises(ValueError, match="backward"):
        (pcp.ones(3) * 2.0).sum().backward()


def test_cannot_turn_off_grad_of_non_leaf():
    w = pcp.ones(3)
    w.requires_grad = True
    y = w * 2.0
    with pytest.raises(ValueError, match=esc("requires_grad", "non-leaf")):
        y.requires_grad = False


# ----------------------------------------------------------------------------------------------
# creation, dtypes, conversions


def test_arange_errors():
    with pytest.raises(ValueError, match=esc("arange", "step", "nonzero")):
        pcp.arange(0, 5, 0)
    with pytest.raises(ValueError, match=esc("arange", "step")):
        pcp.arange(0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match=esc("arange", "finite")):
        pcp.arange(0, float("inf"))


@pytest.mark.parametrize("low,high", [(5, 5), (5, 2), (0, -1)])
def test_randint_high_not_above_low(low, high):
    with pytest.raises(ValueError, match=esc("randint", f"high ({high})", f"low ({low})")):
        pcp.randint(low, high, (3,))


def test_random_dtype_and_shape_errors():
    with pytest.raises(TypeError, match=esc("rand", "floating", "int64")):
        pcp.rand((2,), dtype=pcp.int64)
    with pytest.raises(TypeError, match=esc("randn", "floating")):
        pcp.randn((2,), dtype="int32")
    with pytest.raises(ValueError, match=esc("rand", "negative")):
        pcp.rand((2, -1))
    with pytest.raises(ValueError, match=esc("randint", "negative")):
        pcp.randint(0, 3, (-2,))


def test_creation_negative_sizes():
    with pytest.raises(ValueError, match=esc("zeros", "negative dimension", "(2, -3)")):
        pcp.zeros((2, -3))
    with pytest.raises(ValueError, match=esc("ones", "negative dimension")):
        pcp.ones(-1)
    with pytest.raises(ValueError, match=esc("full", "negative dimension")):
        pcp.full((-1, 2), 3.0)
    with pytest.raises(ValueError, match=esc("eye", "negative")):
        pcp.eye(-2)
    with pytest.raises(TypeError, match="shape"):
        pcp.zeros((2, 1.5))


@pytest.mark.parametrize("name", ["float128", "complex64", "int8", "uint8", "float", "floatt", ""])
def test_unknown_dtype_string(name):
    if name == "float":  # a known alias of float32; not an error
        assert pcp.zeros(1, dtype=name).dtype == pcp.float32
        return
    with pytest.raises(TypeError, match=esc("unknown dtype", f"'{name}'")):
        pcp.zeros(2, dtype=name)
    with pytest.raises(TypeError, match="unknown dtype"):
        pcp.ones(2).astype(name)


def test_unsupported_dtype_objects():
    with pytest.raises(TypeError, match="unsupported dtype"):
        pcp.zeros(2, dtype=np.complex64)
    with pytest.raises(TypeError, match="unsupported dtype"):
        pcp.zeros(2, dtype=object())
    with pytest.raises(TypeError, match="unsupported dtype"):
        pcp.ones(2).astype(np.uint16)


def test_tensor_from_unsupported_data():
    with pytest.raises(TypeError, match=esc("tensor", "unsupported NumPy dtype", "complex")):
        pcp.tensor(np.ones(2, dtype=np.complex64))
    with pytest.raises(TypeError, match="tensor"):
        pcp.tensor({1, 2})
    with pytest.raises(TypeError, match=esc("from_numpy", "unsupported dtype")):
        pcp.from_numpy(np.ones(3, dtype=np.uint8))
    with pytest.raises(TypeError, match=esc("from_numpy", "unsupported dtype")):
        pcp.from_numpy(np.ones(3, dtype=np.complex128))
    with pytest.raises(TypeError, match="from_dlpack"):
        pcp.from_dlpack(42)


def test_conversion_errors():
    with pytest.raises(ValueError, match=esc("item", "one element", "(2, 3)")):
        pcp.ones((2, 3)).item()
    with pytest.raises(ValueError, match=esc("bool", "ambiguous")):
        bool(pcp.ones(3))
    with pytest.raises(TypeError, match="len"):
        len(pcp.tensor(1.0))
    with pytest.raises(TypeError, match=esc("numpy", "bfloat16")):
        pcp.ones(2, dtype=pcp.bfloat16).numpy()
    with pytest.raises(TypeError, match="index"):
        [1, 2, 3][pcp.tensor(1.0)]
    with pytest.raises(ValueError, match=esc("unknown device", "tpu")):
        pcp.ones(2).to("tpu")
    with pytest.raises(ValueError, match=esc("device 'gpu:7'")):
        pcp.device("gpu:7")


def test_errors_do_not_corrupt_state():
    # After a burst of failures the library keeps working and gives right answers.
    t = pcp.arange(6).reshape(2, 3).astype(pcp.float32)
    for bad in [lambda: t @ t, lambda: t[5], lambda: t.reshape(4), lambda: pcp.take(t, [9]),
                lambda: pcp.cross_entropy(t, [7, 0]), lambda: pcp.concatenate([t, t.T])]:
        with pytest.raises((ValueError, IndexError, TypeError)):
            bad()
    np.testing.assert_array_equal((t @ t.T).numpy(), np.array([[5.0, 14.0], [14.0, 50.0]]))


@pytest.mark.cpu_only
def test_names_given_as_bytes_are_refused():
    """pybind11 turns bytes into a string too; a name must be a str (the fuzzer found b'high'
    accepted), as NumPy and PyTorch require."""
    before = pcp.get_float32_matmul_precision()
    for call, name in ((lambda: pcp.set_float32_matmul_precision(b"high"), "set_float32_matmul_precision"),
                       (lambda: pcp.device(b"cpu"), "device"), (lambda: pcp.set_default_device(b"cpu"), "set_default_device"),
                       (lambda: pcp.ones(2).to(b"cpu"), "to")):
        with pytest.raises(TypeError, match=f"^{name}: .*(must be str|unsupported)"):
            call()
    assert pcp.get_float32_matmul_precision() == before
