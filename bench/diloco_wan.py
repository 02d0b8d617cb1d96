"""DiLoCo across simulated hosts joined by shaped links (pcp.distributed.wan): the shepherd's host
and W worker hosts, each link at RATE Mbit/s with DELAY ms one way and LOSS % loss, training
tiny Shakespeare (shakespeare-char-cpu, CPU workers, one per host) with the given DiLoCo variants
for the same inner steps per worker. Per run: wall-clock seconds, per round and per 1M tokens,
the bytes each link carried (IP packets, headers and Ray's own traffic included) against the
bytes DiLoCo counts, the seconds a worker spent waiting on the network (the workers' mean: for
DiLoCo between its rounds and at a streaming merge, for sync every step's time less its own
compute), and the val loss reached; a plot of val loss against wall time.
Needs root (network namespaces) and Ray.

The run `sync` is synchronous data-parallel through the same Ray transport (bench/sync_dp.py);
with it, each run's table row says when its val loss first reached the sync run's best, on each
run's clock from the moment all its workers were ready to step (their start-up left out).
Only the global model is evaluated (the DiLoCo workers do not score their own, as the sync run's
do not); the sync run's clock leaves its evaluations out, a DiLoCo run's holds them.

Run:  python bench/diloco_wan.py [--hosts 4] [--rate 100] [--delay 40] [--loss 0.1] [--slow MBIT]
                                 [--steps 200] [--runs sync 10 50 stream:40:4:int4:5] [--sync-steps N]
                                 [--checkpoint-every ROUNDS] [--state-every ROUNDS]
                                 [--round-timeout S] [--compression KIND] [--parallel] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

from pcp.distributed import wan


def flags(run, steps, compression="none"):
    """pcp diloco's flags for a run spec: H, or stream:H:FRAGMENTS:COMPRESSION:TAU, either with
    @N for an evaluation every N rounds (default every round)."""
    run, _, every = run.partition("@")
    more = ["--eval-every", every or "1"]
    if run.startswith("stream:"):
        _, h, fragments, compression, tau = run.split(":")
        return int(h), more + ["--inner-steps", h, "--rounds", str(steps // int(h)), "--fragments", fragments,
                               "--compression", compression, "--overlap", tau]
    return int(run), more + ["--inner-steps", run, "--rounds", str(steps // int(run)), "--compression", compression]


def diloco_result(out, run, H, wall, links):
    """The measures of a pcp diloco run from its diloco.json."""
    history = json.load(open(os.path.join(out, "diloco.json")))["history"]
    rounds = [r for r in history if r.get("worker_timings")]
    # A worker's wait on the network: between rounds (idle: its result's trip, the shepherd's step
    # and the next round's call) and, streaming with overlap, at the merge; the workers' mean.
    waits = [sum((t.get("idle") or 0.0) + t.get("waited", 0.0) for t in r["worker_timings"].values())
             / len(r["worker_timings"]) for r in rounds]
    tokens = sum(r["tokens"] for r in rounds)
    # The clock starts once every worker is ready to step (its actor started, the plan, data and
    # model fetched), as sync_dp.py's starts after its workers' first step.
    first = rounds[0]["worker_timings"].values()
    ready = max(t["began"] + t["start"] for t in first) - rounds[0]["began"]
    return {"run": run, "H": H, "wall_s": wall, "round_s": sorted(r["seconds"] for r in rounds)[len(rounds) // 2],
            "s_per_1M_tokens": sum(r["seconds"] for r in rounds) / tokens * 1e6, "waited_s": sum(waits),
            "counted_bytes": history[-1]["total_bytes"], "link_bytes": links,
            "lost": sorted({k for r in rounds for k in r["workers_lost"]}),
            "curve": [(sum(r["seconds"] for r in history[1:i + 1]) - (ready if i else 0.0), r["val_loss"])
                      for i, r in enumerate(history) if r["val_loss"] is not None]}


def sync_result(out, wall, links, tokens_per_step):
    """The measures of a bench/sync_dp.py run from its sync_dp.json."""
    run = json.load(open(os.path.join(out, "sync_dp.json")))
    steps = run["steps"]
    seconds = sorted(s["seconds"] for s in steps)
    return {"run": "sync", "H": 1, "wall_s": wall, "round_s": seconds[len(seconds) // 2],
            "s_per_1M_tokens": sum(seconds) / (tokens_per_step * len(steps)) * 1e6,
            "waited_s": sum(s["seconds"] - sum(s["compute"]) / len(s["compute"]) for s in steps),
            "counted_bytes": run["history"][-1]["bytes_sent"] + run["history"][-1]["bytes_received"],
            "link_bytes": links, "lost": [], "curve": [(h["seconds"], h["val_loss"]) for h in run["history"]]}


def one_run(args, run, links):
    """Runs `run` on hosts of its own and returns its measures."""
    data = ["--data", args.data] if args.data else []
    out = os.path.abspath(os.path.join(args.out, run.replace(":", "-").replace("@", "-every-")))
    with wan.Hosts(args.hosts + 1, links) as hosts:
        address = hosts.start_ray()
        t = time.perf_counter()
        if run == "sync":
            argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "sync_dp.py"), "--address", address,
                    "--workers", str(args.hosts), "--steps", str(args.sync_steps or args.steps), "--out", out, *data]
        else:
            H, more = flags(run, args.steps, args.compression)
            argv = ["-m", "pcp.cli", "diloco", "--address", address, "--workers", str(args.hosts), *more,
                    "--eval-iters", "20", "--no-worker-eval", "--checkpoint-every", str(args.checkpoint_every),
                    "--state-every", str(args.state_every), "--out", out, "--overwrite", "--no-dashboard", *data,
                    *(["--round-timeout", str(args.round_timeout)] if args.round_timeout else [])]
        proc = hosts.run(0, [sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stdout, stderr = proc.communicate()
        wall = time.perf_counter() - t
        if proc.returncode:
            raise RuntimeError(f"diloco_wan: run {run} failed:\n{stdout[-2000:]}\n{stderr[-3000:]}")
        with open(os.path.join(out, "stdout.txt"), "w") as f:  # its log lines: rounds, messages
            f.write(stdout)
        link_bytes = [s + r for s, r in hosts.counters()]
    if run == "sync":
        from pcp.train import preset
        cfg = preset("shakespeare-char-cpu")
        r = sync_result(out, wall, link_bytes, cfg.batch_size * cfg.block_size * args.hosts)
    else:
        r = diloco_result(out, run, H, wall, link_bytes)
    r["best_val"], r["final_val"] = min(v for _, v in r["curve"]), r["curve"][-1][1]
    print(f"{run}: {wall:.1f} s, best val {r['best_val']:.4f}, workers lost {r['lost']}", flush=True)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=4, help="worker hosts (the shepherd's is one more)")
    ap.add_argument("--rate", type=float, default=100.0, help="each link's rate, Mbit/s")
    ap.add_argument("--delay", type=float, default=40.0, help="each link's one-way delay, ms")
    ap.add_argument("--loss", type=float, default=0.1, help="each link's loss, percent")
    ap.add_argument("--slow", type=float, default=0.0, metavar="MBIT",
                    help="the last worker host's link at this rate instead (a heterogeneous cluster)")
    ap.add_argument("--steps", type=int, default=200, help="inner steps per worker (sync: steps)")
    ap.add_argument("--runs", nargs="+", default=["10", "50", "stream:40:4:int4:5"],
                    help="sync (synchronous data-parallel, bench/sync_dp.py), H, or "
                         "stream:H:FRAGMENTS:COMPRESSION:TAU (fragments: at most the model's blocks); "
                         "@N after one evaluates every N rounds")
    ap.add_argument("--sync-steps", type=int, default=0, help="the sync run's steps (default: --steps)")
    ap.add_argument("--checkpoint-every", type=int, default=1, metavar="ROUNDS",
                    help="pcp diloco's: the rounds workers send their inner states (and streaming's own values)")
    ap.add_argument("--state-every", type=int, default=0, metavar="ROUNDS", help="pcp diloco's (0: its default)")
    ap.add_argument("--round-timeout", type=float, default=0.0, help="pcp diloco's (0: its default)")
    ap.add_argument("--compression", default="none", help="pcp diloco's, for runs given as H (stream:... name theirs)")
    ap.add_argument("--data", default="", help="the text (default: the shipped tiny Shakespeare)")
    ap.add_argument("--parallel", action="store_true",
                    help="run sync at the same time as the others, on hosts of its own (it waits on its links)")
    ap.add_argument("--out", default="out-diloco-wan")
    args = ap.parse_args()
    reason = wan.available()
    if reason:
        sys.exit(f"diloco_wan: cannot simulate hosts here: {reason}")
    link = wan.Link(rate_mbit=args.rate, delay_ms=args.delay, loss_pct=args.loss)
    links = [link] * args.hosts + ([wan.Link(args.slow, args.delay, 0.0, args.loss)] if args.slow else [link])
    results = {}
    # --parallel: the sync run, which waits on its links nearly all the time, beside the others
    # (on hosts and links of its own) rather than before them.
    beside = None
    if args.parallel and "sync" in args.runs:
        beside = threading.Thread(target=lambda: results.update(sync=one_run(args, "sync", links)))
        beside.start()
    for run in args.runs:
        if not (beside and run == "sync"):
            results[run] = one_run(args, run, links)
    if beside:
        beside.join()
    if len(results) < len(set(args.runs)):
        sys.exit("diloco_wan: the sync run failed (above)")
    results = [results[run] for run in args.runs]
    target = next((r for r in results if r["run"] == "sync"), None)
    slow = f"; the last worker host's link {args.slow:g} Mbit/s" if args.slow else ""
    print(f"\n# {args.hosts} worker hosts + the shepherd's, each link {args.rate:g} Mbit/s, {args.delay:g} ms one way, "
          f"{args.loss:g}% loss{slow}; {args.steps} inner steps per worker")
    print("| run | wall | median round | s per 1M tokens | waited on the network | counted bytes | "
          "shepherd's link | a worker's link (mean) | best val | final val | to the sync run's best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        workers = sum(r["link_bytes"][1:]) / max(len(r["link_bytes"]) - 1, 1)
        reach = "" if target is None else next((f"{s:.1f} s" for s, v in r["curve"] if v <= target["best_val"]), "not reached")
        print(f"| {r['run']} | {r['wall_s']:.1f} s | {r['round_s']:.1f} s | {r['s_per_1M_tokens']:.1f} | "
              f"{r['waited_s']:.1f} s | {r['counted_bytes'] / 1e6:.1f} MB | {r['link_bytes'][0] / 1e6:.1f} MB | "
              f"{workers / 1e6:.1f} MB | {r['best_val']:.4f} | {r['final_val']:.4f} | {reach} |")
    os.makedirs(args.out, exist_ok=True)
    json.dump(results, open(os.path.join(args.out, "diloco_wan.json"), "w"), indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for r in results:
        ax.plot(*zip(*r["curve"]), marker="o", label=r["run"])
    ax.set_xlabel("wall-clock seconds (rounds)")
    ax.set_ylabel("val loss")
    ax.set_title(f"{args.hosts} hosts, {args.rate:g} Mbit/s, {args.delay:g} ms, {args.loss:g}% loss")
    ax.legend()
    fig.savefig(os.path.join(args.out, "diloco_wan.png"), dpi=120, bbox_inches="tight")


if __name__ == "__main__":
    main()
