"""PCP's sorting, scans and sets against NumPy on the CPU, side by side in one run: sort and
argsort (along rows and of one long vector), cumsum, prod, searchsorted and unique, on float32.
Prints each op's median time for both and PCP's speed as a ratio (NumPy time / PCP time: above
1 is faster). Run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset.

Run:  python bench/sort_scan.py [--repeat 7]
"""
import argparse
import time

import numpy as np

import pcp


def median_time(fn, repeat):
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(1024, 1024)).astype(np.float32)
    vec = rng.normal(size=1 << 20).astype(np.float32)
    hay = np.sort(rng.normal(size=1 << 16).astype(np.float32))
    ints = rng.integers(0, 1000, size=1 << 20)
    t_rows, t_vec, t_hay, t_ints = pcp.tensor(rows), pcp.tensor(vec), pcp.tensor(hay), pcp.tensor(ints)
    cases = [
        ("sort 1024 rows of 1024", lambda: np.sort(rows, axis=1, kind="stable"), lambda: pcp.sort(t_rows, axis=1)),
        ("argsort 1024 rows of 1024", lambda: np.argsort(rows, axis=1, kind="stable"),
         lambda: pcp.argsort(t_rows, axis=1)),
        ("sort 1M", lambda: np.sort(vec, kind="stable"), lambda: pcp.sort(t_vec)),
        ("cumsum 1024 x 1024, axis 1", lambda: np.cumsum(rows, axis=1), lambda: pcp.cumsum(t_rows, axis=1)),
        ("cumsum 1024 x 1024, axis 0", lambda: np.cumsum(rows, axis=0), lambda: pcp.cumsum(t_rows, axis=0)),
        ("prod 1024 x 1024, axis 1", lambda: np.prod(rows, axis=1), lambda: pcp.prod(t_rows, axis=1)),
        ("searchsorted 1M in 64K", lambda: np.searchsorted(hay, vec), lambda: pcp.searchsorted(t_hay, t_vec)),
        ("unique of 1M ints (1000 values)", lambda: np.unique(ints, return_inverse=True, return_counts=True),
         lambda: pcp.unique(t_ints, return_inverse=True, return_counts=True)),
    ]
    print(f"{'op':34s} {'NumPy ms':>9s} {'PCP ms':>9s} {'NumPy/PCP':>10s}")
    for name, numpy_fn, pcp_fn in cases:
        t_np = median_time(numpy_fn, args.repeat)
        time.sleep(0.5)  # let NumPy's threads settle before PCP's run
        t_pcp = median_time(pcp_fn, args.repeat)
        time.sleep(0.5)
        print(f"{name:34s} {t_np * 1e3:9.2f} {t_pcp * 1e3:9.2f} {t_np / t_pcp:10.2f}")


if __name__ == "__main__":
    main()
