"""Data pipeline, tokenizers, checkpoints and the training loop (tiny models, seconds each)."""
import io
import json
import os

import numpy as np
import pytest

import pcp
from pcp.dashboard import LogLines
from pcp.data import BPETokenizer, CharTokenizer, TokenDataset, shakespeare
from pcp.train import preset, train

def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def tiny(text_file, out, **kw):
    cfg = preset("shakespeare-char-cpu", n_layer=1, n_head=2, n_embd=16, block_size=16, batch_size=4,
                 max_iters=20, lr_decay_iters=20, warmup_iters=2, eval_interval=10, eval_iters=2,
                 log_interval=5, sample_tokens=0, dropout=0.1, data=text_file, out=str(out))
    for k, v in kw.items():
        setattr(cfg, k, v)
    return cfg


def test_char_tokenizer_round_trip_and_errors():
    tok = CharTokenizer.from_text("hello world")
    assert tok.vocab_size == len(set("hello world"))
    assert tok.decode(tok.encode("low door")) == "low door"
    assert CharTokenizer.from_json(tok.to_json()).encode("hello") == tok.encode("hello")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.encode("xyz")
    with pytest.raises(ValueError, match="out of range"):
        tok.decode([99])


def test_dataset_batches_are_shifted_seeded_and_cached(text_file, tmp_path):
    with open(text_file) as f:
        tok = CharTokenizer.from_text(f.read())
    ds = TokenDataset.from_text_file(text_file, tok, 32, cache_dir=str(tmp_path))
    assert len(os.listdir(tmp_path)) == 1  # the .bin cache
    n_train, n_val = len(ds.splits["train"]), len(ds.splits["val"])
    assert abs(n_val / (n_train + n_val) - 0.1) < 1e-3
    pcp.random.seed(3)
    x, y = ds.get_batch("train", 8)
    assert x.shape == (8, 32) and x.dtype == pcp.int64
    np.testing.assert_array_equal(x.numpy()[:, 1:], y.numpy()[:, :-1])
    pcp.random.seed(3)
    x2, _ = ds.get_batch("train", 8)
    np.testing.assert_array_equal(x.numpy(), x2.numpy())
    # each row is a real window of the text
    with open(text_file) as f:
        text = f.read()
    assert tok.decode(x.numpy()[0]) in text
    ds2 = TokenDataset.from_text_file(text_file, tok, 32, cache_dir=str(tmp_path))  # from the cache
    np.testing.assert_array_equal(np.asarray(ds2.splits["val"]), np.asarray(ds.splits["val"]))
    with pytest.raises(ValueError, match="split"):
        ds.get_batch("test", 2)


def test_shakespeare_prefers_local_copies(text_file, tmp_path, monkeypatch):
    assert shakespeare(text_file) == text_file
    monkeypatch.setenv("PCP_DATA", os.path.dirname(text_file))
    assert os.path.samefile(shakespeare(), text_file)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        shakespeare(str(tmp_path / "missing.txt"))


def test_the_main_job_text_ships_with_the_package(monkeypatch):
    # No path, no $PCP_DATA, no network: the packaged copy, never a download.
    import urllib.request
    from pcp.data import sources

    def offline(*a, **k):
        raise AssertionError("the main job must not touch the network")
    monkeypatch.delenv("PCP_DATA", raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    path = shakespeare()
    assert path == sources.PACKAGED_SHAKESPEARE and os.path.dirname(path) == os.path.dirname(sources.__file__)
    text = sources.training_text()
    assert len(text) == 1115394 and text.startswith("First Citizen:")


def test_training_text_reads_a_file_or_a_folder_of_text_files(tmp_path, monkeypatch):
    from pcp.data import read_text, training_text
    monkeypatch.delenv("PCP_DATA", raising=False)
    (tmp_path / "b").mkdir()
    (tmp_path / "a.txt").write_text("héllo", encoding="utf-8")  # no final newline: one is added
    (tmp_path / "b" / "c.txt").write_text("wörld\n", encoding="utf-8")
    (tmp_path / "b" / "notes.md").write_text("not text for training")
    assert read_text(str(tmp_path / "a.txt")) == "héllo"
    assert training_text(str(tmp_path)) == "héllo\nwörld\n"  # sorted paths, .txt only
    monkeypatch.setenv("PCP_DATA", str(tmp_path / "b"))
    assert training_text() == "wörld\n"
    (tmp_path / "bad.txt").write_bytes(b"ok \xff\xfe")
    with pytest.raises(ValueError, match=r"bad.txt is not UTF-8 text \(invalid start byte at byte 3\)"):
        read_text(str(tmp_path))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no .txt files"):
        read_text(str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_text(str(tmp_path / "missing"))


def test_train_on_a_folder_of_text_and_a_clear_error_for_bad_data(tmp_path, capsys):
    from pcp.cli import main
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    rng = np.random.default_rng(1)
    for i in range(3):
        (corpus / f"part{i}.txt").write_text("\n".join(" ".join(rng.choice(["to", "be", "or", "not"], 6))
                                                       for _ in range(400)))
    args = ["train", "--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16",
            "--batch-size", "4", "--max-iters", "4", "--eval-interval", "2", "--eval-iters", "1",
            "--sample-tokens", "0", "--no-dashboard"]
    assert main(args + ["--data", str(corpus), "--out", str(tmp_path / "run")]) == 0
    assert "done: val loss" in capsys.readouterr().out
    (corpus / "part1.txt").write_bytes(b"\x80 not utf-8")
    assert main(args + ["--data", str(corpus), "--out", str(tmp_path / "run2")]) == 2
    assert "part1.txt is not UTF-8 text" in capsys.readouterr().err


def test_a_text_without_newlines_trains_and_samples(tmp_path):
    # The closing sample starts from a newline where the vocabulary has one, else from the first
    # token (a one-line text once crashed here, after training).
    from pcp.train.loop import train
    path = tmp_path / "one_line.txt"
    path.write_text("to be or not to be that is the question " * 300)
    result = train(tiny(str(path), tmp_path / "run", max_iters=4, eval_interval=2, sample_tokens=8))
    assert np.isfinite(result["val_loss"]) and len(result["sample"]) >= 8
    assert "\n" not in result["sample"] and set(result["sample"]) <= set(path.read_text())


def test_rng_state_arguments_are_checked():
    with pytest.raises(ValueError, match=r"set_rng_state: offset must be an integer in \[0, 2\*\*64\), got -1"):
        pcp.random.set_rng_state(0, -1)
    with pytest.raises(TypeError, match="set_rng_state: seed must be an int, got float"):
        pcp.random.set_rng_state(1.5, 0)
    with pytest.raises(ValueError, match="seed: the seed must be an integer"):
        pcp.random.seed(2 ** 64)


def test_bpe_round_trip_on_a_built_vocabulary(tmp_path):
    from pcp.data.bpe import bytes_to_unicode
    # A small byte-level BPE: every byte is a token, plus merges for frequent pairs.
    b2u = bytes_to_unicode()
    vocab = {c: i for i, c in enumerate(b2u.values())}
    merges = [("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("o", "r")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n" + "\n".join(f"{a} {b}" for a, b in merges) + "\n")
    tok = BPETokenizer.from_pretrained(str(tmp_path))
    ids = tok.encode("hello world")
    assert ids[0] == vocab["hell"] and vocab["Ġw"] in ids and vocab["or"] in ids
    for s in ["hello world", "Unicode: héllo ✓ 123!", "  spaces\n\tand tabs  "]:
        assert tok.decode(tok.encode(s)) == s
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.decode([10 ** 6])
    tok.save_pretrained(str(tmp_path / "saved"))
    again = BPETokenizer.from_pretrained(str(tmp_path / "saved"))
    assert again.encode("hello world, héllo") == tok.encode("hello world, héllo")


def test_training_lowers_the_loss_and_writes_outputs(text_file, tmp_path):
    cfg = tiny(text_file, tmp_path, max_iters=30, lr_decay_iters=30, eval_interval=15, learning_rate=1e-2)
    summary = train(cfg, report=LogLines(io.StringIO()))
    m = summary["metrics"]
    assert [r["iter"] for r in m] == [0, 15, 30]
    assert m[-1]["val_loss"] < m[0]["val_loss"] - 0.3
    for name in ("ckpt.safetensors", "best.safetensors", "ckpt.json", "metrics.jsonl", "tokenizer.json"):
        assert os.path.isfile(tmp_path / name), name
    if _has_matplotlib():
        assert (tmp_path / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert lines == m and set(lines[0]) == {"iter", "train_loss", "val_loss", "lr", "tokens_per_s"}


def test_resume_continues_bit_for_bit(text_file, tmp_path):
    full = train(tiny(text_file, tmp_path / "full"), report=LogLines(io.StringIO()))
    train(tiny(text_file, tmp_path / "cut", max_iters=10), report=LogLines(io.StringIO()))
    resumed = train(tiny(text_file, tmp_path / "cut", max_iters=20), resume=True, report=LogLines(io.StringIO()))
    assert [r["val_loss"] for r in resumed["metrics"]] == [r["val_loss"] for r in full["metrics"]]
    for (n1, p1), (n2, p2) in zip(full["model"].named_parameters(), resumed["model"].named_parameters()):
        assert n1 == n2
        np.testing.assert_array_equal(p1.numpy(), p2.numpy(), err_msg=n1)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_compiled_training_step_trains_as_the_eager_one(text_file, tmp_path, dtype):
    quiet = LogLines(io.StringIO())
    eager = train(tiny(text_file, tmp_path / "eager", dtype=dtype), report=quiet)  # dropout 0.1
    said = []
    compiled = train(tiny(text_file, tmp_path / "compiled", dtype=dtype, compile=True), report=said.append)
    summary = [m["text"] for m in said if m["kind"] == "message" and m["text"].startswith("plan:")]
    assert len(summary) == 1 and " ops traced, " in summary[0], summary
    np.testing.assert_allclose([r["val_loss"] for r in compiled["metrics"]], [r["val_loss"] for r in eager["metrics"]],
                               rtol=1e-6)
    for (n1, p1), (_, p2) in zip(eager["model"].named_parameters(), compiled["model"].named_parameters()):
        np.testing.assert_allclose(p2.numpy(), p1.numpy(), rtol=1e-5, atol=1e-6, err_msg=n1)
    with pytest.raises(ValueError, match="compile does not run with float16"):
        tiny(text_file, tmp_path / "f16", dtype="float16", compile=True).validate()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_mixed_precision_follows_float32_and_resumes_bit_for_bit(text_file, tmp_path, dtype):
    quiet = LogLines(io.StringIO())
    ref = train(tiny(text_file, tmp_path / "f32", dtype="float32"), report=quiet)
    full = train(tiny(text_file, tmp_path / "full", dtype=dtype), report=quiet)
    for a, b in zip(ref["metrics"], full["metrics"]):
        assert abs(a["val_loss"] - b["val_loss"]) <= 0.02 * a["val_loss"], (a, b)
    train(tiny(text_file, tmp_path / "cut", max_iters=10, dtype=dtype), report=quiet)
    resumed = train(tiny(text_file, tmp_path / "cut", max_iters=20, dtype=dtype), resume=True, report=quiet)
    assert [r["val_loss"] for r in resumed["metrics"]] == [r["val_loss"] for r in full["metrics"]]
    for (n1, p1), (_, p2) in zip(full["model"].named_parameters(), resumed["model"].named_parameters()):
        np.testing.assert_array_equal(p1.numpy(), p2.numpy(), err_msg=n1)


def test_dtype_choice():
    from pcp.train.loop import compute_dtype
    assert compute_dtype(preset("shakespeare-char"), "cpu") == pcp.float32  # auto: float32 on a CPU
    assert compute_dtype(preset("shakespeare-char", dtype="float16"), "cpu") == pcp.float16
    with pytest.raises(ValueError, match="dtype must be auto, float32, bfloat16 or float16"):
        preset("shakespeare-char", dtype="int8").validate()


def test_cli_train_and_sample(text_file, tmp_path, capsys):
    from pcp.cli import main
    out = tmp_path / "run"
    rc = main(["train", "--data", text_file, "--out", str(out), "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
               "--block-size", "16", "--batch-size", "4", "--max-iters", "4", "--eval-interval", "2",
               "--eval-iters", "1", "--sample-tokens", "0"])
    assert rc == 0 and "done: val loss" in capsys.readouterr().out
    rc = main(["sample", "--checkpoint", str(out), "--prompt", "the", "--max-new-tokens", "20"])
    text = capsys.readouterr().out
    assert rc == 0 and text.startswith("the") and len(text.rstrip("\n")) >= 23
    assert main(["train", "--preset", "nope"]) == 2
    assert "unknown preset" in capsys.readouterr().err


def test_train_and_export_in_hugging_face_layout(text_file, tmp_path, capsys):
    # --export-hf writes the final model; `pcp export-hf` a run's best checkpoint. Both load back
    # into PCP with the weights of the checkpoint they came from (transformers: tests/test_gpt2.py).
    from pcp.cli import _load_trained, main
    from pcp.models import GPT2
    out, final, best = tmp_path / "run", tmp_path / "final", tmp_path / "best"
    args = ["train", "--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16", "--batch-size", "4",
            "--max-iters", "6", "--eval-interval", "3", "--eval-iters", "1", "--sample-tokens", "0",
            "--no-dashboard", "--data", text_file, "--out", str(out)]
    assert main(args + ["--export-hf", str(final)]) == 0
    assert main(["export-hf", str(out), str(best)]) == 0
    assert "AutoTokenizer.from_pretrained" in capsys.readouterr().out
    for exported, ckpt in ((final, out / "ckpt.safetensors"), (best, out / "best.safetensors")):
        assert {"model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json"} <= set(os.listdir(exported))
        model, tok = _load_trained(str(ckpt))
        idx = pcp.tensor(np.random.default_rng(0).integers(0, tok.vocab_size, (2, 16)))
        np.testing.assert_array_equal(GPT2.from_pretrained(str(exported))(idx)[0].numpy(), model(idx)[0].numpy())
