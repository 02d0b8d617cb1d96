"""The matmuls of one shakespeare-char-cpu training step, PCP against PyTorch, shape by shape.

Each Linear of the model (4 layers of 128 -> 384, 128 -> 128, 128 -> 512, 512 -> 128, and the
LM head 128 -> 65 tied to the embedding) takes three products per step, in the layouts training
uses: y = x @ W.T, dx = g @ W, dW = g.T @ x, with 768 rows (batch 12 x 64). Times are the best
of 10 blocks of 20 calls, after a pause that lets the other library's threads go idle.

Run:  python bench/train_matmuls.py
"""
import time

import numpy as np
import torch

import pcp

torch.set_num_threads(pcp.get_num_threads())
M = 768
# (in, out, count per step): the Linears of 4 layers, and the LM head (weight = wte, 65 x 128)
lins = [(128, 384, 4), (128, 128, 4), (128, 512, 4), (512, 128, 4), (128, 65, 1)]
def bench(f, reps=20):
    time.sleep(0.1)
    for _ in range(10): f()
    best = 1e9
    for blk in range(10):
        t = time.perf_counter()
        for _ in range(reps): f()
        best = min(best, (time.perf_counter() - t) / reps * 1e3)
    return best
tp_all = tt_all = fl_all = 0
rng = np.random.default_rng(0)
for k, n, cnt in lins:
    x = rng.standard_normal((M, k), dtype=np.float32); w = rng.standard_normal((n, k), dtype=np.float32); g = rng.standard_normal((M, n), dtype=np.float32)
    px, pw, pg = map(pcp.tensor, (x, w, g)); tx, tw, tg = map(torch.tensor, (x, w, g))
    for name, fp, ft in [("y=x@W^T", lambda: px @ pw.T, lambda: tx @ tw.T), ("dx=g@W", lambda: pg @ pw, lambda: tg @ tw), ("dW=g^T@x", lambda: pg.T @ px, lambda: tg.T @ tx)]:
        tp, tt = bench(fp), bench(ft)
        f = 2 * M * n * k
        tp_all += tp * cnt; tt_all += tt * cnt; fl_all += f * cnt
        print(f"{name:9s} k={k:3d} n={n:3d}  pcp {tp:.3f} ms {f/tp/1e6:4.0f} GF/s  torch {tt:.3f} ms {f/tt/1e6:4.0f}  torch/pcp {tt/tp:.2f}")
print(f"step total: pcp {tp_all:.2f} ms torch {tt_all:.2f} ms, torch/pcp {tt_all/tp_all:.3f}; pcp {fl_all/tp_all/1e6:.0f} GF/s")
