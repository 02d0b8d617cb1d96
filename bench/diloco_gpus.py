"""DiLoCo across the GPUs of one host, one worker per GPU, against synchronous data-parallel
training on the same GPUs: PyTorch DDP over NCCL (bench/ddp_peer.py, nanoGPT's GPT with this
run's config, data and batch per GPU), started from this script.

For each N in --gpus (GPUs 0 .. N-1):
  - DiLoCo, N workers with a whole GPU each (Ray's num_gpus=1, matched to PCP's GPU by UUID),
    for each H[:TAU[+]] in --inner-steps; with TAU the round's exchange is overlapped: a worker
    starts its next round at once and merges the new global model TAU steps into it
    (pipelined, DiLoCoConfig.overlap), so no GPU waits for the shepherd; with TAU+ it merges
    it at the first step from TAU on at which it has arrived (DiLoCoConfig.merge_when_ready);
  - DDP on the N GPUs, gradients averaged every step.
And on one GPU, the speed-up's base: PCP's own training loop (training_step, as `pcp train`),
and DDP with one process.

Every run takes --steps steps per GPU of batch B x T on its GPU, evaluates every eval_interval
steps on the same val batches, and its final model is scored on --score-batches fixed val
batches. Throughput counts every GPU's tokens over the wall time from the tenth step to the end
(one GPU, DDP) or, for DiLoCo, in the steady state: the sum of each worker's tokens from its
start of round 3 to its start of the last round, over that time (the first rounds hold the
workers' start, whose skew lockstep rounds carry a round or two; the last one the finishing).
A run of 5 rounds or fewer counts from the first worker's start of round 2 to the last
worker's result. Evaluations and exchanges are included.
GPU busy is nvidia-smi's utilization.gpu (the share of time a kernel ran), sampled every 100 ms
over that window. Bytes: DiLoCo's as its shepherd counts them (parameters out, pseudo-gradients
back); DDP's, each GPU sending its float32 gradient and receiving the mean every step.

--kill also kills one worker's process in the middle of a round (N = the largest --gpus, the
run of the largest H, 3 rounds): the round completes without it, Ray restarts it, and it
rejoins on the same GPU (by UUID).

Prints a table, writes OUT/diloco_gpus.json and OUT/diloco_gpus.png (val loss against tokens).

Each DiLoCo run also records mean timings per round (over the rounds its throughput counts): its
workers' (start, steps, waited for the outer step to merge, idle between rounds, finish on the
round's thread, background: the download and encoding, which overlap the next round when
pipelined, and merged_at) and its shepherd's (collect; step, and of it average, apply, post;
evaluate; save).

Run:  python bench/diloco_gpus.py [--gpus 2 4] [--steps 1000] [--inner-steps 50 50:5 50:5+ 250]
                                  [--kill] [--no-ddp] [--nanogpt PATH] [--data PATH] [--out DIR]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np

import pcp
from pcp.distributed import DiLoCoConfig, Shepherd
from pcp.distributed.cluster import init_ray, shutdown_ray
from pcp.train import preset
from pcp.train.loop import autocast_for, build_data, build_model, build_optimizer, compute_dtype, training_step

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared")
WARM = 10  # steps not timed by the one-GPU and DDP runs (allocator, kernels, NCCL set-up)


class GpuMonitor:
    """nvidia-smi's utilization.gpu and memory.used of every GPU, sampled every 100 ms in the
    background; nothing where there is no nvidia-smi."""

    def __init__(self):
        self.samples = []  # (time, gpu index, busy %, MiB used)
        try:
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used",
                                          "--format=csv,noheader,nounits", "-lms", "100"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self.proc = None
            return
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                i, busy, mib = (float(v) for v in line.split(","))
                self.samples.append((time.time(), int(i), busy, mib))
            except ValueError:
                pass

    def window(self, t0, t1):
        """{gpu: (mean busy %, most MiB used)} over [t0, t1] (time.time())."""
        out = {}
        for gpu in sorted({s[1] for s in self.samples}):
            inside = [s for s in self.samples if s[1] == gpu and t0 <= s[0] <= t1]
            if inside:
                out[gpu] = (float(np.mean([s[2] for s in inside])), max(s[3] for s in inside))
        return out

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait()


def val_batches(val, cfg, batches, seed):
    rng = np.random.default_rng(seed)
    for _ in range(batches):
        ix = rng.integers(0, len(val) - cfg.block_size, cfg.batch_size)
        block = np.asarray(val)[ix[:, None] + np.arange(cfg.block_size + 1)[None, :]].astype(np.int64)
        yield pcp.tensor(block[:, :-1], device="cpu"), pcp.tensor(block[:, 1:], device="cpu")


@pcp.no_grad()
def score(model, val, cfg, batches, seed, dtype):
    """Mean val loss over fixed batches: seed cfg.seed and eval_iters batches are what DiLoCo's
    shepherd evaluates on; seed 0, what every final model is scored on (as bench/diloco.py)."""
    model.eval()
    with autocast_for(dtype):
        total = sum(model(x, y)[1].item() for x, y in val_batches(val, cfg, batches, seed))
    model.train()
    return total / batches


def run_one_gpu(cfg, data, vocab, steps, score_batches):
    """PCP on GPU 0, as `pcp train` steps (training_step), evaluating as DiLoCo's shepherd does."""
    device = "gpu:0"
    pcp.random.seed(cfg.seed)
    pcp.set_default_device(device)
    try:
        model = build_model(cfg, vocab)
        opt = build_optimizer(cfg, model)
        dtype = compute_dtype(cfg, str(pcp.device(device)))
        step = training_step(model, opt, pcp.amp.GradScaler(enabled=dtype == pcp.float16), cfg, dtype)
        lr_at = pcp.optim.warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, max(steps, cfg.warmup_iters + 1))
        val, B, T, curve = data.splits["val"], cfg.batch_size, cfg.block_size, []
        for it in range(steps + 1):
            if it == WARM:
                loss.item()
                t0 = time.time()
            if it % cfg.eval_interval == 0 or it == steps:
                curve.append((it * B * T, score(model, val, cfg, cfg.eval_iters, cfg.seed, dtype), 0))
            if it == steps:
                break
            for g in opt.param_groups:
                g["lr"] = lr_at(it)
            x, y = data.get_batch("train", B)
            loss = step(x, y)
        t1 = time.time()
        final = score(model, val, cfg, score_batches, 0, dtype)
    finally:
        pcp.set_default_device("cpu")
    return {"run": "PCP, one GPU", "kind": "one", "gpus": 1, "tokens_per_s": (steps - WARM) * B * T / (t1 - t0),
            "window": (t0, t1), "curve": curve, "val_loss": final, "bytes": 0, "seconds": t1 - t0,
            "parameters": model.num_parameters()}


def run_diloco(cfg, n, H, steps, overlap, score_batches, val, kill=False, when_ready=False):
    """DiLoCo with n workers, a GPU each; with kill, worker 1's process is killed in round 2."""
    every = max(1, cfg.eval_interval // H)
    dcfg = DiLoCoConfig(workers=n, inner_steps=H, rounds=steps // H, round_timeout=3600, worker_device="gpu",
                        gpus_per_worker=1, overlap=overlap, merge_when_ready=when_ready, eval_every=every,
                        checkpoint_every=every)
    killed = {}

    def report(e):
        if kill and e["kind"] == "progress" and e["round"] == 1 and not killed:
            step = e["workers"][1].get("live_step") or 0
            if 5 <= step < H - 5:  # mid-round
                killed.update(pid=pid, at_step=step, uuid=e["workers"][1]["device_uuid"])
                os.kill(pid, signal.SIGKILL)
        if e["kind"] == "message":
            print("  shepherd:", e["text"], flush=True)
        if e["kind"] == "worker_lost" and not (kill and e["rank"] == 1):
            print(f"  worker {e['rank']} lost in round {e['round'] + 1}: {e['error'][-1500:]}", flush=True)

    sh = Shepherd(cfg, dcfg, report=report, overwrite=True)
    try:
        pid = sh.worker_pid(1) if kill else None  # asked now: a worker in a round answers after it
        history = sh.run()
        table = sh.worker_table()
        final = score(sh.model, val, cfg, score_batches, 0, sh.dtype)
        params = sh.model.num_parameters()
    finally:
        sh.shutdown()
    steady = len(history) > 5  # each worker's rate from its start of round 3 to its start of the last
    timed = history[3:] if steady else history[2:]  # what the mean timings are taken over
    if steady:
        rates, starts, ends = [], [], []
        for rank in timed[-1]["worker_timings"]:
            mine = [r for r in timed if rank in r["worker_timings"]]
            t0, t1 = mine[0]["worker_timings"][rank]["began"], mine[-1]["worker_timings"][rank]["began"]
            rates.append(sum(r["worker_tokens"][rank] for r in mine[:-1]) / (t1 - t0))
            starts.append(t0)
            ends.append(t1)
        began, ended = max(starts), min(ends)  # every worker in it, for GPU busy
        tokens_per_s, seconds = sum(rates), ended - began
    else:  # a short run: from the first worker's start of round 2 to the last worker's result
        began = min(t["began"] for t in timed[0]["worker_timings"].values())
        ended = max(t["ended"] for r in timed for t in r["worker_timings"].values())
        tokens_per_s, seconds = sum(r["tokens"] for r in timed) / (ended - began), ended - began
    phases = {}  # the workers' mean seconds per round in each phase (merged_at: a step), over the rounds timed
    for r in timed:
        for t in r["worker_timings"].values():
            for k, v in t.items():
                if v is not None and k not in ("began", "ended"):
                    phases.setdefault(k, []).append(v)
        for k, v in r["shepherd_timings"].items():
            phases.setdefault("shepherd " + k, []).append(v)
    name = f"DiLoCo, H={H}" + (f", overlap tau{'>=' if when_ready else '='}{overlap}" if overlap else "") + \
        (", merged when ready" if when_ready else "")
    out = {"run": name, "kind": "diloco", "gpus": n, "H": H, "overlap": overlap, "tokens_per_s": tokens_per_s,
           "window": (began, ended), "val_loss": final, "bytes": history[-1]["total_bytes"], "seconds": seconds,
           "curve": [(r["inner_steps"] * n * cfg.batch_size * cfg.block_size, r["val_loss"], r["total_bytes"])
                     for r in history if r["val_loss"] is not None],
           "worker_timings": {k: float(np.mean(v)) for k, v in phases.items()},
           "worker_gpus": {r: w["device_uuid"] for r, w in table.items()}, "parameters": params,
           "rounds": [{**{k: r.get(k) for k in ("round", "workers_in", "workers_lost", "seconds", "tokens")},
                       "worker_idle": {w: t.get("idle") for w, t in r.get("worker_timings", {}).items()},
                       "worker_steps": {w: t.get("steps") for w, t in r.get("worker_timings", {}).items()}}
                      for r in history[1:]]}
    if kill:
        out["kill"] = dict(killed, rounds=out["rounds"], uuid_after=table[1]["device_uuid"])
    return out


def run_ddp(args, n, workdir):
    """bench/ddp_peer.py on GPUs 0 .. n-1 through torchrun; its JSON, with its timed window."""
    out = os.path.join(workdir, f"ddp{n}.json")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, range(n))), OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}",
           os.path.join(HERE, "ddp_peer.py"), "--data", workdir, "--nanogpt", args.nanogpt, "--steps",
           str(args.steps), "--score-batches", str(args.score_batches), "--out", out]
    subprocess.run(cmd, env=env, check=True, timeout=3600)
    t1 = time.time() - 0.5  # its scoring of the final model takes about this
    with open(out) as f:
        r = json.load(f)
    return {"run": "DDP (PyTorch, NCCL)", "kind": "ddp", "gpus": n, "tokens_per_s": r["tokens_per_s"],
            "window": (t1 - r["timed_seconds"], t1), "val_loss": r["val_loss"], "bytes": r["bytes"],
            "seconds": r["timed_seconds"], "curve": [(t, v, 0) for t, v in r["curve"]], "parameters": r["parameters"],
            "torch": r["torch"], "device": r["device"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="shakespeare-char")
    ap.add_argument("--gpus", type=int, nargs="+", default=[2])
    ap.add_argument("--steps", type=int, default=1000, help="steps per GPU")
    ap.add_argument("--inner-steps", nargs="*", default=["50", "50:5", "50:5+", "250"], metavar="H[:TAU[+]]",
                    help="DiLoCo runs: H inner steps a round, the exchange overlapped with TAU of them (TAU+: "
                         "merged when it arrives, from step TAU on)")
    ap.add_argument("--eval-interval", type=int, default=250)
    ap.add_argument("--eval-iters", type=int, default=10)
    ap.add_argument("--score-batches", type=int, default=50)
    ap.add_argument("--kill", action="store_true", help="also kill a worker mid-round and see it rejoin")
    ap.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE", help="TrainConfig fields to change")
    ap.add_argument("--no-ddp", action="store_true")
    ap.add_argument("--no-one-gpu", action="store_true", help="skip the one-GPU runs (see --combine in bench/diloco.py)")
    ap.add_argument("--nanogpt", default=os.path.join(SHARED, "peers", "nanogpt"))
    ap.add_argument("--data", default=os.path.join(SHARED, "data", "tinyshakespeare.txt"))
    ap.add_argument("--out", default=os.path.join(HERE, "out", "diloco_gpus"))
    args = ap.parse_args()
    gpus = [d for d in pcp.devices() if d != "cpu"]
    if not gpus or max(args.gpus) > len(gpus):
        ap.error(f"--gpus {args.gpus}: PCP sees {len(gpus)} GPU(s): {gpus}")
    diloco = [(int(H), int(tau.rstrip("+")), tau.endswith("+"))
              for H, tau in (((spec + ":0").split(":")[:2]) for spec in args.inner_steps)]
    if any(args.steps % H or args.eval_interval % H and H % args.eval_interval for H, _, _ in diloco):
        ap.error("--steps must be a multiple of every H, and each H a divisor or multiple of --eval-interval")
    os.makedirs(args.out, exist_ok=True)
    cfg = preset(args.preset, data=args.data, device="gpu", eval_interval=args.eval_interval,
                 eval_iters=args.eval_iters, warmup_iters=min(100, args.steps // 10), lr_decay_iters=args.steps,
                 out=os.path.join(args.out, "run"), sample_tokens=0,
                 **{k: type(getattr(preset(args.preset), k))(v) for k, v in (kv.split("=", 1) for kv in args.set)})
    tokenizer, data = build_data(cfg)
    val = data.splits["val"]
    dtype = str(compute_dtype(cfg, str(pcp.device("gpu:0"))))
    np.save(os.path.join(args.out, "train.npy"), np.asarray(data.splits["train"]))
    np.save(os.path.join(args.out, "val.npy"), np.asarray(val))
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump({"config": cfg.to_dict(), "vocab_size": tokenizer.vocab_size, "dtype": dtype.split(".")[-1]}, f)
    info = [pcp.gpu_info(g.split(" ")[0]) for g in gpus]
    head = (f"{len(gpus)} x {info[0]['name']}; {args.preset} GPT, {dtype}, batch {cfg.batch_size} x {cfg.block_size} "
            f"per GPU, {args.steps} steps per GPU")
    print(head, flush=True)
    monitor = GpuMonitor()
    runs = []

    def record(r):
        r["gpu_busy"] = {g: b for g, (b, _) in monitor.window(*r["window"]).items()}
        r["gpu_mib"] = {g: m for g, (_, m) in monitor.window(*r["window"]).items()}
        runs.append(r)
        busy = [r["gpu_busy"].get(g) for g in range(r["gpus"])]
        print(f"{r['run']:<32} N={r['gpus']}  {r['tokens_per_s']:>12,.0f} tok/s  {r['tokens_per_s'] / r['gpus']:>10,.0f} "
              f"per GPU  busy {busy}  val {r['val_loss']:.4f}  {r['bytes'] / 1e6:,.0f} MB", flush=True)
        if "worker_timings" in r:
            print("    timings, mean a round: " + ", ".join(f"{k} {v:.3f}" for k, v in r["worker_timings"].items()),
                  flush=True)
        with open(os.path.join(args.out, "diloco_gpus.json"), "w") as f:
            json.dump({"head": head, "args": vars(args), "runs": runs}, f, indent=1)

    try:
        if not args.no_one_gpu:
            record(run_one_gpu(cfg, data, tokenizer.vocab_size, args.steps, args.score_batches))
            if not args.no_ddp:
                record(run_ddp(args, 1, args.out))
        for n in args.gpus:
            init_ray(min_cpus=n, num_gpus=n)  # Ray hands out GPUs 0 .. n-1
            try:
                for H, tau, when_ready in diloco:
                    record(run_diloco(cfg, n, H, args.steps, tau, args.score_batches, val, when_ready=when_ready))
                if args.kill and n == max(args.gpus):
                    H, tau, when_ready = max(diloco)  # rounds long enough to be caught in the middle
                    r = run_diloco(cfg, n, H, 3 * H, tau, args.score_batches, val, kill=True, when_ready=when_ready)
                    record(dict(r, run=f"DiLoCo, H={H}, worker 1 killed"))
                    k = r["kill"]
                    print(f"kill: worker 1 (pid {k.get('pid')}, GPU {k.get('uuid')}) killed at step {k.get('at_step')} "
                          f"of round 2; rounds' workers in / lost: "
                          f"{[(x['workers_in'], x['workers_lost']) for x in k['rounds']]}; its GPU after: "
                          f"{k['uuid_after']}", flush=True)
            finally:
                shutdown_ray()
            if not args.no_ddp:
                record(run_ddp(args, n, args.out))
    finally:
        monitor.stop()
    report(runs, head, args.out)


def report(runs, head, out):
    """The table: speed-up over the one-GPU run of the same framework, val loss against DDP's."""
    base = {k: next((r["tokens_per_s"] for r in runs if r["gpus"] == 1 and r["kind"] == k), None)
            for k in ("one", "ddp")}
    print(f"\n{head}\n")
    print("| run | GPUs | tokens/s | per GPU | speed-up over one GPU | GPU busy | val loss | vs DDP | bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        one = base["ddp" if r["kind"] == "ddp" else "one"]
        sync = next((s for s in runs if s["kind"] == "ddp" and s["gpus"] == r["gpus"]), None)
        busy = [r["gpu_busy"].get(g) for g in range(r["gpus"])]
        busy = "—" if None in busy else " / ".join(f"{b:.0f}%" for b in busy)
        print(f"| {r['run']} | {r['gpus']} | {r['tokens_per_s']:,.0f} | {r['tokens_per_s'] / r['gpus']:,.0f} | "
              f"{r['tokens_per_s'] / one:.2f}x ({r['tokens_per_s'] / one / r['gpus']:.2f} of {r['gpus']}x) | {busy} | "
              f"{r['val_loss']:.4f} | {100 * (r['val_loss'] / sync['val_loss'] - 1):+.1f}% | {r['bytes'] / 1e6:,.0f} MB |"
              if one and sync else
              f"| {r['run']} | {r['gpus']} | {r['tokens_per_s']:,.0f} | {r['tokens_per_s'] / r['gpus']:,.0f} | — | {busy} | "
              f"{r['val_loss']:.4f} | — | {r['bytes'] / 1e6:,.0f} MB |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for r in runs:
        tokens, losses, _ = zip(*r["curve"])
        ax.plot(tokens, losses, "--" if r["kind"] == "ddp" else "-", label=f"{r['run']}, {r['gpus']} GPU: {r['val_loss']:.3f}")
    ax.set(xlabel="tokens processed (all GPUs)", ylabel="val loss")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "diloco_gpus.png"), dpi=120)


if __name__ == "__main__":
    main()
