"""PCP's training step eager against the same step compiled (pcp.compile), side by side.

Two copies of one model (same seed, same batches, same schedule) train in alternating chunks of
iterations, one calling the step eagerly and one through its plan; the script reports ms per
iteration of each (the first 5 iterations, which hold the trace, are not timed), the trace time,
the plan's size, and how far the losses drift apart. Then the per-op overhead of small ops: a
chain of 16 elementwise ops on 64 floats, eager, compiled and in NumPy.

    python bench/compile_step.py [--preset shakespeare-char-cpu] [--device cpu] [--iters 100]
                                 [--dtype float32] [--chunk 20] [--data PATH] [--command-lists]
                                 [--n-layer L --n-head H --n-embd C --block-size T --batch-size B]
                                 (the model's size; GPT-2 small's: 12 12 768 1024 8)
"""
import argparse
import time

import numpy as np

import pcp
from pcp.optim import warmup_cosine
from pcp.train import preset
from pcp.train.loop import build_data, build_model, build_optimizer, training_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="shakespeare-char-cpu")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--dropout", type=float, default=None)
    ap.add_argument("--chunk", type=int, default=20)
    ap.add_argument("--data", default="")
    ap.add_argument("--command-lists", action="store_true", help="pcp.compile(..., command_lists=True)")
    for name in ("n_layer", "n_head", "n_embd", "block_size", "batch_size"):
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=None, help=f"the preset's {name} otherwise")
    args = ap.parse_args()
    over = dict(max_iters=args.iters, lr_decay_iters=args.iters, dtype=args.dtype, data=args.data,
                out="/tmp/pcp-bench-compile")
    if args.dropout is not None:
        over["dropout"] = args.dropout
    for name in ("n_layer", "n_head", "n_embd", "block_size", "batch_size"):
        if getattr(args, name) is not None:
            over[name] = getattr(args, name)
    cfg = preset(args.preset, **over)
    cfg.warmup_iters = min(cfg.warmup_iters, args.iters)
    pdev = pcp.device(args.device)
    dtype = getattr(pcp, args.dtype)
    lr_at = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, cfg.lr_decay_iters)

    def make(compiled):
        pcp.random.seed(cfg.seed)
        tok, data = build_data(cfg)
        pcp.set_default_device(pdev)
        try:
            model = build_model(cfg, tok.vocab_size)
            opt = build_optimizer(cfg, model)
        finally:
            pcp.set_default_device("cpu")
        cfg.compile = compiled
        step = training_step(model, opt, pcp.amp.GradScaler(enabled=False), cfg, dtype, args.command_lists)
        return {"model": model, "opt": opt, "step": step, "seconds": 0.0, "losses": [], "data": data, "it": 0,
                "rng": pcp.random.get_rng_state(), "peaks": []}

    mem_dev = "cpu" if pdev == pcp.device("cpu") else "gpu"

    runs = {"eager": make(False), "compiled": make(True)}
    batches = [runs["eager"]["data"].get_batch("train", cfg.batch_size) for _ in range(args.iters)]

    def advance(run, upto):
        # Each run draws its dropout masks from its own generator state: the same masks for both.
        pcp.set_default_device(pdev)
        pcp.random.set_rng_state(*run["rng"])
        try:
            for it in range(run["it"], upto):
                for g in run["opt"].param_groups:
                    g["lr"] = lr_at(it)
                pcp.synchronize()
                pcp.reset_peak_memory_stats(mem_dev)
                base = pcp.memory_stats(mem_dev)["active_bytes"]
                t0 = time.perf_counter()
                loss = run["step"](*batches[it])
                pcp.synchronize()
                run["peaks"].append(pcp.memory_stats(mem_dev)["peak_bytes"] - base)
                if it >= 5:
                    run["seconds"] += time.perf_counter() - t0
                run["losses"].append(loss.item())
            run["it"] = upto
        finally:
            run["rng"] = pcp.random.get_rng_state()
            pcp.set_default_device("cpu")

    print(f"# {args.preset} in {args.dtype} on {pdev}: {runs['eager']['model'].num_parameters() / 1e6:.2f}M parameters, "
          f"{args.iters} iterations, batch {cfg.batch_size} x {cfg.block_size}, dropout {cfg.dropout}, "
          f"{pcp.get_num_threads()} threads", flush=True)
    for upto in list(range(args.chunk, args.iters, args.chunk)) + [args.iters]:
        for run in runs.values():  # alternate, with a pause, so a slow spell of the machine slows both
            advance(run, upto)
            time.sleep(0.05)
    timed = max(args.iters - 5, 1)
    e, c = (1e3 * runs[k]["seconds"] / timed for k in ("eager", "compiled"))
    (entry,) = runs["compiled"]["step"].cache_info()
    le, lc = np.array(runs["eager"]["losses"]), np.array(runs["compiled"]["losses"])
    print(f"ms/iter: eager {e:.2f}, compiled {c:.2f}, eager/compiled {e / c:.3f} (above 1: the plan is faster)")
    print(f"trace: {entry.trace_seconds * 1e3:.0f} ms, {entry.plan.traced_nodes} nodes traced, {entry.plan.num_nodes} after "
          f"the passes (constants, common subexpressions, dead code), {entry.plan.num_captured} "
          f"captured tensors, replayed {entry.plan.replay_mode}; losses: max relative difference {np.max(np.abs(lc - le) / np.abs(le)):.2e} "
          f"(last: eager {le[-1]:.4f}, compiled {lc[-1]:.4f})")
    mem = entry.plan.memory()
    pe, pc = runs["eager"]["peaks"], runs["compiled"]["peaks"]
    print(f"memory plan: peak {mem['peak_bytes'] / 2**20:.1f} MiB of values alive at once (node {mem['peak_node']}), "
          f"{mem['allocated_bytes'] / 2**20:.1f} MiB made over {mem['allocations']} values per step; measured "
          f"peak above the step's start: first call eager {pe[0] / 2**20:.1f} MiB, traced {pc[0] / 2**20:.1f}; "
          f"later eager {max(pe[1:]) / 2**20:.1f}; the second compiled call (which records command lists on a "
          f"GPU, keeping their buffers) {pc[1] / 2**20:.1f}, later ones {max(pc[2:]) / 2**20:.1f}")

    # A 16-op elementwise chain, per op: on 64 floats (what an op costs beyond its math) and on
    # 4M (memory traffic, which fusion saves: one pass instead of 16).
    def chain(v):
        for _ in range(4):
            v = ((v + 1.0) * 0.5 - 0.25) * 1.5
        return v

    for n, reps in ((64, 2000), (1 << 22, 10)):
        x = pcp.tensor(np.linspace(-1, 1, n, dtype=np.float32), device=pdev)
        xn = x.numpy().copy()
        compiled = pcp.compile(chain)
        compiled(x)
        rows = []
        for name, fn, arg in (("eager", chain, x), ("compiled", compiled, x), ("NumPy", chain, xn)):
            best = float("inf")
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn(arg)
                pcp.synchronize()
                best = min(best, time.perf_counter() - t0)
            rows.append((name, best / reps / 16 * 1e6))
            time.sleep(0.05)
        print(f"per op of a 16-op chain on {n} floats (best of 5 x {reps}; the plan: "
              f"{compiled.cache_info()[0].plan.num_nodes} nodes): " +
              ", ".join(f"{name} {us:.2f} us" for name, us in rows) + f"; NumPy/compiled {rows[2][1] / rows[1][1]:.2f}")

if __name__ == "__main__":
    main()
