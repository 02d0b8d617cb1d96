"""DiLoCo against one worker and against synchronous data-parallel training, at equal inner steps
per worker, on tiny Shakespeare (characters).

  (a) one worker: `steps` AdamW steps on batches of B sequences;
  (b) DiLoCo: W workers on a local Ray cluster, H inner steps per round, steps / H rounds
      (pcp.distributed.Shepherd, the outer Nesterov SGD at lr 0.7, momentum 0.9);
  (c) synchronous data-parallel: W workers averaging gradients every step, which is one model
      trained on batches of W x B sequences for `steps` steps (the same AdamW, schedule and
      clipping). Its bytes are what gradient averaging sends: each step every worker sends its
      gradient and receives the average, 2 x 4 bytes x parameters x W. DiLoCo's bytes are counted
      by the shepherd (parameters out, pseudo-gradients back, once a round).

Every final model is scored on the same fixed validation batches. Prints a table, writes
OUT/diloco.png (val loss against inner steps per worker) and OUT/diloco.json.

Run:  python bench/diloco.py [--steps 1000] [--workers 4] [--inner-steps 10 50] [--data PATH] [--out DIR]
"""
import argparse
import dataclasses
import io
import json
import os
import time

import numpy as np

import pcp
from pcp.dashboard import LogLines
from pcp.distributed import DiLoCoConfig, Shepherd
from pcp.distributed.shepherd import init_ray
from pcp.train import preset, train
from pcp.train.loop import build_data, save_plot

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
        total += model(pcp.tensor(block[:, :-1]), pcp.tensor(block[:, 1:]))[1].item()
    return total / batches


def run_single(cfg, steps, batch_size, threads):
    pcp.set_num_threads(threads)
    run_cfg = dataclasses.replace(cfg, batch_size=batch_size, max_iters=steps, sample_tokens=0)
    t0 = time.perf_counter()
    summary = train(run_cfg, report=LogLines(io.StringIO()), overwrite=True)  # a rerun starts over
    curve = [(m["iter"], m["val_loss"]) for m in summary["metrics"]]
    return summary["model"], curve, time.perf_counter() - t0


def run_diloco(cfg, steps, workers, H):
    dcfg = DiLoCoConfig(workers=workers, inner_steps=H, rounds=steps // H, round_timeout=3600)
    t0 = time.perf_counter()
    sh = Shepherd(cfg, dcfg, overwrite=True)
    try:
        history = sh.run()
    finally:
        sh.shutdown()
    curve = [(r["inner_steps"], r["val_loss"]) for r in history]
    return sh.model, curve, time.perf_counter() - t0, history[-1]["total_bytes"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=1000, help="inner steps per worker")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--inner-steps", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--eval-iters", type=int, default=10, help="val batches per curve point")
    ap.add_argument("--score-batches", type=int, default=200, help="fixed val batches scoring each final model")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="threads of the one-process runs")
    ap.add_argument("--data", default=SHARED if os.path.exists(SHARED) else "")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "diloco"))
    args = ap.parse_args()
    if any(args.steps % H for H in args.inner_steps):
        ap.error(f"--steps ({args.steps}) must be a multiple of every --inner-steps")

    os.makedirs(args.out, exist_ok=True)
    base = preset("shakespeare-char-cpu", data=args.data, eval_iters=args.eval_iters, eval_interval=max(args.inner_steps),
                  warmup_iters=min(100, args.steps // 10),
                  lr_decay_iters=args.steps, out=args.out)
    _, data = build_data(base)
    init_ray(min_cpus=args.workers)
    W, B = args.workers, base.batch_size
    runs = []

    def record(name, workers, H, model, curve, seconds, nbytes):
        loss = score(model, data, base, args.score_batches)
        runs.append({"run": name, "workers": workers, "H": H, "val_loss": loss, "bytes": nbytes, "seconds": seconds,
                     "curve": curve})
        print(f"{name:<34} val {loss:.4f}  {nbytes / 1e6:10.1f} MB  {seconds:7.1f} s", flush=True)

    n_params = None
    for H in args.inner_steps:
        cfg = dataclasses.replace(base, out=os.path.join(args.out, f"diloco_h{H}"))
        model, curve, seconds, nbytes = run_diloco(cfg, args.steps, W, H)
        n_params = model.num_parameters()
        record(f"DiLoCo, {W} workers, H={H}", W, H, model, curve, seconds, nbytes)
    model, curve, seconds = run_single(dataclasses.replace(base, out=os.path.join(args.out, "single")), args.steps, B,
                                       args.threads)
    n_params = model.num_parameters()
    record("one worker", 1, None, model, curve, seconds, 0)
    model, curve, seconds = run_single(dataclasses.replace(base, out=os.path.join(args.out, "sync")), args.steps, W * B,
                                       args.threads)
    record(f"synchronous, {W} workers (batch {W}x{B})", W, 1, model, curve, seconds, 2 * 4 * n_params * W * args.steps)

    sync = runs[-1]
    print(f"\nshakespeare-char-cpu model ({n_params / 1e6:.2f}M parameters), {args.steps} inner steps per worker, "
          f"batch {B} x {base.block_size} per worker, scored on {args.score_batches} fixed val batches\n")
    print("| run | val loss | vs synchronous | bytes communicated | vs synchronous | wall s |")
    print("|---|---|---|---|---|---|")
    for r in sorted(runs, key=lambda r: r["val_loss"]):
        fewer = f"{sync['bytes'] / r['bytes']:.0f}x fewer" if r["bytes"] and r is not sync else "—"
        print(f"| {r['run']} | {r['val_loss']:.4f} | {100 * (r['val_loss'] / sync['val_loss'] - 1):+.1f}% | "
              f"{r['bytes'] / 1e6:,.1f} MB | {fewer} | {r['seconds']:.0f} |")
    with open(os.path.join(args.out, "diloco.json"), "w") as f:
        json.dump({"args": vars(args), "parameters": n_params, "runs": runs}, f, indent=1)

    def draw(ax):
        for r in runs:
            ax.plot(*zip(*r["curve"]), "-" if r["H"] and r["H"] > 1 else "--", label=f"{r['run']}: {r['val_loss']:.3f}")
    if save_plot(os.path.join(args.out, "diloco.png"), "inner steps per worker", "val loss", draw):
        print(f"\nplot: {os.path.join(args.out, 'diloco.png')}")


if __name__ == "__main__":
    main()
