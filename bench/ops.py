"""PCP vs NumPy (and PyTorch when installed), side by side in one process.

Prints a table of median times and ratios (peer time / PCP time: above 1.0 means PCP is faster).
Each library is timed in --rounds alternating rounds (PCP, NumPy, PyTorch, PCP, ...) and keeps its
best round: this shared machine has spells that slow everything for seconds at a time, and one
library's only measurement falling in a spell the others missed would skew its ratio.
Run:  python bench/ops.py [--quick] [--rounds 3]
(Matmul rows add GFLOP/s and the percent of the peak that bench/peak.c measures: float32 FMA, or
for bfloat16 the AVX512_BF16 dot-product peak where PCP uses it. NumPy has no bfloat16.)
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
    # A pause first: the previous library's worker threads spin for a while after their last
    # call (OpenMP, OpenBLAS, PCP's pool), and on 2 cores that would slow this one.
    time.sleep(0.05)
    fn()  # warm up (allocator caches, thread pool)
    times = []
    start = time.perf_counter()
    while len(times) < max_reps and (time.perf_counter() - start < min_time or len(times) < 3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * w + b


def np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x * x * x)))


def np_cross_entropy(logits, targets):
    m = logits.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=-1)) + m[:, 0]
    return (lse - logits[np.arange(len(targets)), targets]).mean()


def cases(quick):
    """(name, numpy fn, pcp fn, torch fn or None[, flops]) for each case."""
    rng = np.random.default_rng(0)
    for label, n in [("1M", 1 << 20), ("16M", 1 << 24)]:
        a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
        pa, pb = pcp.from_numpy(a), pcp.from_numpy(b)
        ta, tb = (torch.from_numpy(a), torch.from_numpy(b)) if torch else (None, None)
        yield f"add {label}", lambda: a + b, lambda: pa + pb, (lambda: ta + tb) if torch else None
        yield f"mul {label}", lambda: a * b, lambda: pa * pb, (lambda: ta * tb) if torch else None
        yield f"exp {label}", lambda: np.exp(a), lambda: pcp.exp(pa), (lambda: torch.exp(ta)) if torch else None
        yield f"gelu {label}", lambda: np_gelu_tanh(a), lambda: pcp.gelu(pa, approximate="tanh"), \
            (lambda: torch.nn.functional.gelu(ta, approximate="tanh")) if torch else None
        yield f"sum {label}", lambda: a.sum(), lambda: pcp.sum(pa), (lambda: ta.sum()) if torch else None
        rows = n // 1024
        x = a.reshape(rows, 1024)
        w, bias = rng.standard_normal(1024, dtype=np.float32), rng.standard_normal(1024, dtype=np.float32)
        px, pw, pbias = pcp.from_numpy(x), pcp.from_numpy(w), pcp.from_numpy(bias)
        tx, tw, tbias = (torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)) if torch else (None,) * 3
        yield f"softmax {label} ({rows}x1024)", lambda: np_softmax(x), lambda: pcp.softmax(px, -1), \
            (lambda: torch.softmax(tx, -1)) if torch else None
        yield f"layer_norm {label} ({rows}x1024)", lambda: np_layer_norm(x, w, bias), \
            lambda: pcp.layer_norm(px, pw, pbias), \
            (lambda: torch.nn.functional.layer_norm(tx, (1024,), tw, tbias)) if torch else None
        logits = a.reshape(n // 256, 256)
        targets = rng.integers(0, 256, n // 256)
        pl, pt = pcp.from_numpy(logits), pcp.from_numpy(targets)
        tl, tt = (torch.from_numpy(logits), torch.from_numpy(targets)) if torch else (None, None)
        yield f"cross_entropy {label} ({n // 256}x256)", lambda: np_cross_entropy(logits, targets), \
            lambda: pcp.cross_entropy(pl, pt), (lambda: torch.nn.functional.cross_entropy(tl, tt)) if torch else None
    m = rng.standard_normal((4096, 4096), dtype=np.float32)
    pm, tm = pcp.from_numpy(m), (torch.from_numpy(m) if torch else None)
    for axis in (0, 1):
        yield f"sum 4096x4096 axis={axis}", (lambda ax=axis: m.sum(axis=ax)), (lambda ax=axis: pcp.sum(pm, ax)), \
            ((lambda ax=axis: tm.sum(dim=ax)) if torch else None)
    for n in ([256, 512, 1024] if quick else [256, 512, 1024, 2048]):
        x = rng.standard_normal((n, n), dtype=np.float32)
        y = rng.standard_normal((n, n), dtype=np.float32)
        px, py = pcp.from_numpy(x), pcp.from_numpy(y)
        tx, ty = (torch.from_numpy(x), torch.from_numpy(y)) if torch else (None, None)
        yield f"matmul {n}", (lambda: x @ y), (lambda: px @ py), (lambda: tx @ ty) if torch else None, 2 * n ** 3
    for n in ([512] if quick else [512, 1024, 2048]):
        x = pcp.from_numpy(rng.standard_normal((n, n), dtype=np.float32)).astype(pcp.bfloat16)
        y = pcp.from_numpy(rng.standard_normal((n, n), dtype=np.float32)).astype(pcp.bfloat16)
        tx, ty = (torch.from_numpy(x.astype(pcp.float32).numpy()).bfloat16(),
                  torch.from_numpy(y.astype(pcp.float32).numpy()).bfloat16()) if torch else (None, None)
        yield f"matmul bf16 {n}", None, (lambda: x @ y), (lambda: tx @ ty) if torch else None, 2 * n ** 3, "bf16"
    p64 = [pcp.from_numpy(rng.standard_normal(64, dtype=np.float32)) for _ in range(2)]
    n64 = [p.numpy() for p in p64]
    t64 = [torch.from_numpy(a) for a in n64] if torch else None
    yield "add 64 (per-op overhead)", lambda: np.add(*n64), lambda: pcp.add(*p64), (lambda: torch.add(*t64)) if torch else None


def peak_gflops(threads, kind="f32"):
    """This CPU's float32 FMA peak over `threads` cores, or its bfloat16 dot-product peak (kind="bf16",
    where PCP's bfloat16 matmul uses AVX512_BF16), measured by bench/peak.c (None without a C compiler)."""
    import os
    import subprocess
    import tempfile
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peak.c")
    exe = os.path.join(tempfile.mkdtemp(), "peak")
    flags = ["-mavx512f", "-mfma"] if "avx512" in pcp.cpu_features()["isa"] else ["-mavx2", "-mfma"]
    if kind == "bf16":
        if not pcp.cpu_features().get("bf16_matmul"):
            return None
        flags.append("-mavx512bf16")
    try:
        subprocess.run(["cc", "-O2", *flags, src, "-o", exe], check=True, capture_output=True)
        procs = [subprocess.Popen([exe, kind], stdout=subprocess.PIPE, text=True) for _ in range(threads)]
        return sum(float(p.communicate()[0].split()[0]) for p in procs)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per case; each library keeps its best")
    args = ap.parse_args()
    threads = pcp.get_num_threads()
    if torch:
        torch.set_num_threads(threads)
    peak = peak_gflops(threads)
    peaks = {"f32": peak, "bf16": peak_gflops(threads, "bf16")}
    print(f"# {platform.processor() or platform.machine()}, {threads} threads, PCP {pcp.cpu_features()['isa']}, "
          f"NumPy {np.__version__}" + (f", PyTorch {torch.__version__}" if torch else "") +
          (f"; float32 FMA peak {peak:.0f} GFLOP/s (bench/peak.c)" if peak else "") +
          (f", bfloat16 dot-product peak {peaks['bf16']:.0f}" if peaks["bf16"] else ""))
    print(f"{'case':36s} {'pcp ms':>9s} {'numpy ms':>9s} {'np/pcp':>7s} {'torch ms':>9s} {'torch/pcp':>9s} "
          f"{'pcp GFLOP/s':>11s} {'of peak':>8s}")
    for case in cases(args.quick):
        name, f_np, f_pcp, f_t = case[:4]
        flops = case[4] if len(case) > 4 else None
        row_peak = peaks[case[5] if len(case) > 5 else "f32"]
        t_pcp, t_np, t_t = (None if f is None else float("inf") for f in (f_pcp, f_np, f_t))
        for _ in range(max(1, args.rounds)):
            t_pcp = min(t_pcp, timeit(f_pcp))
            t_np = min(t_np, timeit(f_np)) if f_np else None
            t_t = min(t_t, timeit(f_t)) if f_t else None
        row = f"{name:36s} {t_pcp*1e3:9.3f}"
        row += f" {t_np*1e3:9.3f} {t_np/t_pcp:7.2f}" if t_np else f" {'-':>9s} {'-':>7s}"
        row += f" {t_t*1e3:9.3f} {t_t/t_pcp:9.2f}" if t_t else f" {'-':>9s} {'-':>9s}"
        row += f" {flops/t_pcp/1e9:11.1f}" if flops else ""
        row += f" {100 * flops / t_pcp / 1e9 / row_peak:7.0f}%" if flops and row_peak else ""
        print(row, flush=True)


if __name__ == "__main__":
    main()
