"""Synchronous data-parallel training over Ray: the baseline DiLoCo is measured against across
slow links (bench/diloco_wan.py). Every step each worker computes the gradient of its own batch,
the driver averages the workers' gradients (float32, the all-reduce of DDP through Ray's object
store, as DiLoCo's shepherd averages pseudo-gradients) and every replica, the driver's included,
takes the same clipped AdamW step, so all stay identical. The model, data, schedule and
evaluation are pcp train's and pcp diloco's for the preset (the same val batches as the DiLoCo
shepherd's), so the val losses compare.

Writes OUT/sync_dp.json: the history (per evaluated step: step, seconds since the first step,
val loss, bytes sent and received so far) and per step the seconds each worker computed and the
seconds the step took.

Run:  python bench/sync_dp.py --address HOST:PORT [--workers 4] [--steps 200] [--eval-every 10]
                              [--data PATH] [--out DIR]
"""
import argparse
import json
import os
import time

import numpy as np


def setup(preset, data, out):
    import pcp
    from pcp.train import preset as make_preset
    from pcp.train.loop import build_data, build_model, build_optimizer
    cfg = make_preset(preset, data=data, out=out)
    pcp.random.seed(cfg.seed)  # every replica starts from the same weights
    tokenizer, dataset = build_data(cfg)
    model = build_model(cfg, tokenizer.vocab_size)
    return cfg, dataset, model, build_optimizer(cfg, model)


def batch(tokens, rng, cfg):
    import pcp
    ix = rng.integers(0, len(tokens) - cfg.block_size, cfg.batch_size)
    block = tokens[ix[:, None] + np.arange(cfg.block_size + 1)[None, :]].astype(np.int64)
    return pcp.tensor(block[:, :-1]), pcp.tensor(block[:, 1:])


def take_step(model, opt, cfg, step, flat):
    """The AdamW step of the averaged gradient `flat` (all parameters, concatenated), clipped as
    pcp train clips, at the schedule's learning rate for `step`."""
    import pcp
    from pcp.optim import clip_grad_norm, warmup_cosine
    params, at = list(model.parameters()), 0
    for p in params:
        p.grad = pcp.tensor(flat[at:at + p.size].reshape(p.shape))
        at += p.size
    if cfg.grad_clip > 0:
        clip_grad_norm(params, cfg.grad_clip)
    lr = warmup_cosine(cfg.learning_rate, cfg.min_lr, cfg.warmup_iters, cfg.lr_decay_iters)(step)
    for g in opt.param_groups:
        g["lr"] = lr
    opt.step()
    opt.zero_grad()


class Replica:
    """A worker: the model, its AdamW, and its share of the batches (seeded by rank and step)."""

    def __init__(self, rank, preset, data, out, threads):
        import pcp
        pcp.set_num_threads(threads)
        self.rank = rank
        self.cfg, dataset, self.model, self.opt = setup(preset, data, out)
        self.train = np.asarray(dataset.splits["train"])

    def step(self, step, averaged):
        """Takes the last step's averaged gradient (None at step 0), then returns this step's
        gradient (flat float32), its loss and the seconds spent computing."""
        t = time.perf_counter()
        if averaged is not None:
            take_step(self.model, self.opt, self.cfg, step - 1, averaged)
        x, y = batch(self.train, np.random.default_rng([self.cfg.seed, self.rank, step]), self.cfg)
        _, loss = self.model(x, y)
        loss.backward()
        grad = np.concatenate([p.grad.numpy().ravel() for p in self.model.parameters()]).astype(np.float32)
        self.opt.zero_grad()
        return grad, loss.item(), time.perf_counter() - t


def evaluate(model, val, cfg):
    """The DiLoCo shepherd's evaluation: eval_iters val batches from a generator seeded by cfg.seed."""
    import pcp
    model.eval()
    rng, total = np.random.default_rng(cfg.seed), 0.0
    with pcp.no_grad():
        for _ in range(cfg.eval_iters):
            total += model(*batch(val, rng, cfg))[1].item()
    model.train()
    return total / cfg.eval_iters


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--address", default="", help="a Ray cluster's HOST:PORT ('' starts a local one)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--eval-every", type=int, default=10, help="steps between evaluations (and the last)")
    ap.add_argument("--eval-iters", type=int, default=20)
    ap.add_argument("--preset", default="shakespeare-char-cpu")
    ap.add_argument("--data", default="")
    ap.add_argument("--out", default="out-sync-dp")
    args = ap.parse_args()
    import ray
    from pcp.distributed.cluster import init_ray
    os.makedirs(args.out, exist_ok=True)
    init_ray(args.address)
    cfg, dataset, model, opt = setup(args.preset, args.data, args.out)
    cfg.eval_iters = args.eval_iters
    val = np.asarray(dataset.splits["val"])
    actor = ray.remote(num_cpus=1)(Replica)
    replicas = [actor.remote(r, args.preset, args.data, args.out, 1) for r in range(args.workers)]
    ray.get([r.step.remote(0, None) for r in replicas])  # started, their data loaded, before the clock
    history = [{"step": 0, "seconds": 0.0, "val_loss": evaluate(model, val, cfg), "bytes_sent": 0, "bytes_received": 0}]
    steps, sent, received, averaged = [], 0, 0, None
    t0 = time.perf_counter()
    for step in range(args.steps):
        t = time.perf_counter()
        ref = None if averaged is None else ray.put(averaged)
        sent += 0 if averaged is None else averaged.nbytes * len(replicas)
        results = ray.get([r.step.remote(step, ref) for r in replicas])
        grads = [g for g, _, _ in results]
        received += sum(g.nbytes for g in grads)
        averaged = grads[0] / len(grads)
        for g in grads[1:]:
            averaged += g / len(grads)
        take_step(model, opt, cfg, step, averaged)  # the driver's replica: what the workers take next
        steps.append({"step": step, "seconds": time.perf_counter() - t, "compute": [c for _, _, c in results],
                      "loss": float(np.mean([l for _, l, _ in results]))})
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            seconds, t_eval = time.perf_counter() - t0, time.perf_counter()
            history.append({"step": step + 1, "seconds": seconds, "val_loss": evaluate(model, val, cfg),
                            "bytes_sent": sent, "bytes_received": received})
            t0 += time.perf_counter() - t_eval  # the clock leaves out the driver's evaluations
            print(f"step {step + 1}: val {history[-1]['val_loss']:.4f}, {history[-1]['seconds']:.1f} s", flush=True)
    json.dump({"history": history, "steps": steps, "workers": args.workers, "preset": args.preset},
              open(os.path.join(args.out, "sync_dp.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
