"""Shared helpers for the pytest suite: NumPy references, finite differences, optional PyTorch."""
import numpy as np
import pytest

import pcp

try:
    import torch  # reference only; never a dependency of PCP
except ImportError:  # pragma: no cover
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

# Tolerances per dtype for forward checks against a float64 NumPy reference.
TOL = {
    pcp.float64: dict(rtol=1e-12, atol=1e-12),
    pcp.float32: dict(rtol=1e-5, atol=1e-6),
    pcp.float16: dict(rtol=2e-3, atol=2e-3),
    pcp.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
}


def to_np(t):
    """float64 (or exact int/bool) NumPy copy of a pcp tensor."""
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


@pytest.fixture(autouse=True)
def _seed():
    pcp.random.seed(0)
    yield
