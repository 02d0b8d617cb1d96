"""NVIDIA's libraries on the CUDA runtime (pcp[cuda]): products through cuBLASLt and attention through
cuDNN, on PCP's buffers in the stream its own kernels run on, checked against NumPy in float64 and
against PCP's own kernels in the same process (pcp._core._set_gpu_vendor switches between them).

They run where the CUDA runtime runs them: an NVIDIA GPU with the libraries installed. Elsewhere
(CI's lavapipe) they are skipped, and the skip says why (gpu_info's vendor note)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pcp
from pcp import _core

GPU = any(name != "cpu" for name in pcp.devices())
VENDOR = pcp.gpu_info()["vendor"] if GPU else {"matmul": None, "attention": None, "note": "no GPU"}
requires_matmul = pytest.mark.skipif(not VENDOR["matmul"], reason=f"no vendor matmul here: {VENDOR['note']}")
requires_attention = pytest.mark.skipif(not VENDOR["attention"],
                                        reason=f"no vendor attention here: {VENDOR['note']}")

# Relative error ||out - ref|| / ||ref|| against float64, per operand type: float32 products in
# float32 (cuBLAS's and PCP's kernels sum in different orders), 16-bit ones with float32
# accumulation and one rounding of the output.
REL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.2e-2}


def rel(out, ref):
    out = np.asarray(out, np.float64)
    return float(np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-30))


def on_gpu(x, dtype):
    return pcp.tensor(x, dtype=dtype, device="gpu")


def host(t):
    return t.astype(pcp.float32).numpy().astype(np.float64)


def both_paths(fn):
    """fn() with the vendor path, then with PCP's kernels (as NumPy float64 arrays)."""
    try:
        _core._set_gpu_vendor(True)
        a = fn()
        _core._set_gpu_vendor(False)
        b = fn()
    finally:
        _core._set_gpu_vendor(True)
    return a, b


# (a layout, b layout) of a product: contiguous, a transposed view (as Linear's W.T), rows taken
# with a step (a strided view whose rows are still contiguous), and a view with neither axis
# contiguous (copied before the library reads it).
def make(x, layout, dtype):
    if layout == "contiguous":
        return on_gpu(x, dtype)
    if layout == "transposed":
        return on_gpu(np.ascontiguousarray(x.T), dtype).T
    if layout == "row_step":
        wide = np.zeros((x.shape[0] * 2, x.shape[1]), x.dtype)
        wide[::2] = x
        return on_gpu(wide, dtype)[::2]
    if layout == "neither":
        wide = np.zeros((x.shape[0] * 2, x.shape[1] * 2), x.dtype)
        wide[::2, ::2] = x
        return on_gpu(wide, dtype)[::2, ::2]
    raise ValueError(layout)


LAYOUTS = ["contiguous", "transposed", "row_step", "neither"]


@requires_matmul
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("mnk", [(37, 29, 53), (256, 128, 384), (1, 64, 32), (64, 1, 32), (8, 8, 1)])
def test_matmul_layouts(dtype, la, lb, mnk, rng):
    M, N, K = mnk
    a, b = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    ta, tb = make(a, la, dtype), make(b, lb, dtype)
    ref = host(ta) @ host(tb)  # of the rounded operands
    vendor, own = both_paths(lambda: host(ta @ tb))
    assert rel(vendor, ref) < REL[dtype]
    assert rel(vendor, own) < 2 * REL[dtype]


@requires_matmul
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shapes", [
    ((3, 4, 17, 24), (3, 4, 24, 9)),     # two batch dimensions, one strided batch
    ((1, 4, 17, 24), (3, 1, 24, 9)),     # broadcast batches: a loop over the outer one
    ((5, 17, 24), (24, 9)),              # a 2-D right operand: folded into M
    ((2, 3, 5, 17, 24), (5, 24, 9)),     # three batch dimensions
    ((6, 1, 24), (6, 24, 1)),            # M = N = 1
])
def test_matmul_batched(dtype, shapes, rng):
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    ta, tb = on_gpu(a, dtype), on_gpu(b, dtype)
    ref = host(ta) @ host(tb)
    vendor, own = both_paths(lambda: host(ta @ tb))
    assert vendor.shape == ref.shape
    assert rel(vendor, ref) < REL[dtype]
    assert rel(vendor, own) < 2 * REL[dtype]


@requires_matmul
def test_matmul_batched_transposed_views(rng):
    """Attention's products: q @ k^T on (B, H, T, D) views of a packed (B, T, 3C) projection."""
    B, T, H, D = 2, 33, 3, 16
    qkv = on_gpu(rng.standard_normal((B, T, 3 * H * D)), "bfloat16")
    q = qkv[:, :, :H * D].reshape(B, T, H, D).swapaxes(1, 2)
    k = qkv[:, :, H * D:2 * H * D].reshape(B, T, H, D).swapaxes(1, 2)
    ref = host(q) @ np.swapaxes(host(k), -1, -2)
    vendor, own = both_paths(lambda: host(q @ k.swapaxes(-1, -2)))
    assert rel(vendor, ref) < REL["bfloat16"]
    assert rel(vendor, own) < 2 * REL["bfloat16"]


@requires_matmul
@pytest.mark.parametrize("shape_a, shape_b", [((0, 5), (5, 3)), ((4, 0), (0, 3)), ((4, 5), (5, 0)), ((2, 0, 4), (4, 3))])
def test_matmul_zero_size(shape_a, shape_b):
    a = pcp.ones(shape_a, device="gpu", dtype=pcp.bfloat16)
    b = pcp.ones(shape_b, device="gpu", dtype=pcp.bfloat16)
    out = (a @ b).astype(pcp.float32).numpy()
    assert out.shape == np.ones(shape_a) .__matmul__(np.ones(shape_b)).shape
    np.testing.assert_array_equal(out, np.ones(shape_a) @ np.ones(shape_b))  # K = 0: zeros


@requires_matmul
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_matmul_gradients(dtype, rng):
    """Linear's forward and both gradients (x @ W.T, dY @ W, dY^T @ x) through the library."""
    x, w, g = rng.standard_normal((48, 40)), rng.standard_normal((24, 40)), rng.standard_normal((48, 24))
    tx = on_gpu(x, "float32").requires_grad_()
    tw = on_gpu(w, "float32").requires_grad_()
    with pcp.autocast(dtype=dtype, enabled=dtype != "float32"):
        y = tx @ tw.T
    (y * on_gpu(g, "float32")).sum().backward()
    xr, wr = host(tx.astype(dtype)), host(tw.astype(dtype))
    assert rel(host(y), xr @ wr.T) < REL[dtype]
    gr = host(on_gpu(g, dtype))
    assert rel(host(tx.grad), gr @ wr) < 2 * REL[dtype]
    assert rel(host(tw.grad), gr.T @ xr) < 2 * REL[dtype]


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def _gelu_tanh_grad(x):
    t = np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * np.sqrt(2.0 / np.pi) * (1.0 + 3 * 0.044715 * x**2)


@requires_matmul
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gelu_epilogues_match_float64(dtype, rng):
    """A plan's gelu_tanh and dgelu_tanh epilogues (plan/product_epilogues.cpp) in cuBLASLt: an
    MLP's y = gelu(x @ w1) @ w2 and its input gradient against NumPy in float64, from the
    rounded operands; the profile shows the epilogue calls and no GELU kernels."""
    x, w1, w2, g = (rng.standard_normal(s) for s in ((64, 48), (48, 96), (96, 40), (64, 40)))
    tw1, tw2, tg = on_gpu(w1, "float32"), on_gpu(w2, "float32"), on_gpu(g, "float32")

    def f(tx):
        with pcp.autocast(dtype=dtype, enabled=dtype != "float32"):
            y = pcp.gelu(tx @ tw1, approximate="tanh") @ tw2
            return y, pcp.grad(lambda v: (pcp.gelu(v @ tw1, approximate="tanh") @ tw2 * tg).sum())(tx)

    with pcp.autocast(dtype=dtype, enabled=dtype != "float32"):  # the rounded operands
        xr, w1r, w2r = (host(on_gpu(a, "float32").astype(dtype)) for a in (x, w1, w2))
    h = xr @ w1r
    cf = pcp.compile(lambda tx: [*f(tx)])
    tx = on_gpu(x, "float32")
    cf(tx)
    gpu = pcp.device("gpu")
    _core.set_gpu_profiling(True, gpu)
    y, gx = cf(tx)
    pcp.synchronize(gpu)
    _core.set_gpu_profiling(False, gpu)
    names = {name for name, _, _ in _core.gpu_profile_results(gpu)}
    assert "cublasLt matmul+gelu" in names and not {"unary4", "unary"} & names, names
    assert rel(host(y), _gelu_tanh(h) @ w2r) < 2 * REL[dtype]
    assert rel(host(gx), ((host(tg.astype(dtype)) @ w2r.T) * _gelu_tanh_grad(h)) @ w1r.T) < 3 * REL[dtype]


@requires_matmul
def test_tf32_only_when_allowed(rng):
    a, b = rng.standard_normal((512, 512)), rng.standard_normal((512, 512))
    ta, tb = on_gpu(a, "float32"), on_gpu(b, "float32")
    ref = host(ta) @ host(tb)
    try:
        pcp.set_float32_matmul_precision("high")
        tf32 = rel(host(ta @ tb), ref)
    finally:
        pcp.set_float32_matmul_precision("highest")
    exact = rel(host(ta @ tb), ref)
    assert exact < 1e-6 and 1e-5 < tf32 < 3e-3, (exact, tf32)


@requires_matmul
def test_ordering_across_hand_offs(rng):
    """Vulkan kernels and library calls alternate on the same buffers: each reads what the one
    before it wrote."""
    x = rng.standard_normal((64, 64)) * 0.1
    w = rng.standard_normal((64, 64)) * 0.1
    tx, tw = on_gpu(x, "float32"), on_gpu(w, "float32")
    for _ in range(30):
        tx = (tx @ tw).tanh() + 0.5  # library, then two Vulkan kernels
        x = np.tanh(x @ w) + 0.5
    assert rel(host(tx), x) < 1e-4


@requires_matmul
def test_memory_freed_while_library_work_is_pending(rng):
    """Operands dropped (and the allocator's cache emptied, freeing their memory) right after the
    product was queued, and their memory handed to new tensors that Vulkan kernels overwrite: the
    product still reads what they held."""
    a, b = rng.standard_normal((1024, 1024)), rng.standard_normal((1024, 1024))
    ref = a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64)
    outs = []
    for i in range(4):
        ta, tb = on_gpu(a, "float32"), on_gpu(b, "float32")
        outs.append(ta @ tb)
        del ta, tb
        if i % 2:
            pcp.clear_cache("gpu")  # frees the buffers of the operands: only after the product ran
        else:
            junk = [pcp.full((1024, 1024), 7.0, device="gpu") for _ in range(2)]  # reuses them
            del junk
    for out in outs:
        assert rel(host(out), ref) < 1e-5


def run_python(code, env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True, text=True,
                          timeout=300)


CHECK = """
    import numpy as np, pcp
    v = pcp.gpu_info()["vendor"]
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4); b = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    out = (pcp.tensor(a, device="gpu") @ pcp.tensor(b, device="gpu")).numpy()
    assert np.allclose(out, a @ b)
    print("matmul", v["matmul"], "note", v["note"])
"""


@requires_matmul
def test_vulkan_when_asked():
    r = run_python(CHECK, {"PCP_GPU_RUNTIME": "vulkan"})
    assert r.returncode == 0, r.stderr
    assert "matmul None" in r.stdout and "runtime is vulkan" in r.stdout


@requires_matmul
def test_missing_or_broken_libraries(tmp_path):
    """NVIDIA's libraries missing (an empty search folder) or not loadable (files that are no
    libraries): the Vulkan runtime runs, and gpu_info says why; PCP_GPU_RUNTIME=cuda then raises
    that reason instead of running without them."""
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("libcublasLt.so.13", "libcublasLt.so.12", "libnvrtc.so.13", "libnvrtc.so.12"):
        (broken / name).write_text("not a library")
    for folder in (tmp_path, broken):
        # Only `folder` is searched before dlopen's own places (where the test cannot hide them).
        env = {"PCP_CUDA_LIBRARY_PATH": str(folder)}
        r = run_python(CHECK, env)
        assert r.returncode == 0, r.stderr
        if "matmul cuBLASLt" in r.stdout:
            pytest.skip("NVRTC and cuBLASLt are installed where dlopen finds them by default; cannot hide them")
        assert "matmul None" in r.stdout and "runtime is vulkan" in r.stdout
        assert r.stderr.count("pip install 'pcp[cuda]'") == 1, r.stderr  # said once
        r = run_python("import pcp; print(pcp.devices(), pcp._core.gpu_unavailable_reason())",
                       dict(env, PCP_GPU_RUNTIME="cuda"))
        assert r.returncode == 0 and "['cpu'] PCP_GPU_RUNTIME=cuda, but" in r.stdout, r.stdout + r.stderr


def attention_reference(qkv, g, heads, causal):
    """Causal (or full) attention of a packed (B, T, 3C) projection in float64, and the gradient of
    sum(out * g) with respect to it."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // heads
    q, k, v = (qkv[:, :, i * C:(i + 1) * C].reshape(B, T, heads, D).transpose(0, 2, 1, 3) for i in range(3))
    scale = 1.0 / np.sqrt(D)
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if causal:
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    go = g.reshape(B, T, heads, D).transpose(0, 2, 1, 3)
    dv = p.transpose(0, 1, 3, 2) @ go
    dp = go @ v.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
    merge = lambda t: t.transpose(0, 2, 1, 3).reshape(B, T, C)  # noqa: E731
    return out, np.concatenate([merge(dq), merge(dk), merge(dv)], axis=2)


@requires_attention
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("B, T, H, D, causal", [(2, 67, 3, 64, True), (3, 128, 2, 32, False), (1, 300, 4, 64, True)])
def test_attention_matches_float64(dtype, B, T, H, D, causal, rng):
    """cuDNN's flash attention on GPT's packed projection, forward and backward, against float64
    from the same rounded inputs, and against PCP's own kernels."""
    qkv = on_gpu(rng.standard_normal((B, T, 3 * H * D)), dtype)
    g = on_gpu(rng.standard_normal((B, T, H * D)), dtype)
    ref_out, ref_grad = attention_reference(host(qkv), host(g), H, causal)

    def run():
        x = qkv.detach()
        x.requires_grad = True
        out = pcp.qkv_attention(x, H, causal=causal)
        (out.astype(pcp.float32) * g.astype(pcp.float32)).sum().backward()
        return host(out), host(x.grad)
    (out, grad), (own_out, own_grad) = both_paths(run)
    assert rel(out, ref_out) < REL[dtype] and rel(grad, ref_grad) < 2 * REL[dtype]
    assert rel(out, own_out) < 2 * REL[dtype] and rel(grad, own_grad) < 4 * REL[dtype]


@requires_attention
def test_attention_of_separate_heads(rng):
    """scaled_dot_product_attention on three (B, H, T, D) tensors (each its own buffer)."""
    q, k, v = (on_gpu(rng.standard_normal((2, 3, 80, 64)), "bfloat16") for _ in range(3))
    out = host(pcp.scaled_dot_product_attention(q, k, v, causal=True))
    qkv = np.concatenate([host(t).transpose(0, 2, 1, 3).reshape(2, 80, 192) for t in (q, k, v)], axis=2)
    ref, _ = attention_reference(qkv, np.zeros((2, 80, 192)), 3, True)
    assert rel(out.transpose(0, 2, 1, 3).reshape(2, 80, 192), ref) < REL["bfloat16"]


def train_gpt(steps, dtype, seed=0):
    """Losses of a small GPT trained on the GPU under `dtype` autocast (dropout 0)."""
    from pcp.models import GPT2, GPT2Config
    cfg = GPT2Config(vocab_size=29, n_positions=64, n_embd=64, n_layer=2, n_head=4, dropout=0.0)
    rng = np.random.default_rng(seed)
    batches = [(rng.integers(0, 29, (8, 1)) + rng.integers(1, 3, (8, 1)) * np.arange(65)) % 29 for _ in range(steps)]
    pcp.random.seed(seed)
    pcp.set_default_device("gpu")
    try:
        model = GPT2(cfg)
        opt = pcp.optim.AdamW(model.parameters(), lr=3e-3)
        out = []
        for b in batches:
            with pcp.autocast(dtype=dtype, enabled=dtype != "float32"):
                _, loss = model(pcp.tensor(b[:, :-1], device="cpu"), pcp.tensor(b[:, 1:], device="cpu"))
            opt.zero_grad()
            loss.backward()
            pcp.optim.clip_grad_norm(model.parameters(), 1.0)
            opt.step()
            out.append(loss.item())
    finally:
        pcp.set_default_device("cpu")
    return np.array(out)


@requires_matmul
@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-4), ("bfloat16", 2e-2)])
def test_gpt_training_follows_the_vulkan_path(dtype, rtol):
    """40 AdamW steps from the same weights and batches, with the libraries and with PCP's own
    kernels: the loss curves agree (float32 to 1e-4, bfloat16 to its rounding)."""
    vendor, own = both_paths(lambda: train_gpt(40, dtype))
    assert vendor[-1] < vendor[0] - 0.5  # it learns
    np.testing.assert_allclose(vendor, own, rtol=rtol)
