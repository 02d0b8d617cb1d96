"""Forward values of elementwise ops (unary, binary, comparisons, where, clip), Python operators and
dtype promotion, against NumPy references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import numpy as np
import pytest

import pcp
from conftest import to_np, on_each_device
from forward import make, assert_close, np_sigmoid, np_gelu, np_gelu_tanh, np_softmax, _erf, FLOATS, LOW, ALL_FLOATS, INTS, NP_OF

pytestmark = on_each_device


# ----------------------------------------------------------------------------------------------
# unary elementwise

# name -> (pcp function, float64 reference, input range)
UNARY = {
    "neg": (pcp.neg, np.negative, (-3, 3)),
    "abs": (pcp.abs, np.abs, (-3, 3)),
    "exp": (pcp.exp, np.exp, (-5, 5)),
    "log": (pcp.log, np.log, (0.01, 10)),
    "sqrt": (pcp.sqrt, np.sqrt, (0.0, 10)),
    "rsqrt": (pcp.rsqrt, lambda x: 1.0 / np.sqrt(x), (0.05, 10)),
    "sin": (pcp.sin, np.sin, (-6, 6)),
    "cos": (pcp.cos, np.cos, (-6, 6)),
    "tanh": (pcp.tanh, np.tanh, (-5, 5)),
    "sigmoid": (pcp.sigmoid, np_sigmoid, (-8, 8)),
    "relu": (pcp.relu, lambda x: np.maximum(x, 0.0), (-3, 3)),
    "gelu": (lambda t: pcp.gelu(t, approximate="none"), np_gelu, (-5, 5)),
    "gelu_tanh": (lambda t: pcp.gelu(t, approximate="tanh"), np_gelu_tanh, (-5, 5)),
    "silu": (pcp.silu, lambda x: x * np_sigmoid(x), (-8, 8)),
    "square": (pcp.square, np.square, (-3, 3)),
    "sign": (pcp.sign, np.sign, (-3, 3)),
    "erf": (pcp.erf, _erf, (-3, 3)),
    "floor": (pcp.floor, np.floor, (-5, 5)),
    "ceil": (pcp.ceil, np.ceil, (-5, 5)),
    "trunc": (pcp.trunc, np.trunc, (-5, 5)),
    "round": (pcp.round, np.round, (-5, 5)),  # both to even at halves
    "tan": (pcp.tan, np.tan, (-1.4, 1.4)),
    "asin": (pcp.asin, np.arcsin, (-1, 1)),
    "acos": (pcp.acos, np.arccos, (-1, 1)),
    "atan": (pcp.atan, np.arctan, (-10, 10)),
    "sinh": (pcp.sinh, np.sinh, (-5, 5)),
    "cosh": (pcp.cosh, np.cosh, (-5, 5)),
    "asinh": (pcp.asinh, np.arcsinh, (-10, 10)),
    "acosh": (pcp.acosh, np.arccosh, (1, 10)),
    "atanh": (pcp.atanh, np.arctanh, (-0.99, 0.99)),
    "expm1": (pcp.expm1, np.expm1, (-3, 3)),
    "log1p": (pcp.log1p, np.log1p, (-0.9, 10)),
    "log2": (pcp.log2, np.log2, (0.01, 10)),
    "log10": (pcp.log10, np.log10, (0.01, 10)),
}
ARRAY_API_UNARY = ["floor", "ceil", "trunc", "round", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                   "acosh", "atanh", "expm1", "log1p", "log2", "log10"]
LOW_UNARY = ["neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf"]


def _unary_input(rng, shape, dtype, name):
    lo, hi = UNARY[name][2]
    a = rng.uniform(lo, hi, size=shape)
    if lo <= 0 <= hi and a.size:
        a.reshape(-1)[::7] = 0.0  # exact zeros for sign/relu/abs/sqrt
    t = pcp.tensor(a, dtype=dtype)
    return t, to_np(t)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (33, 17), (2, 3, 130), (0, 3)], ids=str)
def test_unary(name, dtype, shape, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, shape, dtype, name)
    assert_close(fn(t), ref(x), dtype)


@pytest.mark.parametrize("name", LOW_UNARY)
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_unary_low_precision(name, dtype, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, (5, 37), dtype, name)
    assert_close(fn(t), ref(x), dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_non_contiguous(name, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, (19, 34), pcp.float32, name)
    tt = t.T  # transposed view
    assert not tt.is_contiguous()
    assert_close(fn(tt), ref(x.T), pcp.float32)
    ts = t[1::3, ::-2]  # strided, reversed slice
    assert_close(fn(ts), ref(x[1::3, ::-2]), pcp.float32)


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "gelu", "silu", "sqrt", "erf", "sin"])
def test_unary_large_multithreaded(name, rng):
    fn, ref, _ = UNARY[name]
    t, x = _unary_input(rng, (300, 1001), pcp.float32, name)
    assert_close(fn(t), ref(x), pcp.float32)


SPECIAL = np.array([-np.inf, -100.0, -20.0, -1.0, -1e-30, 0.0, 1e-30, 0.5, 1.0, 20.0, 100.0, np.inf, np.nan])


@pytest.mark.parametrize("name", ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh",
                                  "sigmoid", "relu", "square", "sign", "erf"] + ARRAY_API_UNARY)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_unary_special_values(name, dtype):
    # Infinities, NaN, huge and tiny inputs behave as the float64 function rounded to the dtype
    # (NaN in -> NaN out, like NumPy).
    fn, ref, _ = UNARY[name]
    with np.errstate(all="ignore"):
        expected = ref(SPECIAL.copy()).astype(NP_OF[dtype]).astype(np.float64)
    assert_close(fn(pcp.tensor(SPECIAL, dtype=dtype)), expected, dtype)


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu"])
def test_unary_smooth_activations_at_large_inputs(name):
    fn, ref, _ = UNARY[name]
    x = np.array([-100.0, -30.0, -10.0, 10.0, 30.0, 100.0, np.nan])
    assert_close(fn(pcp.tensor(x, dtype=pcp.float32)), ref(x), pcp.float32)
    assert_close(fn(pcp.tensor(x, dtype=pcp.float64)), ref(x), pcp.float64)


@pytest.mark.parametrize("name", ["neg", "abs", "square", "sign", "relu", "floor", "ceil", "trunc", "round"])
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_unary_integer_inputs_keep_dtype(name, dtype, rng):
    fn, ref, _ = UNARY[name]
    t, x = make(rng, (4, 9), dtype, -5, 5)
    assert_close(fn(t), ref(x).astype(np.int64), dtype)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "gelu", "erf"])
def test_unary_float_only_ops_promote_ints_to_float32(name, rng):
    # PCP: float-only math on an integer tensor computes in the default float (float32).
    fn, ref, _ = UNARY[name]
    t, x = make(rng, (3, 5), pcp.int32, 1, 6)
    assert_close(fn(t), ref(x.astype(np.float64)), pcp.float32)


def test_tensor_method_forms_of_unary_ops(rng):
    t, x = make(rng, (4, 6), pcp.float32, 0.1, 2)
    assert_close(t.exp(), np.exp(x))
    assert_close(t.log(), np.log(x))
    assert_close(t.sqrt(), np.sqrt(x))
    assert_close(t.tanh(), np.tanh(x))
    assert_close(t.gelu(approximate="tanh"), np_gelu_tanh(x))
    assert_close(t.clip(0.5, 1.5), np.clip(x, 0.5, 1.5))
    assert_close(abs(-t), np.abs(x))


# ----------------------------------------------------------------------------------------------
# binary elementwise

ARITH = {
    "add": (pcp.add, np.add),
    "sub": (pcp.sub, np.subtract),
    "mul": (pcp.mul, np.multiply),
    "div": (pcp.div, np.divide),
    "pow": (pcp.pow, np.power),
    "maximum": (pcp.maximum, np.maximum),
    "minimum": (pcp.minimum, np.minimum),
}
CMP = {
    "eq": (pcp.eq, np.equal),
    "ne": (pcp.ne, np.not_equal),
    "lt": (pcp.lt, np.less),
    "le": (pcp.le, np.less_equal),
    "gt": (pcp.gt, np.greater),
    "ge": (pcp.ge, np.greater_equal),
}
BCAST = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (3, 4)), ((), (3, 4)), ((2, 1, 5), (3, 1)),
         ((5, 1, 7), (1, 6, 1)), ((0, 3), (1, 3)), ((1,), ()), ((), ())]


def _binary_inputs(rng, name, sa, sb, dtype):
    if name == "pow":
        a = make(rng, sa, dtype, 0.5, 2.0)
        b = make(rng, sb, dtype, -2.0, 2.0)
    elif name == "div":
        a = make(rng, sa, dtype, -3.0, 3.0)
        mag = rng.uniform(0.5, 3.0, size=sb) * rng.choice([-1.0, 1.0], size=sb)  # away from zero
        tb = pcp.tensor(np.asarray(mag), dtype=dtype)
        b = (tb, to_np(tb))
    else:
        a = make(rng, sa, dtype)
        b = make(rng, sb, dtype)
    return a, b


@pytest.mark.parametrize("name", sorted(ARITH))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shapes", BCAST, ids=str)
def test_binary_arith(name, dtype, shapes, rng):
    fn, ref = ARITH[name]
    (ta, a), (tb, b) = _binary_inputs(rng, name, *shapes, dtype)
    assert_close(fn(ta, tb), ref(a, b), dtype)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_binary_arith_low_precision(name, dtype, rng):
    fn, ref = ARITH[name]
    (ta, a), (tb, b) = _binary_inputs(rng, name, (4, 37), (37,), dtype)
    assert_close(fn(ta, tb), ref(a, b), dtype)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_binary_arith_integers_exact(name, dtype, rng):
    fn, ref = ARITH[name]
    ta, a = make(rng, (3, 4), dtype, -50, 50)
    tb, b = make(rng, (4,), dtype, -50, 50)
    assert_close(fn(ta, tb), ref(a, b), dtype)


# The Array API standard's functions of two arguments: float64 references (their special values
# are the standard's, which are C's; floor_divide of an infinity is x / y there, NaN in NumPy).
def _np_floor_divide(a, b):
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        return np.where((b == 0) | np.isinf(a) | np.isinf(b), a / b, q) if q.dtype.kind == "f" else q


TWO_ARG = {"atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "remainder": np.remainder,
           "floor_divide": _np_floor_divide}
SPECIAL_PAIRS = np.array([0.0, -0.0, 1.5, -1.5, 3.0, -7.25, np.inf, -np.inf, np.nan, 1e30, -1e-30, 6.0])


@pytest.mark.parametrize("name", sorted(TWO_ARG))
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_array_api_binary_functions(name, dtype, rng):
    fn, ref = getattr(pcp, name), TWO_ARG[name]
    (ta, a), (tb, b) = make(rng, (3, 4), dtype, -5, 5), make(rng, (4,), dtype, -5, 5)
    assert_close(fn(ta, tb), ref(a, b), dtype)
    # Every pair of special values, signs of zero included.
    x, y = (v.ravel() for v in np.meshgrid(SPECIAL_PAIRS, SPECIAL_PAIRS))
    tx, ty = pcp.tensor(x, dtype=dtype), pcp.tensor(y, dtype=dtype)
    x, y = to_np(tx).astype(NP_OF[dtype]), to_np(ty).astype(NP_OF[dtype])  # computed in the dtype: 1e30 // -1e-30
    with np.errstate(all="ignore"):
        want = ref(x, y)
    got = to_np(fn(tx, ty))
    assert_close(fn(tx, ty), want, dtype)
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=f"{name}: sign of zero")


@pytest.mark.parametrize("name", ["remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_floored_division_low_precision(name, dtype, rng):
    (ta, a), (tb, b) = make(rng, (4, 37), dtype, -9, 9), make(rng, (37,), dtype, 0.5, 3)
    assert_close(getattr(pcp, name)(ta, tb), TWO_ARG[name](a, b), dtype)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_floored_division_and_shifts(dtype, rng):
    ta, a = make(rng, (6, 5), dtype, -50, 50)
    tb, b = make(rng, (5,), dtype, -7, 7)
    b_nz = np.where(b == 0, 3, b)
    tb_nz = pcp.tensor(b_nz, dtype=dtype)
    assert_close(ta // tb_nz, a // b_nz, dtype)
    assert_close(ta % tb_nz, a % b_nz, dtype)
    assert_close(50 // tb_nz, 50 // b_nz, dtype)
    assert_close(-50 % tb_nz, -50 % b_nz, dtype)
    # By zero: 0, as NumPy; the most negative integer by -1 wraps.
    lo = np.iinfo(NP_OF[dtype]).min
    assert_close(pcp.tensor([7, -7, lo], dtype=dtype) // pcp.tensor([0, 0, -1], dtype=dtype),
                 np.array([0, 0, lo]), dtype)
    assert_close(pcp.tensor([7, -7, lo], dtype=dtype) % pcp.tensor([0, 0, -1], dtype=dtype), np.zeros(3), dtype)
    width = 8 * np.dtype(NP_OF[dtype]).itemsize
    counts = np.array([0, 1, 5, width - 1, width, width + 3, -1])
    x = np.array([3, -3, 100, 1, -1, 7, -8])
    tx, tc = pcp.tensor(x, dtype=dtype), pcp.tensor(counts, dtype=dtype)
    assert_close(tx << tc, np.where(counts < width, np.left_shift(x, np.clip(counts, 0, width - 1)), 0)
                 .astype(NP_OF[dtype]) * (counts >= 0), dtype)
    assert_close(tx >> tc, np.where((counts >= 0) & (counts < width), x >> np.clip(counts, 0, width - 1),
                                    np.where(x < 0, -1, 0)), dtype)
    assert_close(1 << tc[:4], (1 << counts[:4]).astype(NP_OF[dtype]), dtype)  # 1 << 31 wraps in int32


def test_shifts_and_floating_functions_refuse_what_they_cannot_take():
    with pytest.raises(TypeError, match="bitwise_left_shift"):
        pcp.tensor([1.0]) << 1
    with pytest.raises(TypeError, match="bitwise_right_shift"):
        pcp.tensor([True]) >> pcp.tensor([1])
    assert pcp.atan2(pcp.tensor([1]), pcp.tensor([1])).dtype == pcp.float32  # integers taken as floats
    assert (pcp.tensor([True]) // pcp.tensor([True])).dtype == pcp.int64  # bools count in int64, as **


@pytest.mark.parametrize("dtype", FLOATS + LOW, ids=str)
def test_nextafter_steps_one_value_of_the_dtype(dtype):
    np_dt = {pcp.float32: np.float32, pcp.float64: np.float64, pcp.float16: np.float16}.get(dtype)
    x = pcp.tensor([1.0, 1.0, 0.0, 0.0, -0.0, 2.0, np.inf, np.nan, 1.0], dtype=dtype)
    y = pcp.tensor([2.0, 0.0, 1.0, -1.0, 0.0, 2.0, 0.0, 1.0, np.nan], dtype=dtype)
    on_gpu = x.device != "cpu"
    if on_gpu and dtype in LOW:
        with pytest.raises(NotImplementedError, match="nextafter"):
            pcp.nextafter(x, y)
        return
    got = to_np(pcp.nextafter(x, y)).astype(np.float64)
    eps = {pcp.float32: 2.0 ** -23, pcp.float64: 2.0 ** -52, pcp.float16: 2.0 ** -10, pcp.bfloat16: 2.0 ** -7}[dtype]
    tiny = {pcp.float32: 2.0 ** -149, pcp.float64: 5e-324, pcp.float16: 2.0 ** -24, pcp.bfloat16: 2.0 ** -133}[dtype]
    big = float(np.finfo(np_dt).max) if np_dt else 3.3895313892515355e38
    want = np.array([1 + eps, 1 - eps / 2, tiny, -tiny, 0.0, 2.0, big, np.nan, np.nan])
    if np_dt is not None:
        want = np.nextafter(to_np(x).astype(np_dt), to_np(y).astype(np_dt)).astype(np.float64)
        want[4] = 0.0  # -0 toward +0 is +0 (C's, the standard's; NumPy's float16 keeps -0)
    if on_gpu and dtype == pcp.float32:  # drivers may flush subnormal results
        got, want = got[[0, 1, 4, 5, 6, 7, 8]], want[[0, 1, 4, 5, 6, 7, 8]]
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[4 if len(got) == 9 else 2])


def test_integer_pow_exact(rng):
    ta, a = make(rng, (3, 4), pcp.int64, -4, 4)
    tb, b = make(rng, (3, 4), pcp.int64, 0, 5)
    assert_close(pcp.pow(ta, tb), np.power(a, b), pcp.int64)


@pytest.mark.parametrize("name", sorted(CMP))
@pytest.mark.parametrize("dtype", [pcp.float32, pcp.float64, pcp.float16, pcp.int32, pcp.int64], ids=str)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((0, 2), (2,))], ids=str)
def test_comparisons(name, dtype, shapes, rng):
    # Small integer values so that ties (equal elements) are common.
    fn, ref = CMP[name]
    ta, a = make(rng, shapes[0], dtype, -2, 2)
    tb, b = make(rng, shapes[1], dtype, -2, 2)
    if dtype in ALL_FLOATS:
        ta, tb = pcp.tensor(np.round(a), dtype=dtype), pcp.tensor(np.round(b), dtype=dtype)
        a, b = np.round(a), np.round(b)
    assert_close(fn(ta, tb), ref(a, b), pcp.bool_)


def test_comparisons_with_nan():
    a = np.array([np.nan, 1.0, np.nan, -np.inf, np.inf])
    b = np.array([np.nan, np.nan, 1.0, -np.inf, 1.0])
    for name, (fn, ref) in CMP.items():
        assert_close(fn(pcp.tensor(a), pcp.tensor(b)), ref(a, b), pcp.bool_)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan(name):
    # NumPy (and PyTorch) propagate NaN from either side.
    fn, ref = ARITH[name]
    a = np.array([np.nan, 1.0, np.nan, 2.0, -np.inf])
    b = np.array([1.0, np.nan, np.nan, 3.0, 0.0])
    for dtype in FLOATS:
        assert_close(fn(pcp.tensor(a, dtype=dtype), pcp.tensor(b, dtype=dtype)), ref(a, b), dtype)


def test_bool_maximum_minimum_stay_bool():
    # PCP: maximum/minimum of bools is logical or/and and stays bool (as NumPy).
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    assert_close(pcp.maximum(pcp.tensor(a), pcp.tensor(b)), np.maximum(a, b), pcp.bool_)
    assert_close(pcp.minimum(pcp.tensor(a), pcp.tensor(b)), np.minimum(a, b), pcp.bool_)
    assert_close(pcp.logical_and(pcp.tensor(a), pcp.tensor(b)), a & b, pcp.bool_)
    assert_close(pcp.logical_or(pcp.tensor(a), pcp.tensor(b)), a | b, pcp.bool_)
    assert_close(pcp.logical_not(pcp.tensor(a)), ~a, pcp.bool_)
    assert_close(pcp.tensor(a) & pcp.tensor(b), a & b, pcp.bool_)
    assert_close(pcp.tensor(a) | pcp.tensor(b), a | b, pcp.bool_)
    assert_close(~pcp.tensor(a), ~a, pcp.bool_)


@pytest.mark.parametrize("name", ["add", "mul", "maximum", "div"])
def test_binary_non_contiguous_operands(name, rng):
    fn, ref = ARITH[name]
    ta, a = make(rng, (33, 20), pcp.float32, 0.5, 2)
    tb, b = make(rng, (40, 33), pcp.float32, 0.5, 2)
    assert_close(fn(ta.T, tb[::2]), ref(a.T, b[::2]))  # transposed and row-strided: (20, 33)
    assert_close(fn(ta[::5, ::3], tb[1:8, 2:9].T), ref(a[::5, ::3], b[1:8, 2:9].T))  # strided (7, 7)
    assert_close(fn(ta[::-4, 1], tb[:9, -1]), ref(a[::-4, 1], b[:9, -1]))  # reversed 1-D views
    assert_close(fn(ta.T[:, :1], tb[:20].T[:1]), ref(a.T[:, :1], b[:20].T[:1]))  # broadcast of views


def test_binary_broadcast_of_transposed_views(rng):
    ta, a = make(rng, (6, 1, 5))
    tb, b = make(rng, (6, 4))
    # (5, 1, 6) view + (4, 6) view -> (5, 4, 6)
    assert_close(ta.transpose(2, 1, 0) + tb.T, a.transpose(2, 1, 0) + b.T)
    # (6, 1, 5) + (6, 4)[:, :1, None]-like view (6, 1, 1) -> (6, 1, 5)
    assert_close(pcp.mul(ta, tb[:, :1, None]), a * b[:, :1, None])


def test_binary_large_multithreaded(rng):
    ta, a = make(rng, (512, 700))
    tb, b = make(rng, (700,))
    assert_close(ta * tb + ta, a * b + a)
    assert_close(pcp.maximum(ta, tb), np.maximum(a, b))


@pytest.mark.parametrize("dtype", FLOATS + [pcp.int64], ids=str)
def test_where(dtype, rng):
    tc, c = make(rng, (3, 1, 5), pcp.bool_)
    ta, a = make(rng, (4, 5), dtype, -9, 9)
    tb, b = make(rng, (3, 4, 1), dtype, -9, 9)
    assert_close(pcp.where(tc, ta, tb), np.where(c, a, b), dtype)
    # Python scalars on either branch are weak: the tensor's dtype wins.
    assert_close(pcp.where(tc, ta, 0), np.where(c, a, 0).astype(a.dtype), dtype)
    assert_close(pcp.where(tc, 1, ta), np.where(c, 1, a).astype(a.dtype), dtype)


def test_where_condition_from_numbers_and_mixed_dtypes(rng):
    # A non-bool condition is cast to bool (nonzero is True); int32 and float32 branches give float32.
    tc, c = make(rng, (6,), pcp.int64, -1, 1)
    ta, a = make(rng, (6,), pcp.int32, -5, 5)
    tb, b = make(rng, (6,), pcp.float32)
    assert_close(pcp.where(tc, ta, tb), np.where(c != 0, a, b), pcp.float32)
    assert_close(pcp.where(tc > 0, 1.0, 2.0), np.where(c > 0, 1.0, 2.0))


@pytest.mark.parametrize("dtype", FLOATS + [pcp.int32], ids=str)
def test_clip(dtype, rng):
    t, x = make(rng, (5, 7), dtype, -5, 5)
    assert_close(pcp.clip(t, -1, 2), np.clip(x, -1, 2), dtype)
    assert_close(pcp.clip(t, min=0), np.maximum(x, 0), dtype)
    assert_close(pcp.clip(t, max=1), np.minimum(x, 1), dtype)
    assert_close(pcp.clip(t), x, dtype)
    lo, lo_n = make(rng, (7,), dtype, -3, 0)
    hi, hi_n = make(rng, (5, 1), dtype, 0, 3)
    assert_close(pcp.clip(t, lo, hi), np.minimum(np.maximum(x, lo_n), hi_n), dtype)


# ----------------------------------------------------------------------------------------------
# operators


OPS = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b),
    ("pow", lambda a, b: a ** b),
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
]


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
def test_operators_tensor_tensor(name, op, rng):
    ta, a = make(rng, (3, 4), pcp.float32, 0.5, 2)
    tb, b = make(rng, (4,), pcp.float32, 0.5, 2)
    ta, tb = pcp.tensor(np.round(a * 4) / 4, dtype=pcp.float32), pcp.tensor(np.round(b * 4) / 4, dtype=pcp.float32)
    a, b = to_np(ta), to_np(tb)
    assert_close(op(ta, tb), op(a, b))


@pytest.mark.parametrize("name,op", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("scalar", [2, 1.5, -0.75])
def test_operators_with_python_scalars_both_sides(name, op, scalar, rng):
    t, x = make(rng, (2, 5), pcp.float32, 0.5, 2)
    t = pcp.tensor(np.round(x * 4) / 4, dtype=pcp.float32)
    x = to_np(t)
    with np.errstate(invalid="ignore"):
        assert_close(op(t, scalar), op(x, scalar), None)
        assert_close(op(scalar, t), op(scalar, x), None)
    assert op(t, scalar).dtype == (pcp.bool_ if name in dict(CMP) else pcp.float32)


def test_operators_with_numpy_arrays_and_lists(rng):
    t, x = make(rng, (2, 3))
    a = rng.uniform(-1, 1, size=(2, 3)).astype(np.float32)
    # NumPy defers to Tensor (__array_priority__), so ndarray on the left also gives a Tensor.
    r = a + t
    assert isinstance(r, pcp.Tensor)
    assert_close(r, a.astype(np.float64) + x)
    assert_close(t - a, x - a.astype(np.float64))
    assert_close(t * [1.0, 2.0, 3.0], x * np.array([1.0, 2.0, 3.0]))


def test_unary_operators(rng):
    t, x = make(rng, (4, 3))
    assert_close(-t, -x)
    assert_close(abs(t), np.abs(x))
    ti, xi = make(rng, (5,), pcp.int64, -5, 5)
    assert_close(-ti, -xi, pcp.int64)


def test_matmul_operator(rng):
    ta, a = make(rng, (3, 4))
    tb, b = make(rng, (4, 5))
    assert_close(ta @ tb, a @ b, err_scale=np.abs(a) @ np.abs(b))
    m = rng.uniform(-1, 1, size=(5, 2))
    assert_close(tb @ m, b @ m, pcp.float64, err_scale=np.abs(b) @ np.abs(m))  # float32 @ float64 array
    r = m.T @ tb.T  # ndarray @ Tensor -> Tensor.__rmatmul__
    assert isinstance(r, pcp.Tensor)
    assert_close(r, m.T @ b.T, pcp.float64, err_scale=np.abs(m.T) @ np.abs(b.T))


def test_pow_operator_with_two_is_square_and_int_exponents(rng):
    t, x = make(rng, (10,))
    assert_close(t ** 2, x**2)
    assert_close(t ** 3, x**3)
    assert_close(2 ** t, 2.0**x)
    ti, xi = make(rng, (10,), pcp.int32, -6, 6)
    assert_close(ti ** 2, xi**2, pcp.int32)
    assert_close(abs(ti) ** 0.5, np.abs(xi) ** 0.5, pcp.float32)


# ----------------------------------------------------------------------------------------------
# dtype promotion

_i32 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.int32))  # noqa: E731
_i64 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.int64))  # noqa: E731
_f16 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.float16))  # noqa: E731
_bf16 = lambda: pcp.tensor([1.0, -2.0, 3.0], dtype=pcp.bfloat16)  # noqa: E731
_f32 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.float32))  # noqa: E731
_f64 = lambda: pcp.tensor(np.array([1, -2, 3], dtype=np.float64))  # noqa: E731
_b = lambda: pcp.tensor(np.array([True, False, True]))  # noqa: E731
_V = np.array([1.0, -2.0, 3.0])
_B = np.array([1.0, 0.0, 1.0])

PROMOTION = [
    # (id, expression, expected dtype, expected values)
    ("int32+1", lambda: _i32() + 1, pcp.int32, _V + 1),  # Python scalars are weak
    ("1+int32", lambda: 1 + _i32(), pcp.int32, _V + 1),
    ("int32*True", lambda: _i32() * True, pcp.int32, _V),
    ("int32+1.5", lambda: _i32() + 1.5, pcp.float32, _V + 1.5),  # weak float over int: default float
    ("int64+1.5", lambda: _i64() + 1.5, pcp.float32, _V + 1.5),
    ("float16*2.0", lambda: _f16() * 2.0, pcp.float16, _V * 2),
    ("float16*2", lambda: _f16() * 2, pcp.float16, _V * 2),
    ("bfloat16+1.0", lambda: _bf16() + 1.0, pcp.bfloat16, _V + 1),
    ("float64*2.0", lambda: _f64() * 2.0, pcp.float64, _V * 2),
    ("float32-0.5", lambda: 0.5 - _f32(), pcp.float32, 0.5 - _V),
    ("int32+float32", lambda: _i32() + _f32(), pcp.float32, 2 * _V),
    ("int64+float32", lambda: _i64() + _f32(), pcp.float32, 2 * _V),
    ("int32+int64", lambda: _i32() + _i64(), pcp.int64, 2 * _V),
    ("float32+float64", lambda: _f32() + _f64(), pcp.float64, 2 * _V),
    ("float16+float32", lambda: _f16() + _f32(), pcp.float32, 2 * _V),
    # float16 and bfloat16 have no common 16-bit type (as PyTorch)
    ("float16+bfloat16", lambda: _f16() + _bf16(), pcp.float32, 2 * _V),
    # PCP (like PyTorch, unlike NumPy's float64): a strong int64 with float16 gives float16
    ("int64+float16", lambda: _i64() + _f16(), pcp.float16, 2 * _V),
    # bools as NumPy: + is logical or, * logical and; with numbers they count in int64
    ("bool+bool", lambda: _b() + _b(), pcp.bool_, _B.astype(bool)),
    ("bool*bool", lambda: _b() * _b(), pcp.bool_, _B.astype(bool)),
    ("bool+1", lambda: _b() + 1, pcp.int64, _B + 1),
    ("bool+1.5", lambda: _b() + 1.5, pcp.float32, _B + 1.5),
    ("bool+int32", lambda: _b() + _i32(), pcp.int32, _B + _V),
    ("bool==bool", lambda: _b() == _b(), pcp.bool_, np.ones(3, bool)),
    # true division: int / int is float32 (NumPy gives float64)
    ("int32/int32", lambda: _i32() / _i32(), pcp.float32, np.ones(3)),
    ("int64/2", lambda: _i64() / 2, pcp.float32, _V / 2),
    ("2/int64", lambda: 2 / _i64(), pcp.float32, 2 / _V),
    ("float16/2", lambda: _f16() / 2, pcp.float16, _V / 2),
    ("int32**2", lambda: _i32() ** 2, pcp.int32, _V**2),
    ("int32<1.5", lambda: _i32() < 1.5, pcp.bool_, _V < 1.5),
    ("maximum(int32,0.5)", lambda: pcp.maximum(_i32(), 0.5), pcp.float32, np.maximum(_V, 0.5)),
    ("where(int32,float64)", lambda: pcp.where(_b(), _i32(), _f64()), pcp.float64, _V),
    ("concat(int32,float32)", lambda: pcp.concatenate([_i32(), _f32()]), pcp.float32, np.concatenate([_V, _V])),
    ("sum(int32)", lambda: pcp.sum(_i32()), pcp.int64, np.array(2.0)),  # as NumPy on Linux
    ("sum(bool)", lambda: pcp.sum(_b()), pcp.int64, np.array(2.0)),
    ("max(bool)", lambda: pcp.max(_b()), pcp.bool_, np.array(True)),
    ("mean(int64)", lambda: pcp.mean(_i64()), pcp.float64, np.array(2.0 / 3)),  # exact, as NumPy
    ("exp(int32)", lambda: pcp.exp(_i32()), pcp.float32, np.exp(_V)),
    ("softmax(int64)", lambda: pcp.softmax(_i64()), pcp.float32, np_softmax(_V, -1)),
    ("float32@float64", lambda: _f32()[None] @ _f64()[:, None], pcp.float64, np.array([[14.0]])),
    ("float16@float16", lambda: _f16()[None] @ _f16()[:, None], pcp.float16, np.array([[14.0]])),
    ("weak+weak", lambda: pcp.add(1, 2.5), pcp.float64, np.array(3.5)),
]


@pytest.mark.parametrize("expr,dtype,expected", [p[1:] for p in PROMOTION], ids=[p[0] for p in PROMOTION])
def test_dtype_promotion(expr, dtype, expected):
    r = expr()
    assert r.dtype == dtype
    if dtype == pcp.bool_:
        np.testing.assert_array_equal(to_np(r), np.asarray(expected))
    else:
        assert_close(r, np.asarray(expected, dtype=np.float64), dtype)


def test_weak_scalar_result_of_python_numbers_is_float64_storage():
    # Two Python numbers: both weak, the result keeps float64 storage but stays weak,
    # so adding it to a float32 tensor still gives float32.
    r = pcp.add(1, 2.5)
    t = pcp.tensor([1.0, 2.0]) + r
    assert t.dtype == pcp.float32
    assert_close(t, np.array([4.5, 5.5]))


def test_pow_and_div_special_values():
    a = np.array([0.0, -2.0, -2.0, 0.0, np.inf, np.nan, 1.0, 4.0, -0.0, 2.0])
    b = np.array([0.0, 3.0, 0.5, -1.0, 0.0, 0.0, np.nan, -0.5, -1.0, np.inf])
    for dtype in FLOATS:
        with np.errstate(all="ignore"):
            assert_close(pcp.pow(pcp.tensor(a, dtype=dtype), pcp.tensor(b, dtype=dtype)), np.power(a, b), dtype)
            num = np.array([1.0, -1.0, 0.0, np.inf, 3.0])
            den = np.array([0.0, 0.0, 0.0, np.inf, -np.inf])
            assert_close(pcp.tensor(num, dtype=dtype) / pcp.tensor(den, dtype=dtype), num / den, dtype)
    with np.errstate(all="ignore"):
        # int / int is true division in float32: division by zero gives +-inf / nan, not an error
        assert_close(pcp.tensor([1, -1, 0]) / 0, np.array([1.0, -1.0, 0.0]) / 0.0, pcp.float32)


def test_zeros_keep_their_sign_as_in_c():
    # sin, tan, tanh and the rounding ops of -0 are -0; a rounded zero takes its argument's sign
    # (ceil(-0.5) is -0). Drivers may lose it: the GPU kernels set it through bits.
    x = np.array([-0.0, 0.0, -0.5, 0.4, -0.3, 1e-30, -1e-30], dtype=np.float32)
    for name in ("sin", "tan", "tanh", "floor", "ceil", "trunc", "round", "asinh", "atan", "expm1", "log1p"):
        fn = getattr(pcp, name)
        got, want = to_np(fn(pcp.tensor(x))), getattr(np, {"asinh": "arcsinh", "atan": "arctan"}.get(name, name))(x)
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=name)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, err_msg=name)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trigonometry_of_huge_arguments(name, rng):
    # float32 arguments up to 3.4e38 (the GPU reduces above 2**24 by Payne-Hanek), against the
    # float64 function of the same float32 values.
    x = (np.float32(2.0) ** rng.uniform(-4, 127.9, 4000)).astype(np.float32) * rng.choice([-1, 1], 4000)
    x = np.concatenate([x, np.float32([2.0 ** 24, -(2.0 ** 24 + 2), 938569673736192.0, 3.4028235e38])])
    got = to_np(getattr(pcp, name)(pcp.tensor(x))).astype(np.float64)
    want = getattr(np, name)(x.astype(np.float64))
    scale = np.maximum(np.abs(want), 1) ** (2 if name == "tan" else 0)  # tan: conditioning grows as tan^2
    np.testing.assert_allclose(got / scale, want / scale, rtol=0, atol=1e-6)
