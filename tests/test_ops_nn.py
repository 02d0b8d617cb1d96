"""Forward values of neural-network ops: softmax / log_softmax, layer_norm, cross_entropy, dropout,
attention, against NumPy references in float64.

Helpers and tolerances: tests/forward.py (see its docstring).
"""
import math

import numpy as np
import pytest

import pcp
from conftest import TOL, requires_torch, to_np, torch, on_each_device
from forward import make, assert_close, np_softmax, np_log_softmax, FLOATS, LOW

pytestmark = on_each_device


# ----------------------------------------------------------------------------------------------
# softmax / log_softmax


@pytest.mark.parametrize("fn,ref", [(pcp.softmax, np_softmax), (pcp.log_softmax, np_log_softmax)],
                         ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_softmax_family(fn, ref, axis, dtype, rng):
    t, x = make(rng, (3, 7, 33), dtype, -5, 5)
    assert_close(fn(t, axis=axis), ref(x, axis), dtype)
    assert_close(fn(t.transpose(2, 0, 1), axis=axis), ref(x.transpose(2, 0, 1), axis), dtype)


@pytest.mark.parametrize("fn,ref", [(pcp.softmax, np_softmax), (pcp.log_softmax, np_log_softmax)],
                         ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_softmax_family_low_precision(fn, ref, dtype, rng):
    t, x = make(rng, (4, 130), dtype, -5, 5)
    assert_close(fn(t), ref(x, -1), dtype)


def test_softmax_stability_and_inf():
    x = np.array([[1000.0, 999.0, -1000.0], [-np.inf, 0.0, 1.0], [5.0, 5.0, 5.0], [-1e4, -1e4 - 1, -1e4 - 2]])
    assert_close(pcp.softmax(pcp.tensor(x)), np_softmax(x, -1))
    with np.errstate(invalid="ignore"):
        assert_close(pcp.log_softmax(pcp.tensor(x)), np_log_softmax(x, -1))
    assert_close(pcp.softmax(pcp.tensor(x), axis=0), np_softmax(x, 0))


def test_softmax_zero_d_and_one_element():
    assert_close(pcp.softmax(pcp.tensor(3.0)), np.array(1.0))
    assert_close(pcp.log_softmax(pcp.tensor(3.0)), np.array(0.0))
    assert_close(pcp.softmax(pcp.tensor([[3.0]]), axis=0), np.array([[1.0]]))
    assert_close(pcp.softmax(pcp.zeros((0, 4))), np.zeros((0, 4)))


def test_softmax_methods(rng):
    t, x = make(rng, (4, 6))
    assert_close(t.softmax(0), np_softmax(x, 0))
    assert_close(t.log_softmax(), np_log_softmax(x, -1))


# ----------------------------------------------------------------------------------------------
# layer_norm / cross_entropy / dropout / attention


def np_layer_norm(x, w=None, b=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
@pytest.mark.parametrize("shape", [(4, 7, 33), (5, 1), (130,), (3, 64)], ids=str)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_layer_norm(affine, shape, dtype, rng):
    t, x = make(rng, shape, dtype, -3, 3)
    n = shape[-1]
    tw, w = make(rng, (n,), dtype, 0.5, 1.5)
    tb, b = make(rng, (n,), dtype, -1, 1)
    use_w = affine in ("weight", "both")
    use_b = affine in ("bias", "both")
    r = pcp.layer_norm(t, tw if use_w else None, tb if use_b else None, eps=1e-5)
    assert_close(r, np_layer_norm(x, w if use_w else None, b if use_b else None, 1e-5), dtype)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_layer_norm_low_precision(dtype, rng):
    t, x = make(rng, (6, 48), dtype, -3, 3)
    tw, w = make(rng, (48,), dtype, 0.5, 1.5)
    tb, b = make(rng, (48,), dtype, -1, 1)
    assert_close(pcp.layer_norm(t, tw, tb), np_layer_norm(x, w, b), dtype)


def test_layer_norm_eps_non_contiguous_and_constant_rows(rng):
    t, x = make(rng, (12, 8))
    assert_close(pcp.layer_norm(t.T, eps=0.1), np_layer_norm(x.T, eps=0.1))
    c = np.full((3, 5), 2.0)
    assert_close(pcp.layer_norm(pcp.tensor(c)), np.zeros((3, 5)))  # zero variance: x - mean = 0
    # weight float64 with float32 input promotes to float64
    tw, w = make(rng, (8,), pcp.float64, 0.5, 1.5)
    assert_close(pcp.layer_norm(t[:8].T, tw), np_layer_norm(x[:8].T, w), pcp.float64)


def np_cross_entropy(logits, targets, ignore_index=-100, reduction="mean"):
    ls = np_log_softmax(logits, -1)
    valid = targets != ignore_index
    safe = np.where(valid, targets, 0)
    nll = -np.take_along_axis(ls, safe[..., None], axis=-1)[..., 0]
    nll = np.where(valid, nll, 0.0)
    if reduction == "none":
        return nll
    if reduction == "sum":
        return np.sum(nll)
    with np.errstate(invalid="ignore"):
        return np.sum(nll) / valid.sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape", [(8, 5), (2, 3, 7), (1, 1), (16, 130)], ids=str)
def test_cross_entropy(reduction, dtype, shape, rng):
    # PCP: classes on the LAST axis (PyTorch puts them on axis 1).
    t, x = make(rng, shape, dtype, -4, 4)
    targets = rng.integers(0, shape[-1], size=shape[:-1])
    r = pcp.cross_entropy(t, targets, reduction=reduction)
    expected = np_cross_entropy(x, targets, reduction=reduction)
    assert_close(r, expected, dtype, err_scale=np.abs(expected) if reduction != "none" else None)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignore_index(reduction, rng):
    t, x = make(rng, (10, 6), pcp.float32, -4, 4)
    targets = rng.integers(0, 6, size=10)
    targets[[1, 4, 5]] = -100
    assert_close(pcp.cross_entropy(t, targets, reduction=reduction),
                 np_cross_entropy(x, targets, reduction=reduction))
    targets2 = targets.copy()
    targets2[targets2 == -100] = 2
    assert_close(pcp.cross_entropy(t, pcp.tensor(targets2.astype(np.int32)), ignore_index=2, reduction=reduction),
                 np_cross_entropy(x, targets2, ignore_index=2, reduction=reduction))


def test_cross_entropy_all_ignored_mean_is_nan():
    t = pcp.zeros((3, 4))
    r = pcp.cross_entropy(t, [-100, -100, -100])
    assert np.isnan(to_np(r))
    assert_close(pcp.cross_entropy(t, [-100, -100, -100], reduction="sum"), np.array(0.0))


def test_cross_entropy_extreme_logits_and_non_contiguous(rng):
    x = np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0], [-1e4, 1e4, 0.0]])
    tg = np.array([2, 1, 1])
    assert_close(pcp.cross_entropy(pcp.tensor(x), tg, reduction="none"), np_cross_entropy(x, tg, reduction="none"))
    t, xn = make(rng, (5, 9))
    tg2 = rng.integers(0, 5, size=9)
    assert_close(pcp.cross_entropy(t.T, tg2), np_cross_entropy(xn.T, tg2))


@pytest.mark.parametrize("p", [0.0, 0.3, 0.9])
def test_dropout_eval_is_identity(p, rng):
    t, x = make(rng, (50, 20))
    assert_close(pcp.dropout(t, p, training=False), x)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.8])
def test_dropout_training(p):
    n = 100_000
    x = pcp.rand((n,)) + 0.5  # no zeros in the input
    xn = to_np(x)
    y = pcp.dropout(x, p, training=True)
    yn = to_np(y)
    kept = yn != 0
    np.testing.assert_allclose(yn[kept], xn[kept] / (1 - p), **TOL[pcp.float32])
    assert abs((~kept).mean() - p) < 0.01  # ~7 sigma at n = 100k
    # Same seed -> same mask; another seed -> another mask.
    pcp.random.seed(123)
    m1 = to_np(pcp.dropout(x, p)) != 0
    pcp.random.seed(123)
    m2 = to_np(pcp.dropout(x, p)) != 0
    pcp.random.seed(124)
    m3 = to_np(pcp.dropout(x, p)) != 0
    np.testing.assert_array_equal(m1, m2)
    assert (m1 != m3).any()


def test_dropout_edge_probabilities(rng):
    t, x = make(rng, (30, 7))
    assert_close(pcp.dropout(t, 0.0), x)
    assert_close(pcp.dropout(t, 1.0), np.zeros_like(x))
    t64, x64 = make(rng, (1000,), pcp.float64, 1, 2)
    y = to_np(pcp.dropout(t64, 0.25))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y[y != 0], x64[y != 0] / 0.75, rtol=1e-12)


@pytest.fixture
def fused_gpu_attention():
    """GPUs run the flash kernels wherever they fit (by default only for long sequences)."""
    pcp._core._set_gpu_attention("fused")
    yield
    pcp._core._set_gpu_attention("auto")


def np_sdpa(q, k, v, causal=False, scale=None):
    d = q.shape[-1]
    sc = 1.0 / math.sqrt(d) if scale is None else scale
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * sc
    if causal:
        tq, tk = s.shape[-2], s.shape[-1]
        mask = np.arange(tk)[None, :] <= np.arange(tq)[:, None]  # top-left aligned
        s = np.where(mask, s, -np.inf)
    return np.matmul(np_softmax(s, -1), v)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shapes", [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4)),
                                    ((6, 16), (6, 16), (6, 16)),
                                    ((2, 1, 9, 33), (1, 4, 9, 33), (1, 4, 9, 7)),
                                    ((1, 1), (1, 1), (1, 1)),
                                    ((2, 3, 7, 8),) * 3], ids=str)  # float32: the fused kernel
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_scaled_dot_product_attention(causal, shapes, dtype, rng):
    (tq, q), (tk, k), (tv, v) = (make(rng, s, dtype) for s in shapes)
    expected = np_sdpa(q, k, v, causal)
    assert_close(pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal), expected, dtype,
                 err_scale=np.abs(v).max())


def test_scaled_dot_product_attention_mixed_dtypes_scale_in_the_product_type(rng):
    # A float16 q with float32 k and v computes in float32: the scale (not a power of 2 here) is
    # applied to q after promotion, not rounded into float16 first (found by the fuzzer).
    q = np.arange(6, dtype=np.float16).reshape(2, 3)
    k = ((np.arange(6) * 5 % 17 - 8) / 4).reshape(2, 3).astype(np.float32)
    v = ((np.arange(6) * 5 % 17 - 8) / 10).reshape(2, 3).astype(np.float32)
    got = pcp.scaled_dot_product_attention(pcp.tensor(q), pcp.tensor(k), pcp.tensor(v))
    assert got.dtype == pcp.float32
    np.testing.assert_allclose(got.numpy(), np_sdpa(q.astype(np.float64), k, v), rtol=1e-5, atol=1e-6)


def test_scaled_dot_product_attention_scale_and_transposed_inputs(rng):
    tq, q = make(rng, (2, 8, 5))  # q (2, 5, 8) after .mT
    tk, k = make(rng, (2, 8, 6))  # k (2, 6, 8) after .mT
    tv, v = make(rng, (2, 6, 3))
    r = pcp.scaled_dot_product_attention(tq.mT, tk.mT, tv, causal=True, scale=0.7)
    assert_close(r, np_sdpa(np.swapaxes(q, -1, -2), np.swapaxes(k, -1, -2), v, True, 0.7),
                 err_scale=np.abs(v).max())


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_on_head_views_of_packed_qkv(causal, rng):
    # GPT-2's layout: q, k, v are strided head views of one (B, T, 3C) tensor, and the output's
    # heads are merged back with transpose + reshape (a free view of the fused kernel's output).
    B, T, H, D = 2, 9, 3, 4
    tqkv, qkv = make(rng, (B, T, 3 * H * D))
    heads = lambda t: t.reshape(B, T, H, D).transpose(0, 2, 1, 3)  # noqa: E731
    tq, tk, tv = (heads(t) for t in pcp.split(tqkv, 3, axis=2))
    q, k, v = (heads(a) for a in np.split(qkv, 3, axis=2))
    y = pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    expected = np_sdpa(q, k, v, causal).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    assert_close(y, expected, err_scale=np.abs(v).max())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [pcp.float32] + LOW, ids=str)
@pytest.mark.parametrize("shape", [(2, 70, 3, 16), (1, 130, 2, 64), (3, 1, 1, 2), (1, 64, 2, 8)], ids=str)
@pytest.mark.parametrize("kernel", ["default", "coop"])
def test_fused_attention_forward_and_gradient_on_ragged_and_strided_heads(causal, dtype, shape, kernel, rng,
                                                                          fused_gpu_attention, monkeypatch):
    # The fused kernels (flash-style on the GPU: on tensor cores for 16-bit heads where the GPU
    # has them, through VK_NV_cooperative_matrix2 by default where it exists, or with
    # PCP_ATTENTION_KERNEL=coop through VK_KHR_cooperative_matrix; float32 on the CPU) against
    # float64 on the rounded inputs: T not a multiple of the 64-row blocks, one key, and the
    # packed projection read through a strided view (a slice).
    if kernel == "coop":
        if dtype == pcp.float32 or pcp.get_default_device() == "cpu":
            pytest.skip("PCP_ATTENTION_KERNEL picks among the GPU's 16-bit kernels")
        monkeypatch.setenv("PCP_ATTENTION_KERNEL", "coop")
    B, T, H, D = shape
    full, _ = make(rng, (B, T, 3 * H * D + 6), dtype)
    tqkv = full[:, :, 4:4 + 3 * H * D]  # even offset and strides: 16-bit heads take the kernels
    tqkv.requires_grad = True
    tg, g = make(rng, (B, T, H * D), dtype)
    y = pcp.qkv_attention(tqkv, H, causal=causal)
    assert y.dtype == dtype and y.shape == (B, T, H * D)
    pcp.sum(y.astype(pcp.float32) * tg.astype(pcp.float32)).backward()
    qkv = tqkv.detach().to("cpu").astype(pcp.float64).numpy()
    q, k, v = (a.reshape(B, T, H, D).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=2))
    g = tg.to("cpu").astype(pcp.float64).numpy().reshape(B, T, H, D).transpose(0, 2, 1, 3)
    # float64 reference gradient: through the composed formula.
    sc = 1 / math.sqrt(D)
    s_ = q @ np.swapaxes(k, -1, -2) * sc
    if causal:
        s_ = np.where(np.tril(np.ones((T, T), bool)), s_, -np.inf)
    p_ = np_softmax(s_, -1)
    dv = np.swapaxes(p_, -1, -2) @ g
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p_ * (dp - (dp * p_).sum(-1, keepdims=True)) * sc
    dq, dk = ds @ k, np.swapaxes(ds, -1, -2) @ q
    merge = lambda a: a.transpose(0, 2, 1, 3).reshape(B, T, H * D)  # noqa: E731
    assert_close(y, merge(p_ @ v), dtype, err_scale=np.abs(v).max())
    expected = np.concatenate([merge(dq), merge(dk), merge(dv)], axis=2)
    got = tqkv.grad.to("cpu").astype(pcp.float64).numpy()
    tol = {pcp.float32: 1e-4, pcp.float16: 1e-2, pcp.bfloat16: 3e-2}[dtype]
    assert np.abs(got - expected).max() <= tol * np.abs(expected).max()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [pcp.float32] + LOW, ids=str)
@pytest.mark.parametrize("kernel", ["default", "coop"])
@pytest.mark.parametrize("create_graph", [False, True], ids=["kernels", "ops"])
def test_fused_attention_dropout_draws_the_composed_mask(causal, dtype, kernel, create_graph, rng, monkeypatch):
    # On a GPU the fused kernels apply dropout to the attention weights themselves, with the mask
    # the composed path draws from the same seed (pcp.dropout's over the (B, H, T, T) weights): the
    # outputs and gradients of the two paths agree, and another seed's differ. create_graph takes
    # the backward through ops (differentiable again) with the same mask.
    if pcp.get_default_device() == "cpu":
        pytest.skip("on the CPU, attention with dropout is composed")
    if kernel == "coop":
        if dtype == pcp.float32:
            pytest.skip("PCP_ATTENTION_KERNEL picks among the GPU's 16-bit kernels")
        monkeypatch.setenv("PCP_ATTENTION_KERNEL", "coop")
    B, T, H, D = 2, 70, 3, 16
    full, _ = make(rng, (B, T, 3 * H * D), dtype)
    tg, _ = make(rng, (B, T, H * D), dtype)

    def run(mode, seed):
        dev = pcp.get_default_device()
        pcp._core._set_gpu_attention(mode)
        timed = pcp._core.set_gpu_profiling(True, dev)
        try:
            x = full.detach()
            x.requires_grad = True
            pcp.random.seed(seed)
            y = pcp.qkv_attention(x, H, causal=causal, dropout_p=0.3)
            pcp.sum(y.astype(pcp.float32) * tg.astype(pcp.float32)).backward(create_graph=create_graph)
            out = [t.to("cpu").astype(pcp.float64).numpy() for t in (y, x.grad)]
            kernels = {name for name, _, _ in pcp._core.gpu_profile_results(dev)} if timed else set()
            assert not timed or any(k.startswith("attention") for k in kernels) == (mode == "fused"), kernels
            return out
        finally:
            pcp._core.set_gpu_profiling(False, dev)
            pcp._core._set_gpu_attention("auto")

    (yf, gf), (yc, gc), (yo, _) = run("fused", 5), run("composed", 5), run("fused", 6)
    tol = {pcp.float32: 1e-4, pcp.float16: 1e-2, pcp.bfloat16: 3e-2}[dtype]
    assert np.abs(yf - yc).max() <= tol * np.abs(yc).max()
    assert np.abs(gf - gc).max() <= tol * np.abs(gc).max()
    assert np.abs(yo - yc).max() > 0.1 * np.abs(yc).max()  # another seed, another mask


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_qkv_attention(causal, dtype, rng):
    # A packed (B, T, 3C) projection, read here through a transposed view (not contiguous).
    B, T, H, D = 2, 11, 3, 5
    tqkv, qkv = make(rng, (3 * H * D, T, B), dtype)
    tqkv, qkv = tqkv.transpose(), qkv.transpose()
    q, k, v = (a.reshape(B, T, H, D).transpose(0, 2, 1, 3) for a in np.split(qkv, 3, axis=2))
    expected = np_sdpa(q, k, v, causal, 0.3).transpose(0, 2, 1, 3).reshape(B, T, H * D)
    y = pcp.qkv_attention(tqkv, H, causal=causal, scale=0.3)
    assert y.shape == (B, T, H * D)
    assert_close(y, expected, dtype, err_scale=np.abs(v).max())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (5, 4)], ids=str)  # the fused kernel's shape, and 2-D
def test_scaled_dot_product_attention_dropout(causal, shape, rng):
    # The attention weights are dropped with the global generator's next draws: a dropout of ones
    # of the weights' shape, drawn from the same seed, is the mask (scaled by 1 / (1 - p)).
    (tq, q), (tk, k), (tv, v) = (make(rng, shape) for _ in range(3))
    T = shape[-2]
    pcp.random.seed(3)
    mask = to_np(pcp.dropout(pcp.ones(shape[:-2] + (T, T)), 0.3))
    pcp.random.seed(3)
    y = pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal, dropout_p=0.3)
    w = np_sdpa(q, k, np.broadcast_to(np.eye(T), shape[:-2] + (T, T)), causal)  # the weights themselves
    assert_close(y, np.matmul(w * mask, v), err_scale=np.abs(v).max())
    assert 0 < (mask == 0).mean() < 0.6
    assert_close(pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal, dropout_p=0.0), np_sdpa(q, k, v, causal),
                 err_scale=np.abs(v).max())


@requires_torch
@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_torch(causal, rng):
    (tq, q), (tk, k), (tv, v) = (make(rng, (2, 3, 6, 8), pcp.float64) for _ in range(3))
    expected = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=causal).numpy()
    assert_close(pcp.scaled_dot_product_attention(tq, tk, tv, causal=causal), expected, pcp.float64)
