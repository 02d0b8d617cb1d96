"""Hypothesis property tests: PCP agrees with NumPy on randomly drawn shapes, axes and keys."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays, mutually_broadcastable_shapes

import pcp
from conftest import TOL, to_np, on_each_device

pytestmark = on_each_device

SETTINGS = settings(max_examples=50, deadline=None, database=None)

FLOAT_DTYPES = {"float32": (pcp.float32, np.float32), "float64": (pcp.float64, np.float64)}
INT_DTYPES = {"int32": (pcp.int32, np.int32), "int64": (pcp.int64, np.int64)}


def values(shape, np_dtype, lo=-100, hi=100):
    """Array strategy of a given shape and dtype with bounded, finite elements."""
    if np.dtype(np_dtype).kind == "f":
        elems = st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=32)
    else:
        elems = st.integers(lo, hi)
    return arrays(np_dtype, shape, elements=elems)


def check_close(t, expected, err_scale=None):
    """pcp tensor t against float64 (or exact) NumPy `expected`, with conftest.TOL for t's dtype."""
    expected = np.asarray(expected)
    assert t.shape == expected.shape, (t.shape, expected.shape)
    got = to_np(t)
    if t.dtype not in TOL:
        np.testing.assert_array_equal(got, expected)
        return
    tol = TOL[t.dtype]
    bound = tol["atol"] + tol["rtol"] * np.abs(expected)
    if err_scale is not None:
        bound = bound + tol["rtol"] * err_scale
    with np.errstate(invalid="ignore"):
        ok = (np.isnan(got) & np.isnan(expected)) | (got == expected) | (np.abs(got - expected) <= bound)
    assert ok.all(), f"got {got[~ok][:5]} expected {expected[~ok][:5]}"


# ----------------------------------------------------------------------------------------------
# broadcasting of binary ops

BINARY = {
    "add": (pcp.add, np.add),
    "sub": (pcp.sub, np.subtract),
    "mul": (pcp.mul, np.multiply),
    "maximum": (pcp.maximum, np.maximum),
    "minimum": (pcp.minimum, np.minimum),
    "eq": (pcp.eq, np.equal),
    "lt": (pcp.lt, np.less),
    "ge": (pcp.ge, np.greater_equal),
    "div": (pcp.div, np.divide),
}


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=5),
       name=st.sampled_from(sorted(BINARY)),
       dtype=st.sampled_from(sorted(FLOAT_DTYPES) + sorted(INT_DTYPES)),
       flip=st.booleans(),
       data=st.data())
def test_binary_broadcasting_matches_numpy(shapes, name, dtype, flip, data):
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    pdt, ndt = {**FLOAT_DTYPES, **INT_DTYPES}[dtype]
    a = data.draw(values(sa, ndt, -20, 20), label="a")
    b = data.draw(values(sb, ndt, -20, 20), label="b")
    if name == "div":
        b = np.where(b == 0, ndt(3), b)  # keep away from 0 / 0
    ta, tb = pcp.tensor(a), pcp.tensor(b)
    if flip and a.ndim:  # a reversed (negative-stride) view of the same values
        ta, a = pcp.tensor(a[..., ::-1].copy())[..., ::-1], a
    fn, ref = BINARY[name]
    r = fn(ta, tb)
    assert r.shape == out_shape == np.broadcast_shapes(sa, sb)
    expected = ref(a.astype(np.float64), b.astype(np.float64))
    if name in ("eq", "lt", "ge"):
        assert r.dtype == pcp.bool_
    elif name == "div" and dtype in INT_DTYPES:
        assert r.dtype == pcp.float32  # true division of ints is float32 in PCP
    else:
        assert r.dtype == pdt
        if dtype in INT_DTYPES:
            expected = expected.astype(np.int64)
    check_close(r, expected)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=1, max_side=4),
       data=st.data())
def test_where_broadcasting_matches_numpy(shapes, data):
    sc, sa, sb = shapes.input_shapes
    c = data.draw(arrays(np.bool_, sc), label="cond")
    a = data.draw(values(sa, np.float32), label="a")
    b = data.draw(values(sb, np.float32), label="b")
    r = pcp.where(pcp.tensor(c), pcp.tensor(a), pcp.tensor(b))
    check_close(r, np.where(c, a, b).astype(np.float64))


@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5), data=st.data())
def test_broadcast_to_matches_numpy(shape, data):
    # Target: extra leading dims, and size-1 dims stretched.
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2), label="lead")
    target = tuple(lead) + tuple(data.draw(st.integers(0, 3), label="stretch") if d == 1 else d for d in shape)
    x = data.draw(values(shape, np.float32), label="x")
    check_close(pcp.broadcast_to(pcp.tensor(x), target), np.broadcast_to(x, target).astype(np.float64))


# ----------------------------------------------------------------------------------------------
# reductions over random axis subsets


@st.composite
def axes_for(draw, ndim):
    """None, a single int, or a tuple of distinct axes, each maybe negative."""
    if draw(st.booleans()) or ndim == 0:
        return None
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
    chosen = [a - ndim if draw(st.booleans()) else a for a in chosen]
    if len(chosen) == 1 and draw(st.booleans()):
        return chosen[0]
    return tuple(chosen)


def reduced_count(shape, axis):
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes)


@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
       name=st.sampled_from(["sum", "mean", "max", "min", "var", "logsumexp"]),
       keepdims=st.booleans(),
       transpose=st.booleans(),
       data=st.data())
def test_reductions_match_numpy(shape, name, keepdims, transpose, data):
    x = data.draw(values(shape, np.float32), label="x")
    t = pcp.tensor(x)
    if transpose:  # a non-contiguous input
        t, x = t.T, x.T
    axis = data.draw(axes_for(x.ndim), label="axis")
    xd = x.astype(np.float64)
    fn = getattr(pcp, name)
    if reduced_count(x.shape, axis) == 0 and name in ("max", "min"):
        with pytest.raises(ValueError, match=name):
            fn(t, axis=axis, keepdims=keepdims)
        return
    if reduced_count(x.shape, axis) == 0 and name == "logsumexp":
        # Empty logsumexp is -inf (the log of an empty sum); checked deterministically by
        # test_ops_reduce.py::test_logsumexp_over_zero_size_axis_is_minus_inf.
        return
    r = fn(t, axis=axis, keepdims=keepdims)
    assert r.dtype == pcp.float32
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean/var of empty slices: NaN
        if name == "logsumexp":
            m = np.max(xd, axis=axis, keepdims=True) if xd.size else 0.0
            expected = np.log(np.sum(np.exp(xd - m), axis=axis, keepdims=True)) + m
            if not keepdims:
                expected = expected.reshape(np.sum(xd, axis=axis).shape)
        elif name == "var":
            expected = np.var(xd, axis=axis, keepdims=keepdims)
        else:
            expected = getattr(np, name)(xd, axis=axis, keepdims=keepdims)
        scale = np.sum(np.abs(xd), axis=axis, keepdims=keepdims)
        if name == "var":
            scale = 4 * np.var(xd, axis=axis, keepdims=keepdims) + np.mean(np.abs(xd), axis=axis, keepdims=keepdims)
        elif name in ("mean", "logsumexp"):
            scale = np.mean(np.abs(xd), axis=axis, keepdims=keepdims) if name == "mean" else None
    check_close(r, expected, err_scale=scale if name not in ("max", "min") else None)


@SETTINGS
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5),
       name=st.sampled_from(["argmax", "argmin"]), keepdims=st.booleans(), data=st.data())
def test_argmax_argmin_match_numpy(shape, name, keepdims, data):
    x = data.draw(values(shape, np.int32, -3, 3), label="x")  # many ties: the first one wins
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1), label="axis")
    r = getattr(pcp, name)(pcp.tensor(x), axis=axis, keepdims=keepdims)
    assert r.dtype == pcp.int64
    np.testing.assert_array_equal(to_np(r), getattr(np, name)(x, axis=axis, keepdims=keepdims))


@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5), keepdims=st.booleans(),
       dtype=st.sampled_from(sorted(INT_DTYPES)), data=st.data())
def test_integer_sum_max_exact(shape, keepdims, dtype, data):
    pdt, ndt = INT_DTYPES[dtype]
    x = data.draw(values(shape, ndt, -1000, 1000), label="x")
    axis = data.draw(axes_for(len(shape)), label="axis")
    r = pcp.sum(pcp.tensor(x), axis=axis, keepdims=keepdims)
    assert r.dtype == pcp.int64
    np.testing.assert_array_equal(to_np(r), np.sum(x.astype(np.int64), axis=axis, keepdims=keepdims))
    if reduced_count(shape, axis) > 0:
        m = pcp.max(pcp.tensor(x), axis=axis, keepdims=keepdims)
        assert m.dtype == pdt
        np.testing.assert_array_equal(to_np(m), np.max(x, axis=axis, keepdims=keepdims))


# ----------------------------------------------------------------------------------------------
# shapes: reshape, permute, slicing, indexing


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def reshape_target(draw, n):
    """A random shape with n elements, possibly with one -1."""
    if n == 0:
        dims = draw(st.lists(st.integers(0, 4), min_size=0, max_size=3))
        pos = draw(st.integers(0, len(dims)))
        return tuple(dims[:pos]) + (0,) + tuple(dims[pos:])
    dims, rem = [], n
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from(_divisors(rem)))
        dims.append(d)
        rem //= d
    dims.append(rem)
    dims = draw(st.permutations(dims))
    if draw(st.booleans()):
        dims = list(dims)
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5), transpose=st.booleans(),
       data=st.data())
def test_reshape_round_trips(shape, transpose, data):
    x = data.draw(values(shape, np.float64), label="x")
    t = pcp.tensor(x)
    if transpose:
        t, x = t.T, x.T
    target = data.draw(reshape_target(x.size), label="target")
    r = pcp.reshape(t, target)
    expected = x.reshape(target)
    check_close(r, expected)
    back = r.reshape(x.shape)
    check_close(back, x)
    check_close(pcp.reshape(pcp.flatten(t), x.shape), x)


@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=5, min_side=1, max_side=4), data=st.data())
def test_permute_and_inverse(shape, data):
    x = data.draw(values(shape, np.float32), label="x")
    perm = data.draw(st.permutations(range(len(shape))), label="perm")
    t = pcp.permute(pcp.tensor(x), perm)
    check_close(t, np.transpose(x, perm).astype(np.float64))
    inv = np.argsort(perm).tolist()
    check_close(pcp.permute(t, inv), x.astype(np.float64))
    check_close(pcp.contiguous(t), np.transpose(x, perm).astype(np.float64))
    check_close(t + 1.0, np.transpose(x, perm).astype(np.float64) + 1.0)


@st.composite
def slice_for(draw, n):
    start = draw(st.none() | st.integers(-n - 2, n + 2))
    stop = draw(st.none() | st.integers(-n - 2, n + 2))
    step = draw(st.none() | st.integers(-3, 3).filter(lambda s: s != 0))
    return slice(start, stop, step)


@SETTINGS
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6), data=st.data())
def test_basic_slicing_matches_numpy(shape, data):
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    t = pcp.tensor(x)
    key = []
    for n in shape[: data.draw(st.integers(1, len(shape)), label="nkeys")]:
        kind = data.draw(st.sampled_from(["slice", "int", "none"]) if n else st.sampled_from(["slice", "none"]))
        if kind == "slice":
            key.append(data.draw(slice_for(n)))
        elif kind == "int":
            key.append(data.draw(st.integers(-n, n - 1)))
        else:
            key.append(None)
            key.append(data.draw(slice_for(n)))
    if data.draw(st.booleans(), label="ellipsis"):
        key.insert(data.draw(st.integers(0, len(key))), Ellipsis)
    key = tuple(key)
    try:
        expected = x[key]
    except IndexError:  # e.g. an Ellipsis moved an int onto an empty axis: PCP must refuse too
        with pytest.raises(IndexError, match="index"):
            t[key]
        return
    check_close(t[key], expected)
    # Slicing a slice: views of views.
    inner = t[key]
    if inner.ndim:
        check_close(inner[::-1], expected[::-1])


@st.composite
def mixed_key(draw, shape):
    """A subscript mixing ints, slices and integer lists (NumPy advanced indexing)."""
    key = []
    for n in shape[: draw(st.integers(1, len(shape)))]:
        kind = draw(st.sampled_from(["slice", "int", "list"]))
        if kind == "slice":
            key.append(draw(slice_for(n)))
        elif kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)))
    # Index lists must broadcast together: give them all the same length.
    lists = [k for k in key if isinstance(k, list)]
    if lists:
        length = min(len(k) for k in lists)
        key = [k[:length] if isinstance(k, list) else k for k in key]
    return tuple(key)


@SETTINGS
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5), data=st.data())
def test_mixed_advanced_indexing_matches_numpy(shape, data):
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    key = data.draw(mixed_key(shape), label="key")
    check_close(pcp.tensor(x)[key], x[key])


@SETTINGS
@given(sa=array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3),
       sb=array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3),
       mnk=st.tuples(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40)),
       vec=st.sampled_from(["none", "a", "b"]), data=st.data())
def test_matmul_batched_broadcast_matches_numpy(sa, sb, mnk, vec, data):
    m, n, k = mnk
    # Make the batch shapes broadcastable: where they disagree, set sb's dim to 1.
    lb = list(sb)
    for i in range(1, min(len(sa), len(sb)) + 1):
        if sa[-i] != sb[-i]:
            lb[-i] = 1
    sa_full = (k,) if vec == "a" else tuple(sa) + (m, k)
    sb_full = (k,) if vec == "b" else tuple(lb) + (k, n)
    a = data.draw(values(sa_full, np.float32, -2, 2), label="a")
    b = data.draw(values(sb_full, np.float32, -2, 2), label="b")
    r = pcp.matmul(pcp.tensor(a), pcp.tensor(b))
    ad, bd = a.astype(np.float64), b.astype(np.float64)
    check_close(r, ad @ bd, err_scale=np.abs(ad) @ np.abs(bd))
