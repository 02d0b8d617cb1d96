"""pcp.distributed.diloco on models that are not PCP's GPT, defined where the workers cannot
import them (a module loaded from this test's temporary folder): a 3-layer MLP on a synthetic
regression and a small causal transformer written here. References: the same DiLoCo computed
eagerly in this process with the workers' batches (the plans must agree with it), and
synchronous AdamW at equal tokens (DiLoCo must come close to it)."""
import importlib.util
import os

import numpy as np
import pytest

import pcp
from pcp.distributed import Data, DiLoCoConfig, diloco
from pcp.distributed.batches import batches_of, shard_bounds
from pcp.distributed.worker import round_seed
from pcp.optim import warmup_cosine
from pcp.train import TrainConfig

ray = pytest.importorskip("ray", reason="Ray is not installed")

USER_MODULE = "diloco_user_models_xyz"  # the workers must not find it
SOURCE = '''
import numpy as np
import pcp


class RegressionMLP(pcp.nn.Module):
    """3 layers, tanh between."""

    def __init__(self, features, hidden, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        def weight(n, m):
            return pcp.tensor(rng.normal(size=(n, m)) / np.sqrt(n), dtype=pcp.float32, requires_grad=True)
        self.w1, self.w2, self.w3 = weight(features, hidden), weight(hidden, hidden), weight(hidden, 1)
        self.b1 = pcp.zeros(hidden).requires_grad_()

    def loss(self, x, y):
        h = pcp.tanh(x @ self.w1 + self.b1)
        h = pcp.tanh(h @ self.w2)
        return ((h @ self.w3 - y) ** 2).mean()


class TinyTransformer(pcp.nn.Module):
    """A one-block causal transformer over characters, written with plain ops."""

    def __init__(self, vocab, block, dim, heads, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        def weight(*shape, scale=0.02):
            return pcp.tensor(rng.normal(size=shape) * scale, dtype=pcp.float32, requires_grad=True)
        self.heads = heads
        self.wte, self.wpe = weight(vocab, dim), weight(block, dim)
        self.ln1, self.ln2 = pcp.ones(dim).requires_grad_(), pcp.ones(dim).requires_grad_()
        self.qkv, self.proj = weight(dim, 3 * dim), weight(dim, dim)
        self.fc1, self.fc2 = weight(dim, 4 * dim), weight(4 * dim, dim)
        self.head = weight(dim, vocab)

    def loss(self, x, y):
        B, T = x.shape
        C, H = self.wte.shape[1], self.heads
        h = pcp.embedding(self.wte, x) + self.wpe[:T]
        q, k, v = pcp.split(pcp.layer_norm(h, self.ln1) @ self.qkv, 3, axis=-1)
        heads = [t.reshape((B, T, H, C // H)).transpose((0, 2, 1, 3)) for t in (q, k, v)]
        a = pcp.scaled_dot_product_attention(*heads, causal=True).transpose((0, 2, 1, 3)).reshape((B, T, C))
        h = h + a @ self.proj
        h = h + pcp.gelu(pcp.layer_norm(h, self.ln2) @ self.fc1) @ self.fc2
        return pcp.cross_entropy(h @ self.head, y)
'''


def user_module(tmp_path):
    path = os.path.join(tmp_path, USER_MODULE + ".py")
    with open(path, "w") as f:
        f.write(SOURCE)
    spec = importlib.util.spec_from_file_location(USER_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def regression(seed=3, rows=2048, val=256):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows + val, 4)).astype(np.float32)
    y = np.sin(x @ np.array([[1.0], [-2.0], [0.5], [1.5]], np.float32)) + 0.05 * rng.normal(size=(rows + val, 1))
    y = y.astype(np.float32)
    return Data.rows({"x": x[:rows], "y": y[:rows]}, {"x": x[rows:], "y": y[rows:]})


def worker_batches(data, cfg, dcfg, rank, rnd):
    """The batches a worker draws in a round (worker.py's sampler, seeded as the worker seeds it)."""
    sampler = batches_of(data.spec())
    lo, hi = shard_bounds(data.n_train, dcfg.split, rank, dcfg.workers)
    train, _ = sampler.split(data.arrays, lo, hi, data.n_train)
    rng = np.random.default_rng(round_seed(cfg.seed, rank, rnd))
    return [sampler.sample(rng, train, cfg.batch_size, "cpu") for _ in range(dcfg.inner_steps)]


def train_steps(model, opt, batches, lr_of, clip):
    for i, batch in enumerate(batches):
        for g in opt.param_groups:
            g["lr"] = lr_of(i)
        out = model.loss(*batch)
        opt.zero_grad()
        out.backward()
        pcp.optim.clip_grad_norm(list(model.parameters()), clip)
        opt.step()


def eager_diloco(model, make, data, cfg, dcfg):
    """DiLoCo computed here, eagerly: each worker's AdamW (kept across rounds) on the batches the
    workers draw, the pseudo-gradients averaged, a Nesterov outer step on model."""
    from pcp.train.loop import build_optimizer
    names = [n for n, _ in model.named_parameters()]
    global_values = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    replicas = [make() for _ in range(dcfg.workers)]
    opts = [build_optimizer(cfg, r) for r in replicas]
    outer = {k: np.zeros_like(v) for k, v in global_values.items()}
    H, horizon = dcfg.inner_steps, dcfg.rounds * dcfg.inner_steps
    lr_at = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, max(horizon, cfg.warmup_iters + 1))
    for rnd in range(dcfg.rounds):
        deltas = []
        for rank, (r, opt) in enumerate(zip(replicas, opts)):
            with pcp.no_grad():
                for k, t in r.state_dict().items():
                    t[...] = pcp.tensor(global_values[k])
            train_steps(r, opt, worker_batches(data, cfg, dcfg, rank, rnd), lambda i: lr_at(rnd * H + i),
                        cfg.grad_clip)
            deltas.append({k: global_values[k] - r.state_dict()[k].numpy() for k in names})
        for k in names:
            g = np.mean([d[k] for d in deltas], axis=0)
            outer[k] = dcfg.outer_momentum * outer[k] + g
            global_values[k] = global_values[k] - dcfg.outer_lr * (g + dcfg.outer_momentum * outer[k])
    with pcp.no_grad():
        for k, t in model.state_dict().items():
            t[...] = pcp.tensor(global_values[k])
    return val_loss(model, data, cfg)


def val_loss(model, data, cfg):
    with pcp.no_grad():
        return float(np.mean([model.loss(*(pcp.tensor(a) for a in b)).item()
                              for b in data.val_batches(cfg.batch_size, cfg.eval_iters, cfg.seed)]))


def synchronous(model, data, cfg, dcfg):
    """Plain AdamW at DiLoCo's tokens: each step a batch of every worker's rows, as many steps as
    each worker took."""
    from pcp.train.loop import build_optimizer
    steps = dcfg.rounds * dcfg.inner_steps
    sampler = batches_of(data.spec())
    train, _ = sampler.split(data.arrays, 0, data.n_train, data.n_train)
    rng = np.random.default_rng(11)
    batches = [sampler.sample(rng, train, cfg.batch_size * dcfg.workers, "cpu") for _ in range(steps)]
    lr_at = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, max(steps, cfg.warmup_iters + 1))
    train_steps(model, build_optimizer(cfg, model), batches, lr_at, cfg.grad_clip)
    return val_loss(model, data, cfg)


def check_run(make, data, cfg, dcfg):
    """diloco() on make()'s model against the eager DiLoCo and synchronous AdamW."""
    model = make()
    start = val_loss(model, data, cfg)
    history = diloco(model.loss, model, data, cfg, dcfg)
    assert [r["round"] for r in history] == list(range(dcfg.rounds + 1))
    got = history[-1]["val_loss"]
    assert got == pytest.approx(val_loss(model, data, cfg), rel=1e-6)  # model holds the global values
    # The same algorithm, eagerly, with the user's code in this process (the issue asks for 2%; the
    # plans agree to float32 rounding).
    want = eager_diloco(make(), make, data, cfg, dcfg)
    assert got == pytest.approx(want, rel=1e-3), (got, want)
    sync = synchronous(make(), data, cfg, dcfg)  # within 5% (the bar)
    assert got <= sync * 1.05, (got, sync)
    return start, got


def test_diloco_trains_a_model_its_workers_cannot_import(tmp_path):
    user = user_module(tmp_path)
    cfg = TrainConfig(out=str(tmp_path / "run"), batch_size=32, learning_rate=5e-3, min_lr=5e-4, warmup_iters=5,
                      grad_clip=1.0, weight_decay=0.0, eval_iters=4, seed=7)
    dcfg = DiLoCoConfig(workers=2, inner_steps=10, rounds=20, round_timeout=120)
    start, got = check_run(lambda: user.RegressionMLP(4, 16, 0), regression(), cfg, dcfg)
    assert got < 0.6 * start, (start, got)
    # The workers never had the module: it is not importable in a Ray worker's process.
    ray.init(address="local", include_dashboard=False, num_cpus=1) if not ray.is_initialized() else None
    try:
        assert ray.get(ray.remote(lambda: importlib.util.find_spec(USER_MODULE) is None).remote(), timeout=120)
    finally:
        ray.shutdown()


def test_diloco_trains_a_small_transformer_written_here(tmp_path):
    user = user_module(tmp_path)
    rng = np.random.default_rng(0)  # a text of its own, the same wherever the test runs
    words = ["the", "king", "queen", "to", "be", "or", "not", "my", "lord", "and", "thou", "art"]
    text = "\n".join(" ".join(rng.choice(words, 8)) for _ in range(3000))[:60000]
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text], np.int64)
    block = 16
    data = Data.tokens(ids[:54000], ids[54000:], block)
    cfg = TrainConfig(out=str(tmp_path / "run"), batch_size=16, learning_rate=2e-3, min_lr=2e-4, warmup_iters=5,
                      grad_clip=1.0, weight_decay=0.1, eval_iters=4, seed=3)
    dcfg = DiLoCoConfig(workers=2, inner_steps=10, rounds=15, round_timeout=120)
    start, got = check_run(lambda: user.TinyTransformer(len(chars), block, 32, 2, 0), data, cfg, dcfg)
    assert got < 0.8 * start, (start, got)


def test_a_worker_sent_a_damaged_plan_refuses_it_and_the_run_goes_on(tmp_path, monkeypatch):
    from pcp.distributed import Shepherd
    user = user_module(tmp_path)
    original = Shepherd._plan_spec

    def damaged(self, rank):  # rank 1's copy of the plan loses a bit on its way
        spec = original(self, rank)
        if rank == 1:
            data = bytearray(ray.get(spec["step"][0]))
            data[len(data) // 2] ^= 0x04
            spec = dict(spec, step=[ray.put(bytes(data))])
        return spec
    monkeypatch.setattr(Shepherd, "_plan_spec", damaged)
    events = []
    model = user.RegressionMLP(4, 16, 0)
    cfg = TrainConfig(out=str(tmp_path / "run"), batch_size=32, learning_rate=5e-3, eval_iters=2)
    history = diloco(model.loss, model, regression(), cfg,
                     DiLoCoConfig(workers=2, inner_steps=5, rounds=3, round_timeout=120), report=events.append)
    refused = [e for e in events if e["kind"] == "worker_refused"]
    assert [e["rank"] for e in refused] == [1], events
    assert "worker 1: refused the plan it was sent" in refused[0]["error"] and ("CRC32C" in refused[0]["error"] or "SHA-256" in refused[0]["error"])
    assert [r["workers_in"] for r in history[1:]] == [[0]] * 3  # the others trained every round
    assert history[-1]["val_loss"] < history[0]["val_loss"]
    rounds = [e for e in events if e["kind"] == "round"]
    assert rounds and all(r["worker_train"] for r in rounds)


@pytest.mark.skipif(not [d for d in pcp.devices() if d != "cpu"], reason="no GPU")
def test_cpu_and_gpu_workers_run_one_plan(tmp_path):
    """A CPU worker and a GPU worker (lavapipe in CI) train from the same plan, placed on each
    one's device, to the losses of two CPU workers (float32 rounding apart); with the GPU
    worker's products in bfloat16 (a plan traced for that dtype) within bfloat16's rounding."""
    user = user_module(tmp_path)
    losses = {}
    for devices, dtypes in ((("cpu", "cpu"), ()), (("cpu", "gpu"), ()), (("cpu", "gpu"), ("float32", "bfloat16"))):
        cfg = TrainConfig(out=str(tmp_path / "-".join(devices + dtypes)), batch_size=32, learning_rate=5e-3,
                          min_lr=5e-4, warmup_iters=5, grad_clip=1.0, weight_decay=0.0, eval_iters=4, seed=7,
                          dtype="float32")
        model = user.RegressionMLP(4, 16, 0)
        history = diloco(model.loss, model, regression(), cfg,
                         DiLoCoConfig(workers=2, inner_steps=10, rounds=8, round_timeout=120,
                                      worker_devices=list(devices), worker_dtypes=list(dtypes)))
        losses[devices + dtypes] = [r["val_loss"] for r in history]
        timings = history[-1]["worker_timings"]
        ran_on = {rank: (t["device"].split(" ")[0], t["dtype"]) for rank, t in timings.items()}
        gpu = ("cpu", "float32") if devices[1] == "cpu" else (pcp.device("gpu"), dtypes[1] if dtypes else "float32")
        assert ran_on == {0: ("cpu", "float32"), 1: gpu}, ran_on
        assert all(np.isfinite(r["pseudo_grad_norm"]) for r in history[1:] if "pseudo_grad_norm" in r)
    cpu = losses[("cpu", "cpu")]
    np.testing.assert_allclose(losses[("cpu", "gpu")], cpu, rtol=1e-3)
    mixed = losses[("cpu", "gpu", "float32", "bfloat16")]
    np.testing.assert_allclose(mixed, cpu, rtol=5e-3)  # measured 1.3e-4 on lavapipe
    assert mixed != cpu  # the bfloat16 worker did round its products


def test_float16_workers_of_a_traced_model_are_refused_before_a_round(tmp_path):
    """float16 needs a GradScaler's skipped steps, which a plan cannot take: a clear refusal,
    and no Ray cluster left behind."""
    user = user_module(tmp_path)
    model = user.RegressionMLP(4, 16, 0)
    with pytest.raises(ValueError, match="float16 workers need a GradScaler"):
        diloco(model.loss, model, regression(), TrainConfig(out=str(tmp_path / "run"), batch_size=32),
               DiLoCoConfig(workers=2, inner_steps=2, rounds=1, worker_dtypes=["float32", "float16"]))
    assert not ray.is_initialized()


def mlp_shepherd(user, out, dcfg, shepherd=None, resume=False):
    """A Shepherd (or subclass) training the user's MLP as diloco() would, and the model."""
    import types
    from pcp.distributed import Shepherd
    model = user.RegressionMLP(4, 16, 0)
    task = types.SimpleNamespace(loss_fn=model.loss, model=model, data=regression())
    cfg = TrainConfig(out=str(out), batch_size=32, learning_rate=5e-3, eval_iters=2, seed=7)
    return (shepherd or Shepherd)(cfg, dcfg, resume=resume, task=task), model


def test_a_traced_run_resumes_with_the_same_bits(tmp_path):
    """Stopped after 2 of 4 rounds and resumed: the global model and the workers' inner AdamW
    states (the plans' moments, in the GPT's checkpoint format) come back, and the run ends with
    the bits of one that was not stopped."""
    user = user_module(tmp_path)
    dcfg = DiLoCoConfig(workers=2, inner_steps=5, rounds=4, round_timeout=120)

    def shepherd(out, resume=False):
        return mlp_shepherd(user, out, dcfg, resume=resume)

    whole, model = shepherd(tmp_path / "whole")
    try:
        whole.run()
    finally:
        whole.shutdown()
    want = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    first, _ = shepherd(tmp_path / "parts")
    try:
        first.run_round()
        first.run_round()
    finally:
        first.shutdown()
    second, resumed = shepherd(tmp_path / "parts", resume=True)
    try:
        assert second.round == 2 and sorted(second.inner_states) == [0, 1]
        second.run()
    finally:
        second.shutdown()
    for k, v in resumed.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), want[k], err_msg=k)


def test_a_killed_plan_worker_rejoins_with_the_plan(tmp_path):
    """A worker's process killed between rounds: Ray restarts it with its spec, it loads the plan
    again (nothing of the driver's code needed) and its inner state, and trains on."""
    import signal
    sh, _ = mlp_shepherd(user_module(tmp_path), tmp_path / "run",
                         DiLoCoConfig(workers=2, inner_steps=5, rounds=4, round_timeout=120))
    try:
        sh.run_round()
        pid = sh.worker_pid(1)
        os.kill(pid, signal.SIGKILL)
        records = [sh.run_round() for _ in range(3)]
        assert sh.worker_pid(1) != pid
    finally:
        sh.shutdown()
    assert records[-1]["workers_in"] == [0, 1], [r["workers_in"] for r in records]
    assert all(np.isfinite(r["val_loss"]) for r in records)


def test_workers_with_their_own_batch_sizes_get_plans_traced_for_them(tmp_path):
    """batch_sizes=[32, 16]: one plan per size; the outer average weighs each worker by the rows
    its steps took (weighting='tokens')."""
    user = user_module(tmp_path)
    model = user.RegressionMLP(4, 16, 0)
    cfg = TrainConfig(out=str(tmp_path / "run"), batch_size=32, learning_rate=5e-3, eval_iters=2, seed=7)
    history = diloco(model.loss, model, regression(), cfg,
                     DiLoCoConfig(workers=2, inner_steps=5, rounds=2, round_timeout=120, batch_sizes=[32, 16]))
    assert history[-1]["worker_tokens"] == {0: 5 * 32, 1: 5 * 16}
    assert history[-1]["val_loss"] < history[0]["val_loss"]


def test_a_traced_round_whose_outer_step_is_not_finite_is_rolled_back(tmp_path):
    """A NaN in round 2's pseudo-gradients: the global model, the outer momentum and the workers'
    inner states (the plans' moments) go back to where the round started, and the run goes on."""
    from pcp.distributed import Shepherd
    from pcp.distributed.worker import state_digest

    class Poisoned(Shepherd):
        def apply_outer_step(self, pseudo_grad):
            if self.round == 1:
                first = next(iter(pseudo_grad))
                pseudo_grad = dict(pseudo_grad, **{first: pseudo_grad[first] * np.nan})
            super().apply_outer_step(pseudo_grad)

    sh, _ = mlp_shepherd(user_module(tmp_path), tmp_path / "run",
                         DiLoCoConfig(workers=2, inner_steps=3, rounds=3, round_timeout=120), Poisoned)
    try:
        sh.run_round()
        after_one = {k: v.copy() for k, v in sh.global_state().items()}
        inner = {r: np.array(s["state"][0]["exp_avg"]) for r, s in sh.inner_states.items()}
        rec = sh.run_round()
        assert rec["rolled_back"].startswith("the outer step made 1 parameters non-finite")
        assert state_digest(sh.global_state()) == state_digest(after_one)
        assert all(np.array_equal(sh.inner_states[r]["state"][0]["exp_avg"], inner[r]) for r in inner)
        rec = sh.run_round()
        assert rec["rolled_back"] is None and np.isfinite(rec["val_loss"])
        assert all(r["start_digest"] == state_digest(after_one) for r in sh.last_results)
    finally:
        sh.shutdown()


def test_a_dict_of_tensors_trains_as_a_model(tmp_path):
    """The documented example: parameters as a dict, updated in place to the global values."""
    rng = np.random.default_rng(0)
    w = {"w": pcp.tensor(rng.normal(size=(3, 1)), dtype=pcp.float32, requires_grad=True)}
    answer = np.array([[1.0], [2.0], [-1.0]], np.float32)
    start = np.abs(w["w"].numpy() - answer).sum()
    x = rng.normal(size=(1000, 3)).astype(np.float32)
    y = x @ answer
    data = Data.rows({"x": x[:800], "y": y[:800]}, {"x": x[800:], "y": y[800:]})
    history = diloco(lambda a, b: ((a @ w["w"] - b) ** 2).mean(), w, data,
                     TrainConfig(out=str(tmp_path / "run"), batch_size=32, learning_rate=1e-2, eval_iters=2),
                     DiLoCoConfig(workers=2, inner_steps=20, rounds=5, round_timeout=120))
    assert history[-1]["val_loss"] < 0.5 * history[0]["val_loss"]
    assert np.abs(w["w"].numpy() - answer).sum() < 0.7 * start  # the dict holds the global values
    with pytest.raises(ValueError, match="parameter names must be non-empty and without '.'"):
        diloco(lambda a, b: a.sum(), {"layer.w": w["w"]}, data, TrainConfig(out=str(tmp_path / "bad")))
