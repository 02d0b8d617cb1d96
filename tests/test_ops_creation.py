"""Forward values of creation: tensor, from_numpy, zeros/ones/full/eye/arange, random, against NumPy
references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import math

import numpy as np
import pytest

import pcp
from conftest import TOL, requires_torch, to_np, torch, on_each_device
from forward import make, assert_close, FLOATS, ALL_FLOATS, ALL_DTYPES, NP_OF

pytestmark = on_each_device


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


@pytest.mark.parametrize("dtype", [pcp.float64, pcp.int32], ids=str)
def test_ones_like_takes_another_dtype(dtype, rng):
    t, _ = make(rng, (3, 2), pcp.float32)
    assert_close(pcp.ones_like(t.T, dtype=dtype), np.ones((2, 3)), dtype)


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
