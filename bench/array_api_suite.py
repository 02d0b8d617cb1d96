"""The Python Array API standard's own test suite (data-apis/array-api-tests) on PCP's namespace
(pcp.array_api), NumPy's and array-api-strict's, run with the same flags: the 2024.12 standard,
real dtypes only (the suite's ARRAY_API_TESTS_SKIP_DTYPES=complex64,complex128, with its one
import-time use of a complex dtype guarded: bench/array_api/real_dtypes_plugin.py), the linalg and fft
extensions left out (their names, which test_has_names checks regardless, and the complex special
cases, which test_special_cases runs regardless, are left out of the counts), --max-examples
examples a test. Prints the pass, fail and skip counts of
each library, and by test file; writes OUT/array_api_suite.json.

The suite is not fetched here. Get it once (at the commit these numbers were taken with):
  git clone https://github.com/data-apis/array-api-tests && cd array-api-tests
  git checkout 55fcc60 && git submodule update --init     # array-api (the spec) at 5f847a3
  pip install -r requirements.txt pytest-json-report array-api-strict

Run:  python bench/array_api_suite.py --suite PATH [--libs pcp numpy array_api_strict pcp-gpu]
                                      [--max-examples 20] [--out DIR]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Left out of the counts: the extensions' names, which test_has_names checks even when they are
# disabled, and the special cases of complex inputs, which test_special_cases runs even when
# complex dtypes are skipped.
LEFT_OUT = re.compile(r"test_has_names\[(linalg|fft)-|test_special_cases.*(real|imag)\(x")
MODULES = {"pcp": "pcp.array_api", "numpy": "numpy", "array_api_strict": "array_api_strict",
           "pcp-gpu": "pcp.array_api"}
# pcp-gpu: PCP with its first GPU the default device (the plugin sets it), on the dtypes a GPU
# holds (bool, int32, float32: int64 and float64 are skipped as complex is).
GPU_SKIPS = ",int64,float64"


def run(lib, args):
    report = os.path.join(os.path.abspath(args.out), f"{lib}.json")
    env = dict(os.environ, ARRAY_API_TESTS_VERSION="2024.12", ARRAY_API_TESTS_MODULE=MODULES[lib],
               ARRAY_API_TESTS_SKIP_DTYPES="complex64,complex128" + (GPU_SKIPS if lib == "pcp-gpu" else ""))
    if lib == "pcp-gpu":
        env["PCP_ARRAY_API_SUITE_DEVICE"] = "gpu"
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "array_api"), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "no:cacheprovider", "-p", "real_dtypes_plugin",
           "--tb=no",
           "--max-examples", str(args.max_examples), "--disable-deadline", "--disable-extension", "linalg", "fft",
           "--json-report", f"--json-report-file={report}", "--skips-file", os.devnull, "--xfails-file", os.devnull]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=args.suite, env=env, timeout=args.timeout, stdout=subprocess.DEVNULL)
    return dict(summarize(report), seconds=time.perf_counter() - t0)


def summarize(report):
    """The counts of one library's pytest-json-report file, in all and by test file."""
    with open(report) as f:
        tests = [t for t in json.load(f)["tests"] if not LEFT_OUT.search(t["nodeid"])]
    by_file = collections.defaultdict(collections.Counter)
    for t in tests:
        by_file[t["nodeid"].split("::")[0].split("/")[-1]][t["outcome"]] += 1
    total = collections.Counter(t["outcome"] for t in tests)
    return {"total": dict(total), "by_file": {k: dict(v) for k, v in sorted(by_file.items())},
            "failed": sorted(t["nodeid"] for t in tests if t["outcome"] in ("failed", "error"))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", required=True, help="a checkout of data-apis/array-api-tests with its submodule")
    ap.add_argument("--libs", nargs="+", default=["pcp", "numpy", "array_api_strict"], choices=list(MODULES))
    ap.add_argument("--max-examples", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds one library's run may take")
    ap.add_argument("--out", default=os.path.join(HERE, "out", "array_api_suite"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = {lib: run(lib, args) for lib in args.libs}
    files = sorted({f for r in results.values() for f in r["by_file"]})
    print(f"\narray-api-tests, 2024.12, real dtypes, no linalg/fft, --max-examples {args.max_examples}\n")
    print("| test file | " + " | ".join(f"{lib} passed / failed" for lib in args.libs) + " |")
    print("|---|" + "---|" * len(args.libs))
    for f in files + ["all"]:
        cells = []
        for lib in args.libs:
            c = results[lib]["total"] if f == "all" else results[lib]["by_file"].get(f, {})
            cells.append(f"{c.get('passed', 0)} / {c.get('failed', 0) + c.get('error', 0)}")
        print(f"| {f} | " + " | ".join(cells) + " |")
    for lib in args.libs:
        print(f"{lib}: {results[lib]['total']} in {results[lib]['seconds']:.0f} s")
    with open(os.path.join(args.out, "array_api_suite.json"), "w") as f:
        json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
