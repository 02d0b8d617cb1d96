"""A plan's passes (plan/passes.h) checked against eager runs and NumPy: elementwise fusion in
float32, float16 and bfloat16, casts folded into layer norm and cross-entropy, residual adds
folded into layer norm, a GPU plan's batched casts, and the files these forms save to."""
import json

import numpy as np
import pytest

import pcp
from conftest import on_each_device
from pcp.serialization import load_safetensors, save_safetensors

pytestmark = on_each_device


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _write(path, tensors, meta, graph):
    """Writes a plan file with `graph` (an edited copy of a saved plan's) as its graph."""
    save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(graph)))


def _refused(path, tensors, meta, graph, message):
    """A plan file with `graph` is refused by pcp.load_plan with a ValueError matching message."""
    _write(path, tensors, meta, graph)
    with pytest.raises(ValueError, match=message):
        pcp.load_plan(path)


def _refused_edit(path, tensors, meta, graph, node, key, bad, message):
    """With node's `key` (its inputs, or an attribute) set to `bad`, the plan file is refused
    with a ValueError matching message; the graph is left as it was."""
    where = node if key == "inputs" else node["attrs"]
    saved, where[key] = where[key], bad
    try:
        _refused(path, tensors, meta, graph, message)
    finally:
        where[key] = saved


def test_elementwise_chains_fuse_into_one_node_each(device):
    w = pcp.tensor(rnd(6, 3, seed=3), device=device)

    def f(x, b, c, t):
        h = (x * 2.0 + b).tanh() * c - (x * 0.5).exp().sqrt()  # row and column broadcasts, a scalar
        mid = (x + 1.0) * x                                    # read by a matmul too: a fused output
        return h, (x + b).sigmoid(), mid @ w, pcp.gelu(mid * 3.0), (t.T * 2.0).square() - 1.0, h[:0] * 2.0

    def args(seed):
        return (pcp.tensor(rnd(5, 6, seed=seed), device=device), pcp.tensor(rnd(6, seed=seed + 1), device=device),
                pcp.tensor(rnd(5, 1, seed=seed + 2), device=device), pcp.tensor(rnd(6, 5, seed=seed + 3), device=device))

    cf = pcp.compile(f)
    cf(*args(0))
    for got, want in zip(cf(*args(10)), f(*args(10))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    plan = cf.cache_info()[0].plan
    # h, the sigmoid and mid read x: siblings, they fuse into one node (two on a GPU: 2 outputs a kernel)
    assert plan.ops.count("fused_elementwise") == (3 if device == "cpu" else 4), plan.ops
    assert plan.num_nodes <= plan.traced_nodes - 20, plan

    def chain(v):  # 16 ops, 4 distinct scalars: immediates of the program, not inputs
        for _ in range(4):
            v = ((v + 1.0) * 0.5 - 0.25) * 1.5
        return v

    cc = pcp.compile(chain)
    cc(pcp.tensor(rnd(7, 3), device=device))
    x = pcp.tensor(rnd(7, 3, seed=5), device=device)
    np.testing.assert_allclose(cc(x).numpy(), chain(x).numpy(), rtol=1e-6, atol=1e-7)
    assert cc.cache_info()[0].plan.ops == ["fused_elementwise"] * (1 if device == "cpu" else 2)  # GPU: 12 ops a kernel


def test_the_standards_binary_ops_fuse_and_compute_as_eager(device):
    # atan2 .. floor_divide in one fused program (the GPU's fused.comp includes binary_ops.glsl).
    def f(x, y):
        return pcp.atan2(x * 2.0 + 1.0, y) + pcp.hypot(x, y) * 0.5 - pcp.copysign(y, x) + (x * 7.0) % y \
            + (x * 7.0) // y + pcp.nextafter(x, y) * 2.0

    x = pcp.tensor(rnd(6, 5, seed=7) * 4, device=device)
    y = pcp.tensor(np.abs(rnd(6, 5, seed=8)) + 0.3, device=device)
    cf = pcp.compile(f)
    cf(x, y)
    np.testing.assert_allclose(cf(x, y).numpy(), f(x, y).numpy(), rtol=1e-6, atol=1e-6)
    assert cf.cache_info()[0].plan.ops.count("fused_elementwise") >= 1


@pytest.mark.parametrize("low", [pcp.bfloat16, pcp.float16], ids=str)
def test_16bit_chains_and_casts_fuse_keeping_every_rounding(device, low):
    # Casts between float32 and a 16-bit type inside chains of 16-bit and mixed arithmetic, with
    # 16-bit and float32 outputs (odd length: the GPU keeps 16-bit outputs of odd length unfused):
    # each instruction rounds as its op alone does, so the fused plan gives eager's bits, and its
    # gradients too.
    def f(x, y):
        h = (x.astype(low) * y + 1.0) * 0.5              # 16-bit arithmetic on a cast
        g = pcp.gelu(h).astype(pcp.float32) * x - y.astype(pcp.float32)
        return g.astype(low) * 2.0, g.exp(), (h - y).astype(pcp.float32)

    for n in (6, 7):
        def args(seed):
            return (pcp.tensor(rnd(5, n, seed=seed), device=device), pcp.tensor(rnd(5, n, seed=seed + 1), device=device).astype(low))

        cf = pcp.compile(f)
        cf(*args(0))
        for got, want in zip(cf(*args(3)), f(*args(3))):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.astype(pcp.float32).numpy(), want.astype(pcp.float32).numpy())
        plan = cf.cache_info()[0].plan
        if device == "cpu" or n % 2 == 0:
            # (the GPU's kernel writes at most 2 outputs: three programs and a lone op)
            assert "astype" not in plan.ops and len(plan.ops) <= (1 if device == "cpu" else 4), plan.ops

    def loss(x, y):
        return (pcp.gelu(x.astype(low) * y).astype(pcp.float32) * x).sum()

    x, y = pcp.tensor(rnd(4, 6, seed=7), device=device), pcp.tensor(rnd(4, 6, seed=8), device=device).astype(low)
    cg = pcp.compile(pcp.value_and_grad(loss))
    cg(x, y)
    (v1, g1), (v2, g2) = cg(x, y), pcp.value_and_grad(loss)(x, y)
    np.testing.assert_array_equal(v1.numpy(), v2.numpy())
    np.testing.assert_array_equal(g1.numpy(), g2.numpy())
    if device == "cpu":  # (the GPU's kernel writes 2 outputs: these chains, read by the backward, need more)
        assert cg.cache_info()[0].plan.ops.count("astype") == 0


@pytest.mark.parametrize("low", [pcp.bfloat16, pcp.float16], ids=str)
def test_casts_fold_into_layer_norm_and_cross_entropy(device, low, tmp_path):
    # Under autocast: layer norm's float32 output cast for a product (written 16-bit by the layer
    # norm), the product's logits cast to float32 for cross-entropy (read 16-bit by it and its
    # gradient), the gradient cast back (written 16-bit), and the layer norm gradient's cast g
    # (read 16-bit): the same bits as eager, with only the weight's cast left; also from a file.
    w = pcp.tensor(rnd(8, 6, seed=1) * 0.5)

    def loss(x, t):
        with pcp.autocast(dtype=low):
            return pcp.cross_entropy(pcp.layer_norm(x * 2.0) @ w, t)

    vg = pcp.value_and_grad(loss)
    x = pcp.tensor(rnd(10, 8, seed=2))
    t = pcp.tensor(np.random.default_rng(3).integers(0, 6, 10), device="cpu")
    cf = pcp.compile(vg)
    cf(x, t)
    for got, want in zip(cf(x, t), vg(x, t)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    ops = cf.cache_info()[0].plan.ops
    assert ops.count("astype") == 1, ops  # w's
    path = str(tmp_path / "folded.pcpplan")
    cf.save(path)
    for got, want in zip(pcp.load_plan(path)(x, t), vg(x, t)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_casts_of_many_weights_run_as_one_batched_cast(device, tmp_path, monkeypatch):
    # Under autocast each weight is cast to bfloat16 where a product first reads it and each
    # weight gradient back to float32 where it is made: on a GPU the plan gathers each set into
    # one cast_multi node (one dispatch), the same bits as eager; also with one dispatch per
    # tensor (PCP_GPU_MULTI_TENSOR=0) and from a file. The (7, 5) weight's odd length goes
    # through the one-tensor cast, in the same node.
    shapes = [(8, 6), (6, 6), (6, 7), (7, 5)]
    ws = [pcp.tensor(rnd(*s, seed=i) * 0.3) for i, s in enumerate(shapes)]
    x = pcp.tensor(rnd(5, 8, seed=9))

    def loss(x, ws):
        with pcp.autocast(dtype=pcp.bfloat16):
            h = x
            for w in ws:
                h = pcp.gelu(h @ w)
            return h.astype(pcp.float32).sum()

    vg = pcp.value_and_grad(loss, argnums=1)
    want_v, want_g = vg(x, ws)
    cf = pcp.compile(vg)
    cf(x, ws)
    ops = cf.cache_info()[0].plan.ops
    if device == "cpu":
        assert "cast_multi" not in ops, ops
    else:
        assert ops.count("cast_multi") == 2 and "astype" not in ops, ops
    path = str(tmp_path / "casts.pcpplan")
    cf.save(path)
    loaded = pcp.load_plan(path)  # takes the tensors flat
    for multi in ("1", "0"):
        monkeypatch.setenv("PCP_GPU_MULTI_TENSOR", multi)
        for v, g in (cf(x, ws), loaded(x, *ws)):
            np.testing.assert_array_equal(v.numpy(), want_v.numpy())
            for got, want, s in zip(g, want_g, shapes):
                assert got.dtype == pcp.float32 and got.shape == s
                np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_batched_cast_matches_numpy_and_refuses_bad_forms(device, tmp_path):
    # cast_multi from a plan file against NumPy's rounding (bfloat16 and float16, both ways,
    # odd and even lengths, a transposed view); on a GPU, mixed input types and a non-float
    # target are refused before anything runs.
    shapes = [(4, 6), (3, 5), (1,), (0, 3), (64, 130)]
    xs = [pcp.tensor(rnd(*s, seed=i) * 7) for i, s in enumerate(shapes)]
    for low in (pcp.bfloat16, pcp.float16):
        down = pcp.compile(lambda *xs: [x.astype(low) for x in xs])
        up = pcp.compile(lambda *xs: [x.astype(pcp.float32) for x in xs])
        ys = down(*xs)
        assert down.cache_info()[0].plan.ops == (["astype"] * 5 if device == "cpu" else ["cast_multi"])
        path = str(tmp_path / "down.pcpplan")
        down.save(path)
        for run in (down, pcp.load_plan(path)):
            for x, y in zip(xs, run(*xs)):
                want = x.numpy().astype(np.float16) if low == pcp.float16 else _bf16_round(x.numpy())
                assert y.dtype == low
                np.testing.assert_array_equal(y.astype(pcp.float32).numpy(), np.asarray(want, np.float32))
        for y, back in zip(ys, up(*ys)):
            np.testing.assert_array_equal(back.numpy(), y.astype(pcp.float32).numpy())
    t = pcp.tensor(rnd(6, 4, seed=3)).T  # a transposed view keeps its layout
    down = pcp.compile(lambda a, b: [a.astype(pcp.bfloat16), b.astype(pcp.bfloat16)])
    for got, want in zip(down(t, t * 2.0), (t, t * 2.0)):
        assert got.shape == (4, 6)
        np.testing.assert_array_equal(got.astype(pcp.float32).numpy(), _bf16_round(want.numpy()))
    if device == "cpu":
        return
    path = str(tmp_path / "bad.pcpplan")
    down.save(path)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    node = next(n for n in graph["nodes"] if n["op"] == "cast_multi")
    node["attrs"]["dtype"] = "int32"
    _refused(path, tensors, meta, graph, "cast_multi node: dtype is not float32, float16 or bfloat16")
    node["attrs"]["dtype"] = "bfloat16"
    graph["values"][node["inputs"][1]][1] = "int32"
    _refused(path, tensors, meta, graph, "cast_multi node: inputs must share one of")


def test_the_sort_family_saves_and_loads(device, tmp_path):
    # argsort, cumulative sums and products (and the product's gradient) and searchsorted in a
    # plan file, run by another loader: the same results; a hand-edited axis is refused.
    vg = pcp.value_and_grad(lambda x: (pcp.cumprod(x, axis=1) * 0.5).sum())

    def f(x, v):
        loss, g = vg(x)
        return [pcp.searchsorted(pcp.sort(x[0]), v), pcp.argsort(x, axis=0), pcp.cumsum(x, axis=1), loss, g]

    args = (pcp.tensor(rnd(3, 4, seed=1) + 2.0), pcp.tensor(rnd(5, seed=2) + 2.0))
    cf = pcp.compile(f)
    cf(*args)
    path = str(tmp_path / "sort.pcpplan")
    cf.save(path)
    for got, want in zip(pcp.load_plan(path)(*args), f(*args)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    ops = [n["op"] for n in graph["nodes"]]
    assert {"searchsorted", "argsort", "cumulative_sum", "cumulative_prod", "cumulative_prod_backward"} <= set(ops), ops
    node = next(n for n in graph["nodes"] if n["op"] == "argsort")
    node["attrs"]["axis"] = 7
    _refused(path, tensors, meta, graph, "argsort node: axis 7 is out of range")


def _bf16_round(a):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as float32."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    return r.view(np.float32).reshape(np.shape(a))


def test_a_plan_file_with_bad_folded_forms_is_refused(tmp_path):
    # The attributes cast and residual folding add (out_dtype, residual, accumulate, low_dtype)
    # are checked against the node's inputs before anything runs.
    w = pcp.tensor(rnd(8, 8, seed=4) * 0.3, device="cpu")

    def loss(x, t):
        with pcp.autocast(dtype=pcp.bfloat16):
            h = x + pcp.layer_norm(x) @ w
            return pcp.cross_entropy(pcp.layer_norm(h) @ w, t)

    cf = pcp.compile(pcp.value_and_grad(loss))
    args = (pcp.tensor(rnd(6, 8, seed=5), device="cpu"), pcp.tensor(np.arange(6) % 8, device="cpu"))
    cf(*args)
    path = str(tmp_path / "p.pcpplan")
    cf.save(path)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    ops = [n["op"] for n in graph["nodes"]]
    norm = next(n for n in graph["nodes"] if n["op"] == "layer_norm" and n["attrs"].get("residual"))
    grad = next(n for n in graph["nodes"] if n["op"] == "layer_norm_backward" and n["attrs"].get("accumulate"))
    ce = next(n for n in graph["nodes"] if n["op"] == "cross_entropy")
    assert "out_dtype" in ce["attrs"], ops
    grad["attrs"].setdefault("low_dtype", None)
    for node, key, bad, message in ((norm, "residual", False, "residual input without the residual form"),
                                    (grad, "accumulate", False, "accumulated gradient without the accumulate"),
                                    (grad, "low_dtype", "int32", "low_dtype int32 is not float16 or bfloat16"),
                                    (ce, "out_dtype", "int64", "out_dtype int64 is not"),
                                    (ce, "out_dtype", 3, "out_dtype")):
        _refused_edit(path, tensors, meta, graph, node, key, bad, message)
    if grad["attrs"]["low_dtype"] is None:
        del grad["attrs"]["low_dtype"]
    _write(path, tensors, meta, graph)
    for got, want in zip(pcp.load_plan(path)(*args), pcp.value_and_grad(loss)(*args)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_residual_add_folds_into_the_layer_norm_after_it(device, tmp_path):
    # x + branch (float32 + bfloat16, as a block's residual under autocast) normalized: on a GPU
    # one kernel adds, writes the sum (read again by the next residual and the gradient) and
    # normalizes it; the same bits as eager, also from a file.
    w = pcp.tensor(rnd(8, 8, seed=4) * 0.3)

    def loss(x):
        with pcp.autocast(dtype=pcp.bfloat16):
            h = x + pcp.layer_norm(x) @ w            # the residual stream, float32 + bfloat16
            return ((h + pcp.layer_norm(h) @ w).astype(pcp.float32) ** 2).mean()

    vg = pcp.value_and_grad(loss)
    x = pcp.tensor(rnd(6, 8, seed=5))
    cf = pcp.compile(vg)
    cf(x)
    for got, want in zip(cf(x), vg(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    plan = cf.cache_info()[0].plan
    norms = [i for i, op in enumerate(plan.ops) if op == "layer_norm"]
    # The second layer norm's add is in it, the gradients' adds in theirs, with the gradient's cast to
    # bfloat16: only the weight's cast is left.
    assert plan.ops[norms[1] - 1] != "add" and "add" not in plan.ops and plan.ops.count("astype") == 1, plan.ops
    path = str(tmp_path / "residual.pcpplan")
    cf.save(path)
    for got, want in zip(pcp.load_plan(path)(x), vg(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def _vendor_matmul(device):
    return device != "cpu" and bool(pcp.gpu_info(device)["vendor"]["matmul"])


@pytest.mark.parametrize("low", [pcp.float32, pcp.bfloat16], ids=str)
@pytest.mark.parametrize("rows", [(12,), (3, 4)], ids=["2d", "3d"])
def test_a_tanh_gelu_folds_into_the_products_around_it(device, low, rows, tmp_path):
    # An MLP's gelu(x @ w1) @ w2 and its gradients: the GELU becomes the first product's
    # epilogue (which also keeps the product for the gradient), and the GELU's gradient the
    # epilogue of the product that makes its incoming gradient; 3-d inputs go through reshapes.
    # Where the products run apart from the GELU (CPU, PCP's GPU kernels) the same bits as
    # eager; through cuBLASLt's epilogues, the GELU of the float32 accumulator: a rounding apart.
    w1, w2 = pcp.tensor(rnd(8, 16, seed=1) * 0.4, device=device), pcp.tensor(rnd(16, 8, seed=2) * 0.4, device=device)

    def loss(x):
        with pcp.autocast(dtype=low, enabled=low != pcp.float32):
            y = pcp.gelu(x @ w1, approximate="tanh") @ w2
        return (y.astype(pcp.float32) ** 2).mean()

    vg = pcp.value_and_grad(loss)
    x = pcp.tensor(rnd(*rows, 8, seed=3), device=device)
    cf = pcp.compile(vg)
    cf(x)
    ops = cf.cache_info()[0].plan.ops
    assert "gelu_tanh" not in ops and "gelu_tanh_grad" not in ops and ops.count("matmul") == 4, ops
    path = str(tmp_path / "epilogues.pcpplan")
    cf.save(path)
    x2 = pcp.tensor(rnd(*rows, 8, seed=4), device=device)
    want = vg(x2)
    for run in (cf, pcp.load_plan(path)):
        for got, w in zip(run(x2), want):
            if _vendor_matmul(device):
                tol = 1e-5 if low == pcp.float32 else 2e-2
                np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=tol, atol=tol * np.abs(w.numpy()).max())
            else:
                np.testing.assert_array_equal(got.numpy(), w.numpy())


@pytest.mark.cpu_only
def test_the_cpu_gemm_applies_the_gelu_epilogues_blockwise_with_the_same_bits():
    # Products spanning several cache blocks, threads and depth slices (K = 1030): each block
    # finished through the elementwise kernels gives the bits of the ops apart.
    w1, w2 = pcp.tensor(rnd(1030, 260, seed=1) * 0.05, device="cpu"), pcp.tensor(rnd(260, 70, seed=2) * 0.1, device="cpu")
    vg = pcp.value_and_grad(lambda x, w1: (pcp.gelu(x @ w1, approximate="tanh") @ w2).square().mean(), argnums=(0, 1))
    x = pcp.tensor(rnd(130, 1030, seed=3), device="cpu")
    cf = pcp.compile(vg)
    cf(x, w1)
    assert "gelu_tanh" not in cf.cache_info()[0].plan.ops
    x2 = pcp.tensor(rnd(130, 1030, seed=4), device="cpu")
    (loss, grads), (want_loss, want) = cf(x2, w1), vg(x2, w1)
    np.testing.assert_array_equal(loss.numpy(), want_loss.numpy())
    for g, w in zip(grads, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_a_plan_file_with_a_bad_epilogue_is_refused(tmp_path):
    w1, w2 = pcp.tensor(rnd(8, 16, seed=1), device="cpu"), pcp.tensor(rnd(16, 8, seed=2), device="cpu")
    cf = pcp.compile(pcp.value_and_grad(lambda x: (pcp.gelu(x @ w1, approximate="tanh") @ w2).sum()))
    x = pcp.tensor(rnd(5, 8, seed=3), device="cpu")
    cf(x)
    path = str(tmp_path / "p.pcpplan")
    cf.save(path)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    fwd = next(n for n in graph["nodes"] if n["attrs"].get("epilogue") == "gelu_tanh")
    bwd = next(n for n in graph["nodes"] if n["attrs"].get("epilogue") == "dgelu_tanh")
    for node, key, bad, message in ((fwd, "epilogue", "relu", "unknown epilogue 'relu'"),
                                    (fwd, "epilogue", "dgelu_tanh", "third input without the dgelu_tanh"),
                                    (bwd, "epilogue", "gelu_tanh", "third input without the dgelu_tanh"),
                                    (bwd, "inputs", bwd["inputs"][:2] + [bwd["inputs"][0]], "GELU's input is not")):
        _refused_edit(path, tensors, meta, graph, node, key, bad, message)
    _write(path, tensors, meta, graph)
    want = pcp.value_and_grad(lambda x: (pcp.gelu(x @ w1, approximate="tanh") @ w2).sum())(x)
    for got, w in zip(pcp.load_plan(path)(x), want):
        np.testing.assert_array_equal(got.numpy(), w.numpy())


def _norm_stack_loss(x, *ws):
    for w in ws:
        x = pcp.layer_norm(x, w, pcp.ones_like(w) * 0.5) * 1.5
    return (x * x).sum()


def test_layer_norm_weight_sums_run_batched_on_a_gpu(device, tmp_path):
    # Three layer norms' gradients: on a GPU each writes its kernel's partial rows and one
    # sum_rows_multi node sums them all (one dispatch, not three), the same bits as eager; on the
    # CPU the plan keeps the plain form.
    ws = [pcp.tensor(rnd(24, seed=10 + i), device=device) for i in range(3)]
    vg = pcp.value_and_grad(_norm_stack_loss, argnums=(0, 1, 2, 3))
    x = pcp.tensor(rnd(40, 24, seed=2), device=device)
    cf = pcp.compile(vg)
    cf(x, *ws)
    ops = cf.cache_info()[0].plan.ops
    assert ops.count("sum_rows_multi") == (0 if device == "cpu" else 1), ops
    path = str(tmp_path / "sums.pcpplan")
    cf.save(path)
    x2 = pcp.tensor(rnd(40, 24, seed=3), device=device)
    want = vg(x2, *ws)
    for run in (cf, pcp.load_plan(path)):
        loss, grads = run(x2, *ws)
        np.testing.assert_array_equal(loss.numpy(), want[0].numpy())
        for got, w in zip(grads, want[1]):
            np.testing.assert_array_equal(got.numpy(), w.numpy())


def test_a_plan_file_with_batched_norm_sums_runs_on_the_cpu_and_bad_forms_are_refused(tmp_path):
    # A CPU plan edited into the GPU's form (partial rows, one sum_rows_multi, views of the sums):
    # the CPU computes it too, equal to eager at float32 rounding; forms that do not fit are refused.
    ws = [pcp.tensor(rnd(24, seed=10 + i), device="cpu") for i in range(2)]
    vg = pcp.value_and_grad(_norm_stack_loss, argnums=(1, 2))
    x = pcp.tensor(rnd(40, 24, seed=2), device="cpu")
    cf = pcp.compile(vg)
    cf(x, *ws)
    path = str(tmp_path / "p.pcpplan")
    cf.save(path)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    grads = [n for n in graph["nodes"] if n["op"] == "layer_norm_backward"]
    assert len(grads) == 2
    device = graph["values"][grads[0]["outputs"][1]][2]
    sum_node = {"op": "sum_rows_multi", "attrs": {}, "inputs": [], "outputs": [], "scalars": [], "draws": []}
    views = []
    for n, rows in zip(grads, (3, 1)):
        part, sums = len(graph["values"]), len(graph["values"]) + 1
        graph["values"] += [[[rows, 48], "float32", device], [[48], "float32", device]]
        dw, db = n["outputs"][1:3]
        n["outputs"][1:3] = [part]
        n["attrs"]["partial_rows"] = rows
        sum_node["inputs"].append(part)
        sum_node["outputs"].append(sums)
        for out, offset in ((dw, 0), (db, 24)):
            views.append({"op": "alias", "attrs": {"shape": [24], "strides": [1], "offset": offset, "base_strides": [1]},
                          "inputs": [sums], "outputs": [out], "scalars": [], "draws": []})
    last = max(graph["nodes"].index(n) for n in grads)
    graph["nodes"][last + 1:last + 1] = [sum_node, *views]
    _write(path, tensors, meta, graph)
    want = vg(x, *ws)
    loss, got = pcp.load_plan(path)(x, *ws)
    np.testing.assert_allclose(loss.numpy(), want[0].numpy(), rtol=1e-6)
    for g, w in zip(got, want[1]):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
    for node, key, bad, message in ((grads[0], "partial_rows", 0, "fewer than one"),
                                    (grads[0], "partial_rows", 70000, "not in 0..65535"),
                                    (sum_node, "inputs", [sum_node["inputs"][0], grads[0]["inputs"][1]], "float32 matrices")):
        _refused_edit(path, tensors, meta, graph, node, key, bad, message)


def test_a_fused_plan_saves_and_a_crafted_program_is_refused(tmp_path):
    f = pcp.compile(lambda x: ((x * 2.0 + 1.0).tanh() * x).sum())
    f(pcp.ones(8, device="cpu"))  # fused on the CPU
    path = str(tmp_path / "p.pcpplan")
    f.save(path)
    x = pcp.tensor(rnd(8, seed=4), device="cpu")
    np.testing.assert_allclose(pcp.load_plan(path)(x).numpy(), ((x * 2.0 + 1.0).tanh() * x).sum().numpy(), rtol=1e-6)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    node = next(n for n in graph["nodes"] if n["op"] == "fused_elementwise")
    for key, bad, message in (("code", [1, 2, 0, 99], "reads a register not yet written"),
                              ("code", [0, 17, 0, 0], "an op it cannot run"),
                              ("outputs", [0], "outputs a register it does not write"),
                              ("code", [1, 2], "4 per instruction")):
        _refused_edit(path, tensors, meta, graph, node, key, bad, message)
    # Typed programs (float16 / bfloat16 registers) name a type per instruction and input.
    count = len(node["attrs"]["code"]) // 4
    for types, inputs, message in (([7] * count, [0] * node["attrs"]["inputs"], "type 7 is not 0"),
                                   ([0] * (count + 1), [0] * node["attrs"]["inputs"], "instruction types for")):
        node["attrs"]["types"], node["attrs"]["input_types"] = types, inputs
        _refused(path, tensors, meta, graph, message)
