"""Helpers of the forward-value suites (tests/test_ops_<family>.py): inputs, NumPy references in
float64 and the comparison every one of them uses.

Each test builds its inputs in the dtype under test, reads back the (rounded) values as float64
with ``to_np`` and computes the reference on those, so only the op's own error is measured.
Tolerances come from ``conftest.TOL``; for sums and dot products the bound also scales with the
sum of absolute terms (the usual forward-error bound of a summation), see ``assert_close``.

Where PCP deliberately differs from NumPy (PyTorch-like defaults), the test follows PCP and says so.
"""
import math

import numpy as np

import pcp
from conftest import TOL, to_np

FLOATS = [pcp.float32, pcp.float64]
LOW = [pcp.float16, pcp.bfloat16]
ALL_FLOATS = FLOATS + LOW
INTS = [pcp.int32, pcp.int64]
ALL_DTYPES = [pcp.bool_, pcp.int32, pcp.int64, pcp.float16, pcp.bfloat16, pcp.float32, pcp.float64]
DTYPE_NAME = {pcp.bool_: "bool", pcp.int32: "int32", pcp.int64: "int64", pcp.float16: "float16",
              pcp.bfloat16: "bfloat16", pcp.float32: "float32", pcp.float64: "float64"}
NP_OF = {pcp.bool_: np.bool_, pcp.int32: np.int32, pcp.int64: np.int64, pcp.float16: np.float16,
         pcp.float32: np.float32, pcp.float64: np.float64}


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

