"""A DiLoCo worker that trains from a plan (pcp.distributed.diloco's unit of work): the driver
traces its own model's inner step and sends the plan's bytes; the worker runs its rounds from
them and from arrays described by a data spec. References: the same inner steps run eagerly on
the same batches (the worker's sampling reproduced here), and refusals of damaged plans."""
import numpy as np
import pytest

import pcp
from pcp.distributed import DiLoCoConfig, Worker
from pcp.distributed.compression import decode
from pcp.distributed.plan_replica import PlanRefused
from pcp.distributed.worker import round_seed, shard_bounds
from pcp.optim import warmup_cosine
from pcp.train import TrainConfig

BATCH, FEATURES, HIDDEN, ROWS, VAL = 16, 4, 12, 400, 64


def mlp(seed=0):
    """A 3-layer MLP's parameters and its loss: not a GPT, and not in PCP."""
    rng = np.random.default_rng(seed)
    shapes = {"w1": (FEATURES, HIDDEN), "w2": (HIDDEN, HIDDEN), "w3": (HIDDEN, 1)}
    params = {k: pcp.tensor(rng.normal(size=s) / np.sqrt(s[0]), dtype=pcp.float32, requires_grad=True)
              for k, s in shapes.items()}

    def loss_of(x, y):
        h = pcp.tanh(x @ params["w1"])
        h = pcp.tanh(h @ params["w2"])
        return ((h @ params["w3"] - y) ** 2).mean()
    return params, loss_of


def inner_step(params, loss_of):
    opt = pcp.optim.AdamW(list(params.values()), lr=1e-2, weight_decay=0.1)

    def step(x, y):
        loss = loss_of(x, y)
        opt.zero_grad()
        loss.backward()
        pcp.optim.clip_grad_norm(list(params.values()), 1.0)
        opt.step()
        return loss
    return step, opt


def regression_data(seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(ROWS + VAL, FEATURES)).astype(np.float32)
    return {"x": x, "y": np.sin(x @ np.array([[1.0], [-2.0], [0.5], [1.5]], np.float32))}


def plans(params, loss_of):
    """The driver's side: the inner step and the evaluation, traced once each, as bytes."""
    step, _ = inner_step(params, loss_of)
    compiled = pcp.compile(step)
    example = (pcp.zeros((BATCH, FEATURES)), pcp.zeros((BATCH, 1)))
    before = {k: v.numpy().copy() for k, v in params.items()}
    compiled(*example)  # the trace runs the step once: the worker loads the global values anyway
    evaluate = pcp.compile(lambda x, y: loss_of(x, y))
    with pcp.no_grad():
        evaluate(*example)
    return compiled.to_bytes(names=params), evaluate.to_bytes(names=params), before


def spec_for(step_bytes, eval_bytes, H=6):
    cfg = TrainConfig(batch_size=BATCH, learning_rate=1e-2, min_lr=1e-3, warmup_iters=2, eval_iters=2, seed=5,
                      log_interval=1)
    return cfg, {"train_config": cfg.to_dict(), "vocab_size": 0, "n_train": ROWS, "rank": 0,
                 "diloco_config": DiLoCoConfig(workers=1, inner_steps=H, rounds=1).to_dict(),
                 "plan": {"step": step_bytes, "eval": eval_bytes, "data": {"kind": "rows", "names": ["x", "y"]},
                          "arguments": [((BATCH, FEATURES), "float32"), ((BATCH, 1), "float32")]}}


def test_a_round_from_a_plan_matches_the_eager_inner_steps():
    params, loss_of = mlp()
    step_bytes, eval_bytes, start = plans(params, loss_of)
    H = 6
    cfg, spec = spec_for(step_bytes, eval_bytes, H)
    worker = Worker(spec)
    data = regression_data()
    result = worker.run_round(0, start, inner_steps=H, first_step=0, tokens=data)
    assert result["steps"] == H and result["tokens"] == H * BATCH
    # The same steps eagerly: fresh parameters at the global values, the worker's batches.
    ref, ref_loss = mlp()
    with pcp.no_grad():
        for k in ref:
            ref[k][...] = pcp.tensor(start[k])
    step, opt = inner_step(ref, ref_loss)
    rng = np.random.default_rng(round_seed(cfg.seed, 0, 0))
    lo, hi = shard_bounds(ROWS, "iid", 0, 1)
    lr_at = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, H)
    losses = []
    for i in range(H):
        ix = rng.integers(0, hi - lo, BATCH)
        for g in opt.param_groups:
            g["lr"] = lr_at(i)
        losses.append(step(pcp.tensor(data["x"][ix]), pcp.tensor(data["y"][ix])).item())
    pseudo = decode(result["pseudo_grad"])
    for k in start:
        np.testing.assert_allclose(pseudo[k], start[k] - ref[k].numpy(), rtol=1e-4, atol=1e-6)
    assert result["train_loss"] == pytest.approx(float(np.mean(losses)), rel=1e-5)
    assert result["val_loss"] is not None and np.isfinite(result["val_loss"])
    assert worker.progress()["plan_bytes"] == len(step_bytes) and worker.progress()["plan_load_seconds"] > 0


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "other shapes"])
def test_a_worker_refuses_a_damaged_or_foreign_plan(damage):
    params, loss_of = mlp()
    step_bytes, eval_bytes, _ = plans(params, loss_of)
    data = bytearray(step_bytes)
    if damage == "flipped byte":
        data[len(data) // 2] ^= 0x01
    elif damage == "truncated":
        data = data[:-100]
    _, spec = spec_for(bytes(data), eval_bytes)
    if damage == "other shapes":
        spec["plan"]["arguments"] = [((8, FEATURES), "float32"), ((8, 1), "float32")]
    with pytest.raises(PlanRefused, match="worker 0: refused the plan it was sent"):
        Worker(spec)


def test_data_comes_from_files_as_from_arrays(tmp_path):
    """Data.rows from .npy and .safetensors files, Data.tokens from .npy and nanoGPT's .bin."""
    import os
    from pcp.distributed import Data
    from pcp.serialization import save_safetensors
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    np.save(os.path.join(tmp_path, "x.npy"), x)
    save_safetensors({"x": pcp.tensor(x[:5])}, os.path.join(tmp_path, "val.safetensors"))
    data = Data.rows({"x": os.path.join(tmp_path, "x.npy")}, os.path.join(tmp_path, "val.safetensors"))
    np.testing.assert_array_equal(data.arrays["x"], np.concatenate([x, x[:5]]))
    ids = np.arange(100) % 7
    ids.astype(np.uint16).tofile(os.path.join(tmp_path, "train.bin"))
    np.save(os.path.join(tmp_path, "val.npy"), ids[:30])
    tokens = Data.tokens(os.path.join(tmp_path, "train.bin"), os.path.join(tmp_path, "val.npy"), 8)
    np.testing.assert_array_equal(tokens.arrays, np.concatenate([ids, ids[:30]]))
    assert tokens.n_train == 100
