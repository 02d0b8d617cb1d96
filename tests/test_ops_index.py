"""Forward values of indexing (basic, advanced, boolean, assignment), take, embedding, one_hot, against
NumPy references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import numpy as np
import pytest

import pcp
from conftest import to_np, on_each_device
from forward import make, assert_close

pytestmark = on_each_device


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
