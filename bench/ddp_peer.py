"""Synchronous data-parallel training, the peer of bench/diloco_gpus.py: nanoGPT's GPT trained
with PyTorch DistributedDataParallel (NCCL across GPUs, gloo on CPUs), gradients averaged every
step. It takes the token arrays and the TrainConfig that diloco_gpus.py writes, so that model,
data, batch per GPU, AdamW, schedule, clipping and bfloat16 autocast are PCP's run's. Rank 0
evaluates the model every eval_interval steps on fixed val batches (the others wait, as in
nanoGPT) and scores the final one on the batches bench/diloco.py scores with; it writes OUT.

Run (torchrun starts one process per GPU):
  python -m torch.distributed.run --standalone --nproc_per_node N bench/ddp_peer.py \\
      --data DIR --nanogpt PATH --steps 1000 --out ddp.json
"""
import argparse
import contextlib
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def lr_at(cfg, it):
    """PCP's warmup_cosine (nanoGPT's schedule)."""
    lr, lo, warm, decay = cfg["learning_rate"], cfg["min_lr"], cfg["warmup_iters"], cfg["lr_decay_iters"]
    if it < warm:
        return lr * (it + 1) / (warm + 1)
    if it > decay:
        return lo
    return lo + 0.5 * (1.0 + math.cos(math.pi * (it - warm) / max(1, decay - warm))) * (lr - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a folder with train.npy, val.npy and run.json (diloco_gpus.py's)")
    ap.add_argument("--nanogpt", required=True, help="nanoGPT's folder (its model.py)")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--score-batches", type=int, default=50)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world, local = dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"cuda:{local}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    with open(os.path.join(args.data, "run.json")) as f:
        run = json.load(f)
    cfg, B, T = run["config"], run["config"]["batch_size"], run["config"]["block_size"]
    train, val = (np.load(os.path.join(args.data, f"{s}.npy"), mmap_mode="r") for s in ("train", "val"))

    sys.path.insert(0, args.nanogpt)
    from model import GPT, GPTConfig
    torch.manual_seed(cfg["seed"])  # DDP also broadcasts rank 0's weights at the start
    model = GPT(GPTConfig(block_size=T, vocab_size=run["vocab_size"], n_layer=cfg["n_layer"], n_head=cfg["n_head"],
                          n_embd=cfg["n_embd"], dropout=cfg["dropout"], bias=cfg["bias"])).to(device)
    with contextlib.redirect_stdout(sys.stderr):  # nanoGPT prints its parameter groups
        opt = model.configure_optimizers(cfg["weight_decay"], cfg["learning_rate"], (cfg["beta1"], cfg["beta2"]),
                                         "cuda" if cuda else "cpu")
    ddp = DistributedDataParallel(model, device_ids=[local] if cuda else None)
    bf16 = cuda and run["dtype"] == "bfloat16"
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext

    def batch(tokens, rng):
        ix = rng.integers(0, len(tokens) - T, B)
        block = torch.from_numpy(np.asarray(tokens)[ix[:, None] + np.arange(T + 1)[None, :]].astype(np.int64))
        if cuda:
            block = block.pin_memory().to(device, non_blocking=True)
        return block[:, :-1].contiguous(), block[:, 1:].contiguous()

    @torch.no_grad()
    def val_loss(batches, seed):
        model.eval()
        rng, total = np.random.default_rng(seed), 0.0
        for _ in range(batches):
            with autocast():
                total += model(*batch(val, rng))[1].item()
        model.train()
        return total / batches

    rng = np.random.default_rng(cfg["seed"] + 1 + rank)  # each rank its own batches
    curve, t0, warm = [], time.perf_counter(), 10  # the first steps (allocator, NCCL set-up) are not timed
    for it in range(args.steps + 1):
        if it == warm:
            if cuda:
                torch.cuda.synchronize()
            t_timed = time.perf_counter()
        if it % cfg["eval_interval"] == 0 or it == args.steps:
            if rank == 0:
                curve.append((it * world * B * T, val_loss(cfg["eval_iters"], cfg["seed"])))
            dist.barrier()
        if it == args.steps:
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(cfg, it)
        x, y = batch(train, rng)
        with autocast():
            _, loss = ddp(x, y)
        loss.backward()  # DDP averages the gradients across ranks here
        if cfg["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["grad_clip"])
        opt.step()
        opt.zero_grad(set_to_none=True)
        if it % cfg["log_interval"] == 0:
            loss.item()  # as nanoGPT: the host waits for the GPU only when it logs
    if cuda:
        torch.cuda.synchronize()
    timed = time.perf_counter() - t_timed  # steps and evaluations, as DiLoCo's rounds are timed
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        out = {"world": world, "steps": args.steps, "tokens": args.steps * world * B * T,
               "wall_seconds": time.perf_counter() - t0, "timed_seconds": timed,
               "tokens_per_s": (args.steps - warm) * world * B * T / timed, "curve": curve,
               "val_loss": val_loss(args.score_batches, 0), "parameters": params,
               # gradients averaged every step: each GPU sends its float32 gradient and receives the mean
               "bytes": 2 * 4 * params * world * args.steps,
               "device": torch.cuda.get_device_name(device) if cuda else "cpu", "torch": torch.__version__}
        with open(args.out, "w") as f:
            json.dump(out, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
