"""Neural-network ops, optimizers and GPT training on every GPU this machine has (in CI: lavapipe).

Forward results are compared with NumPy in float64 at float32 tolerances; gradients and updates
computed on the GPU with the same computation on the CPU (itself checked against float64 and
finite differences in test_vjp.py). Random masks must be identical on both devices.
"""
import numpy as np
import pytest

import pcp
from pcp import _core

GPUS = [name for name, _ in _core.devices() if name != "cpu"]
pytestmark = pytest.mark.skipif(not GPUS, reason=f"no GPU: {_core.gpu_unavailable_reason()}")
TOL = dict(rtol=2e-5, atol=2e-5)
GRAD_TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(params=GPUS or ["none"])
def dev(request):
    return request.param


def rnd(*shape, seed=0, scale=2.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def grads_on(device, fn, *arrays):
    """fn(*tensors) -> scalar loss on `device`; returns (loss, grads) as NumPy."""
    ts = [pcp.tensor(a, device=device, requires_grad=True) for a in arrays]
    loss = fn(*ts)
    loss.backward()
    return loss.numpy(), [t.grad.numpy() for t in ts]


def assert_same_grads(dev, fn, *arrays, tol=GRAD_TOL):
    l_cpu, g_cpu = grads_on("cpu", fn, *arrays)
    l_gpu, g_gpu = grads_on(dev, fn, *arrays)
    np.testing.assert_allclose(l_gpu, l_cpu, **tol)
    for a, b in zip(g_gpu, g_cpu):
        np.testing.assert_allclose(a, b, **tol)


def softmax64(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("shape", [(3, 7), (5, 300), (2, 3, 1000), (4, 1)])
def test_softmax_and_log_softmax(dev, shape):
    x = rnd(*shape)
    g = pcp.tensor(x, device=dev)
    np.testing.assert_allclose(pcp.softmax(g).numpy(), softmax64(x), **TOL)
    np.testing.assert_allclose(pcp.log_softmax(g).numpy(), np.log(softmax64(x)), **TOL)
    np.testing.assert_allclose(pcp.softmax(g, axis=0).numpy(), softmax64(x, 0), **TOL)
    w = rnd(*shape, seed=1)
    for f in (pcp.softmax, pcp.log_softmax):
        assert_same_grads(dev, lambda t, w_: (f(t) * w_).sum(), x, w)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_reads_and_writes_16_bit_rows(dev, dtype):
    # Rows of a multiple of 4 take the kernels that read and write 16-bit values directly
    # (softmax4, softmax_backward4; computed in float32): compared with float64 on the rounded
    # inputs, and gradients with the CPU's (which widens, computes in float32 and rounds once).
    tol = dict(rtol=8e-3, atol=1e-3) if dtype == "bfloat16" else dict(rtol=1e-3, atol=1e-4)
    x, w = rnd(37, 64), rnd(37, 64, seed=1)
    for f, ref in ((pcp.softmax, softmax64), (pcp.log_softmax, lambda a: np.log(softmax64(a)))):
        t = pcp.tensor(x, device=dev).astype(dtype)
        y = f(t)
        assert y.dtype == getattr(pcp, dtype)
        np.testing.assert_allclose(y.astype(pcp.float32).numpy(), ref(t.astype(pcp.float32).numpy()), **tol)
        grads = []
        for device in (dev, "cpu"):
            tt = pcp.tensor(x, device=device).astype(dtype).detach()
            tt.requires_grad = True
            (f(tt) * pcp.tensor(w, device=device).astype(dtype)).sum().backward()
            grads.append(tt.grad.astype(pcp.float32).numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=2e-2, atol=2e-2 * np.abs(grads[1]).max())


def test_softmax_many_short_rows(dev, monkeypatch):
    # More rows than 8 per workgroup times the dispatch limit (lowered to 16 workgroups, as
    # 600 003 rows reach the real one): the kernel's loop over row groups.
    monkeypatch.setenv("PCP_GPU_MAX_GROUPS", "16")
    x = rnd(1_003, 4)
    np.testing.assert_allclose(pcp.softmax(pcp.tensor(x, device=dev)).numpy(), softmax64(x), **TOL)


def test_causal_attention_under_autocast_stays_in_bfloat16(dev):
    # Under autocast the composed attention on a GPU runs in bfloat16 throughout (scores,
    # causal softmax with its mask, probabilities): against float64 on the rounded heads.
    B, H, T, D = 2, 3, 12, 8
    q, k, v = (rnd(B, H, T, D, seed=s, scale=1.0) for s in (1, 2, 3))
    with pcp.autocast(dtype=pcp.bfloat16):
        ts = [pcp.tensor(a, device=dev) for a in (q, k, v)]
        out = pcp.scaled_dot_product_attention(*ts, causal=True)
    assert out.dtype == pcp.bfloat16
    r = [pcp.tensor(a).astype(pcp.bfloat16).astype(pcp.float64).numpy() for a in (q, k, v)]
    s = r[0] @ np.swapaxes(r[1], -1, -2) / np.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    ref = softmax64(s) @ r[2]
    np.testing.assert_allclose(out.astype(pcp.float32).numpy(), ref, rtol=3e-2, atol=3e-2)


def test_large_logits_stay_finite(dev):
    x = np.array([[1e4, 1e4 - 1, -1e4], [-1e30, 0.0, 1e30]], np.float32)
    np.testing.assert_allclose(pcp.softmax(pcp.tensor(x, device=dev)).numpy(), softmax64(x), **TOL)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 6), (3, 5, 384), (2, 1000), (3, 2500)])  # short rows: 8 per workgroup
def test_layer_norm(dev, shape, affine):
    n = shape[-1]
    x, w, b = rnd(*shape), rnd(n, seed=1), rnd(n, seed=2)
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    if affine:
        ref = ref * w + b
        out = pcp.layer_norm(pcp.tensor(x, device=dev), pcp.tensor(w, device=dev), pcp.tensor(b, device=dev))
    else:
        out = pcp.layer_norm(pcp.tensor(x, device=dev), None, None)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)
    gw = rnd(*shape, seed=3)
    if affine:
        assert_same_grads(dev, lambda t, w_, b_, g_: (pcp.layer_norm(t, w_, b_) * g_).sum(), x, w, b, gw)
    else:
        assert_same_grads(dev, lambda t, g_: (pcp.layer_norm(t, None, None) * g_).sum(), x, gw)


@pytest.mark.parametrize("width", [3, 2100])  # the 8-rows-per-workgroup kernels, and one row each
def test_layer_norm_many_rows(dev, monkeypatch, width):
    # More rows than the dispatch limit's workgroups take (lowered to 16, as 530 001 rows reach
    # the real one): the kernels' loops over the rest.
    monkeypatch.setenv("PCP_GPU_MAX_GROUPS", "16")
    rows = 1_001 if width == 3 else 37
    rng = np.random.default_rng(5)  # rows with a variance far from 0 (well conditioned)
    x = (rng.normal(size=(rows, 1)) + np.linspace(-1.0, 1.2, width) * rng.uniform(0.5, 2, (rows, 1))).astype(np.float32)
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(pcp.layer_norm(pcp.tensor(x, device=dev), None, None).numpy(), ref, rtol=1e-4, atol=1e-4)
    assert_same_grads(dev, lambda t, g_: (pcp.layer_norm(t, None, None) * g_).sum(), x, rnd(rows, width, seed=1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(dev, reduction):
    logits = rnd(6, 4, 11)
    targets = np.random.default_rng(1).integers(0, 11, (6, 4))
    targets[0, 1] = targets[3, 2] = -100  # ignored
    l64 = logits.astype(np.float64)
    lse = np.log(np.exp(l64 - l64.max(-1, keepdims=True)).sum(-1)) + l64.max(-1)
    picked = np.take_along_axis(l64, np.maximum(targets, 0)[..., None], -1)[..., 0]
    per = np.where(targets == -100, 0.0, lse - picked)
    ref = {"none": per, "sum": per.sum(), "mean": per.sum() / (targets != -100).sum()}[reduction]
    # Host targets (checked there), and int64 / int32 targets on the GPU (checked by the kernel).
    for t in (pcp.tensor(targets), pcp.tensor(targets, device=dev), pcp.tensor(targets.astype(np.int32), device=dev)):
        out = pcp.cross_entropy(pcp.tensor(logits, device=dev), t, reduction=reduction)
        np.testing.assert_allclose(out.numpy(), ref, **TOL)
    w = rnd(6, 4, seed=2) if reduction == "none" else np.float32(1.5)
    for beside_logits in (False, True):  # host targets, then targets on the logits' device
        assert_same_grads(dev, lambda x: (pcp.cross_entropy(
            x, pcp.tensor(targets, device=x.device if beside_logits else "cpu"), reduction=reduction)
            * pcp.tensor(w, device=x.device)).sum(), logits)


def test_host_targets_are_uploaded_once_for_loss_and_gradient(dev):
    # The forward uploads a batch's host targets (checked, ignored ones -1) and the backward reads
    # that copy: one upload for both, where each used to upload its own; the gradient matches the
    # CPU's with an ignored target.
    logits = pcp.tensor(rnd(8, 5), device=dev, requires_grad=True)
    targets = np.random.default_rng(3).integers(0, 5, 8)
    targets[2] = -100
    pcp.cross_entropy(logits, pcp.tensor(targets)).backward()  # the scalars' device copies are made
    logits.grad = None
    pcp.synchronize(dev)
    assert _core.set_gpu_profiling(True, dev)
    try:
        pcp.cross_entropy(logits, pcp.tensor(targets)).backward()
        pcp.synchronize(dev)
    finally:
        _core.set_gpu_profiling(False, dev)
    commands = {name: n for name, n, _ in _core.gpu_profile_results(dev)}
    assert commands.get("upload") == 1, commands
    # The mean's gradient, one value for every row, is read as it is: no copy to a row vector.
    assert not any(name.startswith("copy") for name in commands), commands
    cpu_logits = pcp.tensor(logits.numpy(), requires_grad=True)
    pcp.cross_entropy(cpu_logits, pcp.tensor(targets)).backward()
    np.testing.assert_allclose(logits.grad.numpy(), cpu_logits.grad.numpy(), **GRAD_TOL)


def test_cross_entropy_bad_targets(dev):
    logits = pcp.zeros((2, 3), device=dev)
    with pytest.raises(IndexError, match="cross_entropy: target 3 is out of range for 3 classes"):
        pcp.cross_entropy(logits, pcp.tensor([0, 3]))  # host targets: at once
    # GPU targets: found by the kernel, raised at the next synchronisation (as CUDA's device
    # asserts); the record is cleared, so the device goes on working.
    loss = pcp.cross_entropy(logits, pcp.tensor([0, 3], dtype=pcp.int32, device=dev))
    with pytest.raises(IndexError, match="GPU kernel of cross_entropy found target 3 out of range for 3 classes"):
        loss.item()
    loss = pcp.cross_entropy(logits, pcp.tensor([-1, 1], dtype=pcp.int32, device=dev), ignore_index=7)
    with pytest.raises(IndexError, match="cross_entropy found target -1 .*ignore_index 7"):
        pcp.synchronize()
    good = pcp.cross_entropy(logits, pcp.tensor([2, -1], dtype=pcp.int32, device=dev), ignore_index=-1)
    assert good.item() == pytest.approx(np.log(3), rel=1e-6)


def test_embedding_and_its_scatter_add_gradient(dev):
    w = rnd(10, 7)
    idx = np.array([[1, 3, 3, 9], [0, 3, 1, -1]])
    out = pcp.embedding(pcp.tensor(w, device=dev), pcp.tensor(idx))
    np.testing.assert_array_equal(out.numpy(), w[idx])
    np.testing.assert_array_equal(pcp.embedding(pcp.tensor(w, device=dev), pcp.tensor(idx, device=dev)).numpy(),
                                  w[idx])
    g = rnd(2, 4, 7, seed=1)
    _, (gc,) = grads_on("cpu", lambda t: (pcp.embedding(t, pcp.tensor(idx)) * pcp.tensor(g)).sum(), w)
    _, (gg,) = grads_on(dev, lambda t: (pcp.embedding(t, pcp.tensor(idx)) * pcp.tensor(g, device=dev)).sum(), w)
    np.testing.assert_array_equal(gg, gc)  # same summation order as the CPU: bit for bit
    with pytest.raises(IndexError, match="embedding: index 10 is out of bounds"):
        pcp.embedding(pcp.tensor(w, device=dev), pcp.tensor([10]))


def test_embedding_gradient_of_a_small_vocabulary(dev):
    # Many terms per row (as a character vocabulary's): summed 8 loads at a time, in index order.
    w, idx = rnd(5, 33), np.random.default_rng(3).integers(0, 5, size=(3, 91))
    g = rnd(3, 91, 33, seed=2)
    _, (gc,) = grads_on("cpu", lambda t: (pcp.embedding(t, pcp.tensor(idx)) * pcp.tensor(g)).sum(), w)
    _, (gg,) = grads_on(dev, lambda t: (pcp.embedding(t, pcp.tensor(idx)) * pcp.tensor(g, device=dev)).sum(), w)
    np.testing.assert_array_equal(gg, gc)
    np.testing.assert_allclose(gc, np.stack([g[idx == v].sum(0) for v in range(5)]), rtol=1e-5, atol=1e-5)


def test_take_along_an_inner_axis(dev):
    x = rnd(3, 5, 4)
    idx = np.array([4, 0, 0, 2])
    np.testing.assert_array_equal(pcp.take(pcp.tensor(x, device=dev), pcp.tensor(idx), axis=1).numpy(),
                                  np.take(x, idx, axis=1))
    assert_same_grads(dev, lambda t: (pcp.take(t, pcp.tensor(idx), axis=1) ** 2).sum(), x)


def test_dropout_mask_matches_the_cpu(dev):
    x = rnd(1001, 3)
    outs = {}
    for d in ("cpu", dev):
        pcp.random.seed(7)
        t = pcp.tensor(x, device=d, requires_grad=True)
        y = pcp.dropout(t, 0.3)
        (y * 2.0).sum().backward()
        outs[d] = y.numpy(), t.grad.numpy()
    np.testing.assert_array_equal(outs[dev][0], outs["cpu"][0])
    np.testing.assert_array_equal(outs[dev][1], outs["cpu"][1])
    kept = outs["cpu"][0] != 0
    assert 0.25 < 1 - kept.mean() < 0.35
    np.testing.assert_allclose(outs["cpu"][0][kept], x[kept] / 0.7, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_dropout_on_the_gpu_draws_the_float32_mask(dev, dtype):
    # 16-bit tensors on a GPU take the fused kernel (16-bit in and out), with the mask that
    # float32 draws from the same seed; the gradient keeps its 16-bit type and that mask.
    x = rnd(1001, 4)
    pcp.random.seed(7)
    ref = pcp.dropout(pcp.tensor(x), 0.3).numpy()
    pcp.random.seed(7)
    t = pcp.tensor(x, device=dev).astype(dtype).detach()
    t.requires_grad = True
    y = pcp.dropout(t, 0.3)
    assert y.dtype == getattr(pcp, dtype)
    (y * pcp.tensor(np.full((1001, 4), 2.0, np.float32), device=dev).astype(dtype)).sum().backward()
    assert t.grad.dtype == getattr(pcp, dtype)
    kept = ref != 0
    np.testing.assert_array_equal(y.astype(pcp.float32).numpy() != 0, kept)
    rounded = t.astype(pcp.float32).numpy()
    tol = 8e-3 if dtype == "bfloat16" else 1e-3
    np.testing.assert_allclose(y.astype(pcp.float32).numpy(), np.where(kept, rounded / 0.7, 0.0), rtol=tol)
    np.testing.assert_allclose(t.grad.astype(pcp.float32).numpy(), np.where(kept, 2.0 / 0.7, 0.0), rtol=tol)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [9, 12])  # the softmax kernels for any row length, and 4 at a time
def test_attention(dev, causal, T):
    q, k, v = rnd(2, 3, T, 8, seed=1), rnd(2, 3, T, 8, seed=2), rnd(2, 3, T, 8, seed=3)
    g = rnd(2, 3, T, 8, seed=4)
    f = lambda a, b, c: (pcp.scaled_dot_product_attention(a, b, c, causal=causal) * pcp.tensor(g, device=a.device)).sum()  # noqa: E731
    assert_same_grads(dev, f, q, k, v)


def test_split_concat_and_stack_gradients(dev):
    x, y = rnd(4, 6), rnd(4, 3, seed=1)

    def f(a, b):
        p, q, r = pcp.split(a, 3, axis=1)
        c = pcp.concatenate([r, b, p], axis=1)
        return (c * c).sum() + (pcp.stack([q, q * 2.0]) ** 3).sum()
    assert_same_grads(dev, f, x, y)


@pytest.mark.parametrize("name", ["adamw", "adam", "sgd"])
def test_optimizer_steps_match_the_cpu(dev, name):
    w0, g0 = rnd(5, 7), rnd(5, 7, seed=1)
    results = {}
    for d in ("cpu", dev):
        p = pcp.tensor(w0, device=d, requires_grad=True)
        opt = {"adamw": lambda: pcp.optim.AdamW([p], lr=0.1, weight_decay=0.1),
               "adam": lambda: pcp.optim.Adam([p], lr=0.1, weight_decay=0.01),
               "sgd": lambda: pcp.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)}[name]()
        for step in range(3):
            p.grad = pcp.tensor(g0 * (step + 1), device=d)
            opt.step()
        results[d] = p.numpy()
    np.testing.assert_allclose(results[dev], results["cpu"], rtol=1e-5, atol=1e-5)  # steps of ~lr = 0.1


def test_clip_grad_norm(dev):
    # Small and large gradients, an empty one, and more partial sums (64 a gradient) than the
    # final workgroup has invocations.
    grads = [rnd(3, 4), rnd(10, seed=1), rnd(300, 257, seed=2), np.zeros((0, 3), np.float32)]
    grads += [rnd(5, seed=s) for s in range(3, 7)]
    out = {}
    for d in ("cpu", dev):
        ps = [pcp.tensor(np.zeros_like(g), device=d, requires_grad=True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = pcp.tensor(g, device=d)
        norm = pcp.optim.clip_grad_norm(ps, 1.0)
        out[d] = float(norm.item() if hasattr(norm, "item") else norm), [p.grad.numpy() for p in ps]
    ref = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))
    assert out[dev][0] == pytest.approx(ref, rel=1e-5)
    for a, b in zip(out[dev][1], out["cpu"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_gpt_trains_the_same_on_the_gpu(dev):
    """50 AdamW steps of a small GPT (dropout on) from the same weights and batches: the losses on
    the GPU follow the CPU's within 1e-4 relative."""
    from pcp.models import GPT2, GPT2Config
    cfg = GPT2Config(vocab_size=23, n_positions=16, n_embd=32, n_layer=2, n_head=4, dropout=0.1)
    rng = np.random.default_rng(0)
    # Counting sequences with random starts and steps of 1 or 2: learnable in a few steps.
    batches = [(rng.integers(0, 23, (4, 1)) + rng.integers(1, 3, (4, 1)) * np.arange(17)) % 23 for _ in range(50)]
    losses = {}
    for d in ("cpu", dev):
        pcp.random.seed(0)
        pcp.set_default_device(d)
        try:
            model = GPT2(cfg)
            decay = [p for p in model.parameters() if p.ndim >= 2]
            rest = [p for p in model.parameters() if p.ndim < 2]
            opt = pcp.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                                  lr=3e-3)
            out = []
            for b in batches:
                _, loss = model(pcp.tensor(b[:, :-1], device="cpu"), pcp.tensor(b[:, 1:], device="cpu"))
                opt.zero_grad()
                loss.backward()
                pcp.optim.clip_grad_norm(model.parameters(), 1.0)
                opt.step()
                out.append(loss.item())
            losses[d] = np.array(out)
        finally:
            pcp.set_default_device("cpu")
    assert losses["cpu"][-1] < losses["cpu"][0] - 0.5  # it learns
    np.testing.assert_allclose(losses[dev], losses["cpu"], rtol=1e-4)
