"""The plan as DiLoCo's unit of work: how big the traced inner step is and how long a worker takes
to load it (check its checksums, rebuild and validate the graph, place it on its device), for a
small MLP, a one-block transformer and the built-in GPT presets. pcp.distributed.diloco sends
these bytes to every worker once; the workers report the same two numbers (the dashboard's
worker table, Worker.progress()).

Run:  python bench/diloco_plans.py [--device cpu|gpu] [--repeats N]
"""
import argparse
import statistics
import time

import numpy as np

import pcp
from pcp.distributed import Data
from pcp.distributed.task import trace
from pcp.train import TrainConfig, preset
from pcp.train.loop import build_model


class MLP(pcp.nn.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.w1 = pcp.tensor(rng.normal(size=(4, 16)), dtype=pcp.float32, requires_grad=True)
        self.w2 = pcp.tensor(rng.normal(size=(16, 1)), dtype=pcp.float32, requires_grad=True)

    def loss(self, x, y):
        return ((pcp.tanh(x @ self.w1) @ self.w2 - y) ** 2).mean()


def cases():
    x = np.zeros((64, 4), np.float32)
    yield "2-layer MLP", MLP, lambda m: m.loss, Data.rows({"x": x, "y": x[:, :1]},
                                                                         {"x": x, "y": x[:, :1]}), TrainConfig(batch_size=32)
    ids = np.zeros(5000, np.int64)
    for name in ("shakespeare-char-cpu", "shakespeare-char"):
        cfg = preset(name)
        data = Data.tokens(ids, ids, cfg.block_size)
        yield f"GPT preset {name}", (lambda cfg=cfg: build_model(cfg, 65)), (lambda m: lambda a, b: m(a, b)[1]), data, cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", help="where the plans are loaded (cpu or gpu)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    device = pcp.device(args.device)
    print(f"# PCP {pcp.__version__}; plans traced on cpu, loaded on {device}; median of {args.repeats} loads")
    print("| model | parameters | plan bytes | traced in | load (check + place) |")
    print("|---|---|---|---|---|")
    for name, make, loss_of, data, cfg in cases():
        model = make()
        t = time.perf_counter()
        step, _, _ = trace(loss_of(model), model, data, cfg, "cpu", cfg.batch_size, pcp.float32)
        traced = time.perf_counter() - t
        loads = []
        try:
            for _ in range(args.repeats):
                t = time.perf_counter()
                pcp.load_plan(step, device=device)
                loads.append(time.perf_counter() - t)
            load = f"{statistics.median(loads) * 1e3:.0f} ms"
        except ValueError as e:  # a plan that cannot be placed there (yet): why
            load = f"n/a: {e}"
        print(f"| {name} | {model.num_parameters():,} | {len(step) / 2**20:.2f} MiB | {traced:.2f} s | {load} |")


if __name__ == "__main__":
    main()
