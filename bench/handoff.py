"""The cost of handing the GPU between PCP's Vulkan kernels and NVIDIA's libraries (pcp[cuda]).

Three loops of small ops on one GPU, each timed over N iterations between two synchronizations:
  vulkan   x * 0.5 (a Vulkan kernel)
  library  x @ w   (cuBLASLt; consecutive calls share the CUDA stream, no hand-off)
  mixed    (x @ w) * 0.5: each iteration hands the GPU to CUDA and back
The hand-off cost is (mixed - vulkan - library) / 2 per switch of API, host and GPU included.

Run:  python bench/handoff.py [--iters N] [--size S]
"""
import argparse
import time

import pcp
from pcp import _core


def per_call(fn, iters):
    for _ in range(10):
        fn()
    pcp.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    pcp.synchronize()
    return (time.perf_counter() - t0) / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--size", type=int, default=256)
    args = ap.parse_args()
    vendor = pcp.gpu_info()["vendor"]
    if not vendor["matmul"]:
        raise SystemExit(f"bench/handoff.py: no vendor matmul on this GPU ({vendor['note']})")
    x = pcp.randn((args.size, args.size), device="gpu").astype(pcp.bfloat16)
    w = pcp.randn((args.size, args.size), device="gpu").astype(pcp.bfloat16)
    t = {"vulkan": per_call(lambda: x * 0.5, args.iters),
         "library": per_call(lambda: x @ w, args.iters),
         "mixed": per_call(lambda: (x @ w) * 0.5, args.iters)}
    _core._set_gpu_vendor(False)
    t["vulkan matmul, mixed"] = per_call(lambda: (x @ w) * 0.5, args.iters)
    _core._set_gpu_vendor(True)
    for name, s in t.items():
        print(f"{name:22s} {s * 1e6:8.1f} us per iteration")
    print(f"hand-off per switch of API: {(t['mixed'] - t['vulkan'] - t['library']) / 2 * 1e6:.1f} us "
          f"({args.iters} iterations, {args.size}^2 bfloat16 operands)")


if __name__ == "__main__":
    main()
