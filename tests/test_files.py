"""Files and runs: a corrupt or misfitting safetensors file, checkpoint or GPT-2 weight file is one
clear error naming the file and the tensor (and the reference safetensors library refuses the same
files); checkpoints get the user's file mode; a run never silently replaces an earlier one or a
better best, cleans the leftovers of a killed write, and keeps metrics.jsonl in step on resume."""
import io
import json
import os
import struct

import numpy as np
import pytest

import pcp
from pcp.dashboard import LogLines
from pcp.models import GPT2, GPT2Config
from pcp.serialization import SafetensorsError, load_safetensors, save_safetensors
from pcp.train import load_checkpoint, preset, save_checkpoint, train
from pcp.train.loop import build_model, build_optimizer

try:
    from safetensors.numpy import load_file as ref_load, save_file as ref_save  # reference only
except ImportError:  # pragma: no cover
    ref_load = ref_save = None


def quiet():
    return LogLines(io.StringIO())


def tiny(text_file, out, **kw):
    kw = {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 16, "batch_size": 4, "max_iters": 20,
          "lr_decay_iters": 20, "warmup_iters": 2, "eval_interval": 10, "eval_iters": 2, "log_interval": 5,
          "sample_tokens": 0, "dropout": 0.1, **kw}
    return preset("shakespeare-char-cpu", data=text_file, out=str(out), **kw)


def raw_file(header, data, length=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if length is None else length) + h + data


# -- safetensors headers ---------------------------------------------------------------------------
A = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}
D = np.arange(3, dtype="<f4").tobytes()
CORRUPT = {  # name: (file bytes, what the message says, the tensor it names or None)
    "header longer than the file": (raw_file(A, D, length=10 ** 6), "header length 1000000 exceeds", None),
    "overlapping offsets": (raw_file({**A, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, D[:8]),
                            "overlaps tensor 'a'", "b"),
    "offsets past the end": (raw_file({**A, "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, D),
                             "past the end", "b"),
    "a hole": (raw_file({**A, "b": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]}}, D + D[:4]), "hole", "b"),
    "negative shape": (raw_file({**A, "a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, D),
                       "non-negative", "a"),
    "shape and bytes disagree": (raw_file({**A, "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, D),
                                 "needs 12", "a"),
    "unknown dtype": (raw_file({**A, "a": {"dtype": "Q7", "shape": [2], "data_offsets": [0, 8]}}, D), "dtype", "a"),
    "missing field": (raw_file({**A, "a": {"dtype": "F32", "data_offsets": [0, 8]}}, D), "entry must be", "a"),
    "truncated JSON": (raw_file(b'{"a": ', D), "not valid JSON", None),
    "deeply nested JSON": (raw_file(b"[" * 100_000 + b"]" * 100_000, b""), "not valid JSON", None),
    "duplicate name": (raw_file(b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                                b'"a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}', D), "duplicate key 'a'", None),
    "trailing bytes": (raw_file(A, D + bytes(4)), "after the last tensor", None),
    "metadata not strings": (raw_file({**A, "__metadata__": {"k": 1}}, D), "__metadata__", None),
    "float offsets": (raw_file({**A, "b": {"dtype": "F32", "shape": [1], "data_offsets": [8.0, 12]}}, D),
                      "data_offsets", "b"),
    "too short": (b"\x01\x02", "too short", None),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_safetensors_is_one_clear_error(tmp_path, case):
    data, what, tensor = CORRUPT[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(SafetensorsError, match=what) as e:
        load_safetensors(str(path))
    assert isinstance(e.value, ValueError) and str(e.value).startswith(str(path))
    assert tensor is None or f"tensor '{tensor}'" in str(e.value)
    if ref_load is not None:  # the reference implementation refuses the file too
        with pytest.raises(Exception):
            ref_load(str(path))


@pytest.mark.skipif(ref_save is None, reason="safetensors (test-only reference) is not installed")
def test_files_of_the_reference_writer_load_exactly(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {"w": rng.standard_normal((3, 5)).astype(np.float32), "h": rng.standard_normal(7).astype(np.float16),
              "i": rng.integers(-9, 9, (2, 3)).astype(np.int32), "e1": np.zeros((0, 4), np.float32),
              "e2": np.zeros(0, np.int64), "d": rng.standard_normal(2)}
    ref_save(arrays, str(tmp_path / "ref.safetensors"), metadata={"k": "v"})
    loaded, meta = load_safetensors(str(tmp_path / "ref.safetensors"))
    assert meta == {"k": "v"} and set(loaded) == set(arrays)
    for k, a in arrays.items():
        assert loaded[k].numpy().dtype == a.dtype and loaded[k].numpy().shape == a.shape, k
        np.testing.assert_array_equal(loaded[k].numpy(), a, err_msg=k)


# -- checkpoints -----------------------------------------------------------------------------------
@pytest.fixture
def saved(text_file, tmp_path):
    """A checkpoint of a tiny GPT after one AdamW step (so the optimizer has state), and a builder of
    the same (model, optimizer) to load it into."""
    cfg = tiny(text_file, tmp_path)

    def fresh():
        pcp.random.seed(7)
        model = build_model(cfg, 11)
        return model, build_optimizer(cfg, model)

    model, opt = fresh()
    _, loss = model(pcp.tensor(np.arange(8).reshape(2, 4) % 11), pcp.tensor(np.ones((2, 4), np.int64)))
    loss.backward()
    opt.step()
    path = str(tmp_path / "ckpt.safetensors")
    save_checkpoint(path, model, opt, 1, cfg.to_dict(), {"best_val": 3.0})
    return path, fresh


def rewrite(path, change=None, meta_change=None):
    """Rewrites a checkpoint with change(tensors) and meta_change(pcp metadata dict) applied."""
    tensors, meta = load_safetensors(path)
    if change:
        change(tensors)
    if meta_change:
        meta = {"pcp": json.dumps(meta_change(json.loads(meta["pcp"])))}
    save_safetensors(tensors, path, meta)


def set_(name, fn):
    def change(t):
        t[name] = fn(t[name])
    return change


def _nan_at_3(t):
    a = t.numpy().copy()
    a.flat[3] = np.nan
    return pcp.tensor(a)


BAD_CHECKPOINTS = {  # name: (change, what the message says, the tensor it names)
    "int32 weights": (set_("model.wte.weight", lambda t: (t * 100).astype(pcp.int32)), "dtype int32", "model.wte.weight"),
    "float16 weights": (set_("model.h.0.mlp.c_fc.weight", lambda t: t.astype(pcp.float16)), "dtype float16",
                        "model.h.0.mlp.c_fc.weight"),
    "NaN weights": (set_("model.h.0.attn.c_attn.weight", _nan_at_3), "non-finite", "model.h.0.attn.c_attn.weight"),
    "wrong shape": (set_("model.wpe.weight", lambda t: t[:-1]), "shape", "model.wpe.weight"),
    "missing weights": (lambda t: t.pop("model.ln_f.weight"), "missing", "model.ln_f.weight"),
    "unexpected weights": (lambda t: t.update({"model.extra": pcp.zeros((2,))}), "not a parameter", "model.extra"),
    "NaN optimizer state": (set_("optim.0.exp_avg_sq", _nan_at_3), "non-finite", "optim.0.exp_avg_sq"),
    "optimizer state of no parameter": (lambda t: t.update({"optim.99.exp_avg": pcp.zeros((2,))}), "not a state",
                                        "optim.99.exp_avg"),
}


@pytest.mark.parametrize("case", list(BAD_CHECKPOINTS))
def test_bad_checkpoint_is_refused_by_name_and_changes_nothing(saved, case):
    path, fresh = saved
    change, what, tensor = BAD_CHECKPOINTS[case]
    rewrite(path, change)
    model, opt = fresh()
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    with pytest.raises(SafetensorsError, match=what) as e:
        load_checkpoint(path, model, opt)
    assert str(e.value).startswith(path) and f"tensor '{tensor}'" in str(e.value), str(e.value)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)
    assert opt.state == {} and opt.step_count == 0


@pytest.mark.parametrize("meta_change,what", [
    (lambda m: {**m, "step": "seven"}, "'step'"),
    (lambda m: {**m, "rng": None}, "'rng'"),
    (lambda m: {**m, "optim": {**m["optim"], "param_groups": m["optim"]["param_groups"][:1]}}, "parameter groups"),
    (lambda m: {**m, "optim": {**m["optim"], "param_groups": [{**g, "betas": "x"} for g in m["optim"]["param_groups"]]}},
     "betas"),
])
def test_bad_checkpoint_metadata_is_refused(saved, meta_change, what):
    path, fresh = saved
    rewrite(path, meta_change=meta_change)
    with pytest.raises(SafetensorsError, match=what) as e:
        load_checkpoint(path, *fresh())
    assert str(e.value).startswith(path)


def test_good_checkpoint_round_trips(saved):
    path, fresh = saved
    model, opt = fresh()
    meta = load_checkpoint(path, model, opt)
    assert meta["step"] == 1 and opt.step_count == 1 and len(opt.state) == len(list(model.parameters()))


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_checkpoints_get_the_users_file_mode(saved, umask):
    path, fresh = saved
    probe = os.path.join(os.path.dirname(path), "probe")
    old = os.umask(umask)
    try:
        save_checkpoint(path, *fresh(), 0, {})
        with open(probe, "w"):  # what open() gives: the reference
            pass
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == os.stat(probe).st_mode & 0o777 == 0o666 & ~umask


# -- GPT-2 weights ---------------------------------------------------------------------------------
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def hf_file(path, change=None):
    """A GPT-2 weight file in Hugging Face's layout (transformer.* names, Conv1D weights transposed)."""
    model = GPT2(GPT2Config(vocab_size=13, n_positions=8, n_embd=64, n_layer=2, n_head=1))
    tensors = {"transformer." + k: (v.T if k.endswith(CONV1D) else v).contiguous() for k, v in model.state_dict().items()}
    if change:
        change(tensors)
    save_safetensors(tensors, str(path))
    return model


@pytest.mark.parametrize("change,what,tensor", [
    (set_("transformer.h.1.mlp.c_proj.weight", _nan_at_3), "non-finite", "h.1.mlp.c_proj.weight"),
    (set_("transformer.wte.weight", lambda t: t.astype(pcp.int32)), "dtype int32", "wte.weight"),
    (lambda t: t.pop("transformer.wte.weight"), "missing", "wte.weight"),
    (lambda t: t.pop("transformer.h.0.ln_1.weight"), "missing", "h.0.ln_1.weight"),
    (set_("transformer.h.0.attn.c_attn.weight", lambda t: t[:, :-1].contiguous()), "shape", "h.0.attn.c_attn.weight"),
    (lambda t: t.update({"transformer.h.x.ln_1.weight": pcp.zeros((64,))}), "h.0.* to h.<n-1>", None),
    (lambda t: t.update({"transformer.h.7.ln_1.weight": pcp.zeros((64,))}), "h.0.* to h.<n-1>", None),
])
def test_from_pretrained_refuses_bad_weights_by_name(tmp_path, change, what, tensor):
    path = tmp_path / "model.safetensors"
    hf_file(path, change)
    with pytest.raises(SafetensorsError, match=what) as e:
        GPT2.from_pretrained(str(path))
    assert str(e.value).startswith(str(path)) and (tensor is None or f"tensor '{tensor}'" in str(e.value))


def test_from_pretrained_widens_half_precision_and_checks_config_json(tmp_path):
    path = tmp_path / "model.safetensors"
    ref = hf_file(path, lambda t: t.update({k: v.astype(pcp.float16) for k, v in t.items()}))
    model = GPT2.from_pretrained(str(path))
    for (name, p), (_, r) in zip(model.state_dict().items(), ref.state_dict().items()):
        assert p.dtype == pcp.float32
        np.testing.assert_array_equal(p.numpy(), r.numpy().astype(np.float16).astype(np.float32), err_msg=name)
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 13, "n_positions": 8, "n_embd": 64,
                                                      "n_layer": 10 ** 9, "n_head": 1}))
    with pytest.raises(SafetensorsError, match="n_layer is 1000000000 but the weights' is 2"):
        GPT2.from_pretrained(str(tmp_path))
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json"):
        GPT2.from_pretrained(str(tmp_path))


# -- runs: the --out folder ------------------------------------------------------------------------
def run_cli(*args):
    from pcp.cli import main
    return main(list(args))


def cli_flags(text_file, out, iters):
    return ["--data", text_file, "--out", str(out), "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
            "--block-size", "16", "--batch-size", "4", "--max-iters", str(iters), "--lr-decay-iters", "20", "--warmup-iters", "2",
            "--eval-interval", "5", "--eval-iters", "2", "--sample-tokens", "0", "--no-dashboard"]


def test_train_refuses_an_out_holding_a_run_and_overwrite_keeps_it(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_cli("train", *cli_flags(text_file, out, 10)) == 0
    files = {n: (out / n).read_bytes() for n in ("best.safetensors", "ckpt.safetensors", "metrics.jsonl")}
    capsys.readouterr()
    assert run_cli("train", *cli_flags(text_file, out, 5)) == 2
    err = capsys.readouterr().err
    assert "already holds a run" in err and "--overwrite" in err and "--resume" in err and err.count("\n") == 1, err
    assert {n: (out / n).read_bytes() for n in files} == files  # nothing touched
    assert run_cli("train", "--overwrite", *cli_flags(text_file, out, 5)) == 0
    assert "moved the previous run" in capsys.readouterr().out
    (kept,) = [d for d in out.iterdir() if d.name.startswith("replaced-")]
    assert {n: (kept / n).read_bytes() for n in files} == files  # the old run, whole, beside the new one
    assert [json.loads(line)["iter"] for line in open(out / "metrics.jsonl")] == [0, 5]
    assert run_cli("train", "--overwrite", "--resume", *cli_flags(text_file, out, 5)) == 2
    assert "contradict" in capsys.readouterr().err


def test_resume_never_replaces_a_better_best(text_file, tmp_path):
    train(tiny(text_file, tmp_path, max_iters=10), report=quiet())
    best = str(tmp_path / "best.safetensors")
    rewrite(best, meta_change=lambda m: {**m, "best_val": 0.5})  # a better best than this run will reach
    before = open(best, "rb").read()
    summary = train(tiny(text_file, tmp_path), resume=True, report=quiet())
    assert min(r["val_loss"] for r in summary["metrics"]) > 0.5
    assert open(best, "rb").read() == before and summary["best_val"] == 0.5


def test_resume_cleans_stale_temporaries_and_keeps_metrics_in_step(text_file, tmp_path):
    full = train(tiny(text_file, tmp_path / "full"), report=quiet())
    cut = tmp_path / "cut"
    train(tiny(text_file, cut, max_iters=10), report=quiet())
    # A kill after an evaluation was logged but before its checkpoint, and one in the middle of a line
    # and of a checkpoint write.
    lines = open(cut / "metrics.jsonl").read().splitlines()
    with open(cut / "metrics.jsonl", "a") as f:
        f.write(json.dumps({**json.loads(lines[-1]), "iter": 15}) + "\n" + lines[-1][:20])
    (cut / ".tmp-k1ll3d.safetensors").write_bytes(b"\0" * 100)
    resumed = train(tiny(text_file, cut), resume=True, report=quiet())
    assert not [n for n in os.listdir(cut) if n.startswith(".tmp-")]
    on_disk = [json.loads(line) for line in open(cut / "metrics.jsonl")]
    keys = ("iter", "train_loss", "val_loss", "lr")
    assert [[r[k] for k in keys] for r in on_disk] == [[r[k] for k in keys] for r in full["metrics"]]
    assert on_disk == resumed["metrics"]


def test_resume_past_max_iters_is_a_clear_error(text_file, tmp_path, capsys):
    assert run_cli("train", *cli_flags(text_file, tmp_path, 10)) == 0
    capsys.readouterr()
    assert run_cli("train", "--resume", *cli_flags(text_file, tmp_path, 5)) == 2
    err = capsys.readouterr().err
    assert "at iteration 10, past max_iters 5" in err and err.count("\n") == 1, err


def test_corrupt_checkpoints_fail_the_cli_by_name(text_file, tmp_path, capsys):
    assert run_cli("train", *cli_flags(text_file, tmp_path, 5)) == 0
    ckpt = str(tmp_path / "ckpt.safetensors")
    rewrite(ckpt, set_("model.wte.weight", _nan_at_3))
    rewrite(str(tmp_path / "best.safetensors"), set_("model.wpe.weight", lambda t: t.astype(pcp.int32)))
    capsys.readouterr()
    assert run_cli("train", "--resume", *cli_flags(text_file, tmp_path, 10)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pcp train: error: {ckpt}: tensor 'model.wte.weight'") and err.count("\n") == 1, err
    assert run_cli("sample", "--checkpoint", str(tmp_path), "--max-new-tokens", "3") == 2
    err = capsys.readouterr().err
    assert "best.safetensors: tensor 'model.wpe.weight': dtype int32" in err and err.count("\n") == 1, err


def test_one_run_at_a_time_in_a_folder(text_file, tmp_path):
    from pcp.train.rundir import RunDirError, locked
    with locked(str(tmp_path)):
        with pytest.raises(RunDirError, match="in use by another run"):
            train(tiny(text_file, tmp_path, max_iters=2), report=quiet())
    train(tiny(text_file, tmp_path, max_iters=2), report=quiet())
