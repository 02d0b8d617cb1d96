"""Sorting, cumulative sums and products, products, sorted search and unique values, against
NumPy (float64 references; sorts and searches exactly), on each device (a GPU tensor is computed
on the host for now)."""
import numpy as np
import pytest

import pcp
from conftest import on_each_device, to_np
from forward import FLOATS, INTS, LOW, NP_OF, assert_close, make

pytestmark = on_each_device

SHAPES_AXES = [((7,), 0), ((4, 6), 1), ((4, 6), 0), ((3, 5, 4), 1), ((3, 5, 4), -1), ((0, 3), 0), ((2, 0), 1)]


def _with_ties_and_nans(rng, shape, dtype):
    """Values with many ties, and NaNs and signed zeros for floats."""
    v = rng.integers(-3, 4, size=shape).astype(np.float64)
    if dtype in FLOATS + LOW and v.size:
        flat = v.reshape(-1)
        flat[rng.integers(0, flat.size, size=max(1, flat.size // 6))] = np.nan
        flat[rng.integers(0, flat.size, size=max(1, flat.size // 6))] = -0.0
    t = pcp.tensor(v, dtype=dtype)
    return t, to_np(t).astype(np.float64)


@pytest.mark.parametrize("dtype", FLOATS + LOW + INTS + [pcp.bool_], ids=str)
@pytest.mark.parametrize("shape_axis", SHAPES_AXES, ids=str)
def test_argsort_is_numpys_stable_argsort(dtype, shape_axis, rng):
    shape, axis = shape_axis
    t, x = _with_ties_and_nans(rng, shape, dtype)
    if dtype == pcp.bool_:
        t, x = t.astype(pcp.bool_), (x != 0).astype(np.float64)
    got = pcp.argsort(t, axis=axis)
    assert got.dtype == pcp.int64 and got.shape == t.shape
    np.testing.assert_array_equal(to_np(got), np.argsort(x, axis=axis, kind="stable"))
    # Descending, stably: equal values keep their order; NaNs (the largest) come first.
    key = np.where(np.isnan(x), -np.inf, -x)
    np.testing.assert_array_equal(to_np(pcp.argsort(t, axis=axis, descending=True)),
                                  np.argsort(key, axis=axis, kind="stable"))
    np.testing.assert_array_equal(to_np(pcp.sort(t, axis=axis)).astype(np.float64), np.sort(x, axis=axis))


def test_sort_gradient_goes_back_to_each_elements_place(rng):
    x = rng.permutation(12).reshape(3, 4).astype(np.float64)  # distinct values
    w = rng.normal(size=(3, 4))
    t = pcp.tensor(x, requires_grad=True)
    (pcp.sort(t, axis=1, descending=True) * pcp.tensor(w)).sum().backward()
    order = np.argsort(-x, axis=1, kind="stable")
    want = np.zeros_like(x)
    np.put_along_axis(want, order, w, axis=1)
    assert_close(t.grad, want, pcp.float64)


def test_take_along_axis_broadcasts_and_counts_from_the_end(rng):
    x = rng.normal(size=(3, 4, 5))
    idx = rng.integers(-5, 5, size=(3, 1, 2))
    got = pcp.take_along_axis(pcp.tensor(x, dtype=pcp.float32), pcp.tensor(idx), 2)
    assert_close(got, np.take_along_axis(x, idx % 5, 2), pcp.float32)  # (3, 4, 2): the middle axis broadcasts
    with pytest.raises(IndexError, match="take_along_axis"):
        pcp.take_along_axis(pcp.tensor(x), pcp.tensor(np.full((3, 4, 1), 5)), 2)
    with pytest.raises(ValueError, match="take_along_axis"):
        pcp.take_along_axis(pcp.tensor(x), pcp.tensor(np.zeros((3, 1), dtype=np.int64)), 1)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", FLOATS + LOW + INTS + [pcp.bool_], ids=str)
@pytest.mark.parametrize("shape_axis", SHAPES_AXES + [((3, 4), None)], ids=str)
def test_cumulative_sums_and_products(op, dtype, shape_axis, rng):
    shape, axis = shape_axis
    lo, hi = (-2, 3) if op == "cumprod" else (-50, 50)
    t, x = make(rng, shape, dtype, lo, hi) if dtype != pcp.bool_ else make(rng, shape, dtype)
    ref = getattr(np, op)(x.astype(np.float64) if dtype in FLOATS + LOW else x.astype(np.int64), axis=axis)
    want_dtype = dtype if dtype in FLOATS + LOW else pcp.int64
    assert_close(getattr(pcp, op)(t, axis=axis), ref, want_dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cumulative_gradients_and_zeros(dtype, rng):
    x = np.array([[1.5, -2.0, 0.0, 3.0, 0.0, 2.0], [0.5, 2.0, -1.0, 0.0, 4.0, 1.0]])
    w = rng.normal(size=x.shape)
    t = pcp.tensor(x, dtype=dtype, requires_grad=True)
    (pcp.cumprod(t, axis=1) * pcp.tensor(w, dtype=dtype)).sum().backward()
    # d/dx_i sum_j w_j prod_{k<=j} x_k, by brute force (no division: exact at the zeros)
    want = np.zeros_like(x)
    for r in range(2):
        for i in range(6):
            for j in range(i, 6):
                want[r, i] += w[r, j] * np.prod(np.delete(x[r, : j + 1], i))
    assert_close(t.grad, want, dtype)
    t.grad = None
    (pcp.cumsum(t, axis=0) * pcp.tensor(w, dtype=dtype)).sum().backward()
    assert_close(t.grad, np.flip(np.cumsum(np.flip(w, 0), 0), 0), dtype)


@pytest.mark.parametrize("dtype", FLOATS + LOW + INTS + [pcp.bool_], ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1, ()], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_prod(dtype, axis, keepdims, rng):
    t, x = make(rng, (3, 4, 2), dtype, -2, 2) if dtype != pcp.bool_ else make(rng, (3, 4, 2), dtype)
    want_dtype = dtype if dtype in FLOATS + LOW else pcp.int64
    want = np.prod(x.astype(np.float64 if dtype in FLOATS + LOW else np.int64), axis=axis, keepdims=keepdims)
    assert_close(pcp.prod(t, axis=axis, keepdims=keepdims), want, want_dtype)
    assert_close(pcp.prod(pcp.tensor(np.zeros((2, 0)), dtype=dtype), axis=1), np.ones(2), want_dtype)


def test_prod_gradient_at_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 4.0, -2.0]])
    t = pcp.tensor(x, requires_grad=True)
    pcp.prod(t, axis=1).sum().backward()
    want = np.array([[np.prod(np.delete(row, i)) for i in range(3)] for row in x])
    assert_close(t.grad, want, pcp.float64)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(dtype, side, rng):
    sorted_ = np.sort(rng.integers(-5, 6, size=20)).astype(NP_OF[dtype])
    values = rng.integers(-7, 8, size=(3, 4)).astype(NP_OF[dtype])
    if dtype in FLOATS:
        sorted_ = np.append(sorted_, np.nan)
        values[0, 0] = np.nan
    got = pcp.searchsorted(pcp.tensor(sorted_), pcp.tensor(values), side=side)
    np.testing.assert_array_equal(to_np(got), np.searchsorted(sorted_, values, side=side))
    with pytest.raises(ValueError, match="searchsorted"):
        pcp.searchsorted(pcp.tensor(sorted_), pcp.tensor(values), side="middle")


@pytest.mark.parametrize("dtype", FLOATS + LOW + INTS + [pcp.bool_], ids=str)
def test_unique(dtype, rng):
    t, x = _with_ties_and_nans(rng, (5, 6), dtype)
    if dtype == pcp.bool_:
        t, x = t.astype(pcp.bool_), (x != 0).astype(np.float64)
    values, index, inverse, counts = pcp.unique(t, return_index=True, return_inverse=True, return_counts=True)
    flat = x.reshape(-1)
    # NumPy merges NaNs; the standard (and PCP) keeps each NaN apart.
    finite = flat[~np.isnan(flat)]
    want_values, want_index, want_counts = np.unique(finite, return_index=True, return_counts=True)
    n_nan = int(np.isnan(flat).sum())
    got_values = to_np(values).astype(np.float64)
    np.testing.assert_array_equal(got_values[: len(want_values)], want_values)
    assert np.isnan(got_values[len(want_values):]).all() and len(got_values) == len(want_values) + n_nan
    np.testing.assert_array_equal(to_np(counts), np.concatenate([want_counts, np.ones(n_nan, dtype=np.int64)]))
    np.testing.assert_array_equal(flat[to_np(index)], got_values)  # where each value first is
    first = to_np(index)[: len(want_values)]
    np.testing.assert_array_equal(first, np.flatnonzero(~np.isnan(flat))[want_index])
    np.testing.assert_array_equal(got_values[to_np(inverse)].reshape(x.shape)[~np.isnan(x)], x[~np.isnan(x)])
    assert inverse.shape == t.shape
