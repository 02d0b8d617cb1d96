"""GPU dispatches of one training step, eager and compiled, kernel by kernel (issue 42's count).

The step is pcp.train's (forward under autocast, backward, gradient clipping, AdamW with
nanoGPT's two decay groups) on a GPT; the GPU's timestamps count every command it runs
(kernels, uploads, downloads, copies) over --steps steps after two warm-up steps.

    python bench/dispatches.py                      # the 2-layer GPT of issue 42 on the first GPU
    python bench/dispatches.py --model gpt2-small   # 12 layers, 768 wide, context 1024, batch 8
    python bench/dispatches.py --n-layer 12 --batch-size 2 --attention fused
                                 # deeper, with the flash attention kernels where the GPU would not pick them
"""
import argparse
import collections

import numpy as np

import pcp
from pcp import _core
from pcp.train import TrainConfig
from pcp.train.loop import autocast_for, build_model, build_optimizer, training_step

MODELS = {
    "tiny": dict(n_layer=2, n_head=4, n_embd=64, block_size=64, batch_size=4, vocab=65),
    "gpt2-small": dict(n_layer=12, n_head=12, n_embd=768, block_size=1024, batch_size=8, vocab=65),
}


def profile_steps(cfg, vocab, dtype, steps, device):
    """(losses, {kernel: (count, seconds)} per step) of `steps` profiled steps after two others."""
    pcp.random.seed(0)
    model = build_model(cfg, vocab)
    opt = build_optimizer(cfg, model)
    scaler = pcp.amp.GradScaler(enabled=False)
    step = training_step(model, opt, scaler, cfg, dtype)
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, vocab, (2, cfg.batch_size, cfg.block_size + 1)) for _ in range(steps + 2)]
    losses = []
    for i, b in enumerate(batches):
        x, y = pcp.tensor(b[0, :, :-1], device="cpu"), pcp.tensor(b[0, :, 1:], device="cpu")  # as get_batch
        if i == 2:
            pcp.synchronize(device)
            if not _core.set_gpu_profiling(True, device):
                raise SystemExit(f"{device} cannot time its commands")
        losses.append(step(x, y))
    pcp.synchronize(device)
    _core.set_gpu_profiling(False, device)
    per_step = {name: (n / steps, s / steps) for name, n, s in _core.gpu_profile_results(device)}
    return [float(v.item()) for v in losses], per_step


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=MODELS, default="tiny")
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--top", type=int, default=15, help="kernels listed per mode")
    ap.add_argument("--n-layer", type=int, help="the model's layers (default: the model's)")
    ap.add_argument("--batch-size", type=int, help="sequences a step (default: the model's)")
    ap.add_argument("--attention", choices=["auto", "fused", "composed"], default="auto",
                    help="GPU attention kernels: flash (fused) or products and a softmax (composed)")
    args = ap.parse_args()
    m = dict(MODELS[args.model])
    for key in ("n_layer", "batch_size"):
        if getattr(args, key) is not None:
            m[key] = getattr(args, key)
    _core._set_gpu_attention(args.attention)
    vocab = m.pop("vocab")
    device = pcp.device(args.device)
    pcp.set_default_device(device)
    print(f"{args.model} GPT on {device} ({pcp.gpu_info(device)['name']}), {args.dtype} autocast, AdamW, "
          f"clip 1.0; per step, over {args.steps} steps")
    results = {}
    for compiled in (False, True):
        cfg = TrainConfig(**m, dropout=0.0, device=device, dtype=args.dtype, compile=compiled)
        losses, per_step = profile_steps(cfg, vocab, pcp.DType(args.dtype), args.steps, device)
        results[compiled] = losses
        total_n = sum(n for n, _ in per_step.values())
        total_ms = 1e3 * sum(s for _, s in per_step.values())
        print(f"\n{'compiled' if compiled else 'eager'}: {total_n:.0f} dispatches, {total_ms:.2f} ms busy")
        for name, (n, s) in sorted(per_step.items(), key=lambda kv: -kv[1][0])[:args.top]:
            print(f"  {name:32s} {n:6.1f} {1e3 * s:9.3f} ms")
    print("\nlosses eager   ", " ".join(f"{v:.6f}" for v in results[False]))
    print("losses compiled", " ".join(f"{v:.6f}" for v in results[True]))


if __name__ == "__main__":
    main()
