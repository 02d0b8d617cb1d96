"""Forward values of matmul, against NumPy references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import numpy as np
import pytest

import pcp
from conftest import on_each_device
from forward import make, assert_close, FLOATS, ALL_FLOATS

pytestmark = on_each_device


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


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [pcp.int32, pcp.int64], ids=str)
def test_integer_matmul_is_exact_and_wraps(shapes, dtype, rng):
    np_dt = np.int32 if dtype == pcp.int32 else np.int64
    a = rng.integers(-1000, 1000, size=shapes[0]).astype(np_dt)
    b = rng.integers(-1000, 1000, size=shapes[1]).astype(np_dt)
    got = pcp.matmul(pcp.tensor(a, dtype=dtype), pcp.tensor(b, dtype=dtype))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), np.matmul(a, b))
    big = np.full((2, 3), np.iinfo(np_dt).max, dtype=np_dt)  # overflow wraps, as NumPy's
    np.testing.assert_array_equal((pcp.tensor(big) @ pcp.tensor(big.T)).numpy(), big @ big.T)


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
@pytest.mark.parametrize("mnk", [(1, 1, 1), (7, 33, 130), (130, 7, 33), (33, 130, 7), (64, 48, 32), (65, 49, 31),
                                 (136, 264, 520)],
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


@pytest.mark.parametrize("dtype", ALL_FLOATS, ids=str)
@pytest.mark.parametrize("mnk", [(3, 130, 2048), (65, 34, 1536), (66, 130, 1031)], ids=str)
def test_matmul_few_tiles_over_a_long_k(dtype, mnk, rng):
    # A weight gradient's shape (X^T @ dY): few output tiles, so the GPU splits K into slices
    # summed afterwards (16-bit results rounded once, after the sum); K = 1031 (prime) does not.
    m, n, k = mnk
    ta, a = make(rng, (k, m), dtype)
    tb, b = make(rng, (k, n), dtype)
    _check_matmul(ta.T, tb, a.T, b, dtype)


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
