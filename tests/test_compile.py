"""pcp.compile: plans traced once per signature and replayed, checked against eager runs."""
import re

import numpy as np
import pytest

import pcp
from pcp import _core
from conftest import on_each_device

# Command lists are how a Vulkan GPU replays a plan; the CUDA runtime records none yet (CUDA
# graphs would), and replays node by node.
NO_LISTS = any(name.startswith("cuda:") for name in pcp.devices())

pytestmark = on_each_device


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_replay_computes_with_the_new_arguments():
    w = pcp.tensor(rnd(5, 3, seed=1))

    def f(x, b):
        h = pcp.nn.functional.gelu(x @ w + b) if hasattr(pcp.nn, "functional") else (x @ w + b).relu()
        return pcp.softmax(h * 0.5, axis=-1).sum(axis=0), (h.exp() - 1.0).mean()

    cf = pcp.compile(f)
    for seed in range(3):  # the first call traces, the others replay
        x, b = pcp.tensor(rnd(4, 5, seed=10 + seed)), pcp.tensor(rnd(3, seed=20 + seed))
        got, want = cf(x, b), f(x, b)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6, atol=1e-7)
    assert len(cf.cache_info()) == 1 and cf.cache_info()[0].calls == 3


def test_a_host_scalar_argument_is_read_at_each_call(device):
    # A 0-d CPU tensor multiplying a device tensor moves to the device at each replay (eager code
    # takes such scalars from a cache of device copies; a trace must not bake one in).
    f = lambda x, s: (x * s).sum()  # noqa: E731
    x = pcp.tensor(rnd(3, 4, seed=2))
    f(x, pcp.tensor(np.float32(2.0), device="cpu"))  # eager: 2.0 is in the cache
    cf = pcp.compile(f)
    for v in (2.0, -0.5, 3.25):
        got = float(cf(x, pcp.tensor(np.float32(v), device="cpu")))
        np.testing.assert_allclose(got, v * float(rnd(3, 4, seed=2).sum()), rtol=1e-5)
    assert cf.cache_info()[0].calls == 3


def test_cache_info_counts_nodes_and_gpu_dispatches(device):
    # .dispatches: the GPU commands of the last run, as the GPU's own timestamps count them.
    w = pcp.tensor(rnd(6, 4, seed=1))
    cf = pcp.compile(lambda x: (pcp.gelu(x @ w) * 2.0 + 1.0).sum(axis=0))
    x = pcp.tensor(rnd(5, 6, seed=2))
    cf(x)
    entry = cf.cache_info()[0]
    assert entry.dispatches is None and entry.nodes == entry.plan.num_nodes  # not run yet (traced eagerly)
    if device == "cpu":
        cf(x)
        assert entry.dispatches is None and "GPU dispatches" not in repr(entry)
        return
    pcp.synchronize(device)
    assert _core.set_gpu_profiling(True, device)
    cf(x)
    pcp.synchronize(device)
    _core.set_gpu_profiling(False, device)
    profiled = sum(n for name, n, _ in _core.gpu_profile_results(device) if name != "command list")
    assert entry.dispatches == profiled >= entry.nodes - 1, (entry.dispatches, profiled, entry.plan.ops)
    assert f"{entry.dispatches} GPU dispatches per run" in repr(entry)


def test_a_new_signature_traces_again_and_says_why():
    cf = pcp.compile(lambda x, scale: (x * scale).sum(axis=0))
    cf(pcp.ones((2, 3)), 2.0)
    cf(pcp.ones((2, 3)), 2.0)
    out = cf(pcp.ones((4, 3)), 2.0)
    np.testing.assert_allclose(out.numpy(), np.full(3, 8.0))
    out = cf(pcp.ones((4, 3)), 3.0)  # a Python scalar is part of the signature
    np.testing.assert_allclose(out.numpy(), np.full(3, 12.0))
    reasons = [e.reason for e in cf.cache_info()]
    assert reasons[0] == "first call"
    assert reasons[1].startswith("argument 0: Tensor(2, 3)") and "Tensor(4, 3)" in reasons[1]
    assert reasons[2] == "argument 1: 2.0 -> 3.0"
    assert [e.calls for e in cf.cache_info()] == [2, 1, 1]


def test_nested_structures_in_and_out():
    def f(inputs, k):
        a, b = inputs["a"], inputs["pair"][1]
        return {"sum": a + b, "parts": [a * k, b - k], "k": k}

    cf = pcp.compile(f)
    for seed in range(2):
        inputs = {"a": pcp.tensor(rnd(3, seed=seed)), "pair": (pcp.ones(3), pcp.tensor(rnd(3, seed=5 + seed)))}
        got, want = cf(inputs, 2.0), f(inputs, 2.0)
        assert got["k"] == 2.0 and isinstance(got["parts"], list)
        np.testing.assert_allclose(got["sum"].numpy(), want["sum"].numpy())
        np.testing.assert_allclose(got["parts"][1].numpy(), want["parts"][1].numpy())


def test_the_same_tensor_twice_is_part_of_the_signature():
    cf = pcp.compile(lambda a, b: a * 2.0 + b)
    x = pcp.ones(3)
    np.testing.assert_allclose(cf(x, x).numpy(), [3.0] * 3)
    np.testing.assert_allclose(cf(x, pcp.zeros(3)).numpy(), [2.0] * 3)  # distinct tensors: traced again
    assert len(cf.cache_info()) == 2


def test_captured_tensors_are_read_by_reference():
    # A parameter the function reads (not an argument) is read when the plan runs: an in-place
    # update between calls (an optimizer step outside the compiled function) is seen.
    w = pcp.tensor(rnd(3, seed=3))
    cf = pcp.compile(lambda x: (x * w).sum())
    x = pcp.ones(3)
    first = cf(x).item()
    w[:] = w * 2.0
    np.testing.assert_allclose(cf(x).item(), 2 * first, rtol=1e-6)


def test_value_and_grad_compiles_into_one_plan():
    def loss(w, x):
        return ((x @ w).tanh() ** 2).mean()

    vg = pcp.value_and_grad(loss)
    cvg = pcp.compile(vg)
    w = pcp.tensor(rnd(4, 2, seed=1))
    for seed in range(3):
        x = pcp.tensor(rnd(6, 4, seed=30 + seed))
        (v, g), (ev, eg) = cvg(w, x), vg(w, x)
        np.testing.assert_allclose(v.item(), ev.item(), rtol=1e-6)
        np.testing.assert_allclose(g.numpy(), eg.numpy(), rtol=1e-6, atol=1e-8)
    # the gradient by finite differences in float64
    xn, wn = rnd(6, 4, seed=32).astype(np.float64), rnd(4, 2, seed=1).astype(np.float64)
    f64 = lambda w_: np.mean(np.tanh(xn @ w_) ** 2)
    fd = np.zeros_like(wn)
    for i in np.ndindex(*wn.shape):
        d = np.zeros_like(wn)
        d[i] = 1e-6
        fd[i] = (f64(wn + d) - f64(wn - d)) / 2e-6
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-4, atol=1e-6)
    assert len(cvg.cache_info()) == 1
    ops = cvg.cache_info()[0].plan.ops
    assert "matmul" in ops and ops.count("matmul") >= 2  # the forward product and its VJP's


def _gpt(device, dropout=0.0):
    from pcp.models import GPT2, GPT2Config
    cfg = GPT2Config(vocab_size=32, n_positions=16, n_embd=32, n_layer=2, n_head=4, bias=True, dropout=dropout)
    pcp.random.seed(0)
    return GPT2(cfg), cfg


def _batch(cfg, seed, B=3, T=16):
    rng = np.random.default_rng(seed)
    return (pcp.tensor(rng.integers(0, cfg.vocab_size, (B, T)), device="cpu"),
            pcp.tensor(rng.integers(0, cfg.vocab_size, (B, T)), device="cpu"))


def test_gpt_loss_and_gradients_replay_on_new_batches(device):
    model, cfg = _gpt(device)
    params = model.parameters()

    def loss_and_grads(x, y):
        _, loss = model(x, y)
        return loss, _core.autograd_grad(loss, params, create_graph=False)

    compiled = pcp.compile(loss_and_grads)
    for seed in range(3):  # trace, then two replays on other token ids
        x, y = _batch(cfg, seed)
        (loss, grads), (eloss, egrads) = compiled(x, y), loss_and_grads(x, y)
        np.testing.assert_allclose(loss.item(), eloss.item(), rtol=1e-6)
        for g, e in zip(grads, egrads):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-7)
    assert len(compiled.cache_info()) == 1


def test_compiled_gradients_with_an_eager_optimizer_train_as_eager_does(device):
    def run(compiled):
        model, cfg = _gpt(device)
        params = model.parameters()
        opt = pcp.optim.AdamW(params, lr=1e-2)

        def loss_and_grads(x, y):
            _, loss = model(x, y)
            return loss, _core.autograd_grad(loss, params, create_graph=False)

        f = pcp.compile(loss_and_grads) if compiled else loss_and_grads
        losses = []
        for step in range(4):
            loss, grads = f(*_batch(cfg, 100 + step))
            for p, g in zip(params, grads):
                p.grad = g
            opt.step()
            losses.append(loss.item())
        return losses

    np.testing.assert_allclose(run(True), run(False), rtol=1e-6)


def test_host_reads_inside_the_trace_are_refused_with_the_op():
    for fn, what in [(lambda x: x.sum().item(), "item()"), (lambda x: x.tolist(), "tolist()"),
                     (lambda x: x.numpy(), "numpy()"), (lambda x: x * 2 if x.sum() > 0 else x, "bool()"),
                     (lambda x: float(x.sum()), "float()")]:
        with pytest.raises(ValueError, match=r"pcp\.compile: " + what.replace("(", r"\(").replace(")", r"\)")):
            pcp.compile(fn)(pcp.ones(3))
    assert not _core.is_tracing()  # the failed trace was closed


def test_dropout_draws_fresh_masks_on_each_replay_as_eager_does():
    def f(x):
        return pcp.dropout(x * 2.0, 0.5)

    cf = pcp.compile(f)
    x = pcp.ones(1000)
    pcp.random.seed(3)
    got = [cf(x).numpy() for _ in range(3)]  # a trace, then two replays
    pcp.random.seed(3)
    want = [f(x).numpy() for _ in range(3)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[1], got[2]) and set(np.unique(got[2])) == {0.0, 4.0}


def test_random_numbers_and_in_place_writes_are_refused():
    with pytest.raises(ValueError, match=r"randn draws random numbers inside the compiled function"):
        pcp.compile(lambda x: x + pcp.randn((3,)))(pcp.ones(3))

    def write(x):
        x[0] = 5.0
        return x

    with pytest.raises(ValueError, match=r"index_assign.*writes in place"):
        pcp.compile(write)(pcp.ones(3))
    w = pcp.ones(3)
    with pytest.raises(ValueError, match=r"index_assign.*did not make"):  # state the function did not make
        pcp.compile(lambda x: (w.__setitem__(0, 2.0), x * w)[1])(pcp.ones(3))
    assert not _core.is_tracing()


def test_a_bad_shape_is_reported_at_trace_time_with_the_op():
    w = pcp.ones((4, 2))
    cf = pcp.compile(lambda x: (x @ w).sum())
    with pytest.raises(ValueError, match=r"matmul: shapes \(3, 5\) and \(4, 2\)"):
        cf(pcp.ones((3, 5)))
    assert not cf.cache_info() and not _core.is_tracing()
    assert cf(pcp.ones((3, 4))).item() == 24.0


def test_a_compiled_function_inside_another_is_traced_inline():
    inner = pcp.compile(lambda x: x * 3.0)
    outer = pcp.compile(lambda x: inner(x) + 1.0)
    for v in (1.0, 2.0):
        np.testing.assert_allclose(outer(pcp.full((2,), v)).numpy(), [3 * v + 1] * 2)
    assert not inner.cache_info() and len(outer.cache_info()) == 1


def test_views_and_detached_arguments():
    def f(x):
        d = x.detach()          # another handle on the argument's memory
        return (x.T @ d[:, 1:]).sum(axis=1), x[:, ::2] * 2.0

    cf = pcp.compile(f)
    for seed in range(2):
        x = pcp.tensor(rnd(4, 4, seed=seed))
        for g, e in zip(cf(x), f(x)):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"strides"):
        cf.cache_info()[0].plan.run([pcp.tensor(rnd(4, 4)).T])


def test_plan_run_checks_its_arguments():
    cf = pcp.compile(lambda x: x + 1.0)
    cf(pcp.ones(3))
    plan = cf.cache_info()[0].plan
    plan.check()
    with pytest.raises(ValueError, match=r"plan: argument 0 is \(4,\) float32 .* traced for \(3,\) float32"):
        plan.run([pcp.ones(4)])
    with pytest.raises(ValueError, match=r"takes 1 tensor arguments, got 2"):
        plan.run([pcp.ones(3), pcp.ones(3)])


def _training_step(model, opt):
    """forward, backward, clipping and the optimizer's step, as a training loop runs them."""
    def step(x, y):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        pcp.optim.clip_grad_norm(model.parameters(), 0.5)
        opt.step()
        return loss
    return step


def _train(device, compiled, optimizer="adamw", steps=5, command_lists=False):
    """Losses and final parameters of a few GPT training steps (forward with dropout, backward,
    clip, step, a learning rate changed before each step, as a schedule does), the whole step
    compiled or not."""
    model, cfg = _gpt(device, dropout=0.1)
    if optimizer == "adamw":
        opt = pcp.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    else:
        opt = pcp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    step = _training_step(model, opt)
    f = pcp.compile(step, command_lists=command_lists) if compiled else step
    losses = []
    for i in range(steps):
        opt.param_groups[0]["lr"] *= 0.9
        losses.append(f(*_batch(cfg, 200 + i)).item())
    return losses, [p.numpy() for p in model.parameters()], opt, f


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_a_whole_training_step_compiles_into_one_plan(device, optimizer):
    losses, params, opt, f = _train(device, True, optimizer, command_lists=True)
    e_losses, e_params, e_opt, _ = _train(device, False, optimizer)
    np.testing.assert_allclose(losses, e_losses, rtol=1e-6)
    for p, e in zip(params, e_params):
        np.testing.assert_allclose(p, e, rtol=1e-5, atol=1e-7)
    # the optimizer's own state kept pace: its step counts, and each parameter's
    assert opt.step_count == e_opt.step_count == 5
    sd, esd = opt.state_dict(), e_opt.state_dict()
    for i in sd["state"]:
        for k, v in sd["state"][i].items():
            if isinstance(v, int):
                assert v == esd["state"][i][k]
            else:
                np.testing.assert_allclose(v.numpy(), esd["state"][i][k].numpy(), rtol=1e-5, atol=1e-7)
    (entry,) = f.cache_info()
    assert entry.calls == 5
    if device != "cpu" and NO_LISTS:
        assert entry.plan.replay_mode.startswith("node by node ("), entry.plan.replay_mode
    elif device != "cpu":  # the optimizer step (step count, learning rate) and dropout run live
        assert re.fullmatch(r"\d+ command lists? \(\d+ nodes\), [1-9]\d* live nodes?", entry.plan.replay_mode)
    ops = entry.plan.ops
    assert ("adamw_step" if optimizer == "adamw" else "sgd_step") in ops and "clip_grad_norm" in ops
    assert all(p.grad is not None for p in e_opt.param_groups[0]["params"])


def test_a_gpu_plan_records_command_lists_once_and_hands_out_its_own_results(device):
    if device == "cpu":
        pytest.skip("command lists are how a GPU replays")
    if NO_LISTS:
        pytest.skip("the CUDA runtime records no command lists")
    w = pcp.tensor(rnd(8, 4), device=device)

    def f(x):
        y = (x @ w).relu() * 2.0
        return y, y.sum(), x

    xs = [pcp.tensor(rnd(3, 8, seed=s), device=device) for s in range(4)]
    compiled = pcp.compile(f, command_lists=True)
    outs = [compiled(x) for x in xs[:3]]
    w[...] = pcp.tensor(rnd(8, 4, seed=9), device=device)  # read where it lives, as it is now
    outs.append(compiled(xs[3]))
    assert compiled.cache_info()[0].plan.replay_mode == "1 command list (3 nodes), 0 live nodes"
    # Each call's results are its own: later replays, which rewrite the lists' buffers, left them.
    for i, (x, (y, total, same_x)) in enumerate(zip(xs, outs)):
        want = np.maximum(x.numpy() @ (rnd(8, 4) if i < 3 else rnd(8, 4, seed=9)), 0) * 2.0
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(total.item(), want.sum(), rtol=1e-5)
        assert same_x is x or np.array_equal(same_x.numpy(), x.numpy())
    by_node = pcp.compile(f)
    for x, (y, _, _) in zip(xs[2:], outs[2:]):
        np.testing.assert_array_equal(by_node(x)[0].numpy(), f(x)[0].numpy())
    assert by_node.cache_info()[0].plan.replay_mode == "node by node (command lists not asked for)"


def test_gradients_left_on_parameters_are_the_replayed_ones(device):
    model, cfg = _gpt(device)
    params = model.parameters()

    def grads_of(x, y):
        for p in params:
            p.grad = None
        _, loss = model(x, y)
        loss.backward()
        return loss

    f = pcp.compile(grads_of)
    for seed in range(3):
        x, y = _batch(cfg, 300 + seed)
        f(x, y)
        got = [p.grad.numpy() for p in params]
        grads_of(x, y)
        for g, p in zip(got, params):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_accumulating_into_an_old_gradient_is_refused():
    w = pcp.ones(3).requires_grad_()
    w.grad = pcp.ones(3)
    with pytest.raises(ValueError, match=r"added to the \.grad a tensor .*zero_grad"):
        pcp.compile(lambda x: (x * w).sum().backward())(pcp.ones(3))


_CHILD = """
import json, sys
import numpy as np
import pcp
plan = pcp.load_plan(sys.argv[1])
data = np.load(sys.argv[2])
pcp.random.set_rng_state(int(data["seed"]), int(data["offset"]))
losses = [plan(pcp.tensor(data[f"x{i}"]), pcp.tensor(data[f"y{i}"])).item() for i in range(3)]
print(json.dumps(losses))
"""


def test_a_saved_training_step_runs_in_a_fresh_process_as_the_original(device, tmp_path):
    import json
    import subprocess
    import sys
    model, cfg = _gpt(device, dropout=0.1)
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)

    step = pcp.compile(_training_step(model, opt))

    for i in range(2):  # traced, then replayed once
        step(*_batch(cfg, 400 + i))
    path = tmp_path / "step.pcpplan"
    step.save(str(path))
    seed, offset = pcp.random.get_rng_state()
    batches = [_batch(cfg, 410 + i) for i in range(3)]
    np.savez(tmp_path / "batches.npz", seed=seed, offset=offset,
             **{f"x{i}": b[0].numpy() for i, b in enumerate(batches)}, **{f"y{i}": b[1].numpy() for i, b in enumerate(batches)})
    want = [step(*b).item() for b in batches]  # the original goes on from the saved state
    r = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(tmp_path / "batches.npz")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(json.loads(r.stdout), want, rtol=1e-6)


def test_a_damaged_or_foreign_plan_file_is_refused(tmp_path):
    from pcp.serialization import save_safetensors
    f = pcp.compile(lambda x: x + 1.0)
    f(pcp.ones(2))
    path = str(tmp_path / "p.pcpplan")
    f.save(path)
    plan = pcp.load_plan(path)
    np.testing.assert_allclose(plan(pcp.zeros(2)).numpy(), [1.0, 1.0])
    with pytest.raises(ValueError, match="not a PCP plan file"):
        save_safetensors({"w": pcp.ones(2)}, path)
        pcp.load_plan(path)
    with pytest.raises(ValueError, match="malformed graph"):
        save_safetensors({}, path, metadata={"format": "pcp-plan", "version": "1", "graph": "{}"})
        pcp.load_plan(path)
    with pytest.raises(ValueError, match="version 9 plan file"):
        save_safetensors({}, path, metadata={"format": "pcp-plan", "version": "9", "graph": "{}"})
        pcp.load_plan(path)


def test_a_plan_file_whose_graph_does_not_fit_is_refused_before_it_runs(tmp_path):
    import json
    from pcp.serialization import load_safetensors, save_safetensors
    f = pcp.compile(lambda x: (x * 2.0).sum(axis=0))
    f(pcp.ones((3, 2)))
    path = str(tmp_path / "p.pcpplan")
    f.save(path)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    out = graph["outputs"][0]
    graph["values"][out][0] = [5]  # the sum's result recorded as 5 wide
    save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(graph)))
    with pytest.raises(ValueError, match=r"plan: node \d+ \(sum\) infers \(2,\) float32 .* records \(5,\) float32"):
        pcp.load_plan(path)
    graph["values"][out][0] = [2]
    graph["nodes"][-1]["inputs"] = []  # a sum of nothing: refused before infer() could read past it
    save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(graph)))
    with pytest.raises(ValueError, match="sum cannot take 0 inputs"):
        pcp.load_plan(path)
    graph["nodes"][-1]["inputs"] = [graph["args"][0]]
    graph["nodes"][-1]["op"] = "frobnicate"
    save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(graph)))
    with pytest.raises(ValueError, match="no primitive is called 'frobnicate'"):
        pcp.load_plan(path)


def test_every_elementwise_op_replays_on_new_values(device):
    """An op that computed outside a primitive would be frozen into the plan as a constant
    (logical_not once was): each op's replay on new values must equal its eager result."""
    from test_ops_elementwise import UNARY
    ops = {name: f for name, (f, _, _) in UNARY.items()}
    ops.update({"logical_not": lambda x: pcp.logical_not(x > 0), "bitwise_not": lambda x: ~(x > 0.5),
                "logical_and": lambda x: pcp.logical_and(x > 0, x < 1), "logical_or": lambda x: pcp.logical_or(x > 1, x < 0),
                "logical_xor": lambda x: pcp.logical_xor(x > 0, x < 1), "int_not": lambda x: ~x.astype(pcp.int32),
                "where": lambda x: pcp.where(x > 0, x, -x), "clip": lambda x: pcp.clip(x, -0.5, 0.5)})
    if device != "cpu":
        del ops["int_not"]  # GPUs have no integer bitwise_not (float32 kernels only)
    for name, op in ops.items():
        f = pcp.compile(op)
        f(pcp.tensor(rnd(5, seed=1), device=device))  # traced
        x = pcp.tensor(np.abs(rnd(5, seed=2)) + 0.1, device=device)
        np.testing.assert_allclose(f(x).numpy(), op(x).numpy(), rtol=1e-6, err_msg=name)


def _peak_bytes(device, f, *args):
    """The most memory f(*args) holds on the device beyond what was held before the call."""
    dev = "cpu" if device == "cpu" else "gpu"
    pcp.synchronize()
    pcp.reset_peak_memory_stats(dev)
    base = pcp.memory_stats(dev)["active_bytes"]
    f(*args)
    pcp.synchronize()
    return pcp.memory_stats(dev)["peak_bytes"] - base


def test_the_plan_reports_its_peak_memory_and_runs_within_it(device):
    # A chain of three 1 MiB values: each is freed after its last reader, so two are alive at once.
    f = pcp.compile(lambda x: pcp.softmax(pcp.softmax(pcp.softmax(x, -1), -1), -1).sum())
    x = pcp.ones((256, 1024), device=device)
    f(x)
    mem = f.cache_info()[0].plan.memory()
    assert mem["peak_bytes"] == 2 << 20 and mem["allocated_bytes"] == (3 << 20) + 4
    assert _peak_bytes(device, f, x) == mem["peak_bytes"]
    # A GPT training step: the allocator serves the planned peak (plus kernels' scratch).
    model, cfg = _gpt(device)
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-3)
    step = pcp.compile(_training_step(model, opt))
    batch = _batch(cfg, 0)
    step(*batch)
    step(*batch)
    mem = step.cache_info()[0].plan.memory()
    assert mem["allocated_bytes"] > 2 * mem["peak_bytes"]  # memory is reused
    assert mem["peak_bytes"] <= _peak_bytes(device, step, *batch) <= 1.1 * mem["peak_bytes"]


def test_command_lists_keep_their_buffers_and_later_runs_allocate_only_what_they_hand_out(device):
    if device == "cpu":
        pytest.skip("command lists are how a GPU replays")
    if NO_LISTS:
        pytest.skip("the CUDA runtime records no command lists")
    f = pcp.compile(lambda x: pcp.softmax(pcp.softmax(pcp.softmax(x, -1), -1), -1).sum(), command_lists=True)
    x = pcp.ones((256, 1024), device=device)
    f(x)
    peak = f.cache_info()[0].plan.memory()["peak_bytes"]
    # The first replay records the lists, which read the argument from a copy of their own and
    # keep their buffers; later ones allocate only the copy of the output they return.
    assert peak + (1 << 20) <= _peak_bytes(device, f, x) <= peak + (1 << 20) + 1024
    assert _peak_bytes(device, f, x) <= 1024
    # A training step: the lists keep the planned peak and what reusing buffers only of equal
    # size wastes; later steps allocate only the gradients they hand out.
    model, cfg = _gpt(device)
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-3)
    step = pcp.compile(_training_step(model, opt), command_lists=True)
    batch = _batch(cfg, 0)
    step(*batch)
    peak = step.cache_info()[0].plan.memory()["peak_bytes"]
    grad_bytes = sum(p.size * 4 for p in model.parameters())
    pcp.synchronize()
    before = pcp.memory_stats("gpu")["active_bytes"]
    step(*batch)
    pcp.synchronize()
    kept = pcp.memory_stats("gpu")["active_bytes"] - before - grad_bytes
    assert peak <= kept <= 1.5 * peak
    assert _peak_bytes(device, step, *batch) <= grad_bytes + 1024


def test_tracing_holds_no_more_memory_than_the_eager_step(device):
    """The trace keeps no value alive that the eager code would free (only what may fold into
    a constant), so the first, traced call fits wherever an eager step fits."""
    model, cfg = _gpt(device)
    opt = pcp.optim.AdamW(model.parameters(), lr=1e-3)
    step = _training_step(model, opt)
    batch = _batch(cfg, 0)
    step(*batch)  # the optimizer's state exists
    eager = _peak_bytes(device, step, *batch)
    traced = _peak_bytes(device, pcp.compile(step), *batch)
    assert traced <= 1.05 * eager, (traced, eager)


_MUTATE = r'''
import json, random, sys
import numpy as np
import pcp
from pcp.serialization import load_safetensors, save_safetensors
from pcp.models import GPT2, GPT2Config

cfg = GPT2Config(vocab_size=32, n_positions=16, n_embd=32, n_layer=1, n_head=4, bias=True, dropout=0.1)
pcp.random.seed(0)
model = GPT2(cfg)
opt = pcp.optim.AdamW(model.parameters(), lr=1e-2)
def step(x, y):
    _, loss = model(x, y); opt.zero_grad(); loss.backward(); pcp.optim.clip_grad_norm(model.parameters(), 0.5)
    opt.step()
    xf = x.astype(pcp.float32)  # and the sort family, whose attributes the loader checks too
    return [loss, pcp.searchsorted(pcp.sort(xf[0]), y[0].astype(pcp.float32)), pcp.argsort(x, axis=1),
            pcp.cumsum(xf, axis=1), pcp.cumprod(xf * 0.1, axis=0)]
f = pcp.compile(step)
rng = np.random.default_rng(0)
args = [pcp.tensor(rng.integers(0, 32, (3, 16))) for _ in range(2)]
f(*args)
base, path = sys.argv[1] + "/base.pcpplan", sys.argv[1] + "/m.pcpplan"
f.save(base)
tensors, meta = load_safetensors(base)
graph = json.loads(meta["graph"])
r = random.Random(int(sys.argv[2]))

def mutate(v):
    if isinstance(v, bool): return not v
    if isinstance(v, int): return r.choice([v + 1, v - 1, -1, 0, 2**31, -2**40, v * 7, 2**62])
    if isinstance(v, float): return r.choice([-v, 0.0, 1e30, float("nan")])
    if isinstance(v, str): return r.choice(["", "float64", "int32", "bogus", "gelu_tanh", "dgelu_tanh"])
    if isinstance(v, list):
        if not v: return [r.choice([0, 1, -1, 5])]
        w, k = list(v), r.randrange(len(v))
        kind = r.randrange(4)
        if kind == 0: w[k] = mutate(w[k])
        elif kind == 1: w.pop(k)
        elif kind == 2: w.append(w[k])
        else: r.shuffle(w)
        return w
    return v

def candidates(v):
    """Every mutation of an attribute value the systematic mode tries."""
    if isinstance(v, bool): return [not v]
    if isinstance(v, int): return [v + 1, v - 1, -1, 0, 2**31, -2**40, v * 7, 2**62]
    if isinstance(v, float): return [-v, 0.0, 1e30, float("nan")]
    if isinstance(v, str): return ["", "float64", "int32", "bogus", "gelu_tanh", "dgelu_tanh"]
    if isinstance(v, list):
        if not v: return [[0], [1], [-1], [5]]
        out = [v[:-1], v + [v[-1]], v[::-1]]
        if isinstance(v[0], int) and not isinstance(v[0], bool):
            out += [[v[0] + 1] + v[1:], [-1] + v[1:], [2**31] + v[1:]]
        return out
    return []

errors = (ValueError, TypeError, IndexError, OverflowError, MemoryError, NotImplementedError, RuntimeError, KeyError)
if sys.argv[3] == "every":  # each attribute of each primitive in the plan, every candidate value
    seen = set()
    for k, node in enumerate(graph["nodes"]):
        for key in sorted(node["attrs"]):
            if (node["op"], key) in seen:
                continue
            seen.add((node["op"], key))
            for bad in candidates(node["attrs"][key]):
                g = json.loads(json.dumps(graph))
                g["nodes"][k]["attrs"][key] = bad
                print(f"{node['op']} attribute {key} = {bad}", flush=True)
                save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(g)))
                try:
                    [out.numpy() for out in pcp.load_plan(path)(*args)]
                except errors:
                    pass
    print(f"{len(seen)} attributes", flush=True)
    print("done", flush=True)
    sys.exit(0)
for i in range(int(sys.argv[3])):
    g = json.loads(json.dumps(graph))
    node = r.choice(g["nodes"])
    roll = r.random()
    if roll < 0.15:  # a value's recorded shape, an argument's strides, a .grad effect
        part, k = r.choice([("values", r.randrange(len(g["values"]))), ("arg_strides", 0), ("grads", 0)])
        g[part][k] = mutate(g[part][k] if part != "values" else g[part][k][0])
        if part == "values":
            g[part][k] = [g[part][k], graph["values"][k][1], graph["values"][k][2]]
        what = f"{part}[{k}] = {g[part][k]}"
    elif node["attrs"] and roll < 0.8:
        key = r.choice(sorted(node["attrs"]))
        node["attrs"][key] = mutate(node["attrs"][key])
        what = f"{node['op']} attribute {key} = {node['attrs'][key]}"
    else:
        key = r.choice(["inputs", "outputs"])
        node[key] = mutate(node[key])
        what = f"{node['op']} {key} = {node[key]}"
    print(what, flush=True)
    save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(g)))
    try:
        [out.numpy() for out in pcp.load_plan(path)(*args)]
    except errors:
        pass
print("done", flush=True)
'''


def _plan_ops(step):
    """The primitives a compiled function's latest plan holds, a fused chain's ops among them."""
    from pcp.export._rules import fused_ops
    ops = set()
    for node in _core.plan_record(step.cache_info()[-1].plan)["nodes"]:
        ops.add(node["op"])
        if node["op"] == "fused_elementwise":
            ops |= set(fused_ops(node["attrs"]))
    return ops


def test_unique_is_refused_in_a_plan_rather_than_replayed(device):
    # unique's result size depends on the values: a plan would replay the example's answer
    # ([7, 9, 7] for [7, 7, 5, 9] after tracing [3, 1, 3, 2]), so tracing and export refuse it.
    x = pcp.tensor([3, 1, 3, 2], device=device)
    for make in (lambda: pcp.compile(pcp.unique)(x), lambda: pcp.export.stablehlo(pcp.unique, x)):
        with pytest.raises(ValueError, match="unique"):
            make()
    assert pcp.unique(pcp.tensor([7, 7, 5, 9], device=device)).tolist() == [5, 7, 9]


@pytest.mark.cpu_only
def test_every_primitive_has_one_record():
    """Each primitive's record (beside its class) says the input counts it takes, or checks them
    itself, and a primitive with attributes that could disagree with its inputs checks them."""
    records = {r["name"]: r for r in _core.primitives()}
    assert sorted(records) == _core.primitive_names()
    for name, r in records.items():
        assert r["inputs"] is not None or r["checked"], name  # a free count needs a check
    free = {"astype", "copy", "to_device"} | {n for n in records if records[n]["inputs"] == [1] and "_" not in n}
    free |= {"gelu_tanh", "logical_not", "bitwise_not"}  # one input, nothing to check it against
    assert {n for n, r in records.items() if not r["checked"]} <= free
    assert records["layer_norm"]["optional_inputs"] == [1, 2] and records["matmul"]["inputs"] == [2, 3]


@pytest.mark.cpu_only
def test_every_primitive_saves_loads_and_runs_as_traced(tmp_path):
    """Plans that together hold every primitive (_core.primitive_names(), less the forms only a GPU
    plan makes) save to a file, load, and compute what the traced plan computes, bit for bit."""
    from plan_cases import elementwise_case, nn_case, optimizers_case, rnd, shapes_case, sorting_case
    ws = [rnd(4, 3, seed=20)]
    ws[0].requires_grad = True
    adamw = pcp.optim.AdamW(ws, lr=0.01)

    def dropout_cumprod_adamw(x):
        loss = pcp.cumprod(pcp.dropout(x @ ws[0], 0.3) * 0.1 + 1.0, axis=0).sum()
        adamw.zero_grad()
        loss.backward()
        adamw.step()
        return loss

    cases = [elementwise_case(), shapes_case(), nn_case(), sorting_case(), optimizers_case()[:2],
             (dropout_cumprod_adamw, (rnd(5, 4, seed=21),))]
    seen = set()
    for k, (fn, args) in enumerate(cases):
        step = pcp.compile(fn)
        step(*args)  # the trace (an optimizer's first step)
        path = str(tmp_path / f"case{k}.pcpplan")
        step.save(path)
        loaded = pcp.load_plan(path)  # from the state the trace left, as the compiled step goes on
        pcp.random.seed(3)
        got = loaded(*args)
        pcp.random.seed(3)
        want = step(*args)
        got, want = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (got, want))
        assert len(got) == len(want), k
        for i, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=f"case {k}, output {i}")
        seen |= _plan_ops(step)
    # Made by GPU plans (batched casts and sums, the views of the sums, moves between devices);
    # `alias` also where a trace meets a view without its op, which these cases do not.
    gpu_only = {"cast_multi", "sum_rows_multi", "to_device", "alias"}
    missing = set(_core.primitive_names()) - seen - gpu_only
    assert not missing, f"no saved plan holds {sorted(missing)}: add them to a case"


@pytest.mark.cpu_only
def test_a_mutated_plan_file_raises_and_never_crashes(tmp_path):
    """Plan files are input from outside: attributes, inputs and outputs changed at random must
    give an exception (or a result), never a crash of the process."""
    import subprocess
    import sys
    for seed, count in ((1, "150"), (2, "150"), (0, "every")):  # "every": each attribute of each primitive
        run = subprocess.run([sys.executable, "-c", _MUTATE, str(tmp_path), str(seed), count], capture_output=True,
                             text=True, timeout=600)
        lines = run.stdout.strip().splitlines()
        assert run.returncode == 0 and lines[-1:] == ["done"], (run.returncode, lines[-2:], run.stderr[-2000:])
        if count == "every":
            assert int(lines[-2].split()[0]) >= 20, lines[-2]  # the GPT step's primitives hold that many


def test_a_plan_file_whose_kernel_would_read_a_broadcast_view_runs_it_dense(tmp_path):
    """A file may feed a stride-0 view straight to a kernel that reads rows of memory (a traced
    plan copies first): a loaded plan hands such kernels contiguous inputs."""
    import json
    from pcp.serialization import load_safetensors, save_safetensors
    f = pcp.compile(lambda x: pcp.softmax(pcp.broadcast_to(x, (1000, 4)), -1))
    x = pcp.tensor(rnd(1, 4, seed=6), device="cpu")
    want = f(x).numpy()
    path = str(tmp_path / "p.pcpplan")
    f.save(path)
    tensors, meta = load_safetensors(path)
    graph = json.loads(meta["graph"])
    view = next(n for n in graph["nodes"] if n["op"] == "broadcast_to")["outputs"][0]
    softmax = next(n for n in graph["nodes"] if n["op"] == "softmax")
    softmax["inputs"] = [view]  # past the copy the trace recorded
    save_safetensors(tensors, path, metadata=dict(meta, graph=json.dumps(graph)))
    np.testing.assert_allclose(pcp.load_plan(path)(x).numpy(), want, rtol=1e-6)


@pytest.mark.cpu_only
def test_state_a_replay_would_carry_over_is_refused_at_trace_time():
    """Two things a plan would replay differently from eager are refused while tracing: a .grad
    set on an argument (the replay's arguments are other tensors) and an optimizer made inside
    the function (eager starts it anew each call; a plan would keep its moments)."""
    def grad_on_argument(x):
        (x * x).sum().backward()
        return x.grad

    x = pcp.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="set the .grad of its argument 0"):
        pcp.compile(grad_on_argument)(x)
    w = pcp.tensor([1.0, 2.0], requires_grad=True)

    def local_optimizer(x):
        opt = pcp.optim.Adam([w], lr=0.1)
        (w * x).sum().backward()
        opt.step()
        return w

    with pytest.raises(ValueError, match="Adam: created inside a function pcp.compile traces"):
        pcp.compile(local_optimizer)(pcp.tensor([1.0, 1.0]))
    # returned instead, the gradient replays: eager's on new values
    step = pcp.compile(pcp.grad(lambda x: (x * x).sum()))
    step(pcp.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(step(pcp.tensor([3.0, -1.0])).numpy(), [6.0, -2.0])


@pytest.mark.cpu_only
def test_a_constant_may_be_read_on_the_host_but_not_state_a_step_writes():
    """Reading a value computed from constants the function made is the same on every call (it
    traces); reading optimizer state after the step wrote it would replay the first call's value
    (it is refused), as is any traced value however an op reads it."""
    step = pcp.compile(lambda x: x * pcp.arange(4.0).sum().item())
    step(pcp.ones(2))
    np.testing.assert_array_equal(step(pcp.tensor([1.0, 2.0])).numpy(), [6.0, 12.0])
    w = pcp.tensor([1.0, 2.0], requires_grad=True)
    opt = pcp.optim.Adam([w], lr=0.1)

    def train(x):
        opt.zero_grad()
        (w * x).sum().backward()
        opt.step()
        return opt.state[id(w)]["exp_avg"].max().item()

    with pytest.raises(ValueError, match="item\\(\\) of a traced tensor"):
        pcp.compile(train)(pcp.ones(2))


@pytest.mark.cpu_only
def test_numpy_arguments_are_arguments_and_a_plan_of_nothing_is_refused():
    """A NumPy argument becomes a tensor argument as an eager op converts it (held by identity it
    would replay its first values); a function with no tensor result and no effect is refused."""
    step = pcp.compile(lambda x, w: x * w)
    w1, w5 = np.ones(2, np.float32), np.full(2, 5.0, np.float32)
    np.testing.assert_array_equal(step(pcp.ones(2), w1).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(step(pcp.ones(2), w5).numpy(), [5.0, 5.0])
    w1[:] = 3.0  # the same array, new values
    np.testing.assert_array_equal(step(pcp.ones(2), w1).numpy(), [3.0, 3.0])
    assert len(step.cache_info()) == 1
    for fn in (lambda x: 3.0, lambda x: None):
        with pytest.raises(ValueError, match="returned no tensor"):
            pcp.compile(fn)(pcp.ones(2))
