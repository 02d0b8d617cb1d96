"""Forward values of casts, conversions to NumPy and Python, and tensor properties, against NumPy
references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import numpy as np
import pytest

import pcp
from conftest import TOL, to_np, on_each_device
from forward import assert_close, ALL_DTYPES, DTYPE_NAME, NP_OF

pytestmark = on_each_device


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
