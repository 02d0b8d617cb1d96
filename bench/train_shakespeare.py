"""Train the same GPT on tiny Shakespeare with PCP and with PyTorch, side by side in one run.

Both start from PCP's initial weights (copied into PyTorch), see identical batches, use the same
AdamW (decay groups), LR schedule and gradient clipping, and the same thread count. They take
turns of --chunk iterations, each alone (idle worker threads of one would otherwise slow the
other), so that both see the same spells of a shared machine. Prints both loss curves and ms per
iteration of each.

Run:  python bench/train_shakespeare.py [--preset shakespeare-char-cpu] [--max-iters N] [--eval-iters N] [--data PATH]
      [--device gpu]   (PCP on that device, PyTorch on cuda; batches stay CPU int64 tensors unless --batch-device)
      [--gpu-attention auto|fused|composed]  (PCP's attention kernels on a GPU)
      [--dropout P]    (the preset's dropout otherwise; the PyTorch model has none, so use 0 to compare losses)
      [--chunk N]      (iterations per turn, default 50)
      [--profile]      (PCP's time per op per iteration; on a GPU, per kernel from device timestamps)
      [--shapes]       (with --profile on the CPU: one row per op and input shapes)
      [--compile]      (PCP's training step as a plan: pcp.compile, traced at the first iteration)
      [--dtype bfloat16|float16|float32]  (both under autocast with that type, float16 with a GradScaler)
      [--n-layer L --n-head H --n-embd C --block-size T --batch-size B]  (the model's size; GPT-2 small:
                        12 12 768 1024 8)
      [--pcp-kernels]  (PCP's own GPU kernels for products and attention, not NVIDIA's libraries)
      [--no-torch]     (skip the PyTorch model in this process: PCP alone, and nanoGPT with --nanogpt)
      [--nanogpt DIR]  (also time nanoGPT's own train.py on the same data, eager and torch.compile'd,
                        with --dtype; DIR holds its train.py, model.py, configurator.py)
On a GPU it also prints the peak memory of the training steps: PCP's allocator next to PyTorch's
max_memory_allocated.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext

import numpy as np

import pcp
from pcp.optim import clip_grad_norm, warmup_cosine
from pcp.train import preset
from pcp.train.loop import build_data, build_model, build_optimizer

import torch
import torch.nn as tnn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data", "tinyshakespeare.txt")


class TorchGPT(tnn.Module):
    """nanoGPT's model, parameter names matching pcp.models.GPT2."""

    def __init__(self, V, T, C, L, H, bias):
        super().__init__()
        self.H = H
        self.wte, self.wpe = tnn.Embedding(V, C), tnn.Embedding(T, C)
        self.h = tnn.ModuleList()
        for _ in range(L):
            b = tnn.Module()
            b.ln_1, b.ln_2 = tnn.LayerNorm(C, bias=bias), tnn.LayerNorm(C, bias=bias)
            b.attn, b.mlp = tnn.Module(), tnn.Module()
            b.attn.c_attn, b.attn.c_proj = tnn.Linear(C, 3 * C, bias=bias), tnn.Linear(C, C, bias=bias)
            b.mlp.c_fc, b.mlp.c_proj = tnn.Linear(C, 4 * C, bias=bias), tnn.Linear(4 * C, C, bias=bias)
            self.h.append(b)
        self.ln_f = tnn.LayerNorm(C, bias=bias)

    def forward(self, idx, targets):
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for b in self.h:
            q, k, v = b.attn.c_attn(b.ln_1(x)).split(x.shape[-1], dim=2)
            q, k, v = (t.view(B, T, self.H, -1).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, -1)
            x = x + b.attn.c_proj(y)
            x = x + b.mlp.c_proj(F.gelu(b.mlp.c_fc(b.ln_2(x)), approximate="tanh"))
        logits = self.ln_f(x) @ self.wte.weight.T
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="shakespeare-char-cpu")
    ap.add_argument("--max-iters", type=int, default=None)
    ap.add_argument("--eval-interval", type=int, default=None)
    ap.add_argument("--data", default=SHARED if os.path.isfile(SHARED) else "")
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--eval-iters", type=int, default=200, help="fixed batches per loss estimate (nanoGPT: 20)")
    ap.add_argument("--device", default="cpu", help="PCP device, e.g. gpu (PyTorch then runs on cuda)")
    ap.add_argument("--batch-device", default="cpu", help="device of PCP's int64 batches (default cpu)")
    ap.add_argument("--dropout", type=float, default=None)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--shapes", action="store_true", help="with --profile on the CPU: one row per op and input shapes")
    ap.add_argument("--chunk", type=int, default=50, help="iterations each framework runs before the other's turn")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--nanogpt", default=None, help="nanoGPT's folder: also time its train.py (eager and compiled)")
    ap.add_argument("--gpu-attention", default="auto", choices=["auto", "fused", "composed"],
                    help="PCP's attention on a GPU: its flash kernels (fused), products and softmax (composed), "
                         "or its default (auto: fused on tensor cores, composed for short sequences elsewhere)")
    ap.add_argument("--compile", action="store_true", help="PCP's step as a plan (pcp.compile)")
    ap.add_argument("--pcp-kernels", action="store_true",
                    help="PCP's own GPU kernels for products and attention, not NVIDIA's libraries (pcp[cuda])")
    ap.add_argument("--no-torch", action="store_true", help="skip the PyTorch model in this process")
    for name in ("n_layer", "n_head", "n_embd", "block_size", "batch_size"):  # the model's size
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=None, help=f"the preset's {name} otherwise")
    args = ap.parse_args()
    pcp._core._set_gpu_vendor(not args.pcp_kernels)
    pcp._core._set_gpu_attention(args.gpu_attention)
    pdev = pcp.device(args.device)
    tdev = "cpu" if pdev == "cpu" else ("cuda" if torch.cuda.is_available() else "cpu")
    over = {k: v for k, v in dict(max_iters=args.max_iters, eval_interval=args.eval_interval, dropout=args.dropout,
                                  n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd,
                                  block_size=args.block_size, batch_size=args.batch_size).items() if v is not None}
    if "max_iters" in over:
        over["lr_decay_iters"] = over["max_iters"]
        over["warmup_iters"] = min(preset(args.preset).warmup_iters, over["max_iters"] // 2)
    cfg = preset(args.preset, data=args.data, seed=args.seed, out=os.path.join("/tmp", "pcp-bench-train"), **over)
    os.makedirs(cfg.out, exist_ok=True)
    threads = pcp.get_num_threads()
    torch.set_num_threads(threads)
    torch.manual_seed(cfg.seed)
    pcp.random.seed(cfg.seed)
    tok, data = build_data(cfg)
    pcp.set_default_device(pdev)  # parameters (and optimizer state) on PCP's device
    model = build_model(cfg, tok.vocab_size)
    opt = build_optimizer(cfg, model)
    pcp.set_default_device("cpu")  # batches are drawn on the CPU, as in a CPU run
    tmodel = TorchGPT(tok.vocab_size, cfg.block_size, cfg.n_embd, cfg.n_layer, cfg.n_head, cfg.bias).to(tdev)
    tmodel.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()}, strict=True)
    decay = [p for p in tmodel.parameters() if p.dim() >= 2]
    no_decay = [p for p in tmodel.parameters() if p.dim() < 2]
    topt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=cfg.learning_rate, betas=(cfg.beta1, cfg.beta2), fused=False, foreach=True)
    lr_at = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, cfg.lr_decay_iters)

    # The same batches for both: the training batches drawn up front, and fixed evaluation batches.
    eval_batches = {s: [data.get_batch(s, cfg.batch_size) for _ in range(args.eval_iters)] for s in ("train", "val")}
    batches = [data.get_batch("train", cfg.batch_size) for _ in range(cfg.max_iters)]
    eval_at = [it for it in range(cfg.max_iters + 1) if it % cfg.eval_interval == 0 or it == cfg.max_iters]

    low = args.dtype != "float32"
    p_cast = lambda: pcp.autocast(dtype=args.dtype, enabled=low)  # noqa: E731
    t_cast = lambda: torch.autocast(tdev, dtype=getattr(torch, args.dtype)) if low else nullcontext()  # noqa: E731
    p_scaler = pcp.amp.GradScaler(enabled=args.dtype == "float16")
    t_scaler = torch.amp.GradScaler(tdev, enabled=args.dtype == "float16")

    def pcp_update(x, y):
        with p_cast():
            _, loss = model(x, y)
        opt.zero_grad()
        p_scaler.scale(loss).backward()
        p_scaler.unscale_(opt)
        clip_grad_norm(model.parameters(), cfg.grad_clip)
        p_scaler.step(opt)
        p_scaler.update()
        return loss

    if args.compile:
        pcp_update = pcp.compile(pcp_update)

    def pcp_step(x, y, lr):
        for g in opt.param_groups:
            g["lr"] = lr
        return pcp_update(x, y).item()

    def pcp_eval(x, y):
        with pcp.no_grad(), p_cast():
            return model(x, y)[1].item()

    def torch_step(x, y, lr):
        for g in topt.param_groups:
            g["lr"] = lr
        with t_cast():
            loss = tmodel(x, y)
        topt.zero_grad(set_to_none=True)
        t_scaler.scale(loss).backward()
        t_scaler.unscale_(topt)
        torch.nn.utils.clip_grad_norm_(tmodel.parameters(), cfg.grad_clip)
        t_scaler.step(topt)
        t_scaler.update()
        return loss.item()

    def torch_eval(x, y):
        with torch.no_grad(), t_cast():
            return tmodel(x, y).item()

    def as_torch(b):
        return torch.from_numpy(b[0].numpy()).to(tdev), torch.from_numpy(b[1].numpy()).to(tdev)

    def as_pcp(b):
        return b if args.batch_device == "cpu" else (b[0].to(args.batch_device), b[1].to(args.batch_device))

    class Run:
        """One framework's pass over the schedule, advanced a chunk of iterations at a time."""

        def __init__(self, step, evaluate, convert, profile=False):
            self.step, self.evaluate, self.convert, self.profile = step, evaluate, convert, profile
            self.it, self.evals, self.seconds = 0, {}, 0.0

        def advance(self, upto):
            for it in range(self.it, upto + 1):
                if it in eval_at and it not in self.evals:
                    self.evals[it] = tuple(np.mean([self.evaluate(*self.convert(b)) for b in eval_batches[s]])
                                           for s in ("train", "val"))
                if it == upto:
                    break
                x, y = self.convert(batches[it])
                if self.profile and it == 5:
                    pcp.synchronize()
                    if pdev == "cpu":
                        pcp._core.set_profiling(True, record_shapes=args.shapes)
                    else:
                        pcp._core.set_gpu_profiling(True, pdev)
                t0 = time.perf_counter()
                self.step(x, y, lr_at(it))
                if it >= 5:  # skip warm-up iterations
                    self.seconds += time.perf_counter() - t0
            self.it = upto

        def ms_per_iter(self):
            return 1e3 * self.seconds / max(cfg.max_iters - 5, 1)

    print(f"# {args.preset} in {args.dtype}: {model.num_parameters() / 1e6:.2f}M parameters, {cfg.max_iters} iterations, "
          f"batch {cfg.batch_size} x {cfg.block_size}, {threads} threads, PCP {pcp.cpu_features()['isa']}, "
          f"PyTorch {torch.__version__}; losses averaged over {args.eval_iters} fixed batches", flush=True)
    if pdev != "cpu":
        tname = torch.cuda.get_device_name() if tdev == "cuda" else "torch.cuda unavailable: PyTorch on the CPU"
        print(f"# PCP on {pdev} ({dict(pcp._core.devices())[pdev]}), batches on {args.batch_device}; "
              f"PyTorch on {tdev} ({tname})", flush=True)
    # The two alternate in chunks of iterations, so that a slow spell of this (shared) machine
    # slows both; the pause lets one's spinning worker threads go idle before the other runs.
    p_run = Run(pcp_step, pcp_eval, as_pcp, profile=args.profile)
    t_run = Run(torch_step, torch_eval, as_torch)
    if pdev != "cpu":
        pcp.reset_peak_memory_stats(pdev)
        if tdev == "cuda":
            torch.cuda.reset_peak_memory_stats()
    for upto in list(range(args.chunk, cfg.max_iters, args.chunk)) + [cfg.max_iters]:
        pcp.set_default_device(pdev)
        try:
            p_run.advance(upto)
        finally:
            pcp.set_default_device("cpu")
        time.sleep(0.05)
        if not args.no_torch:
            t_run.advance(upto)
            time.sleep(0.05)
    if args.profile and pdev != "cpu":
        pcp._core.set_gpu_profiling(False, pdev)
        kernels = pcp._core.gpu_profile_results(pdev)  # includes evaluations after iteration 5
        total = sum(s for _, _, s in kernels)
        steps = cfg.max_iters - 5
        evals = sum(1 for it in eval_at if it >= 5) * 2 * args.eval_iters  # forward passes, both splits
        print(f"# PCP GPU time by kernel (iterations 5.. and their evaluations): {1e3 * total:.1f} ms busy")
        print(f"# per training iteration ({steps} of them, plus {evals} evaluation forwards spread over them): "
              f"{1e3 * total / steps:.1f} ms busy, {sum(n for _, n, _ in kernels) / steps:.0f} dispatches and "
              f"transfers; wall time per iteration below (ms/iter)")
        for name, n, s in kernels[:25]:
            print(f"  {name:28s} {n:8d} launches {1e3 * s:10.1f} ms {100 * s / total:5.1f}%")
    elif args.profile:
        pcp._core.set_profiling(False)
        ops = sorted(pcp._core.profile_results(), key=lambda r: -r[2])  # includes evaluations after iteration 5
        steps = cfg.max_iters - 5
        print(f"# PCP CPU time by op per training iteration (iterations 5.., evaluations included; timing adds overhead)")
        for name, n, s in ops[:25]:
            print(f"  {name:40s} {n / steps:6.1f} calls {1e3 * s / steps:8.3f} ms")
    p_evals, p_ms, t_evals, t_ms = p_run.evals, p_run.ms_per_iter(), t_run.evals, t_run.ms_per_iter()
    nan = (float("nan"), float("nan"))
    print(f"{'iter':>6s} {'pcp train':>10s} {'torch train':>11s} {'pcp val':>9s} {'torch val':>9s}")
    for it in eval_at:
        t_ev = t_evals.get(it, nan)
        print(f"{it:6d} {p_evals[it][0]:10.4f} {t_ev[0]:11.4f} {p_evals[it][1]:9.4f} {t_ev[1]:9.4f}")
    ratio = f"{p_ms / t_ms:.2f}" if t_ms > 0 else "n/a (too few iterations timed)"
    print(f"\nms/iter: PCP {p_ms:.1f}, PyTorch {t_ms:.1f}, PCP/PyTorch {ratio} (below 1 means PCP is faster)")
    if pdev != "cpu":
        t_peak = torch.cuda.max_memory_allocated() / 2 ** 20 if tdev == "cuda" else float("nan")
        print(f"peak GPU memory (training and evaluation): PCP {pcp.memory_stats(pdev)['peak_bytes'] / 2 ** 20:.0f} MiB, "
              f"PyTorch max_memory_allocated {t_peak:.0f} MiB")
    if args.nanogpt:
        eager = run_nanogpt(args.nanogpt, cfg, args.dtype, tdev, compile=False)
        compiled = run_nanogpt(args.nanogpt, cfg, args.dtype, tdev, compile=True)
        print(f"nanoGPT train.py ({args.dtype}) ms/iter: eager {eager:.1f}, torch.compile {compiled:.1f}; "
              f"PCP/nanoGPT eager {p_ms / eager:.2f}, PCP/nanoGPT compiled {p_ms / compiled:.2f}")


def run_nanogpt(folder, cfg, dtype, device, compile):
    """nanoGPT's own train.py on the same text and model (its median ms per iteration after 10
    warm-up iterations), run from a temporary copy with the data prepared as its prepare.py does."""
    with tempfile.TemporaryDirectory() as tmp:
        for f in ("train.py", "model.py", "configurator.py"):
            shutil.copy(os.path.join(folder, f), tmp)
        data_dir = os.path.join(tmp, "data", "shakespeare_char")
        os.makedirs(data_dir)
        text = open(cfg.data, encoding="utf-8").read()
        chars = sorted(set(text))
        ids = np.array([chars.index(c) for c in text], dtype=np.uint16)
        n = int(0.9 * len(ids))
        ids[:n].tofile(os.path.join(data_dir, "train.bin"))
        ids[n:].tofile(os.path.join(data_dir, "val.bin"))
        import pickle
        with open(os.path.join(data_dir, "meta.pkl"), "wb") as f:
            pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)),
                         "stoi": {c: i for i, c in enumerate(chars)}}, f)
        iters = max(cfg.max_iters, 30)
        flags = {"dataset": "shakespeare_char", "out_dir": os.path.join(tmp, "out"), "batch_size": cfg.batch_size,
                 "block_size": cfg.block_size, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                 "dropout": cfg.dropout, "bias": cfg.bias, "learning_rate": cfg.learning_rate, "max_iters": iters,
                 "lr_decay_iters": iters, "min_lr": cfg.min_lr, "beta2": cfg.beta2,
                 "warmup_iters": min(cfg.warmup_iters, iters // 2),  # below lr_decay_iters: nanoGPT divides by the gap
                 "gradient_accumulation_steps": 1, "eval_interval": 10 ** 9, "eval_iters": 1, "log_interval": 1,
                 "always_save_checkpoint": False, "device": device, "dtype": dtype, "compile": compile,
                 "wandb_log": False}
        cmd = [sys.executable, "train.py"] + [f"--{k}={v}" for k, v in flags.items()]
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=1800)
        if out.returncode:
            raise RuntimeError(f"nanoGPT failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
        times = [float(t) for it, t in re.findall(r"^iter (\d+): .*time ([\d.]+)ms", out.stdout, re.M) if int(it) >= 10]
        return float(np.median(times))


if __name__ == "__main__":
    main()
