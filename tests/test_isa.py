"""The CPU kernels give the same answers at every SIMD level this machine supports."""
import numpy as np
import pytest

import pcp
from pcp import _core
from conftest import to_np
from forward import assert_close, LOW, make, np_log_softmax, np_softmax
from test_ops_elementwise import LOW_UNARY, UNARY, _unary_input
from test_ops_linalg import _check_matmul
from test_ops_nn import np_cross_entropy, np_layer_norm

ISAS = _core.cpu_features()["available"].split(",")


@pytest.fixture(params=ISAS)
def isa(request):
    best = _core.cpu_features()["isa"]
    _core.set_isa(request.param)
    yield request.param
    _core.set_isa(best)


def test_reports_selected_isa(isa):
    assert pcp.cpu_features()["isa"] == isa


# (m, k, n): edge tiles, A read in place (n <= 256) and packed (n > 256), uneven depth slices (k > 1024)
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 33, 5), (65, 130, 17), (128, 256, 96), (37, 2100, 300), (200, 1030, 45)])
def test_matmul_every_isa(isa, shape):
    m, k, n = shape
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    got = (pcp.tensor(a) @ pcp.tensor(b)).numpy()
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)
    # transposed operands go through the strided packing path
    got_t = (pcp.tensor(a.T.copy()).T @ pcp.tensor(b)).numpy()
    np.testing.assert_allclose(got_t, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


# bfloat16: AVX512_BF16 pair dot products where the CPU has them (pcp.cpu_features()["bf16_matmul"]),
# float32 copies otherwise. Odd depths pad the last pair; k > 1024 splits depth into even slices.
@pytest.mark.parametrize("shape", [(1, 1, 1), (13, 7, 33), (65, 131, 17), (96, 256, 300), (37, 2101, 70)])
def test_bf16_matmul_every_isa(isa, shape):
    m, k, n = shape
    rng = np.random.default_rng(4)
    a = pcp.tensor(rng.standard_normal((m, k))).astype(pcp.bfloat16)
    b = pcp.tensor(rng.standard_normal((k, n))).astype(pcp.bfloat16)
    a64, b64 = a.astype(pcp.float64).numpy(), b.astype(pcp.float64).numpy()
    ref = a64 @ b64
    # one bfloat16 rounding of the float32 sum (2^-9 relative) plus float32 accumulation
    tol = 2.0 ** -8 * np.abs(ref) + 1e-5 * (np.abs(a64) @ np.abs(b64))
    for got in (a @ b, a.T.contiguous().T @ b, a @ b.T.contiguous().T, pcp.stack([a, a]) @ b):
        assert got.dtype == pcp.bfloat16
        err = np.abs(got.astype(pcp.float64).numpy() - ref)
        assert (err <= tol).all(), f"max error {err.max()} at shape {shape}"


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "silu", "sqrt"])
def test_unary_every_isa(isa, name):
    rng = np.random.default_rng(2)
    x = rng.uniform(0.01, 8.0, 1003).astype(np.float32) * (1 if name in ("log", "sqrt") else rng.choice([-1, 1], 1003))
    ref = {
        "exp": np.exp, "log": np.log, "tanh": np.tanh, "sqrt": np.sqrt,
        "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "silu": lambda v: v / (1 + np.exp(-v)),
    }[name](x.astype(np.float64))
    got = getattr(pcp, name)(pcp.tensor(x)).numpy()
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-7)


def test_reductions_and_softmax_every_isa(isa):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((37, 129)).astype(np.float32)
    x64 = x.astype(np.float64)
    for axis in (None, 0, 1):
        np.testing.assert_allclose(pcp.sum(pcp.tensor(x), axis).numpy(), x64.sum(axis=axis), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(pcp.max(pcp.tensor(x), axis).numpy(), x64.max(axis=axis))
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    np.testing.assert_allclose(pcp.softmax(pcp.tensor(x)).numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_exp_log_edge_values(isa):
    x = np.array([-np.inf, -200.0, -103.0, -87.5, -1e-8, 0.0, 1e-8, 88.0, 88.7, 89.0, np.inf, np.nan], np.float32)
    with np.errstate(over="ignore", under="ignore"):
        ref = np.exp(x.astype(np.float64)).astype(np.float32)
    got = pcp.exp(pcp.tensor(x)).numpy()
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=1e-44)
    y = np.array([0.0, 1e-40, 1e-30, 0.5, 1.0, 2.0, 1e30, np.inf, -1.0, np.nan], np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.log(y.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(pcp.log(pcp.tensor(y)).numpy(), ref, rtol=2e-6, atol=1e-7)


def test_softmax_and_cross_entropy_over_the_whole_shifted_exp_range(isa):
    # Softmax, log-softmax and cross-entropy exponentiate x - max <= 0: from 0 down through
    # results that are subnormal in float32 (-87.3 .. -103.9) to results that round to zero,
    # with -inf (masked) entries and a NaN row.
    x = np.array([[0.0, -1e-8, -0.5, -20.0, -87.0, -88.0, -95.0, -103.0, -103.9, -104.5, -200.0, -np.inf],
                  [3.0, 1.0, -np.inf, -np.inf, -50.0, -99.0, 2.5, -60.0, -86.0, -90.0, -101.0, -102.0],
                  [1.0, np.nan, 0.0, 2.0, -3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]], np.float32)
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        m = x64.max(-1, keepdims=True)
        e = np.exp(x64 - m)
        ref = (e / e.sum(-1, keepdims=True)).astype(np.float32)
        lse = m[:, 0] + np.log(e.sum(-1))
    np.testing.assert_allclose(pcp.softmax(pcp.tensor(x)).numpy(), ref, rtol=2e-6, atol=1e-44)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(pcp.log_softmax(pcp.tensor(x[:2])).numpy(), x64[:2] - lse[:2, None], rtol=1e-6)
    targets = np.array([0, 6])
    ce = pcp.cross_entropy(pcp.tensor(x[:2]), pcp.tensor(targets)).numpy()
    np.testing.assert_allclose(ce, np.mean(lse[:2] - x64[[0, 1], targets]), rtol=1e-6)


def _np_attention(q, k, v, g, causal, scale):
    """Forward and the three input gradients in float64."""
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return p @ v, ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(p, -1, -2) @ g


# (B, H, T, D): one block, several query and key blocks (online softmax across key blocks),
# lengths and widths that are not multiples of the register tile
@pytest.mark.parametrize("shape", [(2, 3, 64, 32), (1, 2, 7, 5), (1, 1, 300, 40), (1, 2, 129, 64), (1, 1, 1, 3)],
                         ids=str)
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_every_isa(isa, shape, causal):
    B, H, T, D = shape
    rng = np.random.default_rng(4)
    q, k, v, g = (rng.standard_normal(shape) for _ in range(4))
    q *= 2  # sharper softmax rows
    ref = _np_attention(q, k, v, g, causal, 1 / np.sqrt(D))
    tq, tk, tv = (pcp.tensor(a.astype(np.float32)).requires_grad_() for a in (q, k, v))
    y = pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal)
    y.backward(pcp.tensor(g.astype(np.float32)))
    for got, want in zip((y, tq.grad, tk.grad, tv.grad), ref):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=2e-5 * np.abs(want).max())
    # the same heads packed side by side as (B, T, 3C), and its one (B, T, 3C) gradient
    packed = lambda *xs: np.concatenate([x.transpose(0, 2, 1, 3).reshape(B, T, H * D) for x in xs], -1)  # noqa: E731
    tqkv = pcp.tensor(packed(q, k, v).astype(np.float32)).requires_grad_()
    y2 = pcp.qkv_attention(tqkv, H, causal=causal)
    y2.backward(pcp.tensor(packed(g).astype(np.float32)))
    np.testing.assert_allclose(y2.numpy(), packed(ref[0]), rtol=1e-4, atol=2e-5 * np.abs(ref[0]).max())
    dqkv = packed(*ref[1:])
    np.testing.assert_allclose(tqkv.grad.numpy(), dqkv, rtol=1e-4, atol=2e-5 * np.abs(dqkv).max())


@pytest.mark.parametrize("mean, spread", [(0.0, 1.0), (1e4, 1.0), (1e5, 0.1), (3e3, 1e-2)])
def test_layer_norm_large_mean_small_spread_every_isa(isa, mean, spread):
    # float32 statistics, corrected two-pass: the output keeps float precision relative to the
    # spread even when the mean is 10^6 times larger (rounding the mean to float32 would not)
    rng = np.random.default_rng(5)
    x = (mean + spread * rng.standard_normal((16, 1024))).astype(np.float32)
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(pcp.layer_norm(pcp.tensor(x)).numpy(), ref, rtol=0, atol=1e-5)


def test_sigmoid_gelu_tanh_and_its_gradient_every_isa(isa):
    # sigmoid, silu and gelu(approximate="tanh") share exp(-|t|) and 1 / (1 + exp(-|t|)): cover
    # results that are subnormal or round to zero, the special values, and vector tails (1029).
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-12, 12, 1000), [-110, -104, -95, -88, -87, -40, -1e-30, 0, 3e-8, 40, 90, 1e20, -1e20],
                        [np.inf, -np.inf, np.nan], rng.uniform(-0.1, 0.1, 13)]).astype(np.float32)
    v = x.astype(np.float64)
    t = 2 * 0.7978845608028654 * (v + 0.044715 * v ** 3)  # gelu_tanh(x) = x sigmoid(t)
    du = 2 * 0.7978845608028654 * (1 + 3 * 0.044715 * v * v)  # dt/dx
    with np.errstate(all="ignore"):
        sig = lambda z: np.where(z >= 0, 1 / (1 + np.exp(-z)), np.exp(z) / (1 + np.exp(z)))
        s, s_ds = sig(t), v * sig(t) * (1 - sig(t)) * du
        # (reference, argument of exp, magnitude of the terms summed, factor on exp's absolute error)
        refs = {"sigmoid": (sig(v), v, sig(v), 1), "silu": (v * sig(v), v, np.abs(v * sig(v)), np.abs(v)),
                "gelu": (v * s, t, np.abs(v * s), np.abs(v)), "gelu_grad": (s + s_ds, t, s + np.abs(s_ds), np.abs(v * du))}
    # the gradient is NaN once x^3 overflows (|x| > 1e12), as in PyTorch
    grad_at = np.abs(x) < 1e12
    xt = pcp.tensor(x[grad_at]).requires_grad_()
    got = {"sigmoid": pcp.sigmoid(pcp.tensor(x)), "silu": pcp.silu(pcp.tensor(x)),
           "gelu": pcp.gelu(pcp.tensor(x), approximate="tanh")}
    pcp.gelu(xt, approximate="tanh").sum().backward()
    for name, (ref, arg, scale, factor) in refs.items():
        at = grad_at if name == "gelu_grad" else np.ones(x.size, bool)
        ref, arg, scale, factor = (np.broadcast_to(a, x.shape)[at] for a in (ref, arg, scale, factor))
        out = (xt.grad if name == "gelu_grad" else got[name]).numpy().astype(np.float64)
        # float32 rounding of the argument moves exp(-|t|) by |t| ulps, relative to the terms
        # summed; exp's results below 2^-126 (subnormal) carry fewer bits, scaled by what multiplies them
        with np.errstate(invalid="ignore"):
            tol = 2e-7 * (4 + np.minimum(np.abs(arg), 200)) * scale + 2.0 ** -126 * (1 + factor)
            ok = (np.abs(out - ref) <= tol) | (np.isnan(out) & np.isnan(ref)) | (out == ref)
        assert ok.all(), f"{name} at {isa}: x={x[at][~ok][:5]} got {out[~ok][:5]} expected {ref[~ok][:5]}"


# Every kernel family at every SIMD level and thread count: the same answers as NumPy.
@pytest.fixture
def rng():
    return np.random.default_rng(20240531)


@pytest.mark.parametrize("n", [1, 7, 16, 33, 130, 1031])
def test_kernels_at_every_isa(isa, n, rng):
    for dtype in [pcp.float32, pcp.float64, pcp.float16, pcp.bfloat16]:
        for name in LOW_UNARY if dtype in LOW else sorted(UNARY):
            fn, ref, _ = UNARY[name]
            t, x = _unary_input(rng, (n,), dtype, name)
            assert_close(fn(t), ref(x), dtype)
        ta, a = make(rng, (2, n), dtype)
        tb, b = make(rng, (n,), dtype, 0.5, 2)
        assert_close(ta + tb, a + b, dtype)
        assert_close(ta * tb, a * b, dtype)
        assert_close(ta / tb, a / b, dtype)
        assert_close(pcp.maximum(ta, tb), np.maximum(a, b), dtype)
        assert_close(ta < tb, a < b, pcp.bool_)
        assert_close(pcp.sum(ta, axis=1), a.sum(axis=1), dtype, err_scale=np.abs(a).sum(axis=1))
        assert_close(pcp.max(ta, axis=1), a.max(axis=1), dtype)
        assert_close(pcp.argmin(ta, axis=1), a.argmin(axis=1), pcp.int64)
        assert_close(pcp.softmax(ta), np_softmax(a, -1), dtype)
        assert_close(pcp.log_softmax(ta), np_log_softmax(a, -1), dtype)
        assert_close(pcp.layer_norm(ta), np_layer_norm(a), dtype)
        tg = rng.integers(0, n, size=2)
        assert_close(pcp.cross_entropy(ta, tg, reduction="none"), np_cross_entropy(a, tg, reduction="none"), dtype)
        tm, m = make(rng, (n, 5), dtype)
        _check_matmul(ta, tm, a, m, dtype)
        _check_matmul(tm.T, ta.T, m.T, a.T, dtype)


def test_threads_do_not_change_results(rng):
    old = pcp.get_num_threads()
    t, x = make(rng, (300, 1000))
    w, wn = make(rng, (1000, 70))
    try:
        outs = []
        for n in [1, 2, 3]:
            pcp.set_num_threads(n)
            pcp.random.seed(99)
            outs.append([to_np(pcp.rand((50_000,))), to_np(pcp.randn((777,))), to_np(pcp.sum(t, axis=0)),
                         to_np(t @ w), to_np(pcp.exp(t)), to_np(pcp.dropout(t, 0.5))])
    finally:
        pcp.set_num_threads(old)
    for other in outs[1:]:
        for a, b in zip(outs[0][:2], other[:2]):
            np.testing.assert_array_equal(a, b)  # counter-based RNG: identical draws on any thread count
        np.testing.assert_array_equal(outs[0][4], other[4])  # elementwise: bitwise identical
        np.testing.assert_array_equal(outs[0][5], other[5])
        np.testing.assert_allclose(outs[0][2], other[2], rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(outs[0][3], other[3], rtol=1e-5, atol=1e-4)
    assert_close(pcp.tensor(outs[0][3], dtype=pcp.float32), x @ wn, err_scale=np.abs(x) @ np.abs(wn))
