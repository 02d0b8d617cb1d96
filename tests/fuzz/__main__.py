"""python -m tests.fuzz --device cpu|gpu|all [--grid] [--seconds N] [--seed S] ... (see README.md)."""
import argparse
import collections
import hashlib
import os
import re
import sys
import time

if __package__ in (None, ""):  # run as a script: python tests/fuzz/__main__.py
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "fuzz"

from .cases import OPS, Ctx, all_grid, reproducer  # noqa: E402
from .report import Report  # noqa: E402
from .runner import Pool  # noqa: E402


def gpu_available():
    import pcp
    return any(not d.startswith("cpu") for d in pcp.devices())


def in_sample(case_id, sample):
    """A fixed 1-in-`sample` subset of the grid (by a hash of the case id, so it is the same on
    every machine and does not shift when cases are added elsewhere)."""
    if sample <= 1:
        return True
    return int(hashlib.sha1(case_id.encode()).hexdigest()[:8], 16) % sample == 0


def parse(argv):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    ap.add_argument("--device", default="cpu", help="cpu, gpu or all (gpu only where one exists)")
    ap.add_argument("--grid", action="store_true", help="run the systematic grid (every op x input class x dtype)")
    ap.add_argument("--seconds", type=float, default=0, help="random exploration for at most this long, per device")
    ap.add_argument("--cases", type=int, default=0, help="random exploration of this many cases, per device")
    ap.add_argument("--seed", type=int, default=0, help="Hypothesis seed of the random exploration")
    ap.add_argument("--ops", help="only ops whose name matches this regular expression")
    ap.add_argument("--sample", type=int, default=1, help="grid: a fixed 1-in-N subset of the cases")
    ap.add_argument("--case", action="append", help="run these grid case ids only (repeatable)")
    ap.add_argument("--list", action="store_true", help="print the grid's case ids and exit")
    ap.add_argument("--replay", action="store_true",
                    help="also compile each valid case and replay it on new values, against eager")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case before it is a HANG")
    ap.add_argument("--mem-gb", type=float, default=4.0, help="address-space limit of the worker (0: none)")
    ap.add_argument("--report", help="write every failure to this JSON file")
    ap.add_argument("--limit", type=int, default=200, help="failures printed in the summary")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure as it is found")
    return ap.parse_args(argv)


def devices(arg):
    has_gpu = gpu_available()
    if arg == "all":
        return ["cpu"] + (["gpu"] if has_gpu else []), has_gpu
    if arg != "cpu" and not has_gpu:
        sys.exit(f"no GPU device here (pcp.devices() lists only the CPU)")
    return [arg], has_gpu


def main(argv=None):
    args = parse(argv)
    if args.replay:
        os.environ["PCP_FUZZ_REPLAY"] = "1"  # the workers it starts replay each valid case compiled
    names = sorted(n for n in OPS if not args.ops or re.search(args.ops, n))
    devs, has_gpu = devices(args.device)
    report = Report()
    pool = Pool(timeout=args.timeout, mem_gb=args.mem_gb)
    started = time.monotonic()
    replays = collections.Counter()  # --replay: each device's outcomes ("equal", "refused at trace time", ...)

    def record(case, result):
        detail = result.get("detail", "")
        if detail.startswith("replay: "):
            replays[(case.device, detail[len("replay: "):].split(":")[0])] += 1
        repro = reproducer(case)
        report.add(case, result, repro)
        if args.verbose and result["status"] not in ("OK", "SKIP"):
            print(f"{result['status']} {case.id}: {result.get('detail', '')}\n    {repro}", flush=True)

    try:
        for dev in devs:
            ctx = Ctx(dev, ("gpu" if dev == "cpu" else "cpu") if has_gpu else None)
            if args.grid or args.case or args.list:
                cases = [c for c in all_grid(ctx, set(names)) if in_sample(c.id, args.sample)
                         and (not args.case or c.id in args.case)]
                if args.list:
                    print("\n".join(c.id for c in cases))
                    continue
                t0 = time.monotonic()
                for i, case in enumerate(cases):
                    result = pool.run(case)
                    record(case, result)
                    if not args.verbose and i % 2000 == 1999:
                        print(f"  {dev}: {i + 1}/{len(cases)} grid cases, {time.monotonic() - t0:.0f} s", flush=True)
                    if args.case:
                        print(f"{case.id}: {result['status']} {result.get('detail', '')}\n    {reproducer(case)}")
            if args.seconds > 0 or args.cases > 0:
                from .explore import explore
                n = explore(pool, ctx, args.seconds, args.seed, record, names, args.cases)
                bound = f", at most {args.seconds:g} s" if args.seconds > 0 else ""
                print(f"  {dev}: {n} random cases (seed {args.seed}{bound})", flush=True)
    finally:
        pool.close()
    if args.list:
        return 0
    print(report.summary(limit=args.limit))
    for (dev, outcome), n in sorted(replays.items()):
        print(f"{dev}: replayed compiled, {outcome}: {n}")
    print(f"({time.monotonic() - started:.0f} s, {pool.restarts} worker restarts)")
    if args.report:
        report.to_json(args.report, {"argv": sys.argv[1:] if argv is None else list(argv)})
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
