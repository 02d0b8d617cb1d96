"""Forward values of every PCP op against NumPy references computed in float64.

Each test builds its inputs in the dtype under test, reads back the (rounded) values as float64
with ``to_np`` and computes the reference on those, so only the op's own error is measured.
Tolerances come from ``conftest.TOL``; for sums and dot products the bound also scales with the
sum of absolute terms (the usual forward-error bound of a summation), see ``assert_close``.

Where PCP deliberately differs from NumPy (PyTorch-like defaults), the test follows PCP and says so.
"""
import math

import numpy as np
import pytest

import pcp
from conftest import TOL, requires_torch, to_np, torch, on_each_device

pytestmark = on_each_device

FLOATS = [pcp.float32, pcp.float64]
LOW = [pcp.float16, pcp.bfloat16]
ALL_FLOATS = FLOATS + LOW
INTS = [pcp.int32, pcp.int64]
ALL_DTYPES = [pcp.bool_, pcp.int32, pcp.int64, pcp.float16, pcp.bfloat16, pcp.float32, pcp.float64]
DTYPE_NAME = {pcp.bool_: "bool", pcp.int32: "int32", pcp.int64: "int64", pcp.float16: "float16",
              pcp.bfloat16: "bfloat16", pcp.float32: "float32", pcp.float64: "float64"}
NP_OF = {pcp.bool_: np.bool_, pcp.int32: np.int32, pcp.int64: np.int64, pcp.float16: np.float16,
         pcp.float32: np.float32, pcp.float64: np.float64}


# ----------------------------------------------------------------------------------------------
# helpers


@pytest.fixture
def rng():
    return np.random.default_rng(20240531)


def make(rng, shape, dtype=pcp.float32, low=-2.0, high=2.0):
    """A pcp tensor of uniform values and its float64 (already rounded to dtype) NumPy twin."""
    if dtype in (pcp.int32, pcp.int64):
        a = rng.integers(int(low), int(high) + 1, size=shape)
    elif dtype == pcp.bool_:
        a = rng.random(size=shape) < 0.5
    else:
        a = rng.uniform(low, high, size=shape)
    t = pcp.tensor(np.asarray(a), dtype=dtype)
    return t, to_np(t)


def assert_close(actual, expected, dtype=None, *, err_scale=None):
    """actual: pcp tensor; expected: float64 (or exact int/bool) NumPy reference.

    Checks dtype, shape and values: exact for int/bool, else |a - e| <= atol + rtol * (|e| + err_scale)
    with (atol, rtol) = TOL[dtype]; NaNs must match NaNs and infinities must match exactly.
    """
    assert isinstance(actual, pcp.Tensor), type(actual)
    if dtype is not None:
        assert actual.dtype == dtype, (actual.dtype, dtype)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    a = to_np(actual)
    if actual.dtype not in TOL:
        np.testing.assert_array_equal(a, expected)
        return
    tol = TOL[actual.dtype]
    e = expected.astype(np.float64)
    bound = tol["atol"] + tol["rtol"] * np.abs(np.where(np.isfinite(e), e, 0))
    if err_scale is not None:
        bound = bound + tol["rtol"] * np.asarray(err_scale, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = (np.isnan(a) & np.isnan(e)) | (np.isinf(e) & (a == e)) | (np.abs(a - e) <= bound)
    if not ok.all():
        bad = np.argwhere(~ok)[:5]
        detail = ", ".join(f"{tuple(i)}: got {a[tuple(i)]!r} expected {e[tuple(i)]!r}" for i in bad)
        raise AssertionError(f"{(~ok).sum()} of {ok.size} elements differ ({actual.dtype}); {detail}")


def np_sigmoid(x):
    with np.errstate(invalid="ignore"):
        return np.exp(-np.logaddexp(0.0, -x))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def np_gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if keepdims:
        return r
    return np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


def np_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    return x - np_logsumexp(x, axis=axis, keepdims=True)


# ----------------------------------------------------------------------------------------------
# unary elementwise

# name -> (pcp function, float64 reference, input range)
UNARY = {
    "neg": (pcp.neg, np.negative, (-3, 3)),
    "abs": (pcp.abs, np.abs, (-3, 3)),
    "exp": (pcp.exp, np.exp, (-5, 5)),
    "log": (pcp.log, np.log, (0.01, 10)),
    "sqrt": (pcp.sqrt, np.sqrt, (0.0, 10)),
    "rsqrt": (pcp.rsqrt, lambda x: 1.0 / np.sqrt(x), (0.05, 10)),
    "sin": (pcp.sin, np.sin, (-6, 6)),
    "cos": (pcp.cos, np.cos, (-6, 6)),
    "tanh": (pcp.tanh, np.tanh, (-5, 5)),
    "sigmoid": (pcp.sigmoid, np_sigmoid, (-8, 8)),
    "relu": (pcp.relu, lambda x: np.maximum(x, 0.0), (-3, 3)),
    "gelu": (lambda t: pcp.gelu(t, approximate="none"), np_gelu, (-5, 5)),
    "gelu_tanh": (lambda t: pcp.gelu(t, approximate="tanh"), np_gelu_tanh, (-5, 5)),
    "silu": (pcp.silu, lambda x: x * np_sigmoid(x), (-8, 8)),
    "square": (pcp.square, np.square, (-3, 3)),
    "sign": (pcp.sign, np.sign, (-3, 3)),
    "erf": (pcp.erf, _erf, (-3, 3)),
}
LOW_UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf"]


def _unary_input(rng, shape, dtype, name):
    lo, hi = UNARY[name][2]
    a = rng.uniform(lo, hi, size=shape)
    if lo <= 0 <= hi and a.size:
        a.reshape(-1)[::7] = 0.0  # exact zeros for sign/relu/abs/sqrt
    t = pcp.tensor(a, dtype=dtype)
    return t, to_np(t)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 17), (2, 3, 130), (0, 3)], ids=str)
def test_unary(name, dtype, shape, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, shape, dtype, name)
    assert_close(fn(t), ref(x), dtype)


@pytest.mark.parametrize("name", LOW_UNARY)
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_unary_low_precision(name, dtype, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, (5, 37), dtype, name)
    assert_close(fn(t), ref(x), dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_non_contiguous(name, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, (19, 34), pcp.float32, name)
    tt = t.T  # transposed view
    assert not tt.is_contiguous()
    assert_close(fn(tt), ref(x.T), pcp.float32)
    ts = t[1::3, ::-2]  # strided, reversed slice
    assert_close(fn(ts), ref(x[1::3, ::-2]), pcp.float32)


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "gelu", "silu", "sqrt", "erf", "sin"])
def test_unary_large_multithreaded(name, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, (300, 1001), pcp.float32, name)
    assert_close(fn(t), ref(x), pcp.float32)


SPECIAL = np.array([-np.inf, -100.0, -20.0, -1.0, -1e-30, 0.0, 1e-30, 0.5, 1.0, 20.0, 100.0, np.inf, np.nan])


@pytest.mark.parametrize("name", ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh",
                                  "sigmoid", "relu", "square", "sign", "erf"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_unary_special_values(name, dtype):
    # Infinities, NaN, huge and tiny inputs behave as the float64 function rounded to the dtype
    # (NaN in -> NaN out, like NumPy).
    fn, ref, _ = UNARY[name]
    with np.errstate(all="ignore"):
        expected = ref(SPECIAL.copy()).astype(NP_OF[dtype]).astype(np.float64)
    assert_close(fn(pcp.tensor(SPECIAL, dtype=dtype)), expected, dtype)


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu"])
def test_unary_smooth_activations_at_large_inputs(name):
    fn, ref, _ = UNARY[name]
    x = np.array([-100.0, -30.0, -10.0, 10.0, 30.0, 100.0, np.nan])
    assert_close(fn(pcp.tensor(x, dtype=pcp.float32)), ref(x), pcp.float32)
    assert_close(fn(pcp.tensor(x, dtype=pcp.float64)), ref(x), pcp.float64)


@pytest.mark.parametrize("name", ["neg", "abs", "square", "sign", "relu"])
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_unary_integer_inputs_keep_dtype(name, dtype, rng):
    fn, ref, _ = UNARY[name]
    t, x = make(rng, (4, 9), dtype, -5, 5)
    assert_close(fn(t), ref(x).astype(np.int64), dtype)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "gelu", "erf"])
def test_unary_float_only_ops_promote_ints_to_float32(name, rng):
    # PCP: float-only math on an integer tensor computes in the default float (float32).
    fn, ref, _ = UNARY[name]
    t, x = make(rng, (3, 5), pcp.int32, 1, 6)
    assert_close(fn(t), ref(x.astype(np.float64)), pcp.float32)


def test_tensor_method_forms_of_unary_ops(rng):
    t, x = make(rng, (4, 6), pcp.float32, 0.1, 2)
    assert_close(t.exp(), np.exp(x))
    assert_close(t.log(), np.log(x))
    assert_close(t.sqrt(), np.sqrt(x))
    assert_close(t.tanh(), np.tanh(x))
    assert_close(t.gelu(approximate="tanh"), np_gelu_tanh(x))
    assert_close(t.clip(0.5, 1.5), np.clip(x, 0.5, 1.5))
    assert_close(abs(-t), np.abs(x))


# ----------------------------------------------------------------------------------------------
# binary elementwise

ARITH = {
    "add": (pcp.add, np.add),
    "sub": (pcp.sub, np.subtract),
    "mul": (pcp.mul, np.multiply),
    "div": (pcp.div, np.divide),
    "pow": (pcp.pow, np.power),
    "maximum": (pcp.maximum, np.maximum),
    "minimum": (pcp.minimum, np.minimum),
}
CMP = {
    "eq": (pcp.eq, np.equal),
    "ne": (pcp.ne, np.not_equal),
    "lt": (pcp.lt, np.less),
    "le": (pcp.le, np.less_equal),
    "gt": (pcp.gt, np.greater),
    "ge": (pcp.ge, np.greater_equal),
}
BCAST = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (3, 4)), ((), (3, 4)), ((2, 1, 5), (3, 1)),
         ((5, 1, 7), (1, 6, 1)), ((0, 3), (1, 3)), ((1,), ()), ((), ())]


def _binary_inputs(rng, name, sa, sb, dtype):
    if name == "pow":
        a = make(rng, sa, dtype, 0.5, 2.0)
        b = make(rng, sb, dtype, -2.0, 2.0)
    elif name == "div":
        a = make(rng, sa, dtype, -3.0, 3.0)
        mag = rng.uniform(0.5, 3.0, size=sb) * rng.choice([-1.0, 1.0], size=sb)  # away from zero
        tb = pcp.tensor(np.asarray(mag), dtype=dtype)
        b = (tb, to_np(tb))
    else:
        a = make(rng, sa, dtype)
        b = make(rng, sb, dtype)
    return a, b


@pytest.mark.parametrize("name", sorted(ARITH))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shapes", BCAST, ids=str)
def test_binary_arith(name, dtype, shapes, rng):
    fn, ref = ARITH[name]
    (ta, a), (tb, b) = _binary_inputs(rng, name, *shapes, dtype)
    assert_close(fn(ta, tb), ref(a, b), dtype)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_binary_arith_low_precision(name, dtype, rng):
    fn, ref = ARITH[name]
    (ta, a), (tb, b) = _binary_inputs(rng, name, (4, 37), (37,), dtype)
    assert_close(fn(ta, tb), ref(a, b), dtype)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_binary_arith_integers_exact(name, dtype, rng):
    fn, ref = ARITH[name]
    ta, a = make(rng, (3, 4), dtype, -50, 50)
    tb, b = make(rng, (4,), dtype, -50, 50)
    assert_close(fn(ta, tb), ref(a, b), dtype)


def test_integer_pow_exact(rng):
    ta, a = make(rng, (3, 4), pcp.int64, -4, 4)
    tb, b = make(rng, (3, 4), pcp.int64, 0, 5)
    assert_close(pcp.pow(ta, tb), np.power(a, b), pcp.int64)


@pytest.mark.parametrize("name", sorted(CMP))
@pytest.mark.parametrize("dtype", [pcp.float32, pcp.float64, pcp.float16, pcp.int32, pcp.int64], ids=str)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((0, 2), (2,))], ids=str)
def test_comparisons(name, dtype, shapes, rng):
    # Small integer values so that ties (equal elements) are common.
    fn, ref = CMP[name]
    ta, a = make(rng, shapes[0], dtype, -2, 2)
    tb, b = make(rng, shapes[1], dtype, -2, 2)
    if dtype in ALL_FLOATS:
        ta, tb = pcp.tensor(np.round(a), dtype=dtype), pcp.tensor(np.round(b), dtype=dtype)
        a, b = np.round(a), np.round(b)
    assert_close(fn(ta, tb), ref(a, b), pcp.bool_)


def test_comparisons_with_nan():
    a = np.array([np.nan, 1.0, np.nan, -np.inf, np.inf])
    b = np.array([np.nan, np.nan, 1.0, -np.inf, 1.0])
    for name, (fn, ref) in CMP.items():
        assert_close(fn(pcp.tensor(a), pcp.tensor(b)), ref(a, b), pcp.bool_)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan(name):
    # NumPy (and PyTorch) propagate NaN from either side.
    fn, ref = ARITH[name]
    a = np.array([np.nan, 1.0, np.nan, 2.0, -np.inf])
    b = np.array([1.0, np.nan, np.nan, 3.0, 0.0])
    for dtype in FLOATS:
        assert_close(fn(pcp.tensor(a, dtype=dtype), pcp.tensor(b, dtype=dtype)), ref(a, b), dtype)


def test_bool_maximum_minimum_stay_bool():
    # PCP: maximum/minimum of bools is logical or/and and stays bool (as NumPy).
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    assert_close(pcp.maximum(pcp.tensor(a), pcp.tensor(b)), np.maximum(a, b), pcp.bool_)
    assert_close(pcp.minimum(pcp.tensor(a), pcp.tensor(b)), np.minimum(a, b), pcp.bool_)
    assert_close(pcp.logical_and(pcp.tensor(a), pcp.tensor(b)), a & b, pcp.bool_)
    assert_close(pcp.logical_or(pcp.tensor(a), pcp.tensor(b)), a | b, pcp.bool_)
    assert_close(pcp.logical_not(pcp.tensor(a)), ~a, pcp.bool_)
    assert_close(pcp.tensor(a) & pcp.tensor(b), a & b, pcp.bool_)
    assert_close(pcp.tensor(a) | pcp.tensor(b), a | b, pcp.bool_)
    assert_close(~pcp.tensor(a), ~a, pcp.bool_)


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "div"])
def test_binary_non_contiguous_operands(name, rng):
    fn, ref = ARITH[name]
    ta, a = make(rng, (33, 20), pcp.float32, 0.5, 2)
    tb, b = make(rng, (40, 33), pcp.float32, 0.5, 2)
    assert_close(fn(ta.T, tb[::2]), ref(a.T, b[::2]))  # transposed and row-strided: (20, 33)
    assert_close(fn(ta[::5, ::3], tb[1:8, 2:9].T), ref(a[::5, ::3], b[1:8, 2:9].T))  # strided (7, 7)
    assert_close(fn(ta[::-4, 1], tb[:9, -1]), ref(a[::-4, 1], b[:9, -1]))  # reversed 1-D views
    assert_close(fn(ta.T[:, :1], tb[:20].T[:1]), ref(a.T[:, :1], b[:20].T[:1]))  # broadcast of views


def test_binary_broadcast_of_transposed_views(rng):
    ta, a = make(rng, (6, 1, 5))
    tb, b = make(rng, (6, 4))
    # (5, 1, 6) view + (4, 6) view -> (5, 4, 6)
    assert_close(ta.transpose(2, 1, 0) + tb.T, a.transpose(2, 1, 0) + b.T)
    # (6, 1, 5) + (6, 4)[:, :1, None]-like view (6, 1, 1) -> (6, 1, 5)
    assert_close(pcp.mul(ta, tb[:, :1, None]), a * b[:, :1, None])


def test_binary_large_multithreaded(rng):
    ta, a = make(rng, (512, 700))
    tb, b = make(rng, (700,))
    assert_close(ta * tb + ta, a * b + a)
    assert_close(pcp.maximum(ta, tb), np.maximum(a, b))


@pytest.mark.parametrize("dtype", FLOATS + [pcp.int64], ids=str)
def test_where(dtype, rng):
    tc, c = make(rng, (3, 1, 5), pcp.bool_)
    ta, a = make(rng, (4, 5), dtype, -9, 9)
    tb, b = make(rng, (3, 4, 1), dtype, -9, 9)
    assert_close(pcp.where(tc, ta, tb), np.where(c, a, b), dtype)
    # Python scalars on either branch are weak: the tensor's dtype wins.
    assert_close(pcp.where(tc, ta, 0), np.where(c, a, 0).astype(a.dtype), dtype)
    assert_close(pcp.where(tc, 1, ta), np.where(c, 1, a).astype(a.dtype), dtype)


def test_where_condition_from_numbers_and_mixed_dtypes(rng):
    # A non-bool condition is cast to bool (nonzero is True); int32 and float32 branches give float32.
    tc, c = make(rng, (6,), pcp.int64, -1, 1)
    ta, a = make(rng, (6,), pcp.int32, -5, 5)
    tb, b = make(rng, (6,), pcp.float32)
    assert_close(pcp.where(tc, ta, tb), np.where(c != 0, a, b), pcp.float32)
    assert_close(pcp.where(tc > 0, 1.0, 2.0), np.where(c > 0, 1.0, 2.0))


@pytest.mark.parametrize("dtype", FLOATS + [pcp.int32], ids=str)
def test_clip(dtype, rng):
    t, x = make(rng, (5, 7), dtype, -5, 5)
    assert_close(pcp.clip(t, -1, 2), np.clip(x, -1, 2), dtype)
    assert_close(pcp.clip(t, min=0), np.maximum(x, 0), dtype)
    assert_close(pcp.clip(t, max=1), np.minimum(x, 1), dtype)
    assert_close(pcp.clip(t), x, dtype)
    lo, lo_n = make(rng, (7,), dtype, -3, 0)
    hi, hi_n = make(rng, (5, 1), dtype, 0, 3)
    assert_close(pcp.clip(t, lo, hi), np.minimum(np.maximum(x, lo_n), hi_n), dtype)


# ----------------------------------------------------------------------------------------------
# operators


OPS = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b),
    ("pow", lambda a, b: a ** b),
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
]


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
def test_operators_tensor_tensor(name, op, rng):
    ta, a = make(rng, (3, 4), pcp.float32, 0.5, 2)
    tb, b = make(rng, (4,), pcp.float32, 0.5, 2)
    ta, tb = pcp.tensor(np.round(a * 4) / 4, dtype=pcp.float32), pcp.tensor(np.round(b * 4) / 4, dtype=pcp.float32)
    a, b = to_np(ta), to_np(tb)
    assert_close(op(ta, tb), op(a, b))


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("scalar", [2, 1.5, -0.75])
def test_operators_with_python_scalars_both_sides(name, op, scalar, rng):
    t, x = make(rng, (2, 5), pcp.float32, 0.5, 2)
    t = pcp.tensor(np.round(x * 4) / 4, dtype=pcp.float32)
    x = to_np(t)
    with np.errstate(invalid="ignore"):
        assert_close(op(t, scalar), op(x, scalar), None)
        assert_close(op(scalar, t), op(scalar, x), None)
    assert op(t, scalar).dtype == (pcp.bool_ if name in dict(CMP) else pcp.float32)


def test_operators_with_numpy_arrays_and_lists(rng):
    t, x = make(rng, (2, 3))
    a = rng.uniform(-1, 1, size=(2, 3)).astype(np.float32)
    # NumPy defers to Tensor (__array_priority__), so ndarray on the left also gives a Tensor.
    r = a + t
    assert isinstance(r, pcp.Tensor)
    assert_close(r, a.astype(np.float64) + x)
    assert_close(t - a, x - a.astype(np.float64))
    assert_close(t * [1.0, 2.0, 3.0], x * np.array([1.0, 2.0, 3.0]))


def test_unary_operators(rng):
    t, x = make(rng, (4, 3))
    assert_close(-t, -x)
    assert_close(abs(t), np.abs(x))
    ti, xi = make(rng, (5,), pcp.int64, -5, 5)
    assert_close(-ti, -xi, pcp.int64)


def test_matmul_operator(rng):
    ta, a = make(rng, (3, 4))
    tb, b = make(rng, (4, 5))
    assert_close(ta @ tb, a @ b, err_scale=np.abs(a) @ np.abs(b))
    m = rng.uniform(-1, 1, size=(5, 2))
    assert_close(tb @ m, b @ m, pcp.float64, err_scale=np.abs(b) @ np.abs(m))  # float32 @ float64 array
    r = m.T @ tb.T  # ndarray @ Tensor -> Tensor.__rmatmul__
    assert isinstance(r, pcp.Tensor)
    assert_close(r, m.T @ b.T, pcp.float64, err_scale=np.abs(m.T) @ np.abs(b.T))


def test_pow_operator_with_two_is_square_and_int_exponents(rng):
    t, x = make(rng, (10,))
    assert_close(t ** 2, x**2)
    assert_close(t ** 3, x**3)
    assert_close(2 ** t, 2.0**x)
    ti, xi = make(rng, (10,), pcp.int32, -6, 6)
    assert_close(ti ** 2, xi**2, pcp.int32)
    assert_close(abs(ti) ** 0.5, np.abs(xi) ** 0.5, pcp.float32)


# ----------------------------------------------------------------------------------------------
# dtype promotion

_i32 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.int32))  # noqa: E731
_i64 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.int64))  # noqa: E731
_f16 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.float16))  # noqa: E731
_bf16 = lambda: pcp.tensor([1.0, -2.0, 3.0], dtype=pcp.bfloat16)  # noqa: E731
_f32 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.float32))  # noqa: E731
_f64 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.float64))  # noqa: E731
_b = lambda: pcp.tensor(np.array([True, False, True]))  # noqa: E731
_V = np.array([1.0, -2.0, 3.0])
_B = np.array([1.0, 0.0, 1.0])

PROMOTION = [
    # (id, expression, expected dtype, expected values)
    ("int32+1", lambda: _i32() + 1, pcp.int32, _V + 1),  # Python scalars are weak
    ("1+int32", lambda: 1 + _i32(), pcp.int32, _V + 1),
    ("int32*True", lambda: _i32() * True, pcp.int32, _V),
    ("int32+1.5", lambda: _i32() + 1.5, pcp.float32, _V + 1.5),  # weak float over int: default float
    ("int64+1.5", lambda: _i64() + 1.5, pcp.float32, _V + 1.5),
    ("float16*2.0", lambda: _f16() * 2.0, pcp.float16, _V * 2),
    ("float16*2", lambda: _f16() * 2, pcp.float16, _V * 2),
    ("bfloat16+1.0", lambda: _bf16() + 1.0, pcp.bfloat16, _V + 1),
    ("float64*2.0", lambda: _f64() * 2.0, pcp.float64, _V * 2),
    ("float32-0.5", lambda: 0.5 - _f32(), pcp.float32, 0.5 - _V),
    ("int32+float32", lambda: _i32() + _f32(), pcp.float32, 2 * _V),
    ("int64+float32", lambda: _i64() + _f32(), pcp.float32, 2 * _V),
    ("int32+int64", lambda: _i32() + _i64(), pcp.int64, 2 * _V),
    ("float32+float64", lambda: _f32() + _f64(), pcp.float64, 2 * _V),
    ("float16+float32", lambda: _f16() + _f32(), pcp.float32, 2 * _V),
    # float16 and bfloat16 have no common 16-bit type (as PyTorch)
    ("float16+bfloat16", lambda: _f16() + _bf16(), pcp.float32, 2 * _V),
    # PCP (like PyTorch, unlike NumPy's float64): a strong int64 with float16 gives float16
    ("int64+float16", lambda: _i64() + _f16(), pcp.float16, 2 * _V),
    # bools as NumPy: + is logical or, * logical and; with numbers they count in int64
    ("bool+bool", lambda: _b() + _b(), pcp.bool_, _B.astype(bool)),
    ("bool*bool", lambda: _b() * _b(), pcp.bool_, _B.astype(bool)),
    ("bool+1", lambda: _b() + 1, pcp.int64, _B + 1),
    ("bool+1.5", lambda: _b() + 1.5, pcp.float32, _B + 1.5),
    ("bool+int32", lambda: _b() + _i32(), pcp.int32, _B + _V),
    ("bool==bool", lambda: _b() == _b(), pcp.bool_, np.ones(3, bool)),
    # true division: int / int is float32 (NumPy gives float64)
    ("int32/int32", lambda: _i32() / _i32(), pcp.float32, np.ones(3)),
    ("int64/2", lambda: _i64() / 2, pcp.float32, _V / 2),
    ("2/int64", lambda: 2 / _i64(), pcp.float32, 2 / _V),
    ("float16/2", lambda: _f16() / 2, pcp.float16, _V / 2),
    ("int32**2", lambda: _i32() ** 2, pcp.int32, _V**2),
    ("int32<1.5", lambda: _i32() < 1.5, pcp.bool_, _V < 1.5),
    ("maximum(int32,0.5)", lambda: pcp.maximum(_i32(), 0.5), pcp.float32, np.maximum(_V, 0.5)),
    ("where(int32,float64)", lambda: pcp.where(_b(), _i32(), _f64()), pcp.float64, _V),
    ("concat(int32,float32)", lambda: pcp.concatenate([_i32(), _f32()]), pcp.float32, np.concatenate([_V, _V])),
    ("sum(int32)", lambda: pcp.sum(_i32()), pcp.int64, np.array(2.0)),  # as NumPy on Linux
    ("sum(bool)", lambda: pcp.sum(_b()), pcp.int64, np.array(2.0)),
    ("max(bool)", lambda: pcp.max(_b()), pcp.bool_, np.array(True)),
    ("mean(int64)", lambda: pcp.mean(_i64()), pcp.float64, np.array(2.0 / 3)),  # exact, as NumPy
    ("exp(int32)", lambda: pcp.exp(_i32()), pcp.float32, np.exp(_V)),
    ("softmax(int64)", lambda: pcp.softmax(_i64()), pcp.float32, np_softmax(_V, -1)),
    ("float32@float64", lambda: _f32()[None] @ _f64()[:, None], pcp.float64, np.array([[14.0]])),
    ("float16@float16", lambda: _f16()[None] @ _f16()[:, None], pcp.float16, np.array([[14.0]])),
    ("weak+weak", lambda: pcp.add(1, 2.5), pcp.float64, np.array(3.5)),
]


@pytest.mark.parametrize("expr,dtype,expected", [p[1:] for p in PROMOTION], ids=[p[0] for p in PROMOTION])
def test_dtype_promotion(expr, dtype, expected):
    r = expr()
    assert r.dtype == dtype
    if dtype == pcp.bool_:
        np.testing.assert_array_equal(to_np(r), np.asarray(expected))
    else:
        assert_close(r, np.asarray(expected, dtype=np.float64), dtype)


def test_weak_scalar_result_of_python_numbers_is_float64_storage():
    # Two Python numbers: both weak, the result keeps float64 storage but stays weak,
    # so adding it to a float32 tensor still gives float32.
    r = pcp.add(1, 2.5)
    t = pcp.tensor([1.0, 2.0]) + r
    assert t.dtype == pcp.float32
    assert_close(t, np.array([4.5, 5.5]))


# ----------------------------------------------------------------------------------------------
# reductions

AXES = [None, 0, 1, -1, 2, (0, 2), (-1, 0), (1,), (0, 1, 2), ()]
SHAPE3 = (3, 4, 5)


def _np_reduce(name, x, axis, keepdims, ddof=0):
    if name == "sum":
        return np.sum(x, axis=axis, keepdims=keepdims)
    if name == "mean":
        return np.mean(x, axis=axis, keepdims=keepdims)
    if name == "max":
        return np.max(x, axis=axis, keepdims=keepdims)
    if name == "min":
        return np.min(x, axis=axis, keepdims=keepdims)
    if name == "var":
        return np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)
    if name == "logsumexp":
        return np_logsumexp(x, axis=axis, keepdims=keepdims)
    raise KeyError(name)


def _err_scale(name, x, axis, keepdims):
    """Error scale of a reduction: the reduced sum of |terms| (zero for max/min)."""
    if name in ("max", "min"):
        return None
    if name == "mean":
        return np.mean(np.abs(x), axis=axis, keepdims=keepdims)
    if name == "var":
        d = x - np.mean(x, axis=axis, keepdims=True)
        return np.mean(d * d, axis=axis, keepdims=keepdims) * 4
    return None


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "var", "logsumexp"])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims, rng):
    t, x = make(rng, SHAPE3)
    r = getattr(pcp, name)(t, axis=axis, keepdims=keepdims)
    assert_close(r, _np_reduce(name, x, axis, keepdims), pcp.float32,
                 err_scale=_err_scale(name, x, axis, keepdims)
                 if name != "sum" else np.sum(np.abs(x), axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "var", "logsumexp"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)], ids=str)
def test_reductions_float64(name, axis, rng):
    t, x = make(rng, SHAPE3, pcp.float64)
    r = getattr(pcp, name)(t, axis=axis)
    scale = np.sum(np.abs(x), axis=axis) if name == "sum" else _err_scale(name, x, axis, False)
    assert_close(r, _np_reduce(name, x, axis, False), pcp.float64, err_scale=scale)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("dtype", LOW, ids=str)
@pytest.mark.parametrize("axis", [None, 0, -1], ids=str)
def test_reductions_low_precision(name, dtype, axis, rng):
    t, x = make(rng, (6, 50), dtype)
    r = getattr(pcp, name)(t, axis=axis)
    scale = np.sum(np.abs(x), axis=axis) if name == "sum" else _err_scale(name, x, axis, False)
    assert_close(r, _np_reduce(name, x, axis, False), dtype, err_scale=scale)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "var", "logsumexp"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (1, 2)], ids=str)
def test_reductions_non_contiguous(name, axis, rng):
    t, x = make(rng, (5, 4, 6))
    tv, xv = t.transpose(2, 0, 1)[::2], x.transpose(2, 0, 1)[::2]
    r = getattr(pcp, name)(tv, axis=axis, keepdims=True)
    scale = np.sum(np.abs(xv), axis=axis, keepdims=True) if name == "sum" else _err_scale(name, xv, axis, True)
    assert_close(r, _np_reduce(name, xv, axis, True), pcp.float32, err_scale=scale)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_reductions_large(name, axis, rng):
    t, x = make(rng, (700, 513))
    r = getattr(pcp, name)(t, axis=axis)
    scale = np.sum(np.abs(x), axis=axis) if name == "sum" else _err_scale(name, x, axis, False)
    assert_close(r, _np_reduce(name, x, axis, False), pcp.float32, err_scale=scale)


@pytest.mark.parametrize("ddof", [0, 1, 2])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)], ids=str)
def test_var_ddof(ddof, axis, rng):
    t, x = make(rng, (4, 6, 3), pcp.float64)
    assert_close(pcp.var(t, axis=axis, ddof=ddof), np.var(x, axis=axis, ddof=ddof), pcp.float64)
    assert_close(t.var(axis=axis, ddof=ddof, keepdims=True), np.var(x, axis=axis, ddof=ddof, keepdims=True))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [pcp.float32, pcp.int32, pcp.float64], ids=str)
def test_argmax_argmin_with_ties(name, axis, keepdims, dtype, rng):
    # Few distinct values: ties are everywhere, and the first occurrence must win (NumPy).
    t, x = make(rng, SHAPE3, pcp.int64, 0, 3)
    t = t.astype(dtype)
    r = getattr(pcp, name)(t, axis=axis, keepdims=keepdims)
    assert_close(r, getattr(np, name)(x, axis=axis, keepdims=keepdims), pcp.int64)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_non_contiguous_and_low_precision(name, rng):
    t, x = make(rng, (9, 40))
    assert_close(getattr(pcp, name)(t.T, axis=1), getattr(np, name)(x.T, axis=1), pcp.int64)
    assert_close(getattr(pcp, name)(t[:, ::-3]), getattr(np, name)(x[:, ::-3]), pcp.int64)
    t16, x16 = make(rng, (9, 40), pcp.bfloat16)
    assert_close(getattr(t16, name)(axis=0), getattr(np, name)(x16, axis=0), pcp.int64)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_reductions(dtype, rng):
    t, x = make(rng, (4, 7), dtype, -100, 100)
    assert_close(pcp.sum(t, axis=1), np.sum(x, axis=1), pcp.int64)  # ints sum in int64 (NumPy on Linux)
    assert_close(pcp.max(t, axis=0), np.max(x, axis=0), dtype)
    assert_close(pcp.min(t), np.min(x), dtype)
    assert_close(pcp.mean(t, axis=0), np.mean(x, axis=0), pcp.float64)  # ints average in float64, as NumPy
    assert_close(pcp.var(t), np.var(x.astype(np.float64)), pcp.float64)


def test_bool_reductions():
    x = np.array([[True, False, True], [False, False, True]])
    t = pcp.tensor(x)
    assert_close(pcp.sum(t, axis=0), x.sum(axis=0), pcp.int64)
    # PCP: max/min of bool stay bool (logical any/all), like NumPy
    assert_close(pcp.max(t, axis=1), x.max(axis=1), pcp.bool_)
    assert_close(pcp.min(t, axis=0), x.min(axis=0), pcp.bool_)
    assert_close(t.any(axis=1), x.any(axis=1), pcp.bool_)
    assert_close(t.all(axis=0), x.all(axis=0), pcp.bool_)
    assert_close(pcp.argmax(t, axis=1), x.argmax(axis=1), pcp.int64)


def test_zero_size_reductions(rng):
    z = pcp.zeros((0, 3))
    assert_close(pcp.sum(z), np.array(0.0))
    assert_close(pcp.sum(z, axis=0), np.zeros(3))
    assert_close(pcp.sum(z, axis=1), np.zeros(0))
    assert_close(pcp.sum(z, axis=0, keepdims=True), np.zeros((1, 3)))
    assert_close(pcp.max(z, axis=1), np.zeros((0,)))  # nothing reduced over an empty axis
    assert_close(pcp.argmax(z, axis=1), np.zeros((0,), np.int64))
    assert_close(pcp.mean(z, axis=0), np.full(3, np.nan))  # 0 / 0: NaN, like NumPy
    zi = pcp.zeros((2, 0), dtype=pcp.int32)
    assert_close(pcp.sum(zi, axis=1), np.zeros(2, np.int64), pcp.int64)


def test_logsumexp_over_zero_size_axis_is_minus_inf():
    # log(sum of no terms) = log(0) = -inf, like np.logaddexp.reduce([]) and torch.logsumexp.
    assert_close(pcp.logsumexp(pcp.zeros((0,))), np.array(-np.inf))
    assert_close(pcp.logsumexp(pcp.zeros((0, 3)), axis=0), np.full(3, -np.inf))
    assert_close(pcp.logsumexp(pcp.zeros((3, 0)), axis=1, keepdims=True), np.full((3, 1), -np.inf))
    assert_close(pcp.logsumexp(pcp.zeros((3, 0)), axis=0), np.zeros(0))  # nothing reduced is empty


def test_zero_d_reductions():
    t = pcp.tensor(2.5)
    for name in ["sum", "mean", "max", "min", "logsumexp"]:
        assert_close(getattr(pcp, name)(t), np.array(2.5))
    assert_close(pcp.var(t), np.array(0.0))
    assert_close(pcp.argmax(t), np.array(0), pcp.int64)


def test_logsumexp_extreme_values():
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, -np.inf, -np.inf], [-np.inf, 0.0, 1.0],
                  [-1000.0, -1001.0, -1002.0]])
    assert_close(pcp.logsumexp(pcp.tensor(x), axis=1), np_logsumexp(x, axis=1))
    assert_close(pcp.logsumexp(pcp.tensor(x, dtype=pcp.float64), axis=1), np_logsumexp(x, axis=1))


def test_reduction_methods(rng):
    t, x = make(rng, (3, 5))
    assert_close(t.sum(), x.sum(), err_scale=np.abs(x).sum())
    assert_close(t.mean(axis=1, keepdims=True), x.mean(axis=1, keepdims=True), err_scale=1)
    assert_close(t.max(axis=-1), x.max(axis=-1))
    assert_close(t.min(0), x.min(0))
    assert_close(t.logsumexp(axis=1), np_logsumexp(x, axis=1))
    assert_close(t.argmax(axis=1), x.argmax(axis=1), pcp.int64)
    assert_close(t.argmin(), np.argmin(x), pcp.int64)


# ----------------------------------------------------------------------------------------------
# softmax / log_softmax


@pytest.mark.parametrize("fn,ref", [(pcp.softmax, np_softmax), (pcp.log_softmax, np_log_softmax)],
                         ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_softmax_family(fn, ref, axis, dtype, rng):
    t, x = make(rng, (3, 7, 33), dtype, -5, 5)
    assert_close(fn(t, axis=axis), ref(x, axis), dtype)
    assert_close(fn(t.transpose(2, 0, 1), axis=axis), ref(x.transpose(2, 0, 1), axis), dtype)


@pytest.mark.parametrize("fn,ref", [(pcp.softmax, np_softmax), (pcp.log_softmax, np_log_softmax)],
                         ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_softmax_family_low_precision(fn, ref, dtype, rng):
    t, x = make(rng, (4, 130), dtype, -5, 5)
    assert_close(fn(t), ref(x, -1), dtype)


def test_softmax_stability_and_inf():
    x = np.array([[1000.0, 999.0, -1000.0], [-np.inf, 0.0, 1.0], [5.0, 5.0, 5.0], [-1e4, -1e4 - 1, -1e4 - 2]])
    assert_close(pcp.softmax(pcp.tensor(x)), np_softmax(x, -1))
    with np.errstate(invalid="ignore"):
        assert_close(pcp.log_softmax(pcp.tensor(x)), np_log_softmax(x, -1))
    assert_close(pcp.softmax(pcp.tensor(x), axis=0), np_softmax(x, 0))


def test_softmax_zero_d_and_one_element():
    assert_close(pcp.softmax(pcp.tensor(3.0)), np.array(1.0))
    assert_close(pcp.log_softmax(pcp.tensor(3.0)), np.array(0.0))
    assert_close(pcp.softmax(pcp.tensor([[3.0]]), axis=0), np.array([[1.0]]))
    assert_close(pcp.softmax(pcp.zeros((0, 4))), np.zeros((0, 4)))


def test_softmax_methods(rng):
    t, x = make(rng, (4, 6))
    assert_close(t.softmax(0), np_softmax(x, 0))
    assert_close(t.log_softmax(), np_log_softmax(x, -1))


# ----------------------------------------------------------------------------------------------
# matmul

MATMUL_SHAPES = [
    ((7,), (7,)),
    ((7,), (7, 5)),
    ((3, 7), (7,)),
    ((1, 1), (1, 1)),
    ((1, 7), (7, 1)),
    ((7, 33), (33, 130)),
    ((130, 33), (33, 7)),
    ((33, 130), (130, 1)),
    ((17, 1), (1, 9)),
    ((2, 3, 7, 5), (5, 4)),
    ((4, 7, 5), (2, 1, 5, 6)),
    ((7, 5), (3, 5, 2)),
    ((3, 1, 4, 5), (2, 5, 6)),
    ((5,), (3, 5, 4)),
    ((3, 4, 5), (5,)),
    ((1, 3, 33), (2, 1, 33, 17)),
    ((0, 5), (5, 3)),
    ((3, 5), (5, 0)),
    ((2, 0, 4), (4, 3)),
    ((3, 0), (0, 4)),  # inner dimension 0: zeros, like NumPy
    ((0,), (0,)),
]


def _check_matmul(ta, tb, a, b, dtype=None):
    with np.errstate(all="ignore"):
        expected = np.matmul(a, b)
        scale = np.matmul(np.abs(a), np.abs(b))
    assert_close(pcp.matmul(ta, tb), expected, dtype, err_scale=scale)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
def test_matmul(shapes, dtype, rng):
    ta, a = make(rng, shapes[0], dtype)
    tb, b = make(rng, shapes[1], dtype)
    _check_matmul(ta, tb, a, b, dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("mnk", [(1, 1, 1), (7, 33, 130), (130, 7, 33), (33, 130, 7), (64, 48, 32), (65, 49, 31)],
                         ids=str)
@pytest.mark.parametrize("layout", ["TN", "NT", "TT", "strided"])
def test_matmul_non_contiguous(dtype, mnk, layout, rng):
    m, n, k = mnk
    if layout == "strided":
        ta, a = make(rng, (m, 2 * k), dtype)
        tb, b = make(rng, (3 * k, n), dtype)
        ta, a, tb, b = ta[:, ::2], a[:, ::2], tb[::3], b[::3]
    else:
        ta, a = make(rng, (k, m) if layout[0] == "T" else (m, k), dtype)
        tb, b = make(rng, (n, k) if layout[1] == "T" else (k, n), dtype)
        if layout[0] == "T":
            ta, a = ta.T, a.T
        if layout[1] == "T":
            tb, b = tb.T, b.T
    _check_matmul(ta, tb, a, b, dtype)


def test_matmul_batched_transposed_operands(rng):
    ta, a = make(rng, (3, 33, 7))
    tb, b = make(rng, (2, 1, 17, 33))
    _check_matmul(ta.mT, tb.mT, np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2))
    tc, c = make(rng, (7, 3, 5))  # batch dim in the middle of memory
    td, d = make(rng, (5, 4))
    _check_matmul(tc.transpose(1, 0, 2), td, c.transpose(1, 0, 2), d)


def test_matmul_large_parallel(rng):
    ta, a = make(rng, (257, 300))
    tb, b = make(rng, (300, 190))
    _check_matmul(ta, tb, a, b)
    tc, c = make(rng, (6, 40, 70))
    td, d = make(rng, (6, 70, 50))
    _check_matmul(tc, td, c, d)


def test_matmul_mixed_dtypes(rng):
    ta, a = make(rng, (4, 5), pcp.float32)
    tb, b = make(rng, (5, 3), pcp.float64)
    _check_matmul(ta, tb, a, b, pcp.float64)
    tc, c = make(rng, (5, 3), pcp.float16)
    _check_matmul(ta, tc, a, c, pcp.float32)


# ----------------------------------------------------------------------------------------------
# shape operations


def test_reshape(rng):
    t, x = make(rng, (2, 3, 4))
    for shape in [(24,), (4, 6), (-1, 4), (2, -1), (2, 3, 2, 2), (1, 24, 1), (-1,)]:
        assert_close(pcp.reshape(t, shape), x.reshape(shape))
        assert_close(t.reshape(*shape), x.reshape(shape))
    assert_close(t.view(6, 4), x.reshape(6, 4))
    s = pcp.tensor(5.0)
    assert_close(s.reshape(1, 1), np.full((1, 1), 5.0))
    assert_close(pcp.reshape(pcp.tensor([7.0]), ()), np.array(7.0))
    assert_close(pcp.zeros((0, 3)).reshape(3, 0, 5), np.zeros((3, 0, 5)))
    assert_close(pcp.zeros((0, 3)).reshape(-1, 3), np.zeros((0, 3)))


def test_reshape_non_contiguous(rng):
    t, x = make(rng, (4, 6))
    assert_close(t.T.reshape(-1), x.T.reshape(-1))
    assert_close(t[:, ::2].reshape(2, 6), x[:, ::2].reshape(2, 6))
    assert_close(t.T.reshape(3, 2, 4), x.T.reshape(3, 2, 4))


def test_reshape_of_contiguous_is_a_view(rng):
    t = pcp.zeros((2, 3))
    v = t.reshape(6)
    v[0] = 5.0
    assert to_np(t)[0, 0] == 5.0


def test_flatten(rng):
    t, x = make(rng, (2, 3, 4, 5))
    assert_close(pcp.flatten(t), x.reshape(-1))
    assert_close(t.flatten(1), x.reshape(2, -1))
    assert_close(t.flatten(1, 2), x.reshape(2, 12, 5))
    assert_close(t.flatten(-2, -1), x.reshape(2, 3, 20))
    assert_close(pcp.flatten(pcp.tensor(3.0)), np.array([3.0]))


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 0, 1), (1, 0, 2), (-1, 0, -2)], ids=str)
def test_transpose_permute(axes, rng):
    t, x = make(rng, (2, 3, 4))
    assert_close(pcp.transpose(t, axes), np.transpose(x, axes))
    if axes is not None:
        assert_close(pcp.permute(t, axes), np.transpose(x, axes))
        assert_close(t.permute(*axes), np.transpose(x, axes))
        assert_close(t.transpose(axes), np.transpose(x, axes))
    assert_close(t.T, x.T)
    assert_close(t.mT, np.swapaxes(x, -1, -2))
    assert_close(pcp.swapaxes(t, 0, -1), np.swapaxes(x, 0, -1))
    assert_close(pcp.transpose(t.T), x)  # transposing back


def test_transpose_0d_and_1d():
    assert_close(pcp.transpose(pcp.tensor(2.0)), np.array(2.0))
    assert_close(pcp.tensor([1.0, 2.0]).T, np.array([1.0, 2.0]))


@pytest.mark.parametrize("axis", [0, 1, -1, 2, -3], ids=str)
def test_concatenate(axis, rng):
    parts = [make(rng, s) for s in [(2, 3, 4), (2, 3, 4), (2, 3, 4)]]
    sizes = [1, 2, 3]
    ax = axis % 3
    ts, xs = [], []
    for (t, x), n in zip(parts, sizes):
        sl = [slice(None)] * 3
        sl[ax] = slice(0, n)
        ts.append(t[tuple(sl)])
        xs.append(x[tuple(sl)])
    assert_close(pcp.concatenate(ts, axis=axis), np.concatenate(xs, axis=axis))


def test_concatenate_mixed_dtype_zero_size_and_non_contiguous(rng):
    ta, a = make(rng, (3, 4), pcp.int32, -5, 5)
    tb, b = make(rng, (4, 2))
    r = pcp.concatenate([ta, tb.T, pcp.zeros((0, 4))], axis=0)
    assert_close(r, np.concatenate([a, b.T, np.zeros((0, 4))]), pcp.float32)
    assert_close(pcp.concatenate([ta]), a, pcp.int32)
    assert_close(pcp.concatenate((ta, ta), axis=1), np.concatenate([a, a], 1), pcp.int32)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3], ids=str)
def test_stack(axis, rng):
    pairs = [make(rng, (3, 4)) for _ in range(3)]
    ts, xs = zip(*pairs)
    assert_close(pcp.stack(list(ts), axis=axis), np.stack(xs, axis=axis))
    assert_close(pcp.stack([ts[0]], axis=axis), np.stack([xs[0]], axis=axis))


def test_stack_0d():
    assert_close(pcp.stack([pcp.tensor(1.0), pcp.tensor(2.0)]), np.array([1.0, 2.0]))


@pytest.mark.parametrize("spec,axis", [(3, 0), (2, 1), (1, 1), (4, -1), ([1, 3], 0), ([2], 1), ([0, 0, 5], 1),
                                       ([-2], 0), ([4, 1], 1), ([10], 0)], ids=str)
def test_split(spec, axis, rng):
    t, x = make(rng, (6, 4))
    got = pcp.split(t, spec, axis=axis)
    want = np.split(x, spec, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)
    got_m = t.split(spec, axis)
    assert [g.shape for g in got_m] == [w.shape for w in want]


@pytest.mark.parametrize("axis", [None, 0, 2, -1, (0, 2), (0, -1)], ids=str)
def test_squeeze(axis, rng):
    t, x = make(rng, (1, 3, 1, 4, 1))
    assert_close(pcp.squeeze(t, axis), np.squeeze(x, axis))
    assert_close(t.squeeze(axis), np.squeeze(x, axis))


def test_squeeze_all_ones_to_0d():
    assert_close(pcp.squeeze(pcp.ones((1, 1, 1))), np.array(1.0))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3], ids=str)
def test_unsqueeze_expand_dims(axis, rng):
    t, x = make(rng, (3, 4))
    assert_close(pcp.unsqueeze(t, axis), np.expand_dims(x, axis))
    assert_close(pcp.expand_dims(t, axis), np.expand_dims(x, axis))
    assert_close(t.unsqueeze(axis), np.expand_dims(x, axis))
    assert_close(pcp.unsqueeze(pcp.tensor(1.0), 0), np.array([1.0]))


@pytest.mark.parametrize("src,dst", [((3,), (2, 3)), ((3, 1), (3, 4)), ((1, 1), (2, 5, 7)), ((), (2, 2)),
                                     ((2, 1, 3), (4, 2, 5, 3)), ((1,), (0,)), ((3,), (3,))], ids=str)
def test_broadcast_to(src, dst, rng):
    t, x = make(rng, src)
    r = pcp.broadcast_to(t, dst)
    assert_close(r, np.broadcast_to(x, dst))
    assert_close(t.broadcast_to(*dst) if dst else t, np.broadcast_to(x, dst))
    assert_close(t.expand(dst), np.broadcast_to(x, dst))
    assert_close(r + 1.0, np.broadcast_to(x, dst) + 1.0)  # a stride-0 view as an op input


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 5], ids=str)
@pytest.mark.parametrize("shape", [(4, 5), (5, 4), (2, 3, 4), (1, 1)], ids=str)
def test_tril_triu(k, shape, rng):
    t, x = make(rng, shape)
    assert_close(pcp.tril(t, k), np.tril(x, k))
    assert_close(pcp.triu(t, k), np.triu(x, k))
    assert_close(t.tril(k=k), np.tril(x, k))
    assert_close(t.triu(k), np.triu(x, k))
    ti, xi = make(rng, shape, pcp.int64, -9, 9)
    assert_close(pcp.tril(ti, k), np.tril(xi, k), pcp.int64)
    assert_close(pcp.triu(ti.mT if len(shape) >= 2 else ti, k), np.triu(np.swapaxes(xi, -1, -2), k), pcp.int64)


def test_contiguous_and_copy(rng):
    t, x = make(rng, (3, 4))
    c = pcp.contiguous(t.T)
    assert c.is_contiguous()
    assert_close(c, x.T)
    d = t.copy()
    d[0, 0] = 100.0
    assert to_np(t)[0, 0] == x[0, 0]
    assert_close(t.clone(), x)
    assert_close(pcp.contiguous(t), x)


# ----------------------------------------------------------------------------------------------
# indexing

BASE_SHAPE = (2, 3, 4, 5)
BASIC_KEYS = [
    0, -1, 1, (1, 2), (-1, -2, -3), (0, 1, 2, 3), (-2, -3, -4, -5),
    slice(None), slice(1, None), slice(None, None, 2), slice(None, None, -1),
    (slice(None), slice(None, None, -2)), (slice(None), slice(3, 0, -2)), (slice(None), slice(-1, -10, -1)),
    (slice(None), slice(None), slice(1, 3), slice(None, None, 3)), (slice(-100, 100),), (slice(10, 20),),
    (slice(None), slice(2, 1)), (0, slice(None, None, -1), 2),
    None, (None, 0, None), (Ellipsis, 1), (0, Ellipsis, -1), (Ellipsis, None), Ellipsis,
    (slice(1, 2), Ellipsis, slice(None, None, 3)), (Ellipsis, slice(None, None, -2), None, 1),
    (),
]


def _base():
    x = np.arange(np.prod(BASE_SHAPE), dtype=np.float64).reshape(BASE_SHAPE)
    return pcp.tensor(x), x


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_indexing(key):
    t, x = _base()
    assert_close(t[key], x[key])
    # Same key on a non-contiguous (permuted) tensor.
    tp, xp = t.permute(3, 1, 2, 0), x.transpose(3, 1, 2, 0)
    try:
        expected = xp[key]
    except IndexError:
        with pytest.raises(IndexError, match="index"):
            tp[key]
        return
    assert_close(tp[key], expected)


def test_basic_indexing_returns_views():
    t = pcp.zeros((3, 4))
    v = t[1, ::2]
    v2 = t[:, 1]
    assert v.shape == (2,) and v2.shape == (3,)
    t[1, 2] = 7.0  # visible through the view (basic indexing is a view, like NumPy)
    assert to_np(v).tolist() == [0.0, 7.0]


ADV_KEYS = [
    [0, 1],
    [1, 0, 1],
    [-1],
    ([0, 1], [1, 2]),
    ([[0, 1], [1, 0]],),
    (slice(None), [0, 2, 1]),
    (slice(None), [-1, 0]),
    ([0, 1], slice(None), [1, 2]),  # non-adjacent: the broadcast dims lead
    (slice(None), [0, 1], [1, 2]),  # adjacent, not first: they stay in place
    (slice(None), [[0], [1]], [1, 2]),  # broadcast index arrays
    (0, slice(None), [1, 2]),  # int + array are both advanced, separated by a slice
    (slice(None), 0, [1, 2]),  # int + array adjacent
    ([1, 0], 2),
    (Ellipsis, [1, 0]),
    (Ellipsis, [3, 0], slice(1, 4)),
    ([0], [2], [3], [4]),
    (slice(None), slice(None), [0, 3], [4, 0]),
    ([1, 0], slice(None), slice(None), [0, 4]),
    (slice(None, None, -1), [2, 0], slice(None), [1, 1]),
    ([[1]], slice(None), [[0, 3], [1, 2]]),
    (None, [0, 1]),
    ([0, 1], None, [1, 2]),
    (np.array([1, 0], dtype=np.int32),),
    (np.array(1),),  # 0-d integer array
    ([],),
]


@pytest.mark.parametrize("key", ADV_KEYS, ids=repr)
def test_advanced_indexing_matches_numpy(key):
    t, x = _base()
    expected = x[key if isinstance(key, tuple) else key]
    assert_close(t[key], expected)


@pytest.mark.parametrize("key", ADV_KEYS, ids=repr)
def test_advanced_indexing_with_pcp_index_tensors(key):
    t, x = _base()
    items = key if isinstance(key, tuple) else (key,)
    pkey = tuple(pcp.tensor(np.asarray(k, dtype=np.int64)) if isinstance(k, (list, np.ndarray)) else k
                 for k in items)
    expected = x[tuple(np.asarray(k, dtype=np.int64) if isinstance(k, (list, np.ndarray)) else k for k in items)]
    assert_close(t[pkey], expected)


def test_advanced_indexing_on_non_contiguous(rng):
    t, x = make(rng, (5, 6, 7))
    tv, xv = t.transpose(2, 0, 1)[::2], x.transpose(2, 0, 1)[::2]
    assert_close(tv[[0, 3, 1]], xv[[0, 3, 1]])
    assert_close(tv[:, [4, 0], [5, 1]], xv[:, [4, 0], [5, 1]])
    assert_close(tv[[1, 2], :, [0, 5]], xv[[1, 2], :, [0, 5]])


BOOL_KEYS = [
    lambda x: x > 50,  # full mask
    lambda x: np.array([True, False]),  # first axis
    lambda x: (x.sum(axis=(2, 3)) % 2) == 0,  # over the first two axes
    lambda x: (slice(None), np.array([True, False, True])),
    lambda x: (Ellipsis, np.array([False, True, True, False, True])),
    lambda x: (0, np.array([False, True, True])),
    lambda x: np.zeros(2, dtype=bool),
    lambda x: (np.array([True, True]), slice(None), [1, 3]),
]


@pytest.mark.parametrize("make_key", BOOL_KEYS, ids=[f"mask{i}" for i in range(len(BOOL_KEYS))])
def test_boolean_mask_indexing(make_key):
    t, x = _base()
    key = make_key(x)
    assert_close(t[key], x[key])
    if isinstance(key, np.ndarray):
        assert_close(t[pcp.tensor(key)], x[key])  # a pcp bool tensor works the same
        assert_close(t[t > 50] if key.shape == x.shape else t[pcp.tensor(key)], x[key])


def test_zero_d_boolean_mask():
    # NumPy: a 0-d boolean index adds a new axis of length 1 (True) or 0 (False).
    t, x = _base()
    for m in [True, False]:
        assert_close(t[pcp.tensor(m)], x[np.array(m)])
        assert_close(t[np.array(m)], x[np.array(m)])
    s = pcp.tensor(5.0)
    assert_close(s[s > 3], np.array([5.0]))  # the common t[t > c] on a 0-d tensor
    assert_close(s[s > 7], np.zeros(0))


def test_index_0d_tensor():
    t = pcp.tensor(3.5)
    assert_close(t[()], np.array(3.5))
    assert_close(t[None], np.array([3.5]))
    assert_close(t[...], np.array(3.5))


def test_index_with_0d_pcp_int_tensor():
    t, x = _base()
    assert_close(t[pcp.tensor(1)], x[1])
    assert_close(t[:, pcp.tensor(-1)], x[:, -1])


def test_setitem_basic(rng):
    t, x = make(rng, (4, 5))
    x = x.copy()
    t[0] = 1.0
    x[0] = 1.0
    t[1:3, ::2] = pcp.tensor([7.0, 8.0, 9.0])
    x[1:3, ::2] = [7.0, 8.0, 9.0]
    t[-1, -1] = -5
    x[-1, -1] = -5
    t[..., 1] = np.arange(4.0)
    x[..., 1] = np.arange(4.0)
    assert_close(t, x)


# ----------------------------------------------------------------------------------------------
# take / embedding / one_hot


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1], ids=str)
def test_take(axis, rng):
    t, x = make(rng, (4, 5, 6))
    n = x.size if axis is None else x.shape[axis]
    idx = rng.integers(-n, n, size=(2, 3))
    assert_close(pcp.take(t, idx, axis=axis), np.take(x, idx, axis=axis))
    assert_close(t.take(pcp.tensor(idx), axis), np.take(x, idx, axis=axis))
    assert_close(pcp.take(t, [1, 0, 1], axis=axis), np.take(x, [1, 0, 1], axis=axis))
    assert_close(pcp.take(t, 2, axis=axis), np.take(x, 2, axis=axis))  # 0-d index drops the axis
    assert_close(pcp.take(t, np.zeros(0, np.int64), axis=axis), np.take(x, np.zeros(0, np.int64), axis=axis))


def test_take_non_contiguous_and_int_dtypes(rng):
    t, x = make(rng, (6, 7), pcp.int32, -50, 50)
    idx = np.array([[0, 5], [-1, 3]], dtype=np.int32)
    assert_close(pcp.take(t.T, idx, axis=1), np.take(x.T, idx, axis=1), pcp.int32)
    assert_close(pcp.take(t[::2], pcp.tensor(idx).astype(pcp.int64), axis=1), np.take(x[::2], idx, axis=1),
                 pcp.int32)


@pytest.mark.parametrize("dtype", [pcp.float32, pcp.float64, pcp.float16], ids=str)
def test_embedding(dtype, rng):
    w, wn = make(rng, (10, 4), dtype)
    idx = rng.integers(0, 10, size=(2, 3))
    assert_close(pcp.embedding(w, idx), wn[idx], dtype)
    assert_close(pcp.embedding(w, pcp.tensor(idx.astype(np.int32))), wn[idx], dtype)
    assert_close(pcp.embedding(w, [9, 0, 9]), wn[[9, 0, 9]], dtype)
    assert_close(pcp.embedding(w, pcp.tensor(3)), wn[3], dtype)
    assert_close(pcp.embedding(w, [-1]), wn[[-1]], dtype)  # negative ids wrap like NumPy indexing


def test_one_hot(rng):
    idx = rng.integers(0, 5, size=(3, 4))
    assert_close(pcp.one_hot(idx, 5), np.eye(5)[idx])
    assert_close(pcp.one_hot(pcp.tensor(idx), 6, dtype=pcp.int64), np.eye(6, dtype=np.int64)[idx], pcp.int64)


# ----------------------------------------------------------------------------------------------
# layer_norm / cross_entropy / dropout / attention


def np_layer_norm(x, w=None, b=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("shape", [(4, 7, 33), (5, 1), (130,), (3, 64)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_layer_norm(affine, shape, dtype, rng):
    t, x = make(rng, shape, dtype, -3, 3)
    n = shape[-1]
    tw, w = make(rng, (n,), dtype, 0.5, 1.5)
    tb, b = make(rng, (n,), dtype, -1, 1)
    use_w = affine in ("weight", "both")
    use_b = affine in ("bias", "both")
    r = pcp.layer_norm(t, tw if use_w else None, tb if use_b else None, eps=1e-5)
    assert_close(r, np_layer_norm(x, w if use_w else None, b if use_b else None, 1e-5), dtype)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_layer_norm_low_precision(dtype, rng):
    t, x = make(rng, (6, 48), dtype, -3, 3)
    tw, w = make(rng, (48,), dtype, 0.5, 1.5)
    tb, b = make(rng, (48,), dtype, -1, 1)
    assert_close(pcp.layer_norm(t, tw, tb), np_layer_norm(x, w, b), dtype)


def test_layer_norm_eps_non_contiguous_and_constant_rows(rng):
    t, x = make(rng, (12, 8))
    assert_close(pcp.layer_norm(t.T, eps=0.1), np_layer_norm(x.T, eps=0.1))
    c = np.full((3, 5), 2.0)
    assert_close(pcp.layer_norm(pcp.tensor(c)), np.zeros((3, 5)))  # zero variance: x - mean = 0
    # weight float64 with float32 input promotes to float64
    tw, w = make(rng, (8,), pcp.float64, 0.5, 1.5)
    assert_close(pcp.layer_norm(t[:8].T, tw), np_layer_norm(x[:8].T, w), pcp.float64)


def np_cross_entropy(logits, targets, ignore_index=-100, reduction="mean"):
    ls = np_log_softmax(logits, -1)
    valid = targets != ignore_index
    safe = np.where(valid, targets, 0)
    nll = -np.take_along_axis(ls, safe[..., None], axis=-1)[..., 0]
    nll = np.where(valid, nll, 0.0)
    if reduction == "none":
        return nll
    if reduction == "sum":
        return np.sum(nll)
    with np.errstate(invalid="ignore"):
        return np.sum(nll) / valid.sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(8, 5), (2, 3, 7), (1, 1), (16, 130)], ids=str)
def test_cross_entropy(reduction, dtype, shape, rng):
    # PCP: classes on the LAST axis (PyTorch puts them on axis 1).
    t, x = make(rng, shape, dtype, -4, 4)
    targets = rng.integers(0, shape[-1], size=shape[:-1])
    r = pcp.cross_entropy(t, targets, reduction=reduction)
    expected = np_cross_entropy(x, targets, reduction=reduction)
    assert_close(r, expected, dtype, err_scale=np.abs(expected) if reduction != "none" else None)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignore_index(reduction, rng):
    t, x = make(rng, (10, 6), pcp.float32, -4, 4)
    targets = rng.integers(0, 6, size=10)
    targets[[1, 4, 5]] = -100
    assert_close(pcp.cross_entropy(t, targets, reduction=reduction),
                 np_cross_entropy(x, targets, reduction=reduction))
    targets2 = targets.copy()
    targets2[targets2 == -100] = 2
    assert_close(pcp.cross_entropy(t, pcp.tensor(targets2.astype(np.int32)), ignore_index=2, reduction=reduction),
                 np_cross_entropy(x, targets2, ignore_index=2, reduction=reduction))


def test_cross_entropy_all_ignored_mean_is_nan():
    t = pcp.zeros((3, 4))
    r = pcp.cross_entropy(t, [-100, -100, -100])
    assert np.isnan(to_np(r))
    assert_close(pcp.cross_entropy(t, [-100, -100, -100], reduction="sum"), np.array(0.0))


def test_cross_entropy_extreme_logits_and_non_contiguous(rng):
    x = np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0], [-1e4, 1e4, 0.0]])
    tg = np.array([2, 1, 1])
    assert_close(pcp.cross_entropy(pcp.tensor(x), tg, reduction="none"), np_cross_entropy(x, tg, reduction="none"))
    t, xn = make(rng, (5, 9))
    tg2 = rng.integers(0, 5, size=9)
    assert_close(pcp.cross_entropy(t.T, tg2), np_cross_entropy(xn.T, tg2))


@pytest.mark.parametrize("p", [0.0, 0.3, 0.9])
def test_dropout_eval_is_identity(p, rng):
    t, x = make(rng, (50, 20))
    assert_close(pcp.dropout(t, p, training=False), x)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.8])
def test_dropout_training(p):
    n = 100_000
    x = pcp.rand((n,)) + 0.5  # no zeros in the input
    xn = to_np(x)
    y = pcp.dropout(x, p, training=True)
    yn = to_np(y)
    kept = yn != 0
    np.testing.assert_allclose(yn[kept], xn[kept] / (1 - p), **TOL[pcp.float32])
    assert abs((~kept).mean() - p) < 0.01  # ~7 sigma at n = 100k
    # Same seed -> same mask; another seed -> another mask.
    pcp.random.seed(123)
    m1 = to_np(pcp.dropout(x, p)) != 0
    pcp.random.seed(123)
    m2 = to_np(pcp.dropout(x, p)) != 0
    pcp.random.seed(124)
    m3 = to_np(pcp.dropout(x, p)) != 0
    np.testing.assert_array_equal(m1, m2)
    assert (m1 != m3).any()


def test_dropout_edge_probabilities(rng):
    t, x = make(rng, (30, 7))
    assert_close(pcp.dropout(t, 0.0), x)
    assert_close(pcp.dropout(t, 1.0), np.zeros_like(x))
    t64, x64 = make(rng, (1000,), pcp.float64, 1, 2)
    y = to_np(pcp.dropout(t64, 0.25))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y[y != 0], x64[y != 0] / 0.75, rtol=1e-12)


def np_sdpa(q, k, v, causal=False, scale=None):
    d = q.shape[-1]
    sc = 1.0 / math.sqrt(d) if scale is None else scale
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * sc
    if causal:
        tq, tk = s.shape[-2], s.shape[-1]
        mask = np.arange(tk)[None, :] <= np.arange(tq)[:, None]  # top-left aligned
        s = np.where(mask, s, -np.inf)
    return np.matmul(np_softmax(s, -1), v)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shapes", [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)),
                                    ((6, 16), (6, 16), (6, 16)),
                                    ((2, 1, 9, 33), (1, 4, 9, 33), (1, 4, 9, 7)),
                                    ((1, 1), (1, 1), (1, 1)),
                                    ((2, 3, 7, 8),) * 3], ids=str)  # float32: the fused kernel
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_scaled_dot_product_attention(causal, shapes, dtype, rng):
    (tq, q), (tk, k), (tv, v) = (make(rng, s, dtype) for s in shapes)
    expected = np_sdpa(q, k, v, causal)
    assert_close(pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal), expected, dtype,
                 err_scale=np.abs(v).max())


def test_scaled_dot_product_attention_scale_and_transposed_inputs(rng):
    tq, q = make(rng, (2, 8, 5))  # q (2, 5, 8) after .mT
    tk, k = make(rng, (2, 8, 6))  # k (2, 6, 8) after .mT
    tv, v = make(rng, (2, 6, 3))
    r = pcp.scaled_dot_product_attention(tq.mT, tk.mT, tv, causal=True, scale=0.7)
    assert_close(r, np_sdpa(np.swapaxes(q, -1, -2), np.swapaxes(k, -1, -2), v, True, 0.7),
                 err_scale=np.abs(v).max())


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_on_head_views_of_packed_qkv(causal, rng):
    # GPT-2's layout: q, k, v are strided head views of one (B, T, 3C) tensor, and the output's
    # heads are merged back with transpose + reshape (a free view of the fused kernel's output).
    B, T, H, D = 2, 9, 3, 4
    tqkv, qkv = make(rng, (B, T, 3 * H * D))
    heads = lambda t: t.reshape(B, T, H, D).transpose(0, 2, 1, 3)  # noqa: E731
    tq, tk, tv = (heads(t) for t in pcp.split(tqkv, 3, axis=2))
    q, k, v = (heads(a) for a in np.split(qkv, 3, axis=2))
    y = pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    expected = np_sdpa(q, k, v, causal).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    assert_close(y, expected, err_scale=np.abs(v).max())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_qkv_attention(causal, dtype, rng):
    # A packed (B, T, 3C) projection, read here through a transposed view (not contiguous).
    B, T, H, D = 2, 11, 3, 5
    tqkv, qkv = make(rng, (3 * H * D, T, B), dtype)
    tqkv, qkv = tqkv.transpose(), qkv.transpose()
    q, k, v = (a.reshape(B, T, H, D).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=2))
    expected = np_sdpa(q, k, v, causal, 0.3).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    y = pcp.qkv_attention(tqkv, H, causal=causal, scale=0.3)
    assert y.shape == (B, T, H * D)
    assert_close(y, expected, dtype, err_scale=np.abs(v).max())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (5, 4)], ids=str)  # the fused kernel's shape, and 2-D
def test_scaled_dot_product_attention_dropout(causal, shape, rng):
    # The attention weights are dropped with the global generator's next draws: a dropout of ones
    # of the weights' shape, drawn from the same seed, is the mask (scaled by 1 / (1 - p)).
    (tq, q), (tk, k), (tv, v) = (make(rng, shape) for _ in range(3))
    T = shape[-2]
    pcp.random.seed(3)
    mask = to_np(pcp.dropout(pcp.ones(shape[:-2] + (T, T)), 0.3))
    pcp.random.seed(3)
    y = pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal, dropout_p=0.3)
    w = np_sdpa(q, k, np.broadcast_to(np.eye(T), shape[:-2] + (T, T)), causal)  # the weights themselves
    assert_close(y, np.matmul(w * mask, v), err_scale=np.abs(v).max())
    assert 0 < (mask == 0).mean() < 0.6
    assert_close(pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal, dropout_p=0.0), np_sdpa(q, k, v, causal),
                 err_scale=np.abs(v).max())


@requires_torch
@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_torch(causal, rng):
    (tq, q), (tk, k), (tv, v) = (make(rng, (2, 3, 6, 8), pcp.float64) for _ in range(3))
    expected = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=causal).numpy()
    assert_close(pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal), expected, pcp.float64)


# ----------------------------------------------------------------------------------------------
# creation


def test_tensor_from_python_data():
    t = pcp.tensor([[1, 2], [3, 4]])
    assert t.dtype == pcp.int64 and t.shape == (2, 2)
    assert_close(t, np.array([[1, 2], [3, 4]]), pcp.int64)
    # Python floats become float32 (the default float, as PyTorch), not float64 like NumPy
    assert_close(pcp.tensor([1.5, -2.0]), np.array([1.5, -2.0]), pcp.float32)
    assert_close(pcp.tensor([1, 2.5]), np.array([1.0, 2.5]), pcp.float32)
    assert_close(pcp.tensor([True, False]), np.array([True, False]), pcp.bool_)
    assert_close(pcp.tensor(3), np.array(3), pcp.int64)
    assert_close(pcp.tensor(2.5), np.array(2.5), pcp.float32)
    assert_close(pcp.tensor(True), np.array(True), pcp.bool_)
    assert_close(pcp.tensor([]), np.zeros(0), pcp.float32)
    assert_close(pcp.tensor([[]]), np.zeros((1, 0)), pcp.float32)
    assert_close(pcp.tensor((1.0, 2.0)), np.array([1.0, 2.0]), pcp.float32)
    assert_close(pcp.tensor([1, 2], dtype=pcp.float64), np.array([1.0, 2.0]), pcp.float64)
    assert_close(pcp.tensor([1.7, -1.7], dtype="int32"), np.array([1, -1]), pcp.int32)
    assert_close(pcp.tensor([[1.0, 2.0]], dtype=np.float16), np.array([[1.0, 2.0]]), pcp.float16)
    assert_close(pcp.asarray([1, 2]), np.array([1, 2]), pcp.int64)


@pytest.mark.parametrize("np_dtype,dtype", [(np.float64, pcp.float64), (np.float32, pcp.float32),
                                            (np.float16, pcp.float16), (np.int32, pcp.int32),
                                            (np.int64, pcp.int64), (np.bool_, pcp.bool_),
                                            (np.int8, pcp.int64), (np.uint8, pcp.int64), (np.int16, pcp.int64)],
                         ids=str)
def test_tensor_from_numpy_keeps_dtype_and_copies(np_dtype, dtype, rng):
    # NumPy arrays keep their dtype; narrower integer types widen to int64.
    a = (rng.uniform(0, 100, size=(3, 4))).astype(np_dtype)
    t = pcp.tensor(a)
    assert_close(t, a.astype(np.float64) if dtype in TOL else a.astype(NP_OF[dtype]), dtype)
    b = a.copy()
    a[...] = 0  # tensor() copies
    assert_close(t, b.astype(np.float64) if dtype in TOL else b.astype(NP_OF[dtype]), dtype)


def test_tensor_from_non_contiguous_numpy_and_tensor(rng):
    a = rng.uniform(size=(5, 6))
    assert_close(pcp.tensor(a[::2, ::-3]), a[::2, ::-3], pcp.float64)
    assert_close(pcp.tensor(a.T), a.T, pcp.float64)
    t = pcp.tensor(a)
    c = pcp.tensor(t)
    t[0, 0] = -1.0
    assert to_np(c)[0, 0] == a[0, 0]  # tensor(Tensor) copies
    assert_close(pcp.tensor(t, dtype=pcp.float32), to_np(t).astype(np.float32).astype(np.float64), pcp.float32)


def test_from_numpy_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = pcp.from_numpy(a)
    assert t.dtype == pcp.float32
    a[1, 2] = 100.0
    assert to_np(t)[1, 2] == 100.0
    t[0, 0] = -7.0  # and the other way round
    assert a[0, 0] == -7.0
    s = a[:, ::2]  # a strided view is shared too
    ts = pcp.from_numpy(s)
    a[2, 2] = 55.0
    assert_close(ts, a[:, ::2].astype(np.float64), pcp.float32)
    assert_close(pcp.from_numpy(np.arange(5, dtype=np.int32)), np.arange(5), pcp.int32)


def test_from_numpy_keeps_array_alive():
    t = pcp.from_numpy(np.arange(1000, dtype=np.float64))
    import gc
    gc.collect()
    assert_close(t, np.arange(1000.0), pcp.float64)


@pytest.mark.cpu_only  # CPU memory and repr; GPU tensors: tests/test_gpu.py
def test_numpy_is_zero_copy(rng):
    t, x = make(rng, (3, 4))
    a = t.numpy()
    assert a.dtype == np.float32
    a[0, 1] = 42.0
    assert to_np(t)[0, 1] == 42.0
    assert np.shares_memory(t.numpy(), t.numpy())
    # A non-contiguous tensor gives a strided view of the same memory.
    v = t.T.numpy()
    assert v.shape == (4, 3) and np.shares_memory(v, a)
    np.testing.assert_array_equal(v, a.T)
    del t
    assert a[0, 1] == 42.0  # the view keeps the storage alive


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_array_protocol(dtype, rng):
    t, x = make(rng, (2, 3), dtype, -4, 4)
    a = np.asarray(t)
    # bfloat16 has no NumPy dtype: __array__ gives float32
    assert a.dtype == (np.float32 if dtype == pcp.bfloat16 else NP_OF[dtype])
    np.testing.assert_array_equal(a.astype(np.float64) if dtype in TOL else a, x)
    np.testing.assert_array_equal(np.array(t, dtype=np.float64), x.astype(np.float64))


@pytest.mark.cpu_only  # DLPack shares host memory
@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != pcp.bfloat16], ids=str)
def test_dlpack_numpy_round_trip(dtype, rng):
    t, x = make(rng, (3, 5), dtype, -4, 4)
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, to_np(t).astype(a.dtype))
    assert np.shares_memory(a, t.numpy())
    if dtype != pcp.bool_:
        t[0, 0] = 3
        assert a[0, 0] == 3  # shares memory
    # NumPy -> pcp (a writable array: NumPy refuses to export read-only ones over legacy DLPack)
    w = np.array(a)
    back = pcp.from_dlpack(w)
    assert back.dtype == dtype
    np.testing.assert_array_equal(to_np(back), to_np(t))
    if dtype != pcp.bool_:
        w[2, 4] = 1
        assert to_np(back)[2, 4] == 1  # shares memory
    # Non-contiguous tensors export their strides.
    tt = t.T[::2]
    np.testing.assert_array_equal(np.from_dlpack(tt), to_np(t).T[::2].astype(a.dtype))
    n = np.arange(20.0).reshape(4, 5)[:, ::2]
    assert_close(pcp.from_dlpack(n), n, pcp.float64)


@pytest.mark.cpu_only  # DLPack shares host memory
@requires_torch
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dlpack_torch_round_trip(dtype, rng):
    t, x = make(rng, (3, 4), dtype, -4, 4)
    tt = torch.from_dlpack(t)
    assert tuple(tt.shape) == (3, 4)
    np.testing.assert_array_equal(tt.to(torch.float64).numpy() if dtype != pcp.bool_ else tt.numpy(), x)
    if dtype != pcp.bool_:
        tt[1, 2] = 5  # torch writes, pcp sees
        assert to_np(t)[1, 2] == 5
    p = pcp.from_dlpack(tt)
    assert p.dtype == dtype
    if dtype != pcp.bool_:
        tt[0, 0] = -3  # torch -> pcp shares memory too
        assert to_np(p)[0, 0] == -3
    np.testing.assert_array_equal(to_np(p), to_np(t))


@pytest.mark.cpu_only  # DLPack shares host memory
@requires_torch
def test_dlpack_torch_non_contiguous_and_offset():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    view = base[1:, ::2].T
    p = pcp.from_dlpack(view)
    np.testing.assert_array_equal(to_np(p), view.numpy().astype(np.float64))
    base[2, 2] = -1.0
    np.testing.assert_array_equal(to_np(p), view.numpy().astype(np.float64))
    # (Positive strides only: PyTorch itself aborts on negative DLPack strides, from any producer.)
    t = pcp.arange(24).reshape(4, 6)[1:, 1::2].T
    np.testing.assert_array_equal(torch.from_dlpack(t).numpy(), np.arange(24).reshape(4, 6)[1:, 1::2].T)


@pytest.mark.parametrize("dtype", [None] + ALL_DTYPES, ids=str)
def test_zeros_ones_full(dtype):
    want = pcp.float32 if dtype is None else dtype
    assert_close(pcp.zeros((2, 3), dtype=dtype), np.zeros((2, 3)), want)
    assert_close(pcp.ones(4, dtype=dtype), np.ones(4), want)
    assert_close(pcp.zeros((), dtype=dtype), np.zeros(()), want)
    assert_close(pcp.ones((0, 2), dtype=dtype), np.ones((0, 2)), want)
    assert_close(pcp.full((2, 2), 1, dtype=dtype), np.ones((2, 2)), pcp.int64 if dtype is None else dtype)


def test_full_fill_value_dtypes():
    assert_close(pcp.full((2, 3), 7), np.full((2, 3), 7), pcp.int64)
    assert_close(pcp.full((2,), 2.5), np.full(2, 2.5), pcp.float32)  # Python float -> float32
    assert_close(pcp.full((2,), True), np.full(2, True), pcp.bool_)
    assert_close(pcp.full(3, -1.5, dtype=pcp.float64), np.full(3, -1.5), pcp.float64)
    assert_close(pcp.full((2, 2), pcp.tensor(4.0, dtype=pcp.float64)), np.full((2, 2), 4.0), pcp.float64)
    assert_close(pcp.full((2, 3), [1.0, 2.0, 3.0]), np.broadcast_to([1.0, 2.0, 3.0], (2, 3)), pcp.float32)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_zeros_like_ones_like(dtype, rng):
    t, _ = make(rng, (3, 2), dtype)
    assert_close(pcp.zeros_like(t), np.zeros((3, 2)), dtype)
    assert_close(pcp.ones_like(t), np.ones((3, 2)), dtype)
    assert_close(pcp.ones_like(t.T, dtype=pcp.float64), np.ones((2, 3)), pcp.float64)


@pytest.mark.parametrize("args,kwargs", [((5,), {}), ((2, 9), {}), ((9, 2, -2), {}), ((0,), {}), ((3, 3), {}),
                                         ((0, 1, 0.1), {}), ((1, 2.2, 0.4), {}), ((2.5,), {}), ((-1.0, 1.0, 0.25), {}),
                                         ((5, 0, -1), {}), ((0, 5, 2), {"dtype": pcp.float64}),
                                         ((0, 10, 3), {"dtype": "int32"})], ids=str)
def test_arange(args, kwargs):
    r = pcp.arange(*args, **kwargs)
    np_dtype = kwargs.get("dtype")
    expected = np.arange(*args)
    # All-int arguments give int64 (as NumPy); a float argument gives float32 (NumPy: float64).
    want = {None: pcp.int64 if expected.dtype.kind == "i" else pcp.float32, pcp.float64: pcp.float64,
            "int32": pcp.int32}[np_dtype]
    assert_close(r, expected.astype(np.float64) if want in TOL else expected, want)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 5, 1), (4, None, -2), (5, 3, 0), (0, None, 0), (2, 4, 7)],
                         ids=str)
def test_eye(n, m, k):
    assert_close(pcp.eye(n, m, k), np.eye(n, m, k))
    assert_close(pcp.eye(n, m, k, dtype=pcp.int32), np.eye(n, m, k, dtype=np.int32), pcp.int32)


def test_rand_seeding_and_range():
    pcp.random.seed(7)
    a = to_np(pcp.rand((1000,)))
    pcp.random.seed(7)
    b = to_np(pcp.rand((1000,)))
    np.testing.assert_array_equal(a, b)
    c = to_np(pcp.rand((1000,)))
    assert (a != c).any()  # the stream advances
    pcp.random.seed(8)
    assert (to_np(pcp.rand((1000,))) != a).any()
    for dtype in ALL_FLOATS:
        r = pcp.rand((100_000,), dtype=dtype)
        assert r.dtype == dtype
        x = to_np(r)
        assert x.min() >= 0.0 and x.max() < 1.0  # [0, 1) after rounding to the dtype, too
        assert abs(x.mean() - 0.5) < 0.01
        assert abs(x.std() - math.sqrt(1 / 12)) < 0.01
        # Uniform: each tenth of [0, 1) gets about a tenth of the draws.
        if dtype in FLOATS:
            hist = np.histogram(x, bins=10, range=(0, 1))[0] / x.size
            assert np.all(np.abs(hist - 0.1) < 0.01)


def test_randn_statistics():
    for dtype in [pcp.float32, pcp.float64]:
        x = to_np(pcp.randn((100_000,), dtype=dtype))
        assert abs(x.mean()) < 0.02
        assert abs(x.std() - 1.0) < 0.02
        # Normal CDF: P(|z| < 1) = 0.6827, P(|z| < 2) = 0.9545
        assert abs(np.mean(np.abs(x) < 1) - math.erf(1 / math.sqrt(2))) < 0.01
        assert abs(np.mean(np.abs(x) < 2) - math.erf(2 / math.sqrt(2))) < 0.005
    pcp.random.seed(3)
    a = to_np(pcp.randn((2, 3, 7)))
    pcp.random.seed(3)
    np.testing.assert_array_equal(a, to_np(pcp.randn((2, 3, 7))))


def test_randint():
    pcp.random.seed(11)
    r = pcp.randint(-3, 4, (100_000,))
    assert r.dtype == pcp.int64
    x = to_np(r)
    assert x.min() == -3 and x.max() == 3
    counts = np.bincount(x + 3) / x.size
    assert np.all(np.abs(counts - 1 / 7) < 0.01)
    pcp.random.seed(11)
    np.testing.assert_array_equal(to_np(pcp.randint(-3, 4, (100_000,))), x)
    r32 = pcp.randint(0, 10, (4, 5), dtype=pcp.int32)
    assert r32.dtype == pcp.int32 and r32.shape == (4, 5)
    assert 0 <= to_np(r32).min() and to_np(r32).max() < 10


def test_rng_state_round_trip():
    pcp.random.seed(5)
    pcp.rand((10,))
    state = pcp.random.get_rng_state()
    a = to_np(pcp.randn((50,)))
    pcp.random.set_rng_state(*state)
    np.testing.assert_array_equal(to_np(pcp.randn((50,))), a)


def test_random_creation_shapes():
    assert pcp.rand((2, 0, 3)).shape == (2, 0, 3)
    assert pcp.randn(()).shape == ()
    assert pcp.randn(5).shape == (5,)


# ----------------------------------------------------------------------------------------------
# casts, conversions and properties

_CAST_VALUES = np.array([0, 1, 2, 3, 5, 0, 100, 7])


@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("dst", ALL_DTYPES, ids=str)
def test_astype_all_pairs(src, dst):
    t = pcp.tensor(_CAST_VALUES).astype(src)
    vals = _CAST_VALUES != 0 if src == pcp.bool_ else _CAST_VALUES
    r = t.astype(dst)
    assert r.dtype == dst
    if dst == pcp.bool_:
        expected = vals != 0
    elif dst in TOL:
        expected = vals.astype(np.float64)
    else:
        expected = vals.astype(NP_OF[dst])
    assert_close(r, expected, dst)
    assert_close(pcp.astype(t.T if t.ndim > 1 else t[::-1], dst), expected[::-1], dst)


def test_astype_float_to_int_truncates_and_to_bool():
    x = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 1e3])
    t = pcp.tensor(x, dtype=pcp.float64)
    assert_close(t.astype(pcp.int32), x.astype(np.int32), pcp.int32)  # toward zero, as C / NumPy
    assert_close(t.astype(pcp.int64), x.astype(np.int64), pcp.int64)
    assert_close(t.astype(pcp.bool_), x.astype(bool), pcp.bool_)
    assert_close(pcp.tensor([np.nan, -0.0]).astype("bool"), np.array([True, False]), pcp.bool_)
    assert_close(t.astype(pcp.float16), x.astype(np.float16).astype(np.float64), pcp.float16)
    assert_close(t.astype("float32"), x.astype(np.float32).astype(np.float64), pcp.float32)
    assert_close(t.astype(np.float32), x.astype(np.float32).astype(np.float64), pcp.float32)
    assert_close(t.astype(float), x, pcp.float32)  # Python float -> the default float
    assert_close(t.to(pcp.int64), x.astype(np.int64), pcp.int64)
    assert t.to("cpu") is not None and t.to("cpu").dtype == pcp.float64


def test_astype_rounding_to_bfloat16():
    # bfloat16 keeps 8 significand bits: round-to-nearest-even of float32.
    x = np.array([1.0, 1.00390625, 1.005859375, 3.14159, -1e-3, 65504.0, 1e30])
    r = to_np(pcp.tensor(x, dtype=pcp.float32).astype(pcp.bfloat16))
    f32 = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16) << 16
    expected = rounded.astype(np.uint32).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(r, expected)


def test_item_and_tolist():
    assert pcp.tensor(3).item() == 3 and isinstance(pcp.tensor(3).item(), int)
    v = pcp.tensor(2.5).item()
    assert v == 2.5 and isinstance(v, float)
    b = pcp.tensor(True).item()
    assert b is True
    assert pcp.tensor([[7]]).item() == 7
    assert pcp.tensor([1.5], dtype=pcp.bfloat16).item() == 1.5
    assert pcp.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert pcp.tensor([[0.5, 2.0]]).tolist() == [[0.5, 2.0]]
    assert pcp.tensor([True, False]).tolist() == [True, False]
    assert pcp.tensor([0.5, 1.5], dtype=pcp.bfloat16).tolist() == [0.5, 1.5]
    assert pcp.tensor(4).tolist() == 4
    assert pcp.arange(6).reshape(2, 3).T.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert float(pcp.tensor(2.5)) == 2.5 and int(pcp.tensor(7)) == 7 and bool(pcp.tensor(1.0)) is True
    assert [10, 20, 30][pcp.tensor(1)] == 20  # __index__


@pytest.mark.cpu_only  # CPU memory and repr; GPU tensors: tests/test_gpu.py
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_repr_and_properties(dtype):
    t = pcp.zeros((2, 3, 4), dtype=dtype)
    s = repr(t)
    assert "tensor(" in s and f"dtype={DTYPE_NAME[dtype]}" in s
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and len(t) == 2
    assert t.dtype == dtype and t.device == "cpu"
    assert t.itemsize == np.dtype(NP_OF.get(dtype, np.float16)).itemsize
    assert t.nbytes == 24 * t.itemsize
    assert t.strides == (12, 4, 1)
    assert t.T.strides == (1, 4, 12) and not t.T.is_contiguous()
    s0 = pcp.tensor(1.5)
    assert s0.shape == () and s0.ndim == 0 and s0.size == 1
    assert "1.5" in repr(s0) and "float32" in repr(s0)
    z = pcp.zeros((0, 3))
    assert z.size == 0 and z.shape == (0, 3) and "float32" in repr(z)


@pytest.mark.cpu_only  # CPU memory and repr; GPU tensors: tests/test_gpu.py
def test_repr_values():
    assert repr(pcp.tensor([1, 2, 3])) == "tensor([1, 2, 3], dtype=int64)"
    assert repr(pcp.tensor(True)) == "tensor(True, dtype=bool)"
    s = repr(pcp.arange(5000).astype(pcp.float32))
    assert "..." in s and "4999" in s and len(s) < 400  # big tensors are abbreviated


def test_dtype_objects():
    assert pcp.float32.itemsize == 4 and pcp.bfloat16.itemsize == 2 and pcp.bool_.itemsize == 1
    assert pcp.float16.is_floating_point and not pcp.int64.is_floating_point
    assert str(pcp.float32) == "float32" and repr(pcp.int32) == "pcp.int32"
    assert pcp.devices()[0] == "cpu" and pcp.device() == "cpu"


# ----------------------------------------------------------------------------------------------
# more edge cases: NaN in reductions, IEEE special cases of pow/div, long low-precision sums,
# stride-0 matmul operands


def test_reductions_with_nan_follow_numpy():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 5.0, -1.0, 0.0], [np.nan, np.nan, 0.0, 7.0]])
    for dtype in FLOATS:
        t = pcp.tensor(x, dtype=dtype)
        for axis in [None, 0, 1]:
            assert_close(pcp.max(t, axis=axis), np.max(x, axis=axis), dtype)
            assert_close(pcp.min(t, axis=axis), np.min(x, axis=axis), dtype)
            assert_close(pcp.sum(t, axis=axis), np.sum(x, axis=axis), dtype)
            # NumPy: argmax/argmin return the first NaN
            assert_close(pcp.argmax(t, axis=axis), np.argmax(x, axis=axis), pcp.int64)
            assert_close(pcp.argmin(t, axis=axis), np.argmin(x, axis=axis), pcp.int64)
    long = np.ones(1000)
    long[517] = np.nan  # NaN in the middle of a vectorized run
    assert_close(pcp.max(pcp.tensor(long, dtype=pcp.float32)), np.array(np.nan))
    assert_close(pcp.argmax(pcp.tensor(long, dtype=pcp.float32)), np.array(517), pcp.int64)


def test_pow_and_div_special_values():
    a = np.array([0.0, -2.0, -2.0, 0.0, np.inf, np.nan, 1.0, 4.0, -0.0, 2.0])
    b = np.array([0.0, 3.0, 0.5, -1.0, 0.0, 0.0, np.nan, -0.5, -1.0, np.inf])
    for dtype in FLOATS:
        with np.errstate(all="ignore"):
            assert_close(pcp.pow(pcp.tensor(a, dtype=dtype), pcp.tensor(b, dtype=dtype)), np.power(a, b), dtype)
            num = np.array([1.0, -1.0, 0.0, np.inf, 3.0])
            den = np.array([0.0, 0.0, 0.0, np.inf, -np.inf])
            assert_close(pcp.tensor(num, dtype=dtype) / pcp.tensor(den, dtype=dtype), num / den, dtype)
    with np.errstate(all="ignore"):
        # int / int is true division in float32: division by zero gives +-inf / nan, not an error
        assert_close(pcp.tensor([1, -1, 0]) / 0, np.array([1.0, -1.0, 0.0]) / 0.0, pcp.float32)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_long_low_precision_reductions_accumulate_in_float32(dtype, rng):
    # 16-bit sums must not accumulate in 16 bits (1 + 2048 == 2048 in float16).
    assert_close(pcp.sum(pcp.ones(5000, dtype=dtype)), np.array(5000.0), dtype)
    assert_close(pcp.mean(pcp.ones((3, 5000), dtype=dtype), axis=1), np.ones(3), dtype)
    t, x = make(rng, (3, 4000), dtype, 0, 1)
    assert_close(pcp.sum(t, axis=1), x.sum(axis=1), dtype)
    assert_close(pcp.mean(t), x.mean(), dtype)
    assert_close(pcp.softmax(t)[:, :7], np_softmax(x, -1)[:, :7], dtype)


def test_matmul_with_stride_zero_operands(rng):
    ta, a = make(rng, (1, 9))
    tb, b = make(rng, (9, 1))
    A = pcp.broadcast_to(ta, (5, 9))  # every row the same memory
    B = pcp.broadcast_to(tb, (9, 4))  # every column the same memory
    _check_matmul(A, B, np.broadcast_to(a, (5, 9)), np.broadcast_to(b, (9, 4)))
    C = pcp.broadcast_to(ta[None], (3, 7, 9))
    _check_matmul(C, tb, np.broadcast_to(a[None], (3, 7, 9)), b)


def test_matmul_nan_inf_propagation():
    a = np.array([[1.0, np.nan], [1.0, 2.0], [np.inf, 1.0]])
    b = np.array([[1.0, 0.0], [2.0, 3.0]])
    with np.errstate(invalid="ignore"):
        expected = a @ b  # inf * 0 -> nan, like NumPy
    assert_close(pcp.matmul(pcp.tensor(a, dtype=pcp.float32), pcp.tensor(b, dtype=pcp.float32)), expected)


def test_setitem_on_views_and_broadcast_values(rng):
    t = pcp.zeros((4, 6))
    x = np.zeros((4, 6))
    t[::-2, 1::2] = pcp.tensor([1.0, 2.0, 3.0])
    x[::-2, 1::2] = [1.0, 2.0, 3.0]
    v = t.T  # writes through a transposed view land in the base
    v[0] = pcp.arange(4).astype(pcp.float32)
    x.T[0] = np.arange(4)
    t[None, 1, ..., -1] = 9
    x[None, 1, ..., -1] = 9
    assert_close(t, x)
    ti = pcp.zeros(3, dtype=pcp.int32)
    ti[1] = 2.7  # cast on assignment, like NumPy
    assert_close(ti, np.array([0, 2, 0]), pcp.int32)


# ----------------------------------------------------------------------------------------------
# every SIMD level and thread count gives the same answers

_ISAS = pcp.cpu_features()["available"].split(",")


@pytest.fixture(params=_ISAS)
def isa(request):
    old = pcp.cpu_features()["isa"]
    pcp._core.set_isa(request.param)
    assert pcp.cpu_features()["isa"] == request.param
    yield request.param
    pcp._core.set_isa(old)


@pytest.mark.parametrize("n", [1, 7, 16, 33, 130, 1031])
def test_kernels_at_every_isa(isa, n, rng):
    for dtype in [pcp.float32, pcp.float64, pcp.float16, pcp.bfloat16]:
        for name in LOW_UNARY if dtype in LOW else sorted(UNARY):
            fn, ref, _ = UNARY[name]
            t, x = _unary_input(rng, (n,), dtype, name)
            assert_close(fn(t), ref(x), dtype)
        ta, a = make(rng, (2, n), dtype)
        tb, b = make(rng, (n,), dtype, 0.5, 2)
        assert_close(ta + tb, a + b, dtype)
        assert_close(ta * tb, a * b, dtype)
        assert_close(ta / tb, a / b, dtype)
        assert_close(pcp.maximum(ta, tb), np.maximum(a, b), dtype)
        assert_close(ta < tb, a < b, pcp.bool_)
        assert_close(pcp.sum(ta, axis=1), a.sum(axis=1), dtype, err_scale=np.abs(a).sum(axis=1))
        assert_close(pcp.max(ta, axis=1), a.max(axis=1), dtype)
        assert_close(pcp.argmin(ta, axis=1), a.argmin(axis=1), pcp.int64)
        assert_close(pcp.softmax(ta), np_softmax(a, -1), dtype)
        assert_close(pcp.log_softmax(ta), np_log_softmax(a, -1), dtype)
        assert_close(pcp.layer_norm(ta), np_layer_norm(a), dtype)
        tg = rng.integers(0, n, size=2)
        assert_close(pcp.cross_entropy(ta, tg, reduction="none"), np_cross_entropy(a, tg, reduction="none"), dtype)
        tm, m = make(rng, (n, 5), dtype)
        _check_matmul(ta, tm, a, m, dtype)
        _check_matmul(tm.T, ta.T, m.T, a.T, dtype)


def test_threads_do_not_change_results(rng):
    old = pcp.get_num_threads()
    t, x = make(rng, (300, 1000))
    w, wn = make(rng, (1000, 70))
    try:
        outs = []
        for n in [1, 2, 3]:
            pcp.set_num_threads(n)
            pcp.random.seed(99)
            outs.append([to_np(pcp.rand((50_000,))), to_np(pcp.randn((777,))), to_np(pcp.sum(t, axis=0)),
                         to_np(t @ w), to_np(pcp.exp(t)), to_np(pcp.dropout(t, 0.5))])
    finally:
        pcp.set_num_threads(old)
    for other in outs[1:]:
        for a, b in zip(outs[0][:2], other[:2]):
            np.testing.assert_array_equal(a, b)  # counter-based RNG: identical draws on any thread count
        np.testing.assert_array_equal(outs[0][4], other[4])  # elementwise: bitwise identical
        np.testing.assert_array_equal(outs[0][5], other[5])
        np.testing.assert_allclose(outs[0][2], other[2], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(outs[0][3], other[3], rtol=1e-5, atol=1e-4)
    assert_close(pcp.tensor(outs[0][3], dtype=pcp.float32), x @ wn, err_scale=np.abs(x) @ np.abs(wn))
