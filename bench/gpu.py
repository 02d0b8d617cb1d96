"""PCP on a GPU against PyTorch CUDA on the same GPU, side by side in one run.

Each case runs the same computation on the same inputs (generated once by PyTorch, copied into
PCP), checks PCP's result against PyTorch's (max |PCP - PyTorch| / max |PyTorch|, so a fast but
wrong kernel shows), then times both: warm-up, then N calls between two synchronizations
(pcp.synchronize() / torch.cuda.synchronize(), wall clock), N chosen so one repeat lasts about
--min-time; the median over --repeats repeats is reported. Bandwidth counts bytes read + written
once each (the minimum traffic of the op); matmul reports TFLOP/s. ratio = PyTorch time / PCP
time: above 1 means PCP is faster. Ops that PCP cannot run on the GPU yet show n/a and why.

Run:  python bench/gpu.py [--quick] [--scale S] [--json PATH] [--torch-device cuda|cpu] [--pcp-kernels]
(--pcp-kernels: PCP's own Vulkan kernels for products and attention where NVIDIA's libraries would
run them; gpu_info()["vendor"] says which do.)
Without CUDA, PyTorch falls back to the CPU (said in the output), for smoke tests on lavapipe.
"""
import argparse
import json
import math
import platform
import statistics
import sys
import time

import numpy as np

import pcp
from pcp import _core

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - the benchmark needs its peer
    sys.exit("bench/gpu.py needs PyTorch (pip install torch)")


class Bench:
    def __init__(self, pdev, tdev, min_time, repeats, max_iters):
        self.pdev, self.tdev = pdev, tdev
        self.min_time, self.repeats, self.max_iters = min_time, repeats, max_iters

    def psync(self):
        pcp.synchronize(self.pdev)

    def tsync(self):
        if self.tdev.type == "cuda":
            torch.cuda.synchronize(self.tdev)

    def time(self, fn, sync):
        """Median seconds per call of fn over self.repeats repeats of N back-to-back calls."""
        sync()
        for _ in range(2):  # warm up: pipelines, allocator caches, cuBLAS handles
            fn()
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        once = time.perf_counter() - t0
        iters = max(1, min(self.max_iters, math.ceil(self.min_time / max(once, 1e-6))))
        times = []
        for _ in range(self.repeats):
            sync()
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            sync()
            times.append((time.perf_counter() - t0) / iters)
        return statistics.median(times), iters


def to_pcp(t, dev):
    """A PCP tensor on `dev` holding the values of torch tensor t."""
    return pcp.tensor(t.detach().cpu().numpy(), device=dev)


def rel_err(p, t):
    """max |p - t| / max |t|, computed on PyTorch's device (p: PCP tensor or list, t: torch)."""
    if isinstance(t, (list, tuple)):
        return max(rel_err(a, b) for a, b in zip(p, t))
    wide = t.dtype == torch.float64  # compared in float64
    ref = t.detach().double() if wide else t.detach().float()
    got = p.astype(pcp.float64 if wide else pcp.float32).numpy()
    got = torch.from_numpy(np.ascontiguousarray(got)).to(ref.device).reshape(ref.shape)
    scale = ref.abs().max().item()
    return (got - ref).abs().max().item() / (scale if scale > 0 else 1.0)


def cases(args, pdev, tdev):
    """Yields (op, shape, unit, amount, make) where make() builds the inputs once and returns
    (pcp_fn, torch_fn, check[, note]): check() returns the max relative error of PCP's result.
    unit 'GB/s' counts bytes moved, 'TFLOP/s' floating-point operations."""
    gen = torch.Generator(device=tdev).manual_seed(0)
    randn = lambda *shape: torch.randn(shape, generator=gen, device=tdev, dtype=torch.float32)  # noqa: E731
    N, R, C, M = args.elems, args.rows, args.cols, args.mm

    # Elementwise: x + y, and copies (contiguous and of a transposed view).
    def add():
        tx, ty = randn(N), randn(N)
        px, py = to_pcp(tx, pdev), to_pcp(ty, pdev)
        return (lambda: px + py), (lambda: tx + ty), (lambda: rel_err(px + py, tx + ty))
    yield "add", f"({N},)", "GB/s", 12 * N, add

    def copy():
        tx = randn(N)
        px = to_pcp(tx, pdev)
        return (lambda: pcp.copy(px)), (lambda: tx.clone()), (lambda: rel_err(pcp.copy(px), tx))
    yield "copy", f"({N},)", "GB/s", 8 * N, copy

    side = int(math.isqrt(N))
    rows_t = N // side

    def copy_t():
        tx = randn(rows_t, side)
        px = to_pcp(tx, pdev)
        return (lambda: px.T.contiguous()), (lambda: tx.t().contiguous()), \
            (lambda: rel_err(px.T.contiguous(), tx.t().contiguous()))
    yield "transpose copy", f"({rows_t}, {side}).T", "GB/s", 8 * rows_t * side, copy_t

    # Row-wise neural-network ops on (R, C).
    def softmax():
        tx = randn(R, C)
        px = to_pcp(tx, pdev)
        return (lambda: pcp.softmax(px, -1)), (lambda: torch.softmax(tx, -1)), \
            (lambda: rel_err(pcp.softmax(px, -1), torch.softmax(tx, -1)))
    yield "softmax", f"({R}, {C})", "GB/s", 8 * R * C, softmax

    def softmax_bwd():
        tx, tdy = randn(R, C).requires_grad_(), randn(R, C)
        px, pdy = to_pcp(tx, pdev).requires_grad_(), to_pcp(tdy, pdev)

        def p():
            return _core.autograd_grad(pcp.softmax(px, -1), [px], pdy)[0]

        def t():
            return torch.autograd.grad(torch.softmax(tx, -1), [tx], tdy)[0]
        return p, t, (lambda: rel_err(p(), t()))
    yield "softmax fwd+bwd", f"({R}, {C})", "GB/s", (8 + 12) * R * C, softmax_bwd

    def layer_norm():
        tx, tw, tb = randn(R, C), randn(C), randn(C)
        px, pw, pb = (to_pcp(t, pdev) for t in (tx, tw, tb))
        p = lambda: pcp.layer_norm(px, pw, pb, 1e-5)  # noqa: E731
        t = lambda: F.layer_norm(tx, (C,), tw, tb, 1e-5)  # noqa: E731
        return p, t, (lambda: rel_err(p(), t()))
    yield "layer_norm", f"({R}, {C})", "GB/s", 8 * R * C, layer_norm

    def layer_norm_bwd():
        tx, tw, tb, tdy = randn(R, C).requires_grad_(), randn(C).requires_grad_(), randn(C).requires_grad_(), randn(R, C)
        px, pw, pb = (to_pcp(t, pdev).requires_grad_() for t in (tx, tw, tb))
        pdy = to_pcp(tdy, pdev)

        def p():
            return _core.autograd_grad(pcp.layer_norm(px, pw, pb, 1e-5), [px, pw, pb], pdy)

        def t():
            return torch.autograd.grad(F.layer_norm(tx, (C,), tw, tb, 1e-5), [tx, tw, tb], tdy)
        return p, t, (lambda: rel_err(p(), t()))
    yield "layer_norm fwd+bwd", f"({R}, {C})", "GB/s", (8 + 12) * R * C, layer_norm_bwd

    def ce_inputs():
        tx = randn(R, C)
        ty = torch.randint(0, C, (R,), generator=gen, device=tdev, dtype=torch.int64)
        px = to_pcp(tx, pdev)
        # Targets on the GPU when PCP takes them there, else on the CPU.
        errors = []
        for where in (pdev, "cpu"):
            py = pcp.tensor(ty.cpu().numpy(), device=where)
            try:
                pcp.cross_entropy(px, py)
                return tx, ty, px, py, f"targets on {where}"
            except (NotImplementedError, ValueError) as e:
                errors.append(f"targets on {where}: {e}")
        raise NotImplementedError("; ".join(errors))

    def cross_entropy():
        tx, ty, px, py, note = ce_inputs()
        p = lambda: pcp.cross_entropy(px, py)  # noqa: E731
        t = lambda: F.cross_entropy(tx, ty)  # noqa: E731
        return p, t, (lambda: rel_err(p(), t())), note
    yield "cross_entropy", f"({R}, {C}) int64", "GB/s", 4 * R * C + 8 * R, cross_entropy

    def cross_entropy_bwd():
        tx, ty, px, py, note = ce_inputs()
        tx.requires_grad_()
        px.requires_grad_()
        p = lambda: _core.autograd_grad(pcp.cross_entropy(px, py), [px])[0]  # noqa: E731
        t = lambda: torch.autograd.grad(F.cross_entropy(tx, ty), [tx])[0]  # noqa: E731
        return p, t, (lambda: rel_err(p(), t())), note
    yield "cross_entropy fwd+bwd", f"({R}, {C}) int64", "GB/s", (4 + 8) * R * C + 16 * R, cross_entropy_bwd

    def matmul():
        ta, tb = randn(M, M), randn(M, M)
        pa, pb = to_pcp(ta, pdev), to_pcp(tb, pdev)
        return (lambda: pa @ pb), (lambda: ta @ tb), (lambda: rel_err(pa @ pb, ta @ tb))
    yield "matmul fp32", f"{M}x{M}x{M}", "TFLOP/s", 2 * M ** 3, matmul

    # float64 (metal/wide/ on Vulkan, its CUDA translation on the CUDA runtime; PCP's own
    # transcendentals and a 16 x 16-tile product, against PyTorch's CUDA math and cuBLAS DGEMM).
    def wide(make_inputs, pcp_fn, torch_fn):
        def make():
            ts = make_inputs()
            ps = [to_pcp(t, pdev) for t in ts]
            return (lambda: pcp_fn(*ps)), (lambda: torch_fn(*ts)), (lambda: rel_err(pcp_fn(*ps), torch_fn(*ts)))
        return make
    yield "exp fp64", f"({N},)", "GB/s", 16 * N, wide(lambda: [randn(N).double()], pcp.exp, torch.exp)
    yield "sin fp64", f"({N},)", "GB/s", 16 * N, wide(lambda: [randn(N).double() * 100], pcp.sin, torch.sin)
    yield "sum fp64", f"({R}, {C})", "GB/s", 8 * R * C, wide(lambda: [randn(R, C).double()], lambda x: x.sum(-1),
                                                             lambda x: x.sum(-1))
    Mw = M // 2
    yield "matmul fp64", f"{Mw}x{Mw}x{Mw}", "TFLOP/s", 2 * Mw ** 3, wide(
        lambda: [randn(Mw, Mw).double(), randn(Mw, Mw).double()], lambda a, b: a @ b, lambda a, b: a @ b)

    # 16-bit matmuls (float32 accumulation): PCP's tensor-core kernels where the device and the
    # build have them, against PyTorch's cuBLAS in the same dtype.
    def half_matmul(dtype, tdtype):
        def make():
            ta, tb = randn(M, M).to(tdtype), randn(M, M).to(tdtype)
            pa, pb = to_pcp(ta.float(), pdev).astype(dtype), to_pcp(tb.float(), pdev).astype(dtype)
            return (lambda: pa @ pb), (lambda: ta @ tb), (lambda: rel_err(pa @ pb, ta @ tb))
        return make
    yield "matmul fp16", f"{M}x{M}x{M}", "TFLOP/s", 2 * M ** 3, half_matmul(pcp.float16, torch.float16)
    yield "matmul bf16", f"{M}x{M}x{M}", "TFLOP/s", 2 * M ** 3, half_matmul(pcp.bfloat16, torch.bfloat16)

    # The matmuls of a GPT training step (shakespeare-char: B*T = 16384 rows, C = 384, 6 heads):
    # the MLP's forward, its two backward products (transposed operands), and attention's batch.
    BT, Cg = max(256, 16384 * M // 4096), 384  # rows scale with --mm / --quick

    def mm_case(a_shape, b_shape, ta_t=False, tb_t=False, dtype=None):
        def make():
            ta, tb = randn(*a_shape), randn(*b_shape)
            pa, pb = to_pcp(ta, pdev), to_pcp(tb, pdev)
            if dtype is not None:  # the same rounded values in both
                ta, tb = ta.to(getattr(torch, str(dtype))), tb.to(getattr(torch, str(dtype)))
                pa, pb = pa.astype(dtype), pb.astype(dtype)
            if ta_t:
                ta, pa = ta.transpose(-1, -2), pa.swapaxes(-1, -2)
            if tb_t:
                tb, pb = tb.transpose(-1, -2), pb.swapaxes(-1, -2)
            return (lambda: pa @ pb), (lambda: ta @ tb), (lambda: rel_err(pa @ pb, ta @ tb))
        return make
    # Both layouts of the weight: stored (in, out) as here, or (out, in) as in nn.Linear and PCP's
    # GPT (forward x @ W^T, backward dY @ W).
    gpt = [("matmul gpt x@W", (BT, Cg), (Cg, 4 * Cg), False, False, BT * Cg * 4 * Cg),
           ("matmul gpt dY@W^T", (BT, 4 * Cg), (Cg, 4 * Cg), False, True, BT * Cg * 4 * Cg),
           ("matmul gpt x@W^T", (BT, Cg), (4 * Cg, Cg), False, True, BT * Cg * 4 * Cg),
           ("matmul gpt dY@W", (BT, 4 * Cg), (4 * Cg, Cg), False, False, BT * Cg * 4 * Cg),
           ("matmul gpt X^T@dY", (BT, Cg), (BT, 4 * Cg), True, False, BT * Cg * 4 * Cg),
           ("matmul gpt attention q@k^T", (BT // 256 * 6, 256, 64), (BT // 256 * 6, 256, 64), False, True,
            BT * 6 * 256 * 64)]
    # Attention forward + backward in bfloat16 (causal, GPT-2 layout: q, k, v packed in one
    # (B, T, 3C) projection), against PyTorch's scaled_dot_product_attention (its flash backend).
    def attention(B, H, T, D, mode):
        def make():
            tx = randn(B, T, 3 * H * D).to(torch.bfloat16).requires_grad_(True)
            tg = randn(B, T, H * D).to(torch.bfloat16)
            px = to_pcp(tx.detach().float(), pdev).astype(pcp.bfloat16)
            px.requires_grad = True
            pg = to_pcp(tg.float(), pdev).astype(pcp.bfloat16)

            def p():
                _core._set_gpu_attention(mode)
                try:
                    return _core.autograd_grad(pcp.qkv_attention(px, H, causal=True), [px], pg)[0]
                finally:
                    _core._set_gpu_attention("auto")

            def t():
                q, k, v = (a.view(B, T, H, D).transpose(1, 2) for a in tx.split(H * D, 2))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, H * D)
                return torch.autograd.grad(y, [tx], tg)[0]
            return p, t, (lambda: rel_err(p(), t()))
        return make
    for B, H, T, D in ((64, 6, 256, 64), (8, 12, 1024, 64)):
        scale_b = max(1, int(B * M / 4096))  # --quick / --mm shrink the batch
        flops = 7 * scale_b * H * T * T * D  # causal (half of 4 B H T^2 D forward), backward 2.5x
        for mode in ("composed", "fused"):  # PCP's products + softmax, or its flash kernels
            yield f"attention bf16 fwd+bwd {mode}", f"({scale_b}, {H}, {T}, {D}) causal", "TFLOP/s", flops, \
                attention(scale_b, H, T, D, mode)

    gpt.append(("matmul gpt attention p@v", (BT // 256 * 6, 256, 256), (BT // 256 * 6, 256, 64), False, False,
                BT * 6 * 256 * 64))
    for dtype in (None, pcp.bfloat16):  # float32, and the products of a bfloat16 autocast step
        for name, sa, sb, at, bt, macs in gpt:
            yield (name + (" bf16" if dtype else ""),
                   f"{'x'.join(map(str, sa))}{'^T' if at else ''} @ {'x'.join(map(str, sb))}{'^T' if bt else ''}",
                   "TFLOP/s", 2 * macs, mm_case(sa, sb, at, bt, dtype))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="gpu", help="PCP device (default: the first GPU)")
    ap.add_argument("--torch-device", default=None, help="PyTorch device (default: cuda, else cpu)")
    ap.add_argument("--quick", action="store_true", help="small sizes and short timings (smoke test)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply every case's work by S (elements, rows, matmul n by S^(1/3))")
    ap.add_argument("--elems", type=int, default=None, help="elements of the elementwise cases (default 256M)")
    ap.add_argument("--rows", type=int, default=None, help="rows of softmax/layer_norm/cross_entropy (default 8192)")
    ap.add_argument("--cols", type=int, default=None, help="columns of those (default 8192)")
    ap.add_argument("--mm", type=int, default=None, help="matmul size n (n x n x n, default 4096)")
    ap.add_argument("--min-time", type=float, default=None, help="seconds per timed repeat (default 0.3)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats, median reported (default 5)")
    ap.add_argument("--max-iters", type=int, default=1000, help="most calls per repeat")
    ap.add_argument("--only", default=None, help="comma-separated substrings: run only matching ops")
    ap.add_argument("--json", default=None, metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--pcp-kernels", action="store_true",
                    help="PCP's own kernels for products and attention, not NVIDIA's libraries (pcp[cuda])")
    args = ap.parse_args()
    _core._set_gpu_vendor(not args.pcp_kernels)

    if args.quick:
        base = dict(elems=1 << 20, rows=256, cols=1024, mm=256, min_time=0.05, repeats=3)
    else:
        s = args.scale
        base = dict(elems=int((1 << 28) * s), rows=max(1, int(8192 * s)), cols=8192,
                    mm=max(16, int(round(4096 * s ** (1 / 3) / 16)) * 16), min_time=0.3, repeats=5)
    for k, v in base.items():
        if getattr(args, k) is None:
            setattr(args, k, v)

    try:
        pdev = pcp.device(args.device)
    except ValueError as e:
        sys.exit(f"bench/gpu.py: PCP has no device {args.device!r} ({e}); GPU unavailable because: "
                 f"{_core.gpu_unavailable_reason() or 'unknown'}")
    notes = []
    if args.torch_device is None:
        if torch.cuda.is_available():
            args.torch_device = "cuda"
        else:
            args.torch_device = "cpu"
            notes.append("torch.cuda is unavailable: PyTorch runs on the CPU (--torch-device cpu); "
                         "ratios are NOT GPU-vs-GPU")
    tdev = torch.device(args.torch_device)
    if tdev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 matmul in float32, like PCP's
        torch.backends.cudnn.allow_tf32 = False
        tname = torch.cuda.get_device_name(tdev)
    else:
        torch.set_num_threads(pcp.get_num_threads())
        tname = f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"
    pname = dict(_core.devices()).get(pdev, pdev)

    print(f"# PCP {pcp.__version__} on {pdev} ({pname}); PyTorch {torch.__version__} on {tdev} ({tname}); "
          f"NumPy {np.__version__}; Python {platform.python_version()}")
    vendor = pcp.gpu_info(pdev)["vendor"]
    print(f"# NVIDIA's libraries: matmul {vendor['matmul'] if not args.pcp_kernels else 'off (--pcp-kernels)'}, "
          f"attention {vendor['attention'] if not args.pcp_kernels else 'off'}"
          f"{'; ' + vendor['note'] if vendor['note'] else ''}")
    for n in notes:
        print(f"# NOTE: {n}")
    print(f"# median of {args.repeats} repeats of >= {args.min_time:g} s each; GB/s = (bytes read + written) / time; "
          f"ratio = PyTorch time / PCP time (> 1: PCP faster); err = max|PCP - PyTorch| / max|PyTorch|")
    print()
    print("| op | shape | PCP ms | PyTorch ms | PCP | PyTorch | ratio | err |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    bench = Bench(pdev, tdev, args.min_time, args.repeats, args.max_iters)
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    results = []
    for op, shape, unit, amount, make in cases(args, pdev, tdev):
        if only and not any(s in op for s in only):
            continue
        rec = dict(op=op, shape=shape, unit=unit)
        scale = 1e-12 if unit == "TFLOP/s" else 1e-9
        p_fn = t_fn = check = None
        try:
            made = make()
            p_fn, t_fn, check = made[:3]
            if len(made) > 3:
                rec["note"] = made[3]
                shape = f"{shape}, {made[3]}"
            rec["max_rel_err"] = check()
            rec["pcp_s"], rec["pcp_iters"] = bench.time(p_fn, bench.psync)
            rec["torch_s"], rec["torch_iters"] = bench.time(t_fn, bench.tsync)
            rec["pcp_rate"] = amount / rec["pcp_s"] * scale
            rec["torch_rate"] = amount / rec["torch_s"] * scale
            rec["ratio"] = rec["torch_s"] / rec["pcp_s"]
            print(f"| {op} | {shape} | {rec['pcp_s'] * 1e3:.3f} | {rec['torch_s'] * 1e3:.3f} | "
                  f"{rec['pcp_rate']:.1f} {unit} | {rec['torch_rate']:.1f} {unit} | {rec['ratio']:.3g} | "
                  f"{rec['max_rel_err']:.1e} |", flush=True)
        except NotImplementedError as e:
            rec["error"] = f"NotImplementedError: {e}"
            print(f"| {op} | {shape} | n/a | n/a | n/a | n/a | n/a | n/a: {str(e).splitlines()[0]} |", flush=True)
        except Exception as e:  # a crash of one case should not hide the others; say it loudly
            rec["error"] = f"{type(e).__name__}: {e}"
            print(f"| {op} | {shape} | FAILED | | | | | {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} |",
                  flush=True)
        results.append(rec)
        p_fn = t_fn = check = None  # free this case's inputs before the next one's
        pcp.synchronize(pdev)
        if tdev.type == "cuda":
            torch.cuda.empty_cache()

    if args.json:
        meta = dict(pcp_device=pdev, pcp_device_name=pname, torch_device=str(tdev), torch_device_name=tname,
                    pcp_version=pcp.__version__, torch_version=torch.__version__, numpy_version=np.__version__,
                    python=platform.python_version(), notes=notes, time=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    args={k: v for k, v in vars(args).items() if k != "json"})
        with open(args.json, "w") as f:
            json.dump(dict(meta=meta, results=results), f, indent=1)
        print(f"\n# results written to {args.json}")
    failed = [r for r in results if "error" in r and not r["error"].startswith("NotImplementedError")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
