"""Forward values of reductions (sum, mean, var, max, min, argmax, argmin, logsumexp, any, all),
against NumPy references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import numpy as np
import pytest

import pcp
from conftest import on_each_device
from forward import make, assert_close, np_logsumexp, np_softmax, FLOATS, LOW, INTS

pytestmark = on_each_device


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


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_long_low_precision_reductions_accumulate_in_float32(dtype, rng):
    # 16-bit sums must not accumulate in 16 bits (1 + 2048 == 2048 in float16).
    assert_close(pcp.sum(pcp.ones(5000, dtype=dtype)), np.array(5000.0), dtype)
    assert_close(pcp.mean(pcp.ones((3, 5000), dtype=dtype), axis=1), np.ones(3), dtype)
    t, x = make(rng, (3, 4000), dtype, 0, 1)
    assert_close(pcp.sum(t, axis=1), x.sum(axis=1), dtype)
    assert_close(pcp.mean(t), x.mean(), dtype)
    assert_close(pcp.softmax(t)[:, :7], np_softmax(x, -1)[:, :7], dtype)
