"""Plan files as the unit that travels (DiLoCo's shepherd sends them to workers): bytes as well
as files, a SHA-256 that refuses a damaged plan, parameters addressed by name, and one plan
placed on another device. References: the same step run eagerly (float64 NumPy for the model's
arithmetic where it matters)."""
import os

import numpy as np
import pytest

import pcp
from pcp.serialization import SafetensorsError, load_safetensors, save_safetensors

GPUS = [d.split()[0] for d in pcp.devices() if d != "cpu"]


def regression_step(device="cpu", seed=0):
    """A 2-layer MLP's training step (forward, backward, clipping, AdamW) and its parameters."""
    rng = np.random.default_rng(seed)
    params = {"w1": pcp.tensor(rng.normal(size=(4, 8)) * 0.5, dtype=pcp.float32, device=device, requires_grad=True),
              "w2": pcp.tensor(rng.normal(size=(8, 1)) * 0.5, dtype=pcp.float32, device=device, requires_grad=True)}
    opt = pcp.optim.AdamW(list(params.values()), lr=0.05, weight_decay=0.01)

    def step(x, y):
        loss = ((pcp.tanh(x @ params["w1"]) @ params["w2"] - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        pcp.optim.clip_grad_norm(list(params.values()), 1.0)
        opt.step()
        return loss
    return step, params


def batches(n, seed=1):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        x = rng.normal(size=(16, 4)).astype(np.float32)
        yield x, np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)


def traced(device="cpu"):
    step, params = regression_step(device)
    compiled = pcp.compile(step)
    x, y = next(batches(1, seed=9))
    compiled(pcp.tensor(x, device=device), pcp.tensor(y, device=device))
    return compiled, params


def test_bytes_and_files_hold_the_same_plan(tmp_path):
    compiled, params = traced()
    path = os.path.join(tmp_path, "step.pcpplan")
    compiled.save(path, names=params)
    data = compiled.to_bytes(names=params)
    from_file, from_bytes = pcp.load_plan(path), pcp.load_plan(data)
    assert from_bytes.nbytes == len(data) and from_file.nbytes == os.path.getsize(path)
    for x, y in batches(3):
        a = from_file(pcp.tensor(x), pcp.tensor(y)).item()
        assert a == from_bytes(pcp.tensor(x), pcp.tensor(y)).item()
    np.testing.assert_array_equal(from_file.named["w1"].numpy(), from_bytes.named["w1"].numpy())


def test_a_loaded_step_trains_as_the_eager_one():
    compiled, params = traced()
    loaded = pcp.load_plan(compiled.to_bytes(names=params))
    step, eager = regression_step()
    # The loaded plan starts from the parameters and optimizer state at tracing (one step in).
    x0, y0 = next(batches(1, seed=9))
    step(pcp.tensor(x0), pcp.tensor(y0))
    for x, y in batches(5):
        want = step(pcp.tensor(x), pcp.tensor(y)).item()
        assert loaded(pcp.tensor(x), pcp.tensor(y)).item() == pytest.approx(want, rel=1e-6)
    for name in eager:
        np.testing.assert_allclose(loaded.named[name].numpy(), eager[name].numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("damage", ["flipped data byte", "flipped graph digit", "truncated", "not a plan"])
def test_a_damaged_plan_is_refused(damage):
    compiled, params = traced()
    data = bytearray(compiled.to_bytes(names=params))
    if damage == "flipped data byte":
        data[-5] ^= 0x10
    elif damage == "flipped graph digit":
        at = data.find(b"[16, 4]")  # the batch's shape in the graph
        data[at + 1] = ord("7")
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data = bytearray(pcp.serialization.dumps_safetensors({"w": pcp.ones(2)}))
    with pytest.raises(ValueError, match="CRC32C|SHA-256|truncated|exceeds|not a PCP plan"):
        pcp.load_plan(bytes(data))


def test_a_plan_for_other_shapes_is_refused_before_it_runs():
    compiled, params = traced()
    loaded = pcp.load_plan(compiled.to_bytes(names=params))
    with pytest.raises(ValueError, match=r"argument 0 is \(8, 4\) float32 on cpu but the plan was traced for \(16, 4\)"):
        loaded(pcp.ones((8, 4)), pcp.ones((8, 1)))


def test_only_captured_tensors_can_be_named():
    compiled, _ = traced()
    with pytest.raises(ValueError, match="'stranger' is not a tensor the plan reads"):
        compiled.to_bytes(names={"stranger": pcp.ones(3)})


@pytest.mark.skipif(not GPUS, reason="no GPU")
@pytest.mark.parametrize("traced_on, placed_on", [("cpu", "gpu"), ("gpu", "cpu")])
def test_a_plan_traced_on_one_device_runs_on_another(traced_on, placed_on):
    compiled, params = traced(traced_on)
    data = compiled.to_bytes(names=params)
    here, there = pcp.load_plan(data), pcp.load_plan(data, device=placed_on)
    assert there.device == pcp.device(placed_on) and str(there.named["w1"].device) == pcp.device(placed_on)
    for x, y in batches(4):
        a = here(pcp.tensor(x, device=traced_on), pcp.tensor(y, device=traced_on)).item()
        b = there(pcp.tensor(x, device=placed_on), pcp.tensor(y, device=placed_on)).item()
        assert b == pytest.approx(a, rel=1e-4)


def classifier_step(device, seed=0):
    """A token classifier's training step: embedding, a product and a cross-entropy (whose
    outputs must be the same on every device for its plan to move)."""
    rng = np.random.default_rng(seed)
    params = {"emb": pcp.tensor(rng.normal(size=(11, 8)) * 0.3, dtype=pcp.float32, device=device, requires_grad=True),
              "out": pcp.tensor(rng.normal(size=(8, 11)) * 0.3, dtype=pcp.float32, device=device, requires_grad=True)}
    opt = pcp.optim.AdamW(list(params.values()), lr=0.05)

    def step(x, y):
        loss = pcp.cross_entropy(pcp.embedding(params["emb"], x) @ params["out"], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step, params


@pytest.mark.skipif(not GPUS, reason="no GPU")
@pytest.mark.parametrize("traced_on, placed_on", [("cpu", "gpu"), ("gpu", "cpu")])
def test_a_plan_with_a_cross_entropy_moves_between_devices(traced_on, placed_on):
    step, params = classifier_step(traced_on)
    compiled = pcp.compile(step)
    rng = np.random.default_rng(4)
    ids = lambda: pcp.tensor(rng.integers(0, 11, (6, 5)), device="cpu")  # noqa: E731  host token ids
    compiled(ids(), ids())
    data = compiled.to_bytes(names=params)
    here, there = pcp.load_plan(data), pcp.load_plan(data, device=placed_on)
    for _ in range(4):
        x, y = ids(), ids()
        assert there(x, y).item() == pytest.approx(here(x, y).item(), rel=1e-5)
    np.testing.assert_allclose(there.named["out"].numpy(), here.named["out"].numpy(), rtol=1e-4, atol=1e-6)
