"""PCP's fixed cost per op and per small backward pass, where the data is too small to matter.

Prints the best of several rounds of 20,000 `a + b` on 64 floats, and of 2,000
`(x * 2.0).sum().backward()` on an (8, 64) tensor. Compare two builds by running this script
with each, alternating (e.g. PYTHONPATH=/path/to/other/pcp python bench/overhead.py).
Run:  python bench/overhead.py
"""
import time

import pcp


def best_of(rounds, reps, fn):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def main():
    a, b = pcp.ones((64,)), pcp.ones((64,))
    x = pcp.ones((8, 64))
    x.requires_grad = True

    def step():
        (x * 2.0).sum().backward()

    add = best_of(7, 20000, lambda: a + b)
    backward = best_of(5, 2000, step)
    print(f"add64 {add * 1e6:.2f} us   mul+sum+backward {backward * 1e6:.1f} us")


if __name__ == "__main__":
    main()
