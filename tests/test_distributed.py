"""DiLoCo on a local Ray cluster: the outer step, compression, a worker really killed mid-round,
a worker joining late, checkpoints and resume, bad configuration."""
import importlib.util
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import pcp
from pcp.distributed import DiLoCoConfig, Shepherd, decode, encode
from pcp.distributed.compression import nbytes
from pcp.distributed.cluster import check_reachable, init_ray, shutdown_ray
from pcp.distributed.worker import state_digest
from pcp.train import preset

ray = pytest.importorskip("ray", reason="Ray is not installed")


GPUS = [d for d in pcp.devices() if d != "cpu"]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    init_ray(num_gpus=len(GPUS))  # Ray counts NVIDIA GPUs only: PCP's Vulkan devices are the GPUs here
    yield
    shutdown_ray()


@pytest.fixture
def tiny(tmp_path, text_file):
    """A TrainConfig of a one-layer GPT writing to this test's folder."""
    def make(**kw):
        kw = {"n_layer": 1, "n_head": 2, "n_embd": 32, "block_size": 32, "batch_size": 4, "eval_iters": 2,
              "warmup_iters": 2, "out": str(tmp_path), **kw}
        return preset("shakespeare-char-cpu", data=text_file, **kw)
    return make


def params64(sh):
    return {k: v.astype(np.float64) for k, v in sh.global_state().items() if k in sh.names}


def test_local_cluster_is_on_loopback():
    assert {n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]} == {"127.0.0.1"}


@pytest.mark.parametrize("weighting", ["uniform", "tokens"])
def test_outer_step_is_nesterov_on_the_weighted_average_pseudo_gradient(tiny, weighting):
    # Worker 1 takes batches half the size of worker 0's: by tokens it weighs half as much.
    sh = Shepherd(tiny(), DiLoCoConfig(workers=2, inner_steps=3, rounds=2, round_timeout=120, weighting=weighting,
                                       batch_sizes=[4, 2]))
    weights = np.array([1.0, 1.0] if weighting == "uniform" else [2 / 3, 1 / 3])
    try:
        buf = None
        for _ in range(2):
            before, digest = params64(sh), state_digest(sh.global_state())
            sh.run_round()
            assert sorted(r["rank"] for r in sh.last_results) == [0, 1]
            assert all(r["start_digest"] == digest for r in sh.last_results)  # both started from the global model
            deltas = [decode(r["pseudo_grad"]) for r in sh.last_results]
            assert [r["tokens"] for r in sh.last_results] == [3 * 4 * 32, 3 * 2 * 32]
            avg = {k: np.average([d[k].astype(np.float64) for d in deltas], axis=0, weights=weights) for k in before}
            assert max(np.abs(v).max() for v in avg.values()) > 1e-4  # the workers did move
            buf = avg if buf is None else {k: 0.9 * buf[k] + avg[k] for k in avg}  # PyTorch's Nesterov SGD
            after = params64(sh)
            for k in before:
                np.testing.assert_allclose(after[k], before[k] - 0.7 * (avg[k] + 0.9 * buf[k]), rtol=1e-5, atol=1e-6)
        rec = sh.history[-1]
        n_params = sum(v.size for v in before.values())
        assert rec["bytes_received"] == 2 * 4 * n_params  # two float32 pseudo-gradients
        assert rec["bytes_sent"] >= 2 * 4 * n_params
        # Each checkpoint round, each worker sends its AdamW moments (twice the model, float32) and
        # step counts, counted apart from DiLoCo's exchange.
        assert 2 * 2 * 4 * n_params <= rec["state_bytes"] <= 2 * 2 * 4 * n_params + 2 * 8 * len(before)
        assert sorted(rec["arrivals"]) == [0, 1] and all(0 < t <= rec["seconds"] for t in rec["arrivals"].values())
    finally:
        sh.shutdown()


# Each kind's worst error as a fraction of its block's largest magnitude, and bytes per value.
BOUNDS = {"none": (0.0, 4), "float16": (2.0 ** -11, 2), "int8": (0.5 / 127, 1), "int4": (0.5 / 7, 0.5),
          "fp4": (1.0 / 6, 0.5)}


@pytest.mark.parametrize("kind", sorted(BOUNDS))
def test_compression_error_is_bounded_per_block_and_bytes_are_counted(kind):
    rng = np.random.default_rng(0)
    # Blocks of very different scales (a large outlier costs only its own block), a ragged tail,
    # all zeros, and values on the quantisers' ties.
    a = rng.normal(size=(64, 33)).astype(np.float32) * np.logspace(-6, 0, 33, dtype=np.float32)
    a[3, 5] = 1e4
    x = {"a": a, "b": np.zeros(5, np.float32), "c": np.linspace(-6, 6, 49, dtype=np.float32)}
    enc = encode(x, kind)
    out = decode(enc)
    tol, per_value = BOUNDS[kind]
    for k in x:
        assert out[k].dtype == np.float32 and out[k].shape == x[k].shape
        flat, got = x[k].reshape(-1).astype(np.float64), out[k].reshape(-1).astype(np.float64)
        for lo in range(0, flat.size, 64):  # per block of 64; float16 per value, and its subnormals' spacing
            block = flat[lo:lo + 64]
            bound = tol * (np.abs(block) if kind == "float16" else np.abs(block).max()) * 1.0001
            bound = bound + (2.0 ** -25 if kind == "float16" else 0.0)
            assert np.all(np.abs(got[lo:lo + 64] - block) <= bound), (k, lo)
    blocks = sum(-(-v.size // 64) for v in x.values())
    want = sum(v.size for v in x.values()) * per_value if kind in ("none", "float16") else blocks * (64 * per_value + 4)
    assert nbytes(enc) == want
    if kind in ("int4", "fp4"):  # the wire bytes: about 7x fewer than float32's
        assert sum(v.nbytes for v in x.values()) / nbytes(enc) > 6


def test_a_round_closes_on_time_with_the_steps_each_worker_took(tiny):
    """round_timeout: workers stop stepping when it runs out and send what they have; the outer
    average weighs each by the tokens it processed."""
    sh = Shepherd(tiny(), DiLoCoConfig(workers=2, inner_steps=100_000, rounds=1, round_timeout=2.0,
                                       batch_sizes=[4, 1]))
    try:
        before = params64(sh)
        rec = sh.run_round()
        steps = [r["steps"] for r in sh.last_results]
        assert rec["workers_in"] == [0, 1] and all(0 < n < 100_000 for n in steps), steps
        assert rec["worker_tokens"] == {0: steps[0] * 4 * 32, 1: steps[1] * 32}
        tokens = np.array([r["tokens"] for r in sh.last_results], np.float64)
        deltas = [decode(r["pseudo_grad"]) for r in sh.last_results]
        after = params64(sh)
        for k in before:  # the first outer step: p - lr * (1 + momentum) * average
            avg = np.average([d[k].astype(np.float64) for d in deltas], axis=0, weights=tokens)
            np.testing.assert_allclose(after[k], before[k] - 0.7 * 1.9 * avg, rtol=1e-5, atol=1e-6)
    finally:
        sh.shutdown()


@pytest.mark.parametrize("streaming", [False, True])
def test_a_round_whose_outer_step_is_not_finite_is_rolled_back(tiny, streaming):
    class Poisoned(Shepherd):
        """Round 2's pseudo-gradients arrive with a NaN, as from a worker that diverged."""
        def apply_outer_step(self, pseudo_grad):
            if self.round == 1:
                first = next(iter(pseudo_grad))  # a parameter of the round's fragment
                pseudo_grad = dict(pseudo_grad, **{first: pseudo_grad[first] * np.nan})
            super().apply_outer_step(pseudo_grad)

    messages = []
    # Streaming with overlap: the round started ahead on the poisoned one is dropped too.
    more = dict(fragments=2, overlap=1) if streaming else {}
    sh = Poisoned(tiny(n_layer=2), DiLoCoConfig(workers=2, inner_steps=2 * (1 + streaming), rounds=3, round_timeout=120,
                                                **more),
                  report=lambda e: messages.append(e.get("text")) if e["kind"] == "message" else None)
    try:
        sh.run_round()
        after_one = {k: v.copy() for k, v in sh.global_state().items()}
        momentum = {k: v["momentum_buffer"].numpy().copy() for k, v in sh.outer.state.items()}
        inner = {r: s["state"][0]["exp_avg"].copy() for r, s in sh.inner_states.items()}
        rec = sh.run_round()
        assert rec["rolled_back"].startswith("the outer step made 1 parameters non-finite")
        assert any("round 2 rolled back" in (m or "") for m in messages)
        assert state_digest(sh.global_state()) == state_digest(after_one)
        for k, v in sh.outer.state.items():
            np.testing.assert_array_equal(v["momentum_buffer"].numpy(), momentum[k])
        assert all(np.array_equal(sh.inner_states[r]["state"][0]["exp_avg"], inner[r]) for r in inner)
        rec = sh.run_round()  # the run goes on from where round 2 started
        assert rec["rolled_back"] is None and math.isfinite(rec["val_loss"])
        assert all(r["start_digest"] == state_digest(after_one) for r in sh.last_results)
    finally:
        sh.shutdown()


def test_streaming_fragments_synchronise_in_turn_with_a_fraction_of_the_bytes(tiny):
    """--fragments 2: the two blocks' parameters (with the embeddings and final norm shared out)
    synchronise in turn, every H / 2 steps; a round's outer step moves only its fragment, and
    carries about half the bytes of a whole-model round."""
    cfg = tiny(n_layer=2)
    sh = Shepherd(cfg, DiLoCoConfig(workers=2, inner_steps=4, rounds=2, fragments=2, round_timeout=120))
    try:
        frags = sh.fragments
        assert sorted(sum(frags, [])) == sorted(sh.names) and all(frags)
        assert all(n.startswith("h.0.") for n in frags[0] if n.startswith("h."))
        sizes = {k: v.size * 4 for k, v in sh.global_state().items()}
        full = sum(sizes.values())
        buf = {}
        for rnd in range(4):
            before = params64(sh)
            rec = sh.run_round()
            f = rnd % 2
            assert rec["fragment"] == f and rec["inner_steps"] == 2 * (rnd + 1)
            deltas = [decode(r["pseudo_grad"]) for r in sh.last_results]
            assert all(sorted(d) == sorted(frags[f]) for d in deltas)
            after = params64(sh)
            for k in sh.names:
                if k not in frags[f]:
                    np.testing.assert_array_equal(after[k], before[k])  # not this round's fragment
                    continue
                avg = np.mean([d[k].astype(np.float64) for d in deltas], axis=0)
                buf[k] = avg if k not in buf else 0.9 * buf[k] + avg
                np.testing.assert_allclose(after[k], before[k] - 0.7 * (avg + 0.9 * buf[k]), rtol=1e-5, atol=1e-6)
            frag_bytes = sum(sizes[k] for k in frags[f])
            assert rec["bytes_received"] == 2 * frag_bytes
            if rnd == 0:  # the workers fetch the whole model once
                assert rec["bytes_sent"] == 2 * full
            else:  # then only the last round's fragment's outer step, to merge
                assert rec["bytes_sent"] == 2 * sum(sizes[k] for k in frags[1 - f])
                assert rec["round_bytes"] < 0.75 * 4 * full
        assert math.isfinite(rec["val_loss"]) and rec["val_loss"] < sh.history[0]["val_loss"]
    finally:
        sh.shutdown()


def test_pipelined_rounds_give_the_bits_of_waiting_ones(tiny, tmp_path):
    """With overlap, each worker starts its next round while the shepherd averages, steps,
    evaluates and checkpoints; it waits for the step only where it merges it, so the run is the
    one that waits for everything, bit for bit."""
    finals = {}
    for pipeline in (False, True):
        dcfg = DiLoCoConfig(workers=2, inner_steps=4, rounds=2, fragments=2, overlap=1, compression="int8",
                            pipeline=pipeline, round_timeout=120)
        sh = Shepherd(tiny(n_layer=2, out=str(tmp_path / str(pipeline))), dcfg)
        try:
            assert sh.pipelined == pipeline
            history = sh.run()
            finals[pipeline] = ({k: v.copy() for k, v in sh.global_state().items()}, [r["val_loss"] for r in history],
                                [r["bytes_sent"] for r in history])
        finally:
            sh.shutdown()
    assert finals[True][1] == finals[False][1] and finals[True][2] == finals[False][2]
    for k, v in finals[False][0].items():
        np.testing.assert_array_equal(finals[True][0][k], v, err_msg=k)


def test_a_round_finished_on_a_thread_gives_the_result_finished_at_once(tiny):
    """finish_later: run_round returns once the steps are queued and the next round can start
    while a thread downloads and encodes the result; collect() then gives what an inline finish
    gives, AdamW state, val loss and digest included; a failed round fails its collect too."""
    from pcp.train.loop import build_model
    from pcp.distributed import Worker
    cfg = tiny(n_layer=2)
    tokens = (np.arange(4000) * 7) % 60
    spec = {"train_config": cfg.to_dict(), "diloco_config": DiLoCoConfig().to_dict(), "vocab_size": 60,
            "n_train": 3500, "rank": 0}
    params = {k: v.numpy().copy() for k, v in build_model(cfg, 60).state_dict().items()}
    try:
        results = {}
        for later in (False, True):
            w = Worker(spec)
            out = [w.run_round(r, params, 3, 3 * r, tokens, evaluate=r == 1, keep_state=r == 1, finish_later=later)
                   for r in range(2)]  # round 1 starts before round 0 is collected
            if later:
                assert out[0] == {"rank": 0, "round": 0, "steps": 3}
                out = [w.collect(r, timeout=60) for r in range(2)]
                assert all(o["timings"]["background"] > 0 for o in out)
                with pytest.raises(ValueError):
                    w.run_round(2, {"nope": np.zeros(1, np.float32)}, 1, 6, tokens, finish_later=True)
                with pytest.raises(ValueError):
                    w.collect(2, timeout=60)
                with pytest.raises(TimeoutError):
                    w.collect(5, timeout=0.1)
            results[later] = out
        for a, b in zip(results[False], results[True]):
            for key in ("train_loss", "last_loss", "val_loss", "steps", "start_digest", "bytes", "tokens"):
                assert a[key] == b[key], key
            for k, v in decode(a["pseudo_grad"]).items():
                np.testing.assert_array_equal(decode(b["pseudo_grad"])[k], v, err_msg=k)
        assert results[True][1]["val_loss"] is not None and results[True][0]["val_loss"] is None
        state, want = results[True][1]["inner_state"], results[False][1]["inner_state"]
        assert state["param_groups"] == want["param_groups"] and state["state"].keys() == want["state"].keys()
        for i, s in want["state"].items():
            for k, v in s.items():
                np.testing.assert_array_equal(state["state"][i][k], v, err_msg=f"{i}.{k}")
    finally:
        pcp.set_num_threads(0)


def test_merging_when_ready_never_waits_and_trains(tiny):
    """merge_when_ready: each worker merges the outer step at the first step from tau on at which
    it has arrived (at the latest at the round's end); every worker takes part in every round and
    the global model learns."""
    dcfg = DiLoCoConfig(workers=2, inner_steps=6, rounds=4, overlap=1, merge_when_ready=True, round_timeout=120)
    sh = Shepherd(tiny(), dcfg)
    try:
        history = sh.run()
    finally:
        sh.shutdown()
    for rec in history[1:]:
        assert rec["workers_in"] == [0, 1] and not rec["rolled_back"]
        merged = [t["merged_at"] for t in rec["worker_timings"].values()]
        assert all((m is None) == (rec["round"] == 1) for m in merged), merged  # round 1 has nothing to merge
        assert all(m is None or 1 <= m <= 6 for m in merged), merged
    assert math.isfinite(history[-1]["val_loss"]) and history[-1]["val_loss"] < history[0]["val_loss"]


def test_a_streaming_worker_merges_a_fragment_tau_steps_late(tiny):
    """A worker (in this process) applies a fragment's outer step to the global values it knows,
    merges them into its own with merge_alpha, and takes its pseudo-gradients against them."""
    from pcp.train.loop import build_model
    from pcp.distributed import Worker
    import pcp as p
    cfg = tiny(n_layer=2)
    tokens = (np.arange(4000) * 7) % 60
    w = Worker({"train_config": cfg.to_dict(), "diloco_config": DiLoCoConfig(fragments=2).to_dict(),
                "vocab_size": 60, "n_train": 3500, "rank": 0})
    try:
        full = {k: v.numpy().copy() for k, v in build_model(cfg, 60).state_dict().items()}
        frags = [[k for k in full if k.startswith("h.0.")], [k for k in full if not k.startswith("h.0.")]]
        first = w.run_round(0, {}, 2, 0, tokens, stream={"send": frags[0], "full": full, "merge_at": 0, "alpha": 0.0})
        assert first["fetched_bytes"] == sum(v.nbytes for v in full.values())
        own0 = {k: full[k] - decode(first["pseudo_grad"])[k] for k in frags[0]}  # its values after two steps
        step = encode({k: np.full_like(full[k], 0.01) for k in frags[0]}, "none")  # fragment 0's outer step
        second = w.run_round(1, step, 0, 2, tokens, stream={"send": frags[1], "full": full, "merge_at": 1, "alpha": 0.25})
        assert second["fetched_bytes"] == 0 and second["steps"] == 0
        now = {k: v.numpy() for k, v in w.model.state_dict().items()}
        for k in frags[0]:  # merged at the end: the round had no step left to merge at
            np.testing.assert_allclose(now[k], 0.25 * own0[k] + 0.75 * (full[k] + 0.01), rtol=1e-6, atol=1e-7)
        for k in frags[1]:  # against the values it fetched: fragment 1 was never synchronised since
            np.testing.assert_allclose(decode(second["pseudo_grad"])[k], full[k] - now[k], rtol=1e-6, atol=1e-7)
    finally:
        p.set_num_threads(0)


def test_a_pipelined_round_runs_its_last_steps_after_its_call_returns(tiny):
    """A pipelined CPU round returns a few steps early (as many as the next call's trip takes)
    and runs them on a thread of its own, so the next round starts as they end rather than a
    round trip later: the same bits as every step on the call's thread; when those steps fail,
    collect() raises their error and the next round refuses to start from what they left."""
    from pcp.train.loop import build_model
    from pcp.distributed import Worker
    cfg = tiny(n_layer=2)
    tokens = (np.arange(4000) * 7) % 60
    spec = {"train_config": cfg.to_dict(), "diloco_config": DiLoCoConfig().to_dict(), "vocab_size": 60,
            "n_train": 3500, "rank": 0}
    full = {k: v.numpy().copy() for k, v in build_model(cfg, 60).state_dict().items()}
    early, late = Worker(spec), Worker(spec)
    early._tail_steps, late._tail_steps = (lambda n: 3), (lambda n: 0)
    try:
        for rnd in range(3):
            got = [w.run_round(rnd, full, 6, 6 * rnd, tokens, finish_later=True) for w in (early, late)]
            assert [g["steps"] for g in got] == [None, 6]  # still stepping when it returned; done
            got = [w.collect(rnd, timeout=60) for w in (early, late)]
            assert [g["steps"] for g in got] == [6, 6] and [g["timings"]["tail"] for g in got] == [3, 0]
            assert got[0]["train_loss"] == got[1]["train_loss"]
            for k, v in decode(got[1]["pseudo_grad"]).items():
                np.testing.assert_array_equal(decode(got[0]["pseudo_grad"])[k], v, err_msg=k)
        # A step to merge at step 4: merged before the call returns (which so waits for the
        # shepherd's step, as the rounds it starts ahead must): 1 step left after it, not 3.
        outer = encode({k: np.full_like(v, 0.01) for k, v in full.items()}, "none")
        stream = {"send": list(full), "full": full, "merge_at": 4, "alpha": 0.5}
        assert early.run_round(3, outer, 6, 18, tokens, stream=stream, finish_later=True)["steps"] is None
        assert early.collect(3, timeout=60)["timings"]["tail"] == 1
        step = early.step
        early.step = lambda x, y: step(x, y) if early._progress["step"] < 4 else 1 / 0
        early.run_round(4, full, 6, 24, tokens, finish_later=True)
        with pytest.raises(ZeroDivisionError):
            early.collect(4, timeout=60)
        early.step = step
        with pytest.raises(RuntimeError, match="round 5 cannot start: the last round's steps failed"):
            early.run_round(5, full, 6, 30, tokens, finish_later=True)
    finally:
        pcp.set_num_threads(0)


def test_a_worker_beginning_anew_in_a_round_started_ahead_takes_the_posted_model_and_step(tiny):
    """A worker restarted after the shepherd started its next round ahead has no model of its
    own: it takes the model that round started from and the round's outer step from the
    mailbox once posted (each a reference there), and merges the step into that model."""
    from pcp.train.loop import build_model
    from pcp.distributed import Worker
    from pcp.distributed.cluster import Mailbox
    cfg = tiny(n_layer=2)
    box = ray.remote(num_cpus=0)(Mailbox).remote()
    w = Worker({"train_config": cfg.to_dict(), "diloco_config": DiLoCoConfig(fragments=2).to_dict(),
                "vocab_size": 60, "n_train": 3500, "rank": 0})
    try:
        full = {k: v.numpy().copy() for k, v in build_model(cfg, 60).state_dict().items()}
        frags = [[k for k in full if k.startswith("h.0.")], [k for k in full if not k.startswith("h.0.")]]
        step = encode({k: np.full_like(full[k], 0.01) for k in frags[0]}, "none")
        asked = {"step": [box.get.remote(0)], "start": [box.get.remote(0, "start")]}  # asked before posted
        box.put.remote(0, [ray.put(full)], "start")
        box.put.remote(0, [ray.put(step)])
        out = w.run_round(1, asked["step"], 0, 2, (np.arange(4000) * 7) % 60, stream={
            "send": frags[1], "full": asked["start"], "full_is_current": False, "merge_at": 1, "alpha": 0.0})
        assert out["fetched_bytes"] == sum(v.nbytes for v in full.values())
        now = {k: v.numpy() for k, v in w.model.state_dict().items()}
        for k in frags[0]:
            np.testing.assert_allclose(now[k], full[k] + 0.01, rtol=1e-6, atol=1e-7, err_msg=k)
        for k in frags[1]:
            np.testing.assert_array_equal(now[k], full[k], err_msg=k)
    finally:
        ray.kill(box)
        pcp.set_num_threads(0)


def test_a_killed_worker_is_left_out_and_rejoins(tiny):
    cfg = tiny(n_embd=64, block_size=64, batch_size=8)
    killed = {}

    def report(e):
        # Mid-round 1 (worker 1 has started its steps but not finished them): SIGKILL its process.
        if e["kind"] == "progress" and e["round"] == 1 and not killed:
            step = e["workers"][1].get("live_step") or 0
            if 1 <= step < 500:
                os.kill(killed.setdefault("pid", pid), signal.SIGKILL)
                killed["at_step"] = step

    # Rounds long enough (600 steps) for the shepherd's progress polls (every 0.5 s) to see them.
    sh = Shepherd(cfg, DiLoCoConfig(workers=2, inner_steps=600, rounds=3, round_timeout=120), report=report)
    try:
        pid = sh.worker_pid(1)
        history = sh.run()
    finally:
        sh.shutdown()
    assert killed, "the worker was never caught mid-round"
    assert [r["round"] for r in history] == [0, 1, 2, 3]
    assert history[2]["workers_in"] == [0] and history[2]["workers_lost"] == [1]
    assert history[3]["workers_in"] == [0, 1]  # restarted by Ray, back with the current parameters
    assert all(math.isfinite(r["val_loss"]) for r in history)
    assert history[3]["val_loss"] < history[0]["val_loss"]


def test_compiled_inner_steps_train_as_eager_ones(tiny, tmp_path):
    """pcp diloco --compile: each worker's inner step is a plan; two rounds end where eager ones do."""
    finals = []
    for compiled in (False, True):
        cfg = tiny(compile=compiled, out=str(tmp_path / f"compiled-{compiled}"))
        sh = Shepherd(cfg, DiLoCoConfig(workers=1, inner_steps=3, rounds=2, round_timeout=120))
        try:
            sh.run()
            finals.append({k: v.numpy() for k, v in sh.model.state_dict().items()})
        finally:
            sh.shutdown()
    for k in finals[0]:
        np.testing.assert_allclose(finals[1][k], finals[0][k], rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.skipif(not GPUS, reason="no GPU")
def test_workers_on_a_gpu_share_it_and_train_as_cpu_workers_do(tiny, tmp_path):
    """--worker-device gpu: two workers share the one GPU (half of it each in Ray's count), run
    their inner steps there and end two rounds where CPU workers do (to float32 kernel order:
    float32 products, which a tensor-core GPU would otherwise take in bfloat16)."""
    finals, tables = {}, {}
    for device in ("cpu", "gpu"):
        sh = Shepherd(tiny(out=str(tmp_path / device), dtype="float32"),
                      DiLoCoConfig(workers=2, inner_steps=3, rounds=2, round_timeout=300, worker_device=device))
        try:
            history = sh.run()
            finals[device] = sh.global_state()
            tables[device] = sh.worker_table()
            assert sh.gpus_per_worker == (0 if device == "cpu" else 1 / math.ceil(2 / len(GPUS)))
        finally:
            sh.shutdown()
        assert [r["workers_in"] for r in history[1:]] == [[0, 1], [0, 1]]
    assert {w["device"] for w in tables["cpu"].values()} == {"cpu"}
    assert {w["device"] for w in tables["gpu"].values()} <= set(GPUS)  # e.g. "vulkan:0 (NVIDIA H200)"
    # Both on the one GPU, by its UUID (what tells GPUs apart across processes and APIs).
    uuids = {w["device_uuid"] for w in tables["gpu"].values()}
    assert uuids == {pcp.gpu_info("gpu:0")["uuid"]} and re.fullmatch(r"[0-9a-f]{32}", uuids.pop())
    for k in finals["cpu"]:
        np.testing.assert_allclose(finals["gpu"][k], finals["cpu"][k], rtol=1e-3, atol=1e-4, err_msg=k)


def test_a_worker_joining_later_gets_the_current_parameters(tiny):
    sh = Shepherd(tiny(), DiLoCoConfig(workers=1, inner_steps=2, rounds=2, round_timeout=120))
    try:
        sh.run_round()
        rank = sh.add_worker()
        digest = state_digest(sh.global_state())
        sh.run_round()
        assert sorted(r["rank"] for r in sh.last_results) == [0, rank]
        assert all(r["start_digest"] == digest for r in sh.last_results)
    finally:
        sh.shutdown()


def test_a_checkpoint_written_in_the_background_raises_its_error(tiny, monkeypatch):
    """save(wait=False) copies the run and writes it on a thread; a write that fails raises at
    wait_saved() (run() waits for its last checkpoint), not never."""
    import pcp.train.checkpoint as checkpoint
    sh = Shepherd(tiny(), DiLoCoConfig(workers=1, inner_steps=2, rounds=1, round_timeout=120))
    try:
        sh.save(wait=False)
        sh.wait_saved()
        assert os.path.exists(os.path.join(sh.cfg.out, "diloco.safetensors"))

        def fail(*args, **kwargs):
            raise OSError("disk full")
        monkeypatch.setattr(checkpoint, "save_checkpoint", fail)
        sh.save(wait=False)
        with pytest.raises(OSError, match="disk full"):
            sh.wait_saved()
        with pytest.raises(OSError, match="disk full"):
            sh.run()
    finally:
        sh.shutdown()


def test_checkpoint_and_resume(tiny):
    sh = Shepherd(tiny(), DiLoCoConfig(workers=1, inner_steps=2, rounds=2, round_timeout=120))
    try:
        sh.run()
        state, momentum = sh.global_state(), {k: v["momentum_buffer"].numpy() for k, v in sh.outer.state.items()}
    finally:
        sh.shutdown()
    again = Shepherd(tiny(), DiLoCoConfig(workers=1, inner_steps=2, rounds=3, round_timeout=120), resume=True)
    try:
        assert again.round == 2 and len(again.history) == 3
        assert state_digest(again.global_state()) == state_digest(state)
        restored = sorted(v["momentum_buffer"].numpy().tobytes() for v in again.outer.state.values())
        assert restored == sorted(v.tobytes() for v in momentum.values())
        again.run()
        assert again.round == 3 and [r["round"] for r in again.history] == [0, 1, 2, 3]
    finally:
        again.shutdown()


def _stopped_and_resumed_equals_uninterrupted(cfg_at, dcfg, stop_after, tmp_path):
    """Runs dcfg to the end, then again stopped after round stop_after (after its checkpoint, as
    a kill would be) and resumed: both end with the same losses and the same bits."""
    class Stop(Exception):
        pass

    def run(out, stop_at=None, resume=False):
        def report(e):
            if e["kind"] == "round" and e["round"] == stop_at:
                raise Stop
        sh = Shepherd(cfg_at(out), dcfg, report=report, resume=resume)
        try:
            try:
                sh.run()
            except Stop:
                assert sh.round == stop_at
            return sh.global_state(), [r["val_loss"] for r in sh.history]
        finally:
            sh.shutdown()

    full, full_losses = run(tmp_path / "full")
    run(tmp_path / "cut", stop_at=stop_after)
    resumed, losses = run(tmp_path / "cut", resume=True)
    assert len(losses) == dcfg.rounds * dcfg.fragments + 1 and losses == full_losses
    for k in full:
        np.testing.assert_array_equal(resumed[k], full[k], err_msg=k)
    return losses


def test_an_interrupted_and_resumed_run_is_exact(tiny, tmp_path):
    """Killed after round 2 of 3 and resumed, a run ends with the same bits as one never stopped:
    the checkpoint holds the workers' inner AdamW state as well as the global model and momentum."""
    _stopped_and_resumed_equals_uninterrupted(lambda out: tiny(out=str(out)), DiLoCoConfig(
        workers=2, inner_steps=4, rounds=3, round_timeout=120), 2, tmp_path)


def test_an_interrupted_and_resumed_streaming_run_is_exact(tiny, tmp_path):
    """Streaming DiLoCo, 2 fragments merged a step late (pipelined), int4: the checkpoint also
    holds each worker's own parameters, the global values it knows and the step it has still to
    merge. Evaluated and checkpointed every other synchronisation: stopped after the third (not
    checkpointed), the run resumes from the second and still ends with the same bits."""
    losses = _stopped_and_resumed_equals_uninterrupted(lambda out: tiny(n_layer=2, out=str(out)), DiLoCoConfig(
        workers=2, inner_steps=4, rounds=2, fragments=2, overlap=1, compression="int4", round_timeout=120,
        eval_every=2, checkpoint_every=2), 3, tmp_path)
    assert [v is None for v in losses] == [False, True, False, True, False]  # the first and last always


def test_a_worker_is_given_its_gpu_by_uuid_whatever_the_order():
    """Ray's GPU ids are CUDA's numbers (or UUIDs); PCP's GPUs are Vulkan's, in another order
    maybe: they meet at the UUID, and only without UUIDs is Ray's id taken as an index."""
    from pcp.distributed.gpus import gpu_index, normalize_uuid
    cuda = [c * 32 for c in "abcd"]  # CUDA's numbering
    vulkan = [cuda[2], cuda[0], cuda[3], cuda[1]]     # the same GPUs in Vulkan's order
    assert [gpu_index(str(i), vulkan, cuda)[0] for i in range(4)] == [1, 3, 0, 2]
    assert gpu_index(i := "GPU-" + cuda[3][:8] + "-" + cuda[3][8:12], vulkan, cuda) == (2, "uuid"), i  # a prefix
    assert gpu_index("3", vulkan, cuda_uuids=[]) == (3, "index")  # no NVML: Ray's id as the index
    assert gpu_index("5", vulkan, cuda_uuids=[]) == (1, "index")
    assert normalize_uuid("GPU-5A1B0c2d-0000-1111-2222-333344445555") == "5a1b0c2d000011112222333344445555"


def test_diloco_refuses_an_out_holding_a_run(tiny):
    sh = Shepherd(tiny(), DiLoCoConfig(workers=1, inner_steps=1, rounds=1, round_timeout=120))
    try:
        sh.run()
    finally:
        sh.shutdown()
    with pytest.raises(ValueError, match="already holds a run"):
        Shepherd(tiny(), DiLoCoConfig(workers=1, inner_steps=1, rounds=1))


def test_bad_configuration_fails_before_anything_starts():
    for bad, msg in ((dict(workers=0), "workers must be at least 1"), (dict(inner_steps=0), "inner_steps"),
                     (dict(eval_every=0), "eval_every"), (dict(checkpoint_every=-1), "checkpoint_every"),
                     (dict(compression="zip"), "compression"), (dict(address="nowhere"), "HOST:PORT"),
                     (dict(worker_dtypes=["float32", "int8"]), "worker_dtypes")):
        with pytest.raises(ValueError, match=msg):
            DiLoCoConfig(**bad).validate()
    with pytest.raises(ConnectionError, match="cannot reach the Ray cluster at 127.0.0.1:9"):
        init_ray("127.0.0.1:9")


def test_cli_runs_resumes_and_plots(tmp_path, text_file, capsys):
    from pcp.cli import main
    flags = ["--workers", "2", "--inner-steps", "3", "--n-layer", "1", "--n-embd", "32", "--n-head", "2",
             "--block-size", "32", "--batch-size", "4", "--eval-iters", "2", "--data", text_file, "--out", str(tmp_path)]
    assert main(["diloco", "--rounds", "2", "--no-dashboard", *flags]) == 0
    out = capsys.readouterr().out
    assert "round 1/2: val" in out and "round 2/2: val" in out
    assert main(["diloco", "--rounds", "3", "--resume", "--dashboard", *flags]) == 0
    out = capsys.readouterr().out  # the dashboard's last frame: round 3 of 3, both workers did its 3 steps
    assert "PCP DiLoCo · finished" in out and "3/3" in out and "round 3/3: val" not in out
    assert len(re.findall(r"^\W*[01]\s+● alive\s+cpu\s+3/3\s+3\s+\d\.\d{4}\s", out, re.M)) == 2, out
    assert (tmp_path / "diloco.safetensors").exists() and (tmp_path / "tokenizer.json").exists()
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "loss.png").stat().st_size > 0
    assert main(["diloco", "--workers", "0", *flags[2:]]) == 2
    assert "workers must be at least 1" in capsys.readouterr().err


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reachable(address):
    try:
        check_reachable(address, timeout=1)
        return True
    except ConnectionError:
        return False


def _wait_for(what, procs, ready, timeout):
    """Waits until ready(); fails at once when one of procs has exited."""
    deadline = time.monotonic() + timeout
    while not ready():
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"waiting for {what}: `{' '.join(p.args[2:])}` exited with {p.returncode}:\n"
                                   f"{open(p.log).read()[-3000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        time.sleep(0.5)


def test_shepherd_and_worker_commands_form_a_cluster_that_trains(tmp_path, text_file):
    """The two-command flow on one machine: `pcp shepherd` (a Ray head) and `pcp worker` (a
    second Ray node) form a cluster, and `pcp diloco --address` trains on both nodes."""
    port = _free_port()
    address = f"127.0.0.1:{port}"
    procs = []

    def start(name, *args):
        log = tmp_path / f"{name}.log"
        with open(log, "w") as f:
            p = subprocess.Popen([sys.executable, "-m", "pcp.cli", *args], stdout=f, stderr=subprocess.STDOUT,
                                 start_new_session=True)  # its own process group: stopped as one below
        p.log = log
        procs.append(p)
        return log

    try:
        start("shepherd", "shepherd", "--port", str(port), "--host", "127.0.0.1")
        _wait_for("the Ray head listening", procs, lambda: _reachable(address), 90)
        worker_log = start("worker", "worker", "--connect", address, "--host", "127.0.0.1")
        _wait_for("the worker node joining", procs, lambda: "Ray runtime started" in worker_log.read_text(), 90)
        run = subprocess.run([sys.executable, "-m", "pcp.cli", "diloco", "--address", address, "--workers", "2",
                              "--inner-steps", "2", "--rounds", "2", "--n-layer", "1", "--n-embd", "32", "--n-head", "2",
                              "--block-size", "32", "--batch-size", "4", "--eval-iters", "2", "--data", text_file,
                              "--out", str(tmp_path / "run"), "--no-dashboard"], capture_output=True, text=True,
                             timeout=180)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "2 workers on 2 Ray nodes" in run.stdout and "round 2/2: val" in run.stdout, run.stdout
    finally:
        for p in reversed(procs):  # `ray start --block` stops the Ray processes it started on SIGINT
            os.killpg(p.pid, signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_killed_diloco_driver_leaves_no_ray_process_behind(tmp_path, text_file, sig):
    """`pcp diloco` on its own local cluster, stopped mid-run: every process it started ends (Ray's
    agents outlived a SIGKILLed driver before), and SIGINT/SIGTERM end it with one line and 128 + N."""
    import psutil  # Ray bundles it (importing ray put it on the path)
    log = tmp_path / "log"
    with open(log, "w") as f:
        p = subprocess.Popen([sys.executable, "-m", "pcp.cli", "diloco", "--workers", "2", "--inner-steps", "20",
                              "--rounds", "10000", "--n-layer", "1", "--n-embd", "32", "--n-head", "2", "--block-size",
                              "32", "--batch-size", "4", "--eval-iters", "2", "--data", text_file, "--out",
                              str(tmp_path / "run"), "--no-dashboard"], stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
    seen = {}

    def follow():
        try:
            for c in psutil.Process(p.pid).children(recursive=True):
                seen.setdefault(c.pid, c)
        except psutil.NoSuchProcess:
            pass

    try:
        deadline = time.monotonic() + 120
        while "round 2/" not in log.read_text():  # the cluster, its agents and the workers all up
            assert p.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            follow()
            time.sleep(0.2)
        follow()
        names = {c.name() for c in seen.values() if c.is_running()}
        assert {"gcs_server", "raylet"} <= names, names
        signum = getattr(signal, sig)
        if sig == "SIGINT":
            os.killpg(p.pid, signum)  # as Ctrl-C in a terminal: the whole foreground process group
        else:
            os.kill(p.pid, signum)
        rc = p.wait(60)
        _, alive = psutil.wait_procs(list(seen.values()), timeout=30)
        assert not alive, [(c.pid, c.name()) for c in alive]
        if sig != "SIGKILL":
            text = log.read_text()
            assert rc == 128 + signum and text.endswith(f"pcp diloco: stopped by {sig}\n"), text[-3000:]
            assert "Traceback" not in text, text[-3000:]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for c in seen.values():
            try:
                c.kill()  # psutil checks the pid still names the process it saw
            except psutil.Error:
                pass


def test_a_workers_round_holds_one_steps_memory_whatever_its_length(tiny):
    """A round keeps its losses to read at the end: detached, so that each does not keep its
    step's graph and activations alive (a 50-step round once ran an H100 out of memory)."""
    from pcp.distributed import Worker
    cfg = tiny()
    tokens = (np.arange(4000) * 7) % 11
    worker = Worker({"train_config": cfg.to_dict(), "diloco_config": DiLoCoConfig(workers=1).to_dict(),
                     "vocab_size": 11, "n_train": 3600, "rank": 0})
    params = {k: v.numpy().copy() for k, v in worker.model.state_dict().items()}
    peaks = []
    try:
        for steps in (2, 20):
            pcp.reset_peak_memory_stats("cpu")
            worker.run_round(0, params, inner_steps=steps, first_step=0, tokens=tokens, keep_state=False)
            peaks.append(pcp.memory_stats("cpu")["peak_bytes"])
    finally:
        pcp.set_num_threads(0)  # the worker set one thread for this process
    assert peaks[1] < 1.5 * peaks[0], peaks


def test_a_diloco_run_whose_workers_never_come_back_with_a_step_stops(tmp_path, text_file):
    """Rounds in which no worker takes a step roll back; three in a row stop the run with one line
    and exit 2 (it reported 'done' with every round undone before), the checkpoint kept."""
    run = subprocess.run([sys.executable, "-m", "pcp.cli", "diloco", "--workers", "2", "--inner-steps", "2",
                          "--rounds", "6", "--round-timeout", "0.0001", "--n-layer", "1", "--n-embd", "32", "--n-head",
                          "2", "--block-size", "32", "--batch-size", "4", "--eval-iters", "2", "--data", text_file,
                          "--out", str(tmp_path / "run"), "--no-dashboard"], capture_output=True, text=True, timeout=180)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no worker came back with a step in rounds 1 to 3" in run.stderr and "Traceback" not in run.stderr
    assert "round 4/6" not in run.stdout and (tmp_path / "run" / "diloco.safetensors").exists()


def test_workers_send_their_states_every_state_every_rounds_and_checkpoints_keep_the_last(tiny, tmp_path):
    """state_every 3 of 4 rounds: the workers' inner states travel on round 3 and the last only;
    every round still checkpoints, holding the states last sent."""
    from pcp.serialization import read_metadata
    from pcp.train.checkpoint import parse_metadata
    cfg = tiny()
    sh = Shepherd(cfg, DiLoCoConfig(workers=2, inner_steps=2, rounds=4, round_timeout=120, state_every=3))
    try:
        sent = []
        for _ in range(4):
            sh.run_round()
            sent.append(sh.history[-1]["state_bytes"])
            sh.wait_saved()
            path = os.path.join(cfg.out, "diloco.safetensors")
            assert parse_metadata(path, read_metadata(path))["step"] == sh.round  # every round checkpoints
    finally:
        sh.shutdown()
    assert sent[0] == sent[1] == 0 and sent[2] > 0 and sent[3] == sent[2], sent


def test_a_slow_worker_is_named_and_stops_in_time_for_its_result_to_arrive():
    """adapt_to_links names a worker whose result came 2 s and half the others' median after them
    (once in 10 rounds); step_budget takes its last trips off the round timeout, down to a quarter."""
    import types
    from pcp.distributed.health import adapt_to_links, step_budget
    events = []
    sh = types.SimpleNamespace(report=events.append, dcfg=DiLoCoConfig(round_timeout=20.0),
                               workers={0: {}, 1: {"trips": 6.0}, 2: {"trips": 30.0}})
    assert [step_budget(sh, r) for r in range(3)] == [20.0, 14.0, 5.0]
    timings = {r: {"idle": 0.1} for r in range(3)}
    adapt_to_links(sh, {"round": 1, "arrivals": {0: 4.0, 1: 4.5, 2: 6.4}, "worker_timings": timings})  # 1.9 s late
    adapt_to_links(sh, {"round": 1, "arrivals": {0: 4.0, 1: 4.5, 2: 9.0},  # its first round: late by its start
                     "worker_timings": {**timings, 2: {"idle": None}}})
    assert events == []
    adapt_to_links(sh, {"round": 2, "arrivals": {0: 4.0, 1: 4.5, 2: 9.0}, "worker_timings": timings})
    assert len(events) == 1 and events[0]["text"].startswith("worker 2's result came 4.5 s after the others'")
    adapt_to_links(sh, {"round": 2, "arrivals": {0: 4.0, 1: 4.5, 2: 9.0},  # a result left out (non-finite)
                        "worker_timings": {0: timings[0], 1: timings[1]}})
    for rnd in (3, 12):  # not again until round 12
        adapt_to_links(sh, {"round": rnd, "arrivals": {0: 4.0, 1: 4.5, 2: 9.0}, "worker_timings": timings})
    assert len(events) == 2


def test_a_workers_trips_count_its_calls_arrival_not_its_start():
    """trips: the call's way there ends when it arrives, which may be before the round starts
    (it waits for the last round's last steps, run after that call returned), and the result's
    way back when it is here; an actor's first round has no way there to count (its start)."""
    import time as clock
    from pcp.distributed.health import trips
    now = clock.time()
    waited = {"idle": 0.0, "arrived": now - 9.8, "began": now - 9.5, "ended": now - 0.5}  # waited 0.3 s
    assert abs(trips({"launched": now - 10.0}, {"timings": waited}) - 0.7) < 0.05
    older = {"idle": 0.2, "began": now - 9.5, "ended": now - 0.5}  # a result without "arrived"
    assert abs(trips({"launched": now - 10.0}, {"timings": older}) - 1.0) < 0.05
    assert abs(trips({"launched": now - 10.0}, {"timings": dict(waited, idle=None)}) - 0.5) < 0.05


def test_compression_auto_compresses_a_slow_workers_pseudo_gradients_alone():
    """'auto': float32 for all, then int8 and int4 for the worker whose trips took more than twice
    the others' median and a second; the others, and the shepherd's outer steps, stay float32.
    PROBE_EVERY rounds later, its trips then fast, it tries the level below again; back up, it
    waits twice as long before the next try."""
    import types
    from pcp.distributed.compression import base_compression
    from pcp.distributed.health import PROBE_EVERY, adapt_to_links, worker_compression
    events = []
    sh = types.SimpleNamespace(report=events.append, dcfg=DiLoCoConfig(compression="auto", rounds=80).validate(),
                               workers={0: {"trips": 0.5}, 1: {"trips": 0.6}, 2: {"trips": 1.9}})
    record = {"arrivals": {0: 4.0, 1: 4.1, 2: 4.2}, "worker_timings": {r: {"idle": 0.1} for r in range(3)}}
    assert [worker_compression(sh, r) for r in range(3)] == ["none"] * 3 and base_compression("auto") == "none"
    adapt_to_links(sh, dict(record, round=1))  # 1.9 s: under 2 x 0.6 + 1
    assert [worker_compression(sh, r) for r in range(3)] == ["none"] * 3
    sh.workers[2]["trips"] = 2.5
    adapt_to_links(sh, dict(record, round=80))  # the run's last round: no round after it to compress
    assert "level" not in sh.workers[2]
    for rnd, expected in ((2, "int8"), (3, "int4"), (4, "int4")):
        adapt_to_links(sh, dict(record, round=rnd))
        assert [worker_compression(sh, r) for r in range(3)] == ["none", "none", expected]
    assert [e["text"].split(": ")[-1] for e in events] == ["its pseudo-gradients go as int8 from round 3",
                                                           "its pseudo-gradients go as int4 from round 4"]
    sh.workers[2]["trips"] = 0.9  # fast at int4: it tries int8 once PROBE_EVERY rounds have passed
    levels = {}
    for rnd in range(5, 3 + PROBE_EVERY + 1):
        adapt_to_links(sh, dict(record, round=rnd))
        levels[rnd] = worker_compression(sh, 2)
    assert set(levels[r] for r in range(5, 3 + PROBE_EVERY)) == {"int4"} and levels[3 + PROBE_EVERY] == "int8"
    sh.workers[2]["trips"] = 2.5  # still slow at int8: back to int4, the next try twice as far
    adapt_to_links(sh, dict(record, round=14))
    assert worker_compression(sh, 2) == "int4" and sh.workers[2]["probe_every"] == 2 * PROBE_EVERY
    sh.workers[2]["trips"] = 0.9
    adapt_to_links(sh, dict(record, round=14 + 2 * PROBE_EVERY - 1))
    assert worker_compression(sh, 2) == "int4"
    adapt_to_links(sh, dict(record, round=14 + 2 * PROBE_EVERY))
    assert worker_compression(sh, 2) == "int8"
    assert events[-1]["text"].endswith(f"its pseudo-gradients try int8 again from round {15 + 2 * PROBE_EVERY}")
    sh.dcfg = DiLoCoConfig(compression="int8")
    assert worker_compression(sh, 2) is None  # the config's for all
    with pytest.raises(ValueError, match="or auto"):
        DiLoCoConfig(compression="gzip").validate()


def test_workers_can_leave_their_own_evaluation_out(tiny, tmp_path):
    """worker_eval=False: the global model is still scored, the workers' own models are not
    (worker_val None), and the training is the same bits (their val batches draw from the
    round's generator only after its steps)."""
    def run(out, **kw):
        sh = Shepherd(tiny(out=str(tmp_path / out)), DiLoCoConfig(workers=2, inner_steps=3, rounds=2,
                                                                  round_timeout=120, **kw))
        try:
            sh.run()
            return sh.global_state(), sh.history
        finally:
            sh.shutdown()

    (scored, scored_history), (spared, spared_history) = run("a"), run("b", worker_eval=False)
    assert all(np.isfinite(v) for r in scored_history[1:] for v in r["worker_val"].values())
    assert [sorted(r["worker_val"].items()) for r in spared_history[1:]] == [[(0, None), (1, None)]] * 2
    assert [r["val_loss"] for r in spared_history] == [r["val_loss"] for r in scored_history]
    for k in scored:
        np.testing.assert_array_equal(spared[k], scored[k], err_msg=k)
