"""Forward values of shape ops: reshape, transpose, concatenate, stack, split, squeeze, broadcast_to,
tril/triu, copies, against NumPy references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import numpy as np
import pytest

import pcp
from conftest import to_np, on_each_device
from forward import make, assert_close

pytestmark = on_each_device


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
