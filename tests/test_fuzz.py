"""The fuzzer (tests/fuzz, see its README) covers every public op, and a bounded run of it on
each device finds no crash, hang, wrong result or unclear error; each valid case is also
compiled and replayed on new values, against eager (--replay).

The run takes about half a minute per device: a fixed 1-in-PCP_FUZZ_SAMPLE subset of the grid (20 by
default; 1 runs all of it) and PCP_FUZZ_CASES (default 3,000) seeded random cases (PCP_FUZZ_SEED,
default 0), so CI runs the same cases every time, whatever the machine's load (no time budget;
a case that takes over 30 s is a hang and fails the run). Run more by hand with e.g.
PCP_FUZZ_SAMPLE=1 PCP_FUZZ_CASES=200000 pytest tests/test_fuzz.py.
"""
import inspect
import json
import os
import subprocess
import sys

import pytest

import pcp
from fuzz import inputs
from fuzz.cases import OPS, Ctx, classes_of

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))

# Public callables and Tensor members the fuzzer does not call, each with the reason.
EXCLUDED = {
    "pcp.optim.Optimizer": "abstract base class: its step() raises NotImplementedError by design; "
                           "SGD, Adam and AdamW exercise all of it",
    "pcp.optim.warmup_cosine": "a learning-rate schedule on Python floats; it takes no tensors",
    "Tensor.__array_priority__": "a class constant for NumPy's operator dispatch, not callable",
    "Tensor.__class__": "Python's type machinery",
    "Tensor.__doc__": "documentation string",
    "Tensor.__module__": "module name string",
    "Tensor.__new__": "pybind11's allocation hook; pcp.Tensor() (the constructor) is fuzzed",
    "Tensor.__init_subclass__": "Python's subclassing hook",
    "Tensor.__subclasshook__": "Python's isinstance hook",
    "Tensor._pybind11_conduit_v1_": "pybind11's cross-extension interop hook",
}


def _callables(module, prefix):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return {f"{prefix}.{n}" for n in names
            if callable(getattr(module, n)) and not inspect.ismodule(getattr(module, n))}


def public_api():
    """pcp's re-exported functions and classes, pcp.nn, pcp.optim, pcp.random, and every
    Tensor member that is not object's own."""
    api = _callables(pcp, "pcp") | _callables(pcp.nn, "pcp.nn") | _callables(pcp.optim, "pcp.optim") | \
        _callables(pcp.random, "pcp.random")
    plain = set(dir(object))
    api |= {f"Tensor.{n}" for n in dir(pcp.Tensor)
            if n not in plain or getattr(pcp.Tensor, n) is not getattr(object, n, None)}
    return api


def test_every_public_op_is_in_the_fuzzer_table():
    covered = {name for op in OPS.values() for name in op.covers}
    missing = public_api() - covered - set(EXCLUDED)
    assert not missing, f"public API the fuzzer does not call (add entries to tests/fuzz/ops_*.py): {sorted(missing)}"


def test_every_tensor_op_meets_zero_size_inputs():
    """Each fuzzer entry that takes a tensor gets one with no elements and one whose last axis
    has length zero (the fused row kernels' old crash); entries that build their own inputs
    (creation from shapes, packed attention) list zero-size cases of their own."""
    tensors = {c.name for c in inputs.tensor_classes("cpu", False)}
    lacking = []
    for name, op in OPS.items():
        classes = {c.name for c in classes_of(op, Ctx("cpu"))}
        if classes & tensors and not {"empty", "empty_last"} <= classes:
            lacking.append(name)
    assert not lacking, f"fuzzer entries without a zero-size or zero-length-last-axis input: {lacking}"


def test_exclusions_are_still_public():
    stale = set(EXCLUDED) - public_api()
    assert not stale, f"exclusions that are no longer public API: {sorted(stale)}"


DEVICES = ["cpu"] + (["gpu"] if any(not d.startswith("cpu") for d in pcp.devices()) else [])


def test_bounded_fuzz_runs_find_nothing(tmp_path):
    """A bounded fuzz run on each device, the devices' runs side by side (one process each, so
    they take both cores of a CI machine)."""
    cases = os.environ.get("PCP_FUZZ_CASES", "3000")
    sample = os.environ.get("PCP_FUZZ_SAMPLE", "20")
    seed = os.environ.get("PCP_FUZZ_SEED", "0")
    runs = {}
    for device in DEVICES:
        report = tmp_path / f"fuzz-{device}.json"
        cmd = [sys.executable, "-m", "fuzz", "--device", device, "--grid", "--sample", sample, "--timeout", "30",
               "--cases", cases, "--seed", seed, "--report", str(report), "--limit", "50", "--replay"]
        runs[device] = (cmd, report, subprocess.Popen(cmd, cwd=TESTS_DIR, stdout=subprocess.PIPE,
                                                      stderr=subprocess.PIPE, text=True))
    found = []
    for device, (cmd, report, proc) in runs.items():
        out, err = proc.communicate(timeout=1200)  # a bound for a wedged run; cases bound themselves
        if proc.returncode != 0 and not report.exists():
            found.append(f"the fuzzer did not run ({' '.join(cmd)}):\n{out[-3000:]}\n{err[-3000:]}")
            continue
        failures = json.loads(report.read_text())["failures"]
        if failures:
            found.append(f"{len(failures)} distinct failures on {device} (python -m tests.fuzz "
                         f"{' '.join(cmd[3:-4])}):\n{out[-20000:]}")
    if found:
        pytest.fail("\n\n".join(found), pytrace=False)


# Primitives no public call makes: the plan passes make them (test_plan_passes.py checks each
# against the unfused ops; test_compile.py fuzzes plan files that hold them).
PLAN_ONLY = {"alias", "cast_multi", "sum_rows_multi"}

_REACHED = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # a case's huge request fails, as in a worker
import pcp
from fuzz.cases import OPS, Ctx, grid
from fuzz.worker import run_case
seen = set()
for op in OPS.values():
    for case in grid(op, Ctx("cpu")):
        if case.must_work and not case.expect:
            pcp._core.set_profiling(True)  # again after each case: the profiler's own entries turn it off
            run_case(case)
            seen |= {name for name, *_ in pcp._core.profile_results()}
pcp._core.set_profiling(False)
print(json.dumps(sorted(seen)))
"""


def test_the_grid_reaches_every_primitive():
    """The fuzzer's table is written per public function; walking _core.primitives() here means
    a primitive no public call reaches (a fused backward kernel that runs only in float32, say)
    cannot go unfuzzed. The grid's valid cases run in one process, under the op profiler."""
    run = subprocess.run([sys.executable, "-c", _REACHED], cwd=TESTS_DIR, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    reached = set(json.loads(run.stdout.strip().splitlines()[-1]))
    names = set(pcp._core.primitive_names())
    assert not names - reached - PLAN_ONLY, f"primitives no fuzzer case reaches: {sorted(names - reached - PLAN_ONLY)}"
    assert not PLAN_ONLY & reached, f"declared plan-only but reached: {sorted(PLAN_ONLY & reached)}"
    assert PLAN_ONLY <= names, f"declared plan-only but no longer primitives: {sorted(PLAN_ONLY - names)}"


_PLANTS = {
    "a float32 op raising a GPU 'not supported' error":
        "exp: float32 is not supported on vulkan:0 yet (32-bit types only)",
    "an op that lost its GPU kernel": "exp: not implemented on vulkan:0 yet; move the inputs with .to('cpu')",
}


@pytest.mark.skipif("gpu" not in DEVICES, reason="no GPU device here")
@pytest.mark.parametrize("plant", list(_PLANTS))
def test_the_fuzzer_sees_a_lost_gpu_kernel(plant, tmp_path):
    """pcp.exp planted to raise on the GPU (as a kernel that regressed would): the GPU grid of
    pcp.exp must report wrong results, not count the error as a declared gap."""
    code = ("_exp = pcp.exp\n"
            "def exp(x, *a, **k):\n"
            "    if isinstance(x, pcp.Tensor) and x.device.startswith(('vulkan', 'metal', 'cuda')) "
            "and x.dtype == pcp.float32:\n"
            f"        raise NotImplementedError({_PLANTS[plant]!r})\n"
            "    return _exp(x, *a, **k)\n"
            "pcp.exp = exp\n")
    report = tmp_path / "plant.json"
    run = subprocess.run([sys.executable, "-m", "fuzz", "--device", "gpu", "--grid", "--ops", "^pcp[.]exp$",
                          "--report", str(report)], cwd=TESTS_DIR, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PCP_FUZZ_PLANT=code))
    failures = json.loads(report.read_text())["failures"]
    assert any(f["status"] == "WRONG" and "float32" in f["id"] for f in failures), run.stdout[-3000:]
