"""GPU time per kernel of PCP's attention, forward + backward, at GPT's shapes.

Run:  python bench/attention_kernels.py [--device gpu] [--dtype bfloat16] [--repeats 5] [--dropout P]

Times each way PCP computes attention on the GPU (its flash kernels, "fused", and products with a
causal softmax, "composed") from device timestamps: causal, heads read in place from a packed
(B, T, 3C) projection as GPT-2's attention does. PCP_ATTENTION_KERNEL=coop runs the
VK_KHR_cooperative_matrix flash kernels on a GPU that also has VK_NV_cooperative_matrix2.
PyTorch's side of the comparison is in bench/gpu.py (its "attention" rows).
"""
import argparse

import numpy as np

import pcp
from pcp import _core

SHAPES = ((64, 6, 256, 64), (8, 12, 1024, 64))  # shakespeare-char's, and GPT-2 small's at T = 1024


def kernel_times(B, H, T, D, mode, device, dtype, repeats, dropout=0.0):
    """[(kernel, ms per forward + backward)] and their sum, from `repeats` timed runs after 3."""
    rng = np.random.default_rng(0)
    x = pcp.tensor(rng.standard_normal((B, T, 3 * H * D)).astype(np.float32), device=device).astype(dtype)
    g = pcp.tensor(rng.standard_normal((B, T, H * D)).astype(np.float32), device=device).astype(dtype)
    x.requires_grad = True
    _core._set_gpu_attention(mode)
    try:
        for it in range(3 + repeats):
            if it == 3:
                pcp.synchronize(device)
                _core.set_gpu_profiling(True, device)
            _core.autograd_grad(pcp.qkv_attention(x, H, causal=True, dropout_p=dropout), [x], g)
        pcp.synchronize(device)
        rows = [(name, 1e3 * s / repeats) for name, _, s in _core.gpu_profile_results(device)]
    finally:
        _core.set_gpu_profiling(False, device)
        _core._set_gpu_attention("auto")
    return rows, sum(ms for _, ms in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shapes", default=None, help="B,H,T,D;... (default: the two GPT shapes)")
    ap.add_argument("--dropout", type=float, default=0.0, help="dropout on the attention weights")
    args = ap.parse_args()
    device = pcp.device(args.device)
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes.split(";")] if args.shapes else SHAPES
    print(f"# {pcp.gpu_info(device)['name']}, {args.dtype}, causal, dropout {args.dropout}, ms per forward + backward")
    for B, H, T, D in shapes:
        for mode in ("fused", "composed"):
            rows, total = kernel_times(B, H, T, D, mode, device, getattr(pcp, args.dtype), args.repeats, args.dropout)
            print(f"({B}, {H}, {T}, {D}) {mode:8s} {total:8.3f} ms: " +
                  ", ".join(f"{name} {ms:.3f}" for name, ms in rows[:6]))


if __name__ == "__main__":
    main()
