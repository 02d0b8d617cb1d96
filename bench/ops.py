"""PCP vs NumPy (and PyTorch when installed), side by side in one process.

Prints a table of median times and ratios (peer time / PCP time: above 1.0 means PCP is faster).
Run:  python bench/ops.py [--quick]
"""
import argparse
import platform
import time

import numpy as np

import pcp

try:
    import torch
except ImportError:
    torch = None


def timeit(fn, min_time=0.3, max_reps=200):
    fn()  # warm up (allocator caches, thread pool)
    times = []
    start = time.perf_counter()
    while len(times) < max_reps and (time.perf_counter() - start < min_time or len(times) < 3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def cases(quick):
    rng = np.random.default_rng(0)
    sizes = [("1M", 1 << 20), ("16M", 1 << 24)]
    for label, n in sizes:
        a = rng.standard_normal(n, dtype=np.float32)
        b = rng.standard_normal(n, dtype=np.float32)
        for name, f_np, f_pcp, f_t in [
            ("add", np.add, pcp.add, lambda x, y: torch.add(x, y)),
            ("mul", np.multiply, pcp.mul, lambda x, y: torch.mul(x, y)),
        ]:
            yield f"{name} {label}", (lambda f=f_np: f(a, b)), (lambda f=f_pcp, pa=pcp.from_numpy(a), pb=pcp.from_numpy(b): f(pa, pb)), \
                (lambda f=f_t, ta=torch.from_numpy(a) if torch else None, tb=torch.from_numpy(b) if torch else None: f(ta, tb)) if torch else None
        pa, ta = pcp.from_numpy(a), (torch.from_numpy(a) if torch else None)
        yield f"exp {label}", lambda: np.exp(a), lambda: pcp.exp(pa), (lambda: torch.exp(ta)) if torch else None
    m = rng.standard_normal((4096, 4096), dtype=np.float32)
    pm, tm = pcp.from_numpy(m), (torch.from_numpy(m) if torch else None)
    for axis in (None, 0, 1):
        yield f"sum 4096x4096 axis={axis}", (lambda ax=axis: m.sum(axis=ax)), (lambda ax=axis: pcp.sum(pm, ax)), \
            ((lambda ax=axis: tm.sum() if ax is None else tm.sum(dim=ax)) if torch else None)

    def np_softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    yield "softmax 4096x4096", lambda: np_softmax(m), lambda: pcp.softmax(pm, -1), (lambda: torch.softmax(tm, -1)) if torch else None
    for n in ([256, 512, 1024] if quick else [256, 512, 1024, 2048]):
        x = rng.standard_normal((n, n), dtype=np.float32)
        y = rng.standard_normal((n, n), dtype=np.float32)
        px, py = pcp.from_numpy(x), pcp.from_numpy(y)
        tx, ty = (torch.from_numpy(x), torch.from_numpy(y)) if torch else (None, None)
        yield f"matmul {n}", (lambda: x @ y), (lambda: px @ py), (lambda: tx @ ty) if torch else None, 2 * n ** 3
    p64 = [pcp.from_numpy(rng.standard_normal(64, dtype=np.float32)) for _ in range(2)]
    n64 = [p.numpy() for p in p64]
    t64 = [torch.from_numpy(a) for a in n64] if torch else None
    yield "add 64 (per-op overhead)", lambda: np.add(*n64), lambda: pcp.add(*p64), (lambda: torch.add(*t64)) if torch else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    args = ap.parse_args()
    threads = pcp.get_num_threads()
    if torch:
        torch.set_num_threads(threads)
    print(f"# {platform.processor() or platform.machine()}, {threads} threads, PCP {pcp.cpu_features()['isa']}, "
          f"NumPy {np.__version__}" + (f", PyTorch {torch.__version__}" if torch else ""))
    print(f"{'case':30s} {'pcp ms':>9s} {'numpy ms':>9s} {'np/pcp':>7s} {'torch ms':>9s} {'torch/pcp':>9s} {'pcp GFLOP/s':>11s}")
    for case in cases(args.quick):
        name, f_np, f_pcp, f_t = case[:4]
        flops = case[4] if len(case) > 4 else None
        t_pcp, t_np = timeit(f_pcp), timeit(f_np)
        t_t = timeit(f_t) if f_t else None
        row = f"{name:30s} {t_pcp*1e3:9.3f} {t_np*1e3:9.3f} {t_np/t_pcp:7.2f}"
        row += f" {t_t*1e3:9.3f} {t_t/t_pcp:9.2f}" if t_t else f" {'-':>9s} {'-':>9s}"
        row += f" {flops/t_pcp/1e9:11.1f}" if flops else ""
        print(row, flush=True)


if __name__ == "__main__":
    main()
