"""pcp.array_api, the Array API standard's namespace, against NumPy (float64 where values are
computed) on the CPU and on each GPU; its dtype functions against the standard's rules."""
import math

import numpy as np
import pytest

import pcp
import pcp.array_api as xp

DEVICES = ["cpu"] + [d.split(" ")[0] for d in pcp.devices()[1:]]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


# Integer arithmetic (add, sum) on GPUs waits for integer kernels: there it must fail cleanly.
GPU_INTEGERS = "is not supported on vulkan"


def data(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_tensors_name_the_namespace_and_its_version():
    x = pcp.ones((2,))
    assert x.__array_namespace__() is xp and x.__array_namespace__(api_version="2024.12") is xp
    assert xp.__array_api_version__ == "2024.12"
    with pytest.raises(ValueError, match="2023.12"):
        x.__array_namespace__(api_version="2023.12")
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float32 and info.default_dtypes()["indexing"] == xp.int64
    assert set(info.dtypes(kind="integral")) == {"int32", "int64"} and pcp.device("cpu") in info.devices()
    assert (xp.e, xp.pi, xp.inf) == (math.e, math.pi, math.inf) and math.isnan(xp.nan) and xp.newaxis is None


@pytest.mark.parametrize("case", [
    ("flip", lambda a: np.flip(a, axis=0), lambda x: xp.flip(x, axis=0)),
    ("flip all", lambda a: np.flip(a), lambda x: xp.flip(x)),
    ("roll", lambda a: np.roll(a, 2, axis=1), lambda x: xp.roll(x, 2, axis=1)),
    ("roll flat", lambda a: np.roll(a, -3), lambda x: xp.roll(x, -3)),
    ("roll two axes", lambda a: np.roll(a, (1, -1), axis=(0, 2)), lambda x: xp.roll(x, (1, -1), axis=(0, 2))),
    ("tile", lambda a: np.tile(a, (2, 1, 3)), lambda x: xp.tile(x, (2, 1, 3))),
    ("tile more axes", lambda a: np.tile(a, (2, 1, 1, 2)), lambda x: xp.tile(x, (2, 1, 1, 2))),
    ("repeat", lambda a: np.repeat(a, 2, axis=1), lambda x: xp.repeat(x, 2, axis=1)),
    ("repeat counts", lambda a: np.repeat(a, [1, 0, 2], axis=1), lambda x: xp.repeat(x, [1, 0, 2], axis=1)),
    ("repeat flat", lambda a: np.repeat(a, 2), lambda x: xp.repeat(x, 2)),
    ("moveaxis", lambda a: np.moveaxis(a, (0, 1), (2, 0)), lambda x: xp.moveaxis(x, (0, 1), (2, 0))),
    ("permute_dims", lambda a: np.transpose(a, (2, 0, 1)), lambda x: xp.permute_dims(x, (2, 0, 1))),
    ("diff", lambda a: np.diff(a, n=2, axis=1), lambda x: xp.diff(x, n=2, axis=1)),
    ("std", lambda a: np.std(a.astype(np.float64), axis=(0, 2), ddof=1), lambda x: xp.std(x, axis=(0, 2), correction=1)),
    ("var", lambda a: np.var(a.astype(np.float64), axis=1, keepdims=True),
     lambda x: xp.var(x, axis=1, keepdims=True)),
    ("vecdot", lambda a: np.sum(a.astype(np.float64) * a, axis=1), lambda x: xp.vecdot(x, x, axis=1)),
    ("tensordot", lambda a: np.tensordot(a.astype(np.float64), a, axes=([0, 2], [0, 2])),
     lambda x: xp.tensordot(x, x, axes=([0, 2], [0, 2]))),
    ("matrix_transpose", lambda a: np.swapaxes(a, -1, -2), lambda x: xp.matrix_transpose(x)),
    ("count_nonzero", lambda a: np.count_nonzero(a > 0, axis=2), lambda x: xp.count_nonzero(x > 0, axis=2)),
    ("unstack", lambda a: np.stack(list(a), axis=0), lambda x: xp.stack(xp.unstack(x))),
    ("isfinite", lambda a: np.isfinite(a / (a > 0)), lambda x: xp.isfinite(x / (x > 0))),
    ("isinf", lambda a: np.isinf(a / (a > 0)), lambda x: xp.isinf(x / (x > 0))),
    ("isnan", lambda a: np.isnan(np.log(a)), lambda x: xp.isnan(xp.log(x))),
    ("reciprocal", lambda a: 1 / a.astype(np.float64), lambda x: xp.reciprocal(x)),
], ids=lambda c: c[0])
def test_functions_match_numpy(case, device):
    name, ref, fn = case
    a = data((3, 3, 4))
    with np.errstate(all="ignore"):
        want = ref(a)
    if name == "count_nonzero" and device != "cpu" and not pcp.gpu_info(device)["float64"]:
        with pytest.raises(NotImplementedError, match=GPU_INTEGERS):
            fn(pcp.tensor(a, device=device))
        return
    got = fn(pcp.tensor(a, device=device))
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=1e-5, atol=1e-6)


def test_take_along_axis_gathers_and_differentiates(device):
    a = data((3, 4))
    idx = np.array([[3, 0], [1, -1], [2, 2]], np.int32)
    x = pcp.tensor(a, device=device, requires_grad=True)
    out = xp.take_along_axis(x, pcp.tensor(idx, device=device), axis=1)
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(a, idx % 4, axis=1))
    xp.sum(out * out).backward()  # d/dx sum(g^2) = 2 g, added up where indices repeat
    want = np.zeros_like(a, dtype=np.float64)
    np.add.at(want, (np.arange(3)[:, None], idx % 4), 2 * np.take_along_axis(a, idx % 4, axis=1))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="take_along_axis"):
        xp.take_along_axis(x, pcp.tensor(np.zeros(3, np.int64), device=device), axis=1)


def test_creation_follows_the_standard(device):
    np.testing.assert_allclose(xp.linspace(0, 1, 5, device=device).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_allclose(xp.linspace(2, 3, 4, endpoint=False, dtype=xp.float64, device=device).numpy(),
                               np.linspace(2, 3, 4, endpoint=False))
    a, b = np.arange(3, dtype=np.int32), np.arange(4, dtype=np.int32) * 10
    for indexing in ("xy", "ij"):
        got = xp.meshgrid(pcp.tensor(a, device=device), pcp.tensor(b, device=device), indexing=indexing)
        for g, w in zip(got, np.meshgrid(a, b, indexing=indexing)):
            np.testing.assert_array_equal(g.numpy(), w)
    assert xp.full_like(pcp.tensor(a, device=device), 7).tolist() == [7, 7, 7]
    assert xp.empty((2, 3), device=device).shape == (2, 3) and xp.empty_like(pcp.tensor(a)).dtype == xp.int32
    x = pcp.tensor(a, device=device)
    assert xp.asarray(x) is x and xp.asarray(x, copy=True) is not x and xp.asarray(x, copy=False) is x
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(x, dtype=xp.float32, copy=False)
    assert xp.astype(x, xp.int32, copy=False) is x and xp.astype(x, xp.int32) is not x


def test_sums_of_integers_widen_to_the_default_integer_and_nonzero_finds_the_indices(device):
    x = pcp.tensor(np.array([[0, 3], [2, 0]], np.int32), device=device)
    widest = xp.__array_namespace_info__().default_dtypes(device=device)["integral"]
    wide = device == "cpu" or pcp.gpu_info(device)["float64"]
    assert widest == (xp.int64 if wide else xp.int32)
    if not wide:
        with pytest.raises(NotImplementedError, match=GPU_INTEGERS):
            xp.sum(x)
        return
    assert xp.sum(x).dtype == widest and xp.sum(x).item() == 5
    assert xp.sum(x, dtype=xp.int32).dtype == xp.int32
    rows, cols = xp.nonzero(x)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]


def test_dtype_functions_follow_the_standard():
    for dt in (xp.float16, xp.float32, xp.float64):
        f, want = xp.finfo(dt), np.finfo(dt.name)
        assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == (want.bits, want.eps, want.max, want.min,
                                                                   want.smallest_normal)
    assert xp.finfo(xp.bfloat16).eps == 2.0 ** -7 and xp.finfo(pcp.ones((1,))).dtype == xp.float32
    for dt in (xp.int32, xp.int64):
        i, want = xp.iinfo(dt), np.iinfo(dt.name)
        assert (i.bits, i.min, i.max) == (want.bits, want.min, want.max)
    with pytest.raises(TypeError, match="finfo"):
        xp.finfo(xp.int32)
    with pytest.raises(TypeError, match="iinfo"):
        xp.iinfo(xp.float32)
    assert xp.result_type(xp.int32, xp.int64) == xp.int64
    assert xp.result_type(xp.float16, xp.bfloat16) == xp.float32
    assert xp.result_type(pcp.ones((1,), dtype=xp.float16), 2.5) == xp.float16  # a scalar does not widen
    assert xp.result_type(xp.int32, 1.5) == xp.float32
    assert xp.can_cast(xp.int32, xp.int64) and not xp.can_cast(xp.int64, xp.int32)
    assert xp.can_cast(xp.float32, xp.float64) and not xp.can_cast(xp.bool, xp.int32)
    assert xp.isdtype(xp.int32, "signed integer") and not xp.isdtype(xp.int32, "unsigned integer")
    assert xp.isdtype(xp.float16, ("integral", "real floating")) and xp.isdtype(xp.bool, xp.bool)
    with pytest.raises(TypeError, match="isdtype"):
        xp.isdtype(xp.int32, "integer")


def test_signbit_copysign_and_logaddexp_keep_the_special_cases(device):
    a = np.array([-1.0, -0.0, 0.0, 2.0, np.inf, -np.inf, 1000.0, 3.0], np.float32)
    b = np.array([0.5, -0.0, 0.0, -2.0, np.inf, -np.inf, 1.0, np.nan], np.float32)
    x1, x2 = pcp.tensor(a, device=device), pcp.tensor(b, device=device)
    np.testing.assert_array_equal(xp.signbit(x1).numpy(), np.signbit(a))
    np.testing.assert_array_equal(np.signbit(xp.copysign(x2, x1).numpy()), np.signbit(a))
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(xp.logaddexp(x1, x2).numpy(), np.logaddexp(a, b), rtol=1e-6)
    assert (+x1).tolist() == a.tolist() and x1.to_device(device) is x1
    assert not np.signbit(xp.abs(x1).numpy()).any()  # abs(-0.0) is +0.0
    assert not np.signbit(xp.sign(x1).numpy()[1])  # and sign(-0.0) is +0.0


def test_bad_arguments_name_the_function():
    x = pcp.ones((2, 3))
    with pytest.raises(IndexError, match="flip: axis 2"):
        xp.flip(x, axis=2)
    with pytest.raises(ValueError, match="moveaxis"):
        xp.moveaxis(x, (0, 1), 0)
    with pytest.raises(ValueError, match="squeeze: axis 1"):
        xp.squeeze(x, axis=1)
    with pytest.raises(ValueError, match="take: axis may be None only"):
        xp.take(x, pcp.tensor([0]))
    with pytest.raises(ValueError, match="matrix_transpose"):
        xp.matrix_transpose(pcp.ones((3,)))
    with pytest.raises(ValueError, match="repeat"):
        xp.repeat(x, -1)


def test_integer_defaults_and_edges_follow_the_standard():
    # vecdot of integers keeps their dtype; eye takes any k (beyond the matrix: zeros).
    v = xp.vecdot(xp.asarray([[1, 2]], dtype=xp.int32), xp.asarray([3, 4], dtype=xp.int32))
    assert v.dtype == xp.int32 and v.tolist() == [11]
    np.testing.assert_array_equal(xp.eye(2, 3, k=2**70).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(xp.eye(3, k=-2**63).numpy(), np.zeros((3, 3)))
    # Python ints take the device's default integer dtype.
    for device in DEVICES:
        want = xp.__array_namespace_info__().default_dtypes(device=device)["integral"]
        assert xp.asarray([1, 2], device=device).dtype == want
        assert xp.arange(3, device=device).dtype == want
        assert xp.full((2,), 7, device=device).dtype == want
        assert xp.asarray([1.5], device=device).device == xp.asarray([1], device=device).device
