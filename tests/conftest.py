"""Shared helpers for the pytest suite: NumPy references, finite differences, optional PyTorch."""
import os

import numpy as np
import pytest

import pcp
from gpu_gaps import GPU_GAPS, declared_gap

try:
    import torch  # reference only; never a dependency of PCP
except ImportError:  # pragma: no cover
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

try:  # property tests draw the same examples on every run and machine, and keep no database
    from hypothesis import settings
    settings.register_profile("pcp", derandomize=True, database=None)
    settings.load_profile("pcp")
except ImportError:  # pragma: no cover
    pass

# Tolerances per dtype for forward checks against a float64 NumPy reference.
TOL = {
    pcp.float64: dict(rtol=1e-12, atol=1e-12),
    pcp.float32: dict(rtol=1e-5, atol=1e-6),
    pcp.float16: dict(rtol=2e-3, atol=2e-3),
    pcp.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
}


def to_np(t):
    """float64 (or exact int/bool) NumPy copy of a pcp tensor (on any device)."""
    t = t.to("cpu")
    if t.dtype in (pcp.float16, pcp.bfloat16, pcp.float32):
        return np.asarray(t.astype(pcp.float64).numpy())
    return np.array(t.numpy())


def numeric_grad(f, x, eps=1e-6):
    """Central finite differences of scalar f at float64 array x."""
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] = old - eps
        fm = f(x)
        x[i] = old
        g[i] = (fp - fm) / (2 * eps)
    return g


@pytest.fixture
def rng():
    """A fixed NumPy generator for test inputs."""
    return np.random.default_rng(20240531)


@pytest.fixture(autouse=True)
def _seed():
    pcp.random.seed(0)
    yield


# The op suite (modules that set ``pytestmark = on_each_device``) runs once per available device:
# the fixture makes that device the default, so every tensor a test creates lives there.
#
# What the GPU backend does not run (yet) is declared in gpu_gaps.py, as dtype -> the ops that
# lack it. A GPU case parametrized with such a dtype is skipped up front; a case that fails only
# because it builds one internally (NumPy's float64 default, finite differences) is reported as
# skipped when its NotImplementedError names an op and dtype the table declares, unless the case
# asked for float32, float16 or bfloat16 and met float64 (its op went through float64 inside
# PCP). Any other GPU failure fails: a kernel that regresses cannot hide as a skip.
DEVICES = ["cpu"] + (["gpu"] if any(name != "cpu" for name in pcp.devices()) else [])
GPU_CPU_ONLY = tuple(getattr(pcp, name) for name, ops in GPU_GAPS.items() if ops == "*")
on_each_device = pytest.mark.usefixtures("device")


def _mentions_cpu_only_dtype(value):
    if isinstance(value, (tuple, list)):
        return any(_mentions_cpu_only_dtype(v) for v in value)
    return any(value is d for d in GPU_CPU_ONLY)


def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_only: an op-suite test about host memory; not run per device")


@pytest.fixture(params=DEVICES)
def device(request):
    if request.param != "cpu":
        if request.node.get_closest_marker("cpu_only"):
            pytest.skip("a CPU-only test (host memory)")
        callspec = getattr(request.node, "callspec", None)
        for v in (callspec.params.values() if callspec else ()):
            if _mentions_cpu_only_dtype(v):
                pytest.skip(f"{v} is CPU-only here: {pcp.gpu_info()['float64_note']}")
    previous = pcp.get_default_device()
    pcp.set_default_device(request.param)
    try:
        yield request.param
    finally:
        pcp.set_default_device(previous)


def _declared_gpu_gap(error):
    if isinstance(error, BaseExceptionGroup):  # Hypothesis reports each distinct failure
        return all(_declared_gpu_gap(e) for e in error.exceptions)
    return declared_gap(error)


def _asks_other_float(callspec, error):
    """Whether a case parametrized with float32, float16 or bfloat16 met a float64 gap: its op
    went through float64 inside PCP (a regression, not a gap), so it fails."""
    floats = {pcp.float32, pcp.float16, pcp.bfloat16}
    asked = [v for v in callspec.params.values() if isinstance(v, pcp.DType)]
    return bool(asked) and all(v in floats for v in asked) and ": float64 " in str(error)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    callspec = getattr(item, "callspec", None)
    if (report.when == "call" and report.failed and callspec and callspec.params.get("device") == "gpu"
            and _declared_gpu_gap(call.excinfo.value) and not _asks_other_float(callspec, call.excinfo.value)):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"not on the GPU: {call.excinfo.value}")


SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "tinyshakespeare.txt")


@pytest.fixture(scope="session")
def text_file(tmp_path_factory):
    """The tiny-Shakespeare text when present beside the checkout, else a small text written here."""
    if os.path.isfile(SHARED):
        return os.path.abspath(SHARED)
    path = tmp_path_factory.mktemp("data") / "tinyshakespeare.txt"
    rng = np.random.default_rng(0)
    words = ["the", "king", "queen", "to", "be", "or", "not", "my", "lord", "and", "thou", "art"]
    path.write_text("\n".join(" ".join(rng.choice(words, 8)) for _ in range(3000)))
    return str(path)
