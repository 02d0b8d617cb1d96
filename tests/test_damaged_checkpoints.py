"""Nothing silently wrong from a damaged file or a diverged run. Damaged checkpoints (flipped bits
in the data and in the metadata, truncated, zeroed, out-of-range hyperparameters, the config of
another model, a step past max_iters) against every loader and every CLI command that reads a
checkpoint: each is refused with a clear one-line error and exit 2, or loads for a stated,
harmless reason. A run whose loss goes NaN stops at that iteration with exit 3 and its last good
checkpoint intact. References: the file bytes as written, a CRC32C computed here bit by bit, and
uninterrupted runs."""
import json
import os
import warnings

import numpy as np
import pytest

import pcp
from pcp import _core
from pcp.serialization import SafetensorsError, load_safetensors, read_metadata, save_safetensors
from pcp.train import load_checkpoint
from pcp.train.checkpoint import parse_metadata, previous_path
from pcp.train.guard import NonFiniteLoss


def run_cli(*args):
    from pcp.cli import main
    return main(list(args))


def flags(text_file, out, iters, *more):
    return ["--data", text_file, "--out", str(out), "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
            "--block-size", "16", "--batch-size", "4", "--max-iters", str(iters), "--lr-decay-iters", "20",
            "--warmup-iters", "2", "--eval-interval", "5", "--eval-iters", "2", "--sample-tokens", "0",
            "--log-interval", "1", "--no-dashboard", *more]


@pytest.fixture
def run(text_file, tmp_path, capsys):
    """A finished 10-iteration `pcp train` run (checkpoints at 5 and 10: ckpt and its previous)."""
    out = tmp_path / "run"
    assert run_cli("train", *flags(text_file, out, 10)) == 0
    capsys.readouterr()
    return out


def crc32c_bitwise(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def test_crc32c_matches_the_definition_at_every_length():
    rng = np.random.default_rng(0)
    assert _core._crc32c(b"123456789") == 0xE3069283  # the standard check value
    for n in (0, 1, 7, 8, 9, 100, 24575, 24576, 24577, 3 * 8192 * 2 + 13):  # around the 3-stream blocks
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert _core._crc32c(data) == crc32c_bitwise(data), n
        assert _core._crc32c(data[n // 3:], _core._crc32c(data[:n // 3])) == crc32c_bitwise(data), n


# -- the damages -----------------------------------------------------------------------------------
def _data_start(raw):
    return 8 + int.from_bytes(raw[:8], "little")


def flip_data_bit(path):
    raw = bytearray(open(path, "rb").read())
    raw[-9] ^= 0x10
    open(path, "wb").write(raw)


def flip_metadata_digit(path):
    raw = bytearray(open(path, "rb").read())
    at = raw.index(b'\\"best_val\\": ') + len(b'\\"best_val\\": ')
    raw[at] = ord("9") if raw[at] != ord("9") else ord("8")  # still valid JSON, another number
    open(path, "wb").write(raw)


def truncate(path):
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[: len(raw) * 2 // 3])


def zero_data(path):
    raw = bytearray(open(path, "rb").read())
    start = _data_start(raw)
    raw[start:] = bytes(len(raw) - start)
    open(path, "wb").write(raw)


def rewrite(path, change):
    """The checkpoint re-saved with its 'pcp' metadata changed (so its checksums are right: a
    damage only the meaning of the values can show)."""
    tensors, meta = load_safetensors(path)
    save_safetensors(tensors, path, {"pcp": json.dumps(change(json.loads(meta["pcp"])))})


def bad_betas(path):
    rewrite(path, lambda m: {**m, "optim": {**m["optim"], "param_groups": [
        {**g, "betas": [1.5, 2.0]} for g in m["optim"]["param_groups"]]}})


def huge_step_count(path):
    rewrite(path, lambda m: {**m, "optim": {**m["optim"], "step": 10 ** 12}})


def other_model(path):
    rewrite(path, lambda m: {**m, "config": {**m["config"], "n_layer": 2}})


def no_layers(path):
    rewrite(path, lambda m: {**m, "config": {**m["config"], "n_layer": 0}})


# name: (damage, what `pcp train --resume` says, what `pcp sample`/`export-hf` say: None when they
# load it for a harmless reason, the damage being in what they do not read)
DAMAGES = {
    "flipped data bit": (flip_data_bit, "do not match the CRC32C", "do not match the CRC32C"),
    "flipped metadata digit": (flip_metadata_digit, "do not match the SHA-256", "do not match the SHA-256"),
    "truncated": (truncate, "exceeds the file|truncated", "exceeds the file|truncated"),
    "zeroed data": (zero_data, "do not match the CRC32C", "do not match the CRC32C"),
    "betas out of range": (bad_betas, "'betas' is \\(1.5, 2.0\\), expected two numbers in \\[0, 1\\)", None),
    "step count 10**12": (huge_step_count, "'step' is 1000000000000, past the checkpoint's iteration 10", None),
    "config of another model": (other_model, "another model: n_layer is 2 there, 1 here",
                                "missing from the checkpoint"),
    "config with no layers": (no_layers, "another model: n_layer is 0 there, 1 here", "n_layer must be positive"),
}


@pytest.mark.parametrize("case", list(DAMAGES))
def test_a_damaged_checkpoint_is_refused_by_every_command(run, text_file, tmp_path, capsys, case):
    damage, resume_says, load_says = DAMAGES[case]
    ckpt = str(run / "ckpt.safetensors")
    before = {n: open(run / n, "rb").read() for n in ("ckpt.prev.safetensors", "best.safetensors")}
    damage(ckpt)
    assert run_cli("train", "--resume", *flags(text_file, run, 15)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pcp train: error: {ckpt}") and err.count("\n") == 1, err
    assert __import__("re").search(resume_says, err), err
    assert f"(step 5), is intact: continue from it with --resume {run / 'ckpt.prev.safetensors'}" in err
    for command in (["sample", "--checkpoint", ckpt, "--max-new-tokens", "5"],
                    ["export-hf", ckpt, str(tmp_path / "hf")]):
        code = run_cli(*command)
        err = capsys.readouterr().err
        if load_says is None:  # hyperparameters of an optimizer that sampling and export never build
            assert code == 0 and not err, err
        else:
            assert code == 2 and err.startswith(f"pcp {command[0]}: error: {ckpt}") and err.count("\n") == 1, err
            assert __import__("re").search(load_says, err), err
    assert {n: open(run / n, "rb").read() for n in before} == before  # nothing else touched


@pytest.mark.parametrize("case", ["flipped data bit", "flipped metadata digit", "truncated", "zeroed data"])
def test_load_checkpoint_and_load_plan_refuse_damaged_bytes(run, case):
    ckpt = str(run / "ckpt.safetensors")
    DAMAGES[case][0](ckpt)
    with pytest.raises(SafetensorsError, match=DAMAGES[case][1]) as e:
        load_checkpoint(ckpt)
    assert str(e.value).startswith(ckpt)
    if "CRC32C" in DAMAGES[case][1]:
        assert "tensor '" in str(e.value)  # the tensor hit is named
    w = pcp.ones(4).requires_grad_()
    plan = pcp.compile(lambda x: (x * w).sum())
    plan(pcp.ones(4))
    path = str(run / "plan.safetensors")
    plan.save(path)
    DAMAGES[case][0](path) if case != "flipped metadata digit" else flip_data_bit(path)
    with pytest.raises(ValueError, match="CRC32C|SHA-256|truncated|exceeds"):
        pcp.load_plan(path)


def test_a_file_of_another_tool_loads_unverified_and_says_so_once(tmp_path, monkeypatch):
    import struct
    monkeypatch.setattr("pcp.serialization._said_unchecked", [])
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    raw = struct.pack("<Q", len(header)) + header + np.array([1.0, 2.0], "<f4").tobytes()
    for name in ("a.safetensors", "b.safetensors"):
        (tmp_path / name).write_bytes(raw)
    with pytest.warns(UserWarning, match="no PCP checksums.*loaded unverified"):
        tensors, _ = load_safetensors(str(tmp_path / "a.safetensors"))
    assert tensors["w"].tolist() == [1.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: the second file is quiet
        load_safetensors(str(tmp_path / "b.safetensors"))


def test_a_checkpoint_claiming_checksums_it_lost_is_refused(tmp_path):
    path = str(tmp_path / "w.safetensors")
    save_safetensors({"w": pcp.ones(2)}, path)
    raw = bytearray(open(path, "rb").read())
    at = raw.index(b"pcp.metadata_sha256")
    raw[at:at + 3] = b"xyz"  # the key's name damaged: the file must not pass as another tool's
    open(path, "wb").write(raw)
    with pytest.raises(SafetensorsError, match="no pcp.metadata_sha256"):
        load_safetensors(path)


# -- resuming --------------------------------------------------------------------------------------
def test_the_previous_checkpoint_resumes_to_the_bits_of_an_uninterrupted_run(run, text_file, tmp_path, capsys):
    ckpt, prev = run / "ckpt.safetensors", run / "ckpt.prev.safetensors"
    assert parse_metadata(str(prev), read_metadata(str(prev)))["step"] == 5
    flip_data_bit(str(ckpt))
    damaged = ckpt.read_bytes()
    assert run_cli("train", "--resume", *flags(text_file, run, 15)) == 2
    assert "(step 5), is intact" in capsys.readouterr().err
    assert run_cli("train", "--resume", str(prev), *flags(text_file, run, 15)) == 0
    out = capsys.readouterr().out
    assert "moved to" in out
    (aside,) = [d for d in run.iterdir() if d.name.startswith("replaced-")]
    assert (aside / "ckpt.safetensors").read_bytes() == damaged  # kept, not lost
    assert run_cli("train", *flags(text_file, tmp_path / "straight", 15)) == 0
    resumed, straight = (load_safetensors(str(d / "ckpt.safetensors"))[0] for d in (run, tmp_path / "straight"))
    for k in straight:
        np.testing.assert_array_equal(resumed[k].numpy(), straight[k].numpy(), err_msg=k)
    assert [json.loads(line)["iter"] for line in open(run / "metrics.jsonl")] == [0, 5, 10, 15]


def test_a_checkpoint_is_never_missing_while_the_previous_is_kept(tmp_path):
    from pcp import nn, optim
    from pcp.train import save_checkpoint
    model = nn.Linear(3, 2)
    path = str(tmp_path / "ckpt.safetensors")
    for step in (1, 2, 3):
        save_checkpoint(path, model, optim.SGD(model.parameters()), step, {}, keep_previous=True)
    assert load_checkpoint(path)["step"] == 3 and load_checkpoint(previous_path(path))["step"] == 2
    assert json.load(open(tmp_path / "ckpt.prev.json"))["step"] == 2
    assert sorted(os.listdir(tmp_path)) == ["ckpt.json", "ckpt.prev.json", "ckpt.prev.safetensors", "ckpt.safetensors"]


def test_a_folder_of_a_run_killed_before_its_first_checkpoint_is_empty(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("")
    (out / ".tmp-k1ll3d.safetensors").write_bytes(b"\0" * 64)  # the first checkpoint, cut short
    (out / "metrics.jsonl").write_text('{"iter": 0, "train_loss": 4.2, "val_loss": 4.2}\n')
    (out / "tokenizer.json").write_text("{}")
    assert run_cli("train", *flags(text_file, out, 5)) == 0
    assert "holds no checkpoint" in capsys.readouterr().out
    assert load_checkpoint(str(out / "ckpt.safetensors"))["step"] == 5
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / ".lock").write_text("")
    assert run_cli("train", "--resume", *flags(text_file, fresh, 5)) == 0  # nothing to resume: a new run
    assert "holds no checkpoint yet: starting a new run" in capsys.readouterr().out


def test_resume_refuses_another_model_and_says_which_settings_changed(run, text_file, capsys):
    assert run_cli("train", "--resume", *flags(text_file, run, 15), "--n-head", "4") == 2
    err = capsys.readouterr().err
    assert "another model: n_head is 2 there, 4 here" in err and err.count("\n") == 1, err
    assert "previous checkpoint" not in err  # it is of the same model: not offered
    assert run_cli("train", "--resume", *flags(text_file, run, 15), "--learning-rate", "0.002") == 0
    out = capsys.readouterr().out
    assert "settings changed from the checkpoint's: max_iters: 10 -> 15, learning_rate: 0.001 -> 0.002" in out, out


# -- a loss that goes NaN --------------------------------------------------------------------------
def poison(monkeypatch, at, restore=False):
    """pcp train's step with a weight set to NaN before step call number `at` (each in `at`): the
    loss goes NaN there; with restore, the weight is put back after that step (a passing fault)."""
    from pcp.train import loop
    real = loop.training_step

    def make(model, opt, scaler, cfg, dtype, command_lists=False, guard=None):
        step = real(model, opt, scaler, cfg, dtype, command_lists, guard)
        calls = [0]

        def wrapped(x, y):
            w = model.wte.weight
            kept = w.numpy().copy()
            if calls[0] in at:
                with pcp.no_grad():
                    w[0, 0] = float("nan")
            calls[0] += 1
            loss = step(x, y)
            wrapped.norm, wrapped.skipped = step.norm, step.skipped
            if restore and calls[0] - 1 in at:
                with pcp.no_grad():
                    w[...] = pcp.tensor(kept)
            return loss
        return wrapped
    monkeypatch.setattr(loop, "training_step", make)


def test_a_loss_forced_to_nan_at_step_k_stops_there_with_the_last_good_checkpoint(text_file, tmp_path, capsys,
                                                                                 monkeypatch):
    out = tmp_path / "run"
    poison(monkeypatch, at={7})
    assert run_cli("train", *flags(text_file, out, 20)) == 3
    err = capsys.readouterr().err
    assert "the loss is nan at iteration 7" in err and "keeps the last good checkpoint" in err, err
    meta = load_checkpoint(str(out / "ckpt.safetensors"))  # checks every value is finite
    assert meta["step"] == 5
    assert [json.loads(line)["iter"] for line in open(out / "metrics.jsonl")] == [0, 5]


def test_skip_nonfinite_skips_up_to_n_bad_steps(text_file, tmp_path, capsys, monkeypatch):
    poison(monkeypatch, at={3}, restore=True)
    assert run_cli("train", *flags(text_file, tmp_path / "one", 10, "--skip-nonfinite", "1")) == 0
    assert "iteration 3: loss is nan: step skipped (1 of --skip-nonfinite 1)" in capsys.readouterr().out
    assert load_checkpoint(str(tmp_path / "one" / "ckpt.safetensors"))["optim"]["step"] == 9  # one not applied
    poison(monkeypatch, at={3, 6}, restore=True)
    assert run_cli("train", *flags(text_file, tmp_path / "two", 10, "--skip-nonfinite", "1")) == 3
    assert "at iteration 6" in capsys.readouterr().err
    with pytest.raises(ValueError, match="skip_nonfinite must be >= 0, and 0 with compile"):
        pcp.train.TrainConfig(compile=True, skip_nonfinite=2).validate()


# -- optimizers' state -----------------------------------------------------------------------------
def _adamw():
    w = pcp.ones(3).requires_grad_()
    opt = pcp.optim.AdamW([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    return opt


@pytest.mark.parametrize("change,what", [
    (lambda sd: sd["param_groups"][0].update(betas=(1.5, 2.0)), "'betas' is \\(1.5, 2.0\\)"),
    (lambda sd: sd["param_groups"][0].update(lr=float("nan")), "'lr' is nan"),
    (lambda sd: sd["param_groups"][0].update(eps=-1.0), "'eps' is -1.0"),
    (lambda sd: sd.update(step=10 ** 12 * 10 ** 6), "'step' is"),
    (lambda sd: sd["state"][0].update(step=2), "'step' of parameter 0 is 2"),  # past the optimizer's 1
])
def test_optimizer_load_state_dict_refuses_what_its_constructor_refuses(change, what):
    opt = _adamw()
    sd = opt.state_dict()
    sd["param_groups"] = [dict(g) for g in sd["param_groups"]]
    sd["state"] = {i: dict(s) for i, s in sd["state"].items()}
    change(sd)
    before = opt.state_dict()
    with pytest.raises(ValueError, match=what):
        opt.load_state_dict(sd)
    assert opt.param_groups[0]["betas"] == before["param_groups"][0]["betas"] and opt.step_count == 1
    with pytest.raises(ValueError, match="'betas' is \\(1.5, 2.0\\)"):  # the constructor: the same words
        pcp.optim.AdamW([pcp.ones(2).requires_grad_()], betas=(1.5, 2.0))
    with pytest.raises(ValueError, match="parameter group 1: 'lr' is -1"):
        pcp.optim.SGD([{"params": [pcp.ones(1).requires_grad_()]}, {"params": [pcp.ones(1).requires_grad_()],
                                                                      "lr": -1}])


@pytest.mark.parametrize("key,value,what", [("scale", -1.0, "scale must be a positive finite number"),
                                            ("scale", float("inf"), "scale must be"),
                                            ("growth_factor", 0.5, "growth_factor must be > 1"),
                                            ("growth_interval", 0, "growth_interval must be a positive int"),
                                            ("_growth_tracker", 5000, "'_growth_tracker' is 5000")])
def test_grad_scaler_load_state_dict_refuses_what_its_constructor_refuses(key, value, what):
    scaler = pcp.amp.GradScaler(init_scale=8.0)
    state = dict(scaler.state_dict(), **{key: value})
    with pytest.raises(ValueError, match=what):
        scaler.load_state_dict(state)
    assert scaler.get_scale() == 8.0


# -- DiLoCo ----------------------------------------------------------------------------------------
def regression(nan_rows):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [2.0], [-1.0]], np.float32)
    x[:nan_rows] = np.nan  # rows a worker's batch may draw: its loss goes NaN
    from pcp.distributed import Data
    return Data.rows({"x": x[:800], "y": y[:800]}, {"x": x[800:], "y": y[800:]})


def test_a_diloco_worker_whose_loss_goes_nan_stops_the_run_or_is_left_out(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed")
    from pcp.distributed import DiLoCoConfig, diloco
    from pcp.train import TrainConfig

    def params():
        return {"w": pcp.tensor(np.zeros((3, 1)), dtype=pcp.float32, requires_grad=True)}
    dcfg = DiLoCoConfig(workers=2, inner_steps=5, rounds=4, round_timeout=120)
    w = params()
    with pytest.raises(NonFiniteLoss, match="worker [01]'s inner loss is not finite at step \\d of round 1"):
        diloco(lambda a, b: ((a @ w["w"] - b) ** 2).mean(), w, regression(400),
               TrainConfig(out=str(tmp_path / "stop"), batch_size=8, learning_rate=1e-2), dcfg)
    assert not os.path.exists(tmp_path / "stop" / "diloco.safetensors")  # nothing of the round was saved
    events = []
    w = params()
    history = diloco(lambda a, b: ((a @ w["w"] - b) ** 2).mean(), w, regression(20),
                     TrainConfig(out=str(tmp_path / "skip"), batch_size=8, learning_rate=1e-2, skip_nonfinite=100),
                     dcfg, report=events.append)
    left_out = [e for e in events if e["kind"] == "worker_nonfinite"]
    assert left_out and all(e["count"] <= e["allowed"] for e in left_out)
    assert np.isfinite(w["w"].numpy()).all() and history[-1]["val_loss"] < history[0]["val_loss"]
    for e in left_out:  # a left-out worker's pseudo-gradient is not in its round
        assert e["rank"] not in history[e["round"] + 1]["workers_in"]
    load_checkpoint(str(tmp_path / "skip" / "diloco.safetensors"))  # finite everywhere
    # A damaged newest checkpoint: --resume names the intact previous one, which resumes.
    ckpt = tmp_path / "skip" / "diloco.safetensors"
    flip_data_bit(str(ckpt))
    run = TrainConfig(out=str(tmp_path / "skip"), batch_size=8, learning_rate=1e-2, skip_nonfinite=100)
    with pytest.raises(SafetensorsError, match="diloco.prev.safetensors \\(step 3\\), is intact"):
        diloco(lambda a, b: ((a @ w["w"] - b) ** 2).mean(), w, regression(20), run, dcfg, resume=True)
    more = DiLoCoConfig(workers=2, inner_steps=5, rounds=5, round_timeout=120)
    history = diloco(lambda a, b: ((a @ w["w"] - b) ** 2).mean(), w, regression(20), run, more,
                     resume=str(previous_path(str(ckpt))))
    assert [r["round"] for r in history] == [0, 1, 2, 3, 4, 5] and load_checkpoint(str(ckpt))["step"] == 5
