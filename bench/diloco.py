"""DiLoCo against one worker and against synchronous data-parallel training, at equal inner steps
per worker (and so equal tokens), on tiny Shakespeare (characters).

  (a) one worker: `steps` AdamW steps on batches of B sequences;
  (b) DiLoCo: W workers on a local Ray cluster, H inner steps per round, steps / H rounds
      (pcp.distributed.Shepherd, the outer Nesterov SGD at lr 0.7, momentum 0.9);
  (c) Streaming DiLoCo (--streaming H:F:COMPRESSION:TAU): the same with F fragments synchronised
      in turn, every H / F steps, their pseudo-gradients and outer steps compressed, each merged
      TAU inner steps late (so its exchange may take TAU steps' time);
  (d) synchronous data-parallel: W workers averaging gradients every step, which is one model
      trained on batches of W x B sequences for `steps` steps (the same AdamW, schedule and
      clipping). Its bytes are what gradient averaging sends: each step every worker sends its
      gradient and receives the average, 2 x 4 bytes x parameters x W, every step.
      DiLoCo's bytes are counted by the shepherd (parameters out, pseudo-gradients back).
Peak bandwidth, in bytes per inner step: what must cross the network in one inner step's time
for no worker to wait: synchronous training's all-reduce each step; DiLoCo's largest round
(it blocks: its exchange has no steps to hide in, so it is charged one); Streaming DiLoCo's
largest round spread over its TAU steps of overlap. The first round, in which workers fetch
the whole model once, is left out (as data-parallel training's first broadcast).

With --device gpu the runs train on the GPU (DiLoCo's workers share it through Ray's GPU
resources), in the preset's dtype. Every final model is scored on the same fixed validation
batches. Prints a table, writes OUT/diloco.png (val loss against tokens and against bytes) and
OUT/diloco.json.

Run:  python bench/diloco.py [--preset shakespeare-char-cpu] [--device cpu] [--steps 1000] [--workers 4]
                             [--inner-steps 10 50] [--streaming 50:4:int4:5] [--no-baselines] [--data PATH]
                             [--out DIR]
      python bench/diloco.py --combine A/diloco.json B/diloco.json --out DIR   (runs split over invocations)
"""
import argparse
import dataclasses
import io
import json
import os
import re
import time

import numpy as np

import pcp
from pcp.dashboard import LogLines
from pcp.distributed import DiLoCoConfig, Shepherd
from pcp.distributed.cluster import init_ray
from pcp.train import preset, train
from pcp.train.loop import build_data

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data", "tinyshakespeare.txt")


@pcp.no_grad()
def score(model, data, cfg, batches, seed=0):
    """Mean val loss over `batches` fixed batches (the same for every run)."""
    rng = np.random.default_rng(seed)
    val = np.asarray(data.splits["val"])
    model.eval()
    total = 0.0
    for _ in range(batches):
        ix = rng.integers(0, len(val) - cfg.block_size, cfg.batch_size)
        block = val[ix[:, None] + np.arange(cfg.block_size + 1)[None, :]].astype(np.int64)
        total += model(pcp.tensor(block[:, :-1], device="cpu"), pcp.tensor(block[:, 1:], device="cpu"))[1].item()
    return total / batches


def run_single(cfg, steps, batch_size, threads):
    pcp.set_num_threads(threads)
    run_cfg = dataclasses.replace(cfg, batch_size=batch_size, max_iters=steps, sample_tokens=0)
    t0 = time.perf_counter()
    summary = train(run_cfg, report=LogLines(io.StringIO()), overwrite=True)  # a rerun starts over
    curve = [(m["iter"], m["val_loss"]) for m in summary["metrics"]]
    return summary["model"], curve, time.perf_counter() - t0


def run_diloco(cfg, steps, workers, H, device, fragments=1, compression="none", overlap=0):
    dcfg = DiLoCoConfig(workers=workers, inner_steps=H, rounds=steps // H, round_timeout=3600, fragments=fragments,
                        compression=compression, worker_device=device, overlap=overlap)
    t0 = time.perf_counter()
    sh = Shepherd(cfg, dcfg, overwrite=True)
    try:
        history = sh.run()
    finally:
        sh.shutdown()
    curve = [(r["inner_steps"], r["val_loss"], r["total_bytes"]) for r in history]
    peak = peak_per_step([r["total_bytes"] for r in history], overlap)
    return sh.model, curve, time.perf_counter() - t0, history[-1]["total_bytes"], peak


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="shakespeare-char-cpu")
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--steps", type=int, default=1000, help="inner steps per worker")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--inner-steps", type=int, nargs="*", default=[10, 50])
    ap.add_argument("--streaming", nargs="*", default=[], metavar="H:F:COMPRESSION:TAU",
                    help="Streaming DiLoCo runs, e.g. 250:4:int4:5")
    ap.add_argument("--eval-iters", type=int, default=10, help="val batches per curve point")
    ap.add_argument("--score-batches", type=int, default=200, help="fixed val batches scoring each final model")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads of the one-process runs")
    ap.add_argument("--data", default=SHARED if os.path.exists(SHARED) else "")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "diloco"))
    ap.add_argument("--no-baselines", action="store_true", help="skip the one-worker and synchronous runs")
    ap.add_argument("--combine", nargs="+", metavar="JSON",
                    help="no training: the table and plot of the runs in these diloco.json files (runs split "
                         "over several invocations, one of them with the baselines)")
    args = ap.parse_args()
    if args.combine:
        runs, heads = [], []
        for path in args.combine:
            with open(path) as f:
                saved = json.load(f)
            runs += saved["runs"]
            heads.append(saved["head"])
        os.makedirs(args.out, exist_ok=True)
        return report(runs, heads[0], args.out)
    streaming = [(int(h), int(f), c, int(tau)) for h, f, c, tau in (s.split(":") for s in args.streaming)]
    if any(args.steps % H for H in args.inner_steps + [h for h, _, _, _ in streaming]):
        ap.error(f"--steps ({args.steps}) must be a multiple of every --inner-steps and streaming H")

    os.makedirs(args.out, exist_ok=True)
    base = preset(args.preset, data=args.data, eval_iters=args.eval_iters, eval_interval=max(args.inner_steps + [h for h, _, _, _ in streaming]),
                  warmup_iters=min(100, args.steps // 10), lr_decay_iters=args.steps, out=args.out,
                  device="cpu" if args.device == "cpu" else "gpu")
    _, data = build_data(base)
    gpus = len([d for d in pcp.devices() if d != "cpu"]) if args.device == "gpu" else None
    init_ray(min_cpus=args.workers, num_gpus=gpus)
    W, B, T = args.workers, base.batch_size, base.block_size
    runs = []

    def record(name, workers, H, model, curve, seconds, nbytes, peak):
        """curve: (inner steps per worker, val loss, bytes so far); tokens count every worker's."""
        loss = score(model, data, base, args.score_batches)
        points = [(steps * workers * B * T, val, b) for steps, val, b in curve]
        runs.append({"run": name, "workers": workers, "H": H, "val_loss": loss, "bytes": nbytes, "peak_bytes": peak,
                     "seconds": seconds, "curve": points, "parameters": model.num_parameters()})
        print(f"{name:<40} val {loss:.4f}  {nbytes / 1e6:10.1f} MB  peak {peak / 1e6:8.3f} MB/step  {seconds:7.1f} s",
              flush=True)

    for H in args.inner_steps:
        cfg = dataclasses.replace(base, out=os.path.join(args.out, f"diloco_h{H}"))
        model, curve, seconds, nbytes, peak = run_diloco(cfg, args.steps, W, H, args.device)
        record(f"DiLoCo, {W} workers, H={H}", W, H, model, curve, seconds, nbytes, peak)
    for H, F, comp, tau in streaming:
        cfg = dataclasses.replace(base, out=os.path.join(args.out, f"streaming_h{H}_f{F}_{comp}_t{tau}"))
        model, curve, seconds, nbytes, peak = run_diloco(cfg, args.steps, W, H, args.device, F, comp, tau)
        record(f"Streaming DiLoCo, H={H}, {F} fragments, {comp}, tau={tau}", W, H, model, curve, seconds, nbytes, peak)
    if not args.no_baselines:
        model, curve, seconds = run_single(dataclasses.replace(base, out=os.path.join(args.out, "single")), args.steps,
                                           B, args.threads)
        record("one worker", 1, None, model, [(s, v, 0) for s, v in curve], seconds, 0, 0)
        model, curve, seconds = run_single(dataclasses.replace(base, out=os.path.join(args.out, "sync")), args.steps,
                                           W * B, args.threads)
        per_step = 2 * 4 * model.num_parameters() * W
        # One model on W x B sequences a step: its tokens are W workers' of B each.
        record(f"synchronous, {W} workers (batch {W}x{B})", W, 1, model, [(s, v, per_step * s) for s, v in curve],
               seconds, per_step * args.steps, per_step)
    head = (f"{args.preset} model ({runs[0]['parameters'] / 1e6:.2f}M parameters) on {args.device}, {args.steps} inner "
            f"steps per worker, batch {B} x {T} per worker, scored on {args.score_batches} fixed val batches")
    with open(os.path.join(args.out, "diloco.json"), "w") as f:
        json.dump({"args": vars(args), "head": head, "runs": runs}, f, indent=1)
    report(runs, head, args.out)


def peak_per_step(totals, overlap):
    """Peak bandwidth in bytes per inner step from the bytes communicated so far after each
    round (round 0 first): the largest round but the first, whose workers fetch the whole model
    once (as data-parallel training's first broadcast, which is not counted either), over the
    overlap's steps."""
    rounds = [b - a for a, b in zip(totals, totals[1:])]
    return max(rounds[1:] or rounds or [0]) / max(overlap, 1)


def report(runs, head, out):
    """The table (ratios against the synchronous run, when there is one) and the plot."""
    sync = next((r for r in runs if r["H"] == 1), None)
    for r in runs:  # DiLoCo's peak from its rounds (see peak_per_step)
        if r["H"] not in (None, 1):
            tau = re.search(r"tau=(\d+)", r["run"])
            r["peak_bytes"] = peak_per_step([b for _, _, b in r["curve"]], int(tau.group(1)) if tau else 0)
    print(f"\n{head}\n")
    print("| run | val loss | vs synchronous | bytes communicated | vs synchronous | peak bandwidth (per inner step) | "
          "vs synchronous | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in sorted(runs, key=lambda r: r["val_loss"]):
        other = sync is not None and r is not sync
        fewer = f"{sync['bytes'] / r['bytes']:.0f}x fewer" if other and r["bytes"] else "—"
        peak = f"{sync['peak_bytes'] / r['peak_bytes']:.0f}x fewer" if other and r["peak_bytes"] else "—"
        vs = f"{100 * (r['val_loss'] / sync['val_loss'] - 1):+.1f}%" if sync else "—"
        print(f"| {r['run']} | {r['val_loss']:.4f} | {vs} | {r['bytes'] / 1e6:,.1f} MB | {fewer} | "
              f"{r['peak_bytes'] / 1e6:,.3f} MB | {peak} | {r['seconds']:.0f} |")
    plot(runs, os.path.join(out, "diloco.png"))


def plot(runs, path):
    """Val loss against tokens (left) and against bytes communicated (right, log scale)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    fig, (by_tokens, by_bytes) = plt.subplots(1, 2, figsize=(12, 4.5))
    for r in runs:
        tokens, val, nbytes = zip(*r["curve"])
        style = "--" if r["H"] in (None, 1) else "-"
        by_tokens.plot(tokens, val, style, label=f"{r['run']}: {r['val_loss']:.3f}")
        sent = [(b, v) for b, v in zip(nbytes, val) if b > 0]
        if sent:
            by_bytes.plot(*zip(*sent), style, label=r["run"])
    by_tokens.set(xlabel="tokens processed (all workers)", ylabel="val loss")
    by_bytes.set(xlabel="bytes communicated", ylabel="val loss", xscale="log")
    by_tokens.legend(fontsize=7)
    by_bytes.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nplot: {path}")


if __name__ == "__main__":
    main()
