"""pcp.export.stablehlo: traced functions written as StableHLO text, compiled by XLA (through
jax, a test dependency only) and run on the CPU, against PCP's eager results to 1e-5 relative."""
import numpy as np
import pytest

import pcp
from pcp.export import ExportError
from pcp.export._rules import BINARY_OPS as RULES_BINARY, REFUSED, RULES, UNARY_OPS as RULES_UNARY
from plan_cases import (GPU, batched_casts_case, batched_norm_sums_case, elementwise_case, gpt, nn_case,
                        optimizers_case, rnd, shapes_case, sorting_case)
from test_compile import _training_step

jax = pytest.importorskip("jax")


def run_xla(text, inputs):
    """Compiles StableHLO text with XLA on the CPU and runs it on inputs (NumPy arrays)."""
    from jax._src.lib import xla_client
    from jax.extend import backend
    jax.config.update("jax_enable_x64", True)  # int64 and float64 inputs stay as they are
    cpu = backend.get_backend("cpu")
    device = cpu.local_devices()[0]
    exe = cpu.compile_and_load(text.encode(), xla_client.DeviceList((device,)), xla_client.CompileOptions())
    out = exe.execute_sharded([jax.device_put(np.asarray(x), device) for x in inputs])
    return [np.asarray(a[0]) for a in out.disassemble_into_single_device_arrays()]


def inputs_of(exported, before=None):
    """@main's arguments: the examples, the captured tensors (their values in `before`, a
    {hash(tensor): array} taken before the trace ran a step, where given) and host scalars."""
    before = before or {}
    return [np.float64(a.value) if a.role == "scalar" else before.get(hash(a.tensor), a.tensor.numpy())
            for a in exported.arguments]


def close(got, want, what, rtol=1e-5):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, got.dtype, want.shape, want.dtype)
    scale = float(np.abs(want).max()) if want.size and want.dtype != bool else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def check_case(fn, args):
    exported = pcp.export.stablehlo(fn, *args)
    want = fn(*args)
    got = run_xla(exported.text, inputs_of(exported))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        close(g, w.numpy(), f"output {i}")
    return exported


def test_every_primitive_is_exported_or_refused_with_a_reason():
    names = set(pcp._core.primitive_names())
    # every unary and binary op is registered (plan files make them again by name)
    assert set(RULES_UNARY) | set(RULES_BINARY) <= names, sorted((set(RULES_UNARY) | set(RULES_BINARY)) - names)
    assert names <= set(RULES) | set(REFUSED), sorted(names - set(RULES) - set(REFUSED))
    # the guide's statement names what has no lowering: REFUSED and dropout (whose rule refuses it)
    import os
    import re
    guide = open(os.path.join(os.path.dirname(__file__), "..", "docs", "guide.md")).read()
    stated = re.search(r"Every primitive has a lowering but ([^(]*)\(", " ".join(guide.split())).group(1)
    assert set(re.findall(r"\w+", stated)) - {"and"} == set(REFUSED) | {"dropout"}, stated


def test_elementwise_ops_and_reductions():
    check_case(*elementwise_case())


def test_sorting_searching_and_scans():
    check_case(*sorting_case())
    grad = pcp.value_and_grad(lambda y: (pcp.cumsum(y, axis=1) * pcp.sort(y, axis=0)).sum())
    check_case(lambda y: list(grad(y)), (rnd(3, 4, seed=4),))


def test_shape_ops_indexing_and_products():
    check_case(*shapes_case())


def test_nn_ops_and_their_gradients():
    exported = check_case(*nn_case())
    for op in ("attention_backward", "layer_norm_backward", "cross_entropy_backward", "softmax_backward",
               "scatter_add", "gelu_tanh_grad"):
        assert op in exported.ops


def test_fused_16bit_chains_keep_their_roundings():
    # A typed fused program (bfloat16 and float16 registers, casts inside): XLA rounds where PCP
    # does, so the results agree bit for bit.
    def f(x, h):
        a = (x.astype(pcp.bfloat16) * 3.0 + 1.0).astype(pcp.float32) * x
        b = (h * h - 0.5).astype(pcp.float32).exp()
        return [a, b, (a.astype(pcp.float16) * 0.75), a * b]

    args = (rnd(4, 6, seed=21), rnd(4, 6, seed=22).astype(pcp.float16))
    exported = pcp.export.stablehlo(f, *args)
    assert "fused_elementwise" in exported.ops and "convert" in exported.ops
    got, want = run_xla(exported.text, inputs_of(exported)), f(*args)
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.numpy()
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        np.testing.assert_array_equal(g.astype(np.float32), w.astype(np.float32), err_msg=f"output {i}")


def test_casts_and_a_residual_add_folded_into_layer_norm_and_cross_entropy():
    # Under autocast a plan writes layer norm's output and cross-entropy's gradient in bfloat16
    # and reads the bfloat16 logits as they are: the exported program keeps those types. (XLA's
    # CPU bfloat16 product rounds differently from PCP's float32 accumulation: 2e-2.)
    w = rnd(8, 6, seed=31)

    def loss(x, t):
        with pcp.autocast(dtype=pcp.bfloat16):
            return pcp.cross_entropy(pcp.layer_norm(x * 2.0) @ w, t)

    vg = pcp.value_and_grad(loss)
    args = (rnd(10, 8, seed=32), pcp.tensor(np.random.default_rng(33).integers(0, 6, 10)))
    exported = pcp.export.stablehlo(lambda x, t: list(vg(x, t)), *args)
    assert exported.ops.count("astype") == 1, exported.ops  # the weight's
    got, want = run_xla(exported.text, inputs_of(exported)), vg(*args)
    for i, (g, w_) in enumerate(zip(got, want)):
        close(g, w_.numpy(), f"output {i}", rtol=2e-2)

    w8 = rnd(8, 8, seed=35)

    def residual(x):  # a residual add folded into the layer norm after it: a fourth output, the sum
        h = x + pcp.layer_norm(x) @ w8
        return [pcp.layer_norm(h) * 2.0, h * 3.0]

    args = (rnd(5, 8, seed=34),)
    exported = pcp.export.stablehlo(residual, *args)
    assert "add" not in exported.ops, exported.ops
    got, want = run_xla(exported.text, inputs_of(exported)), residual(*args)
    for i, (g, w_) in enumerate(zip(got, want)):
        close(g, w_.numpy(), f"residual output {i}")


def _state(tensors, optimizers):
    """{hash: value now} of the tensors and the optimizers' state."""
    held = list(tensors) + [t for o in optimizers for s in o.state.values() for t in s.values() if isinstance(t, pcp.Tensor)]
    return {hash(t): t.numpy().copy() for t in held}


def check_step(exported, before, outputs, rtol=1e-5):
    """The exported step run from the state `before` the trace's own (eager) step equals it:
    outputs, every updated captured tensor and every .grad left."""
    got = run_xla(exported.text, inputs_of(exported, before))
    captured = [a.tensor for a in exported.arguments if a.role == "captured"]
    for r, g in zip(exported.results, got):
        want = outputs[r.index] if r.role == "output" else captured[r.index] if r.role == "updated" else captured[r.index].grad
        close(g, np.asarray(want.numpy() if hasattr(want, "numpy") else want), f"{r.role} {r.index}", rtol)
    return got


def test_optimizer_steps_and_clipping():
    step, args, params, opts = optimizers_case()
    step(*args)  # the optimizers' state exists and has a history
    before, outputs = _state(params, opts), []
    exported = pcp.export.stablehlo(lambda x: outputs.extend(step(x)) or outputs[-2:], *args)
    check_step(exported, before, outputs)
    assert {"adam_step", "sgd_step", "clip_grad_norm"} <= set(exported.ops)
    assert [a.index for a in exported.arguments if a.role == "scalar"] == ["adam_step.step", "adam_step.lr",
                                                                             "sgd_step.first_step", "sgd_step.lr"]
    assert sum(r.role == "updated" for r in exported.results) == 2 * 3 + 2 * 2  # params, m, v; params, momentum


def test_gpt2_loss_and_gradients():
    model, (x, y) = gpt(bias=True)
    params = model.parameters()

    def loss_and_grads(x, y):
        loss = model(x, y)[1]
        return [loss, *pcp._core.autograd_grad(loss, params, create_graph=False)]

    exported = pcp.export.stablehlo(loss_and_grads, x, y)
    loss, *grads = loss_and_grads(x, y)
    got = run_xla(exported.text, inputs_of(exported))
    close(got[0], loss.numpy(), "loss")
    for i, (g, w) in enumerate(zip(got[1:], grads)):
        close(g, w.numpy(), f"gradient {i}")


def test_a_whole_adamw_training_step():
    # No biases: the attention's key bias has a gradient of pure rounding noise (softmax ignores
    # a constant shift), which Adam's normalised update turns into differences of order lr.
    model, (x, y) = gpt(bias=False)
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    outputs = []
    train = _training_step(model, opt)  # forward, backward, clipping, AdamW

    def step(x, y):
        outputs.append(train(x, y))
        return outputs[-1]

    step(x, y)
    before = _state(model.parameters(), [opt])
    exported = pcp.export.stablehlo(step, x, y)
    check_step(exported, before, outputs[-1:])
    n = len(model.parameters())
    roles = [r.role for r in exported.results]
    assert roles.count("updated") == 3 * n and roles.count("grad") == n  # parameters, m, v; and .grad


@pytest.mark.skipif(not GPU, reason="only a GPU plan batches casts (cast_multi)")
def test_batched_casts_keep_their_roundings():
    fn, args = batched_casts_case()
    exported = pcp.export.stablehlo(fn, *args)
    assert exported.ops == ["permute", "cast_multi"], exported.ops
    for i, (g, w) in enumerate(zip(run_xla(exported.text, inputs_of(exported)), fn(*args))):
        np.testing.assert_array_equal(g.astype(np.float32), w.astype(pcp.float32).numpy(), err_msg=f"output {i}")


@pytest.mark.skipif(not GPU, reason="only a GPU plan batches layer norm sums (sum_rows_multi)")
def test_batched_layer_norm_sums():
    fn, args = batched_norm_sums_case()
    exported = pcp.export.stablehlo(fn, *args)
    assert "sum_rows_multi" in exported.ops, exported.ops
    for i, (g, w) in enumerate(zip(run_xla(exported.text, inputs_of(exported)), fn(*args))):
        close(g, w.numpy(), f"output {i}")


@pytest.mark.skipif(not GPU, reason="only GPU logits keep the uploaded targets for their gradient")
def test_cross_entropy_keeps_its_uploaded_targets_for_the_gradient():
    # On a GPU the forward's uploaded targets (ignored ones -1) are a fourth output, which the
    # gradient reads with ignore_index -1: the exported program computes the same.
    vg = pcp.value_and_grad(lambda x, t: pcp.cross_entropy(x, t))
    t = np.random.default_rng(5).integers(0, 7, 6)
    t[1] = -100
    args = (rnd(6, 7, seed=51).to("gpu"), pcp.tensor(t))
    fn = lambda x, t: list(vg(x, t))
    exported = pcp.export.stablehlo(fn, *args)
    assert "cross_entropy_backward" in exported.ops
    for i, (g, w) in enumerate(zip(run_xla(exported.text, inputs_of(exported)), fn(*args))):
        close(g, w.numpy(), f"output {i}")


def test_numpy_examples_become_arguments_and_an_empty_export_raises():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    exported = pcp.export.stablehlo(lambda t: t * 2.0, x)  # converted as an eager call converts it
    assert (exported.arguments[0].role, exported.arguments[0].shape) == ("argument", (3, 4))
    inputs = inputs_of(exported)
    inputs[0] = x + 1.0  # new data through the argument, not a constant baked in
    close(run_xla(exported.text, inputs)[0], (x + 1.0) * 2.0, "doubled")
    for fn in (lambda t: 3.0, lambda t: None):
        with pytest.raises(ExportError, match="returned no tensor"):
            pcp.export.stablehlo(fn, pcp.ones(2))


def test_dropout_is_refused_naming_it():
    with pytest.raises(ExportError, match="dropout"):
        pcp.export.stablehlo(lambda x: pcp.dropout(x, 0.5) * 2.0, rnd(4, 4))
    with pytest.raises(ExportError, match="dropout"):
        pcp.export.stablehlo(lambda x: pcp.qkv_attention(x, 2, dropout_p=0.1), rnd(2, 3, 12))
    with pytest.raises(TypeError, match="expected a callable"):
        pcp.export.stablehlo(3, rnd(2))


def test_the_cases_reach_every_rule():
    """Each rule runs in some case above (to_device needs a second device)."""
    seen = set()
    for case in (elementwise_case, shapes_case, nn_case, sorting_case):
        fn, args = case()
        seen |= set(pcp.export.stablehlo(fn, *args).ops)
    step, args, params, opts = optimizers_case()
    step(*args)
    seen |= set(pcp.export.stablehlo(step, *args).ops)
    model, batch = gpt(bias=False)
    seen |= set(pcp.export.stablehlo(lambda x, y: model(x, y)[1], *batch).ops)
    if GPU:
        for case in (batched_casts_case, batched_norm_sums_case):
            fn, args = case()
            seen |= set(pcp.export.stablehlo(fn, *args).ops)
    else:
        seen |= {"cast_multi", "sum_rows_multi"}  # made by GPU plans only
    missing = set(RULES) - seen - {"to_device", "adamw_step", "copy", "alias", "dropout", "gelu_grad", "log_softmax_backward"}
    assert not missing, sorted(missing)


def _idioms():
    """The usual ways to pick each row's target: take_along_axis, a one-hot product and advanced
    indexing with arange, as functions of (logits, targets)."""
    return {
        "take_along_axis": lambda x, y: pcp.take_along_axis(x, pcp.reshape(y, (-1, 1)), axis=1).sum(),
        "one_hot": lambda x, y: (pcp.one_hot(y, x.shape[1]) * x).sum(),
        "x[arange(n), y]": lambda x, y: x[pcp.arange(x.shape[0]), y].sum(),
        "negative targets": lambda x, y: x[pcp.arange(x.shape[0]), y - x.shape[1]].sum(),
    }


@pytest.mark.parametrize("name", list(_idioms()))
def test_target_picking_idioms_compile_and_export_without_host_reads(name):
    """Each idiom compiles and exports; replayed on new targets, the plan and the XLA module
    give eager's loss and gradient; the plan still refuses a target out of range on every call."""
    fn = _idioms()[name]
    loss_and_grad = pcp.value_and_grad(fn)
    x, y = rnd(4, 5, seed=30), pcp.tensor([1, 0, 4, 2])
    step = pcp.compile(loss_and_grad)
    step(x, y)
    exported = pcp.export.stablehlo(loss_and_grad, x, y)
    x2, y2 = rnd(4, 5, seed=31), pcp.tensor([3, 3, 0, 1])
    want = [t.numpy() for t in loss_and_grad(x2, y2)]
    for got, w in zip(step(x2, y2), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-6, atol=1e-6, err_msg=name)
    # the two arguments only: the aranges and numbers the function made are embedded
    assert [(a.role, a.index) for a in exported.arguments] == [("argument", 0), ("argument", 1)], exported.signature()
    for i, (got, w) in enumerate(zip(run_xla(exported.text, [x2.numpy(), y2.numpy()]), want)):
        close(got, w, f"{name}: output {i}")
    with pytest.raises(IndexError, match="out of bounds"):
        step(x2, pcp.tensor([3, 3, 10, 1]))


def test_cumprod_gradient_exports_with_zeros_in_its_input():
    """cumulative_prod_backward's lowering (no division) against eager on data with zeros, along
    both axes, through XLA on new inputs."""
    for axis in (0, 1):
        grad = pcp.grad(lambda a, axis=axis: (pcp.cumprod(a, axis=axis) * pcp.arange(12.0).reshape((3, 4))).sum())
        exported = pcp.export.stablehlo(grad, rnd(3, 4, seed=32))
        assert "cumulative_prod_backward" in exported.ops
        x = rnd(3, 4, seed=33).numpy()
        x[1, 1] = x[2, 3] = 0.0
        close(run_xla(exported.text, [x] + inputs_of(exported)[1:])[0], grad(pcp.tensor(x)).numpy(), f"axis {axis}")


def test_constants_the_function_makes_are_embedded_exactly():
    """Constants of every dtype the function makes (bool, 16-bit floats, int32, float64, a
    number) are embedded with their exact bits; one over CONSTANT_LIMIT elements is passed as an
    argument of role "constant"; the signature lists each with its origin."""
    from pcp.export import CONSTANT_LIMIT
    w = rnd(3, seed=40)  # read from outside: captured

    def f(x):
        mask = pcp.arange(3) % 2 == 0
        third, seventh = (pcp.arange(3.0) / 3.0).astype(pcp.bfloat16), (pcp.arange(3.0) / 7.0).astype(pcp.float16)
        low = (x.astype(pcp.bfloat16) * third).astype(pcp.float32) + (x.astype(pcp.float16) * seventh).astype(pcp.float32)
        big = pcp.arange(float(CONSTANT_LIMIT + 1), dtype=pcp.float64)
        return pcp.where(mask, x * 0.1, x + low + pcp.arange(3, dtype=pcp.int32)) * w, (big * x.sum().astype(pcp.float64)).sum()

    x = rnd(3, seed=41)
    exported = pcp.export.stablehlo(f, x)
    roles = [a.role for a in exported.arguments]
    assert roles == ["argument", "captured", "constant"], exported.signature()
    assert exported.constants and all(c.role == "embedded" for c in exported.constants)
    assert "constant 0" not in exported.signature() and "captured" in exported.signature()
    x2 = rnd(3, seed=42)
    got = run_xla(exported.text, [x2.numpy()] + [a.tensor.numpy() for a in exported.arguments[1:]])
    for i, (g, want) in enumerate(zip(got, f(x2))):
        close(g, want.numpy(), f"output {i}", rtol=1e-7)


def test_optimizer_state_a_first_step_makes_stays_an_argument():
    """AdamW's moments, made by the traced first step and updated by it, are state the caller
    passes back in (role "constant", and an "updated" result each), never embedded."""
    w = rnd(4, 3, seed=43)
    w.requires_grad = True
    opt = pcp.optim.AdamW([w], lr=0.01)

    def step(x):
        loss = (x @ w).square().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    exported = pcp.export.stablehlo(step, rnd(2, 4, seed=44))
    moments = [a for a in exported.arguments if a.role == "constant"]
    assert len(moments) == 2 and all(a.shape == (4, 3) for a in moments), exported.signature()
    updated = {r.index for r in exported.results if r.role == "updated"}
    assert {a.index for a in moments} <= updated
