"""Real clients of pcp.array_api: scikit-learn estimators with array_api_dispatch=True and SciPy
functions that accept Array API inputs, on PCP tensors, against the same calls on NumPy arrays
(float32 tolerance). Skipped when scikit-learn or SciPy is not installed.

On a GPU, Ridge and PCA run (their ops all exist there); LDA needs an integer sum that the GPU
backend does not have yet, and is checked to refuse it with NotImplementedError naming the op."""
import os
import warnings

import numpy as np
import pytest

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # SciPy reads it at import

import pcp  # noqa: E402
from conftest import DEVICES  # noqa: E402

sklearn = pytest.importorskip("sklearn")
scipy_special = pytest.importorskip("scipy.special")

from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

TOL = dict(rtol=2e-4, atol=2e-5)


def problem(seed=0, n=60, d=6):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, d)) * np.linspace(0.5, 3, d)).astype(np.float32)
    y = (X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)).astype(np.float32)
    return X, y, (y > np.median(y)).astype(np.int64)


def on(device, *arrays):
    return [pcp.tensor(a if device == "cpu" or a.dtype != np.int64 else a.astype(np.int32), device=device)
            for a in arrays]


def fit_both(make, run, device, *arrays):
    """run(estimator, *inputs) on NumPy arrays and, dispatched, on PCP tensors on device."""
    want = run(make(), *arrays)
    with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "solver 'svd' is used under dispatch"
        got = run(make(), *on(device, *arrays))
    assert isinstance(got, pcp.Tensor) and (str(got.device) == "cpu") == (device == "cpu"), (type(got), device)
    return got.numpy(), want


@pytest.mark.parametrize("device", DEVICES)
def test_ridge(device):
    X, y, _ = problem()
    got, want = fit_both(lambda: Ridge(alpha=0.5, solver="svd"), lambda m, X, y: m.fit(X, y).coef_, device, X, y)
    np.testing.assert_allclose(got, want, **TOL)
    got, want = fit_both(lambda: Ridge(alpha=0.5, solver="svd"), lambda m, X, y: m.fit(X, y).predict(X), device, X, y)
    np.testing.assert_allclose(got, want, **TOL)


@pytest.mark.parametrize("device", DEVICES)
def test_pca(device):
    X, _, _ = problem(1)
    for solver in ("full", "covariance_eigh"):
        got, want = fit_both(lambda: PCA(n_components=3, svd_solver=solver), lambda m, X: m.fit_transform(X), device, X)
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_discriminant_analysis(device):
    """LDA sums integer class labels: on a GPU through its int64 kernels, or refused (with the op
    named) on one without them."""
    X, _, c = problem(2)
    if device != "cpu" and not pcp.gpu_info(device)["float64"]:
        with pytest.raises(NotImplementedError, match=r"^sum: int\d+ is not supported on"):
            fit_both(LinearDiscriminantAnalysis, lambda m, X, c: m.fit(X, c).predict_proba(X), device, X, c)
        return
    got, want = fit_both(LinearDiscriminantAnalysis, lambda m, X, c: m.fit(X, c).predict_proba(X), device, X, c)
    np.testing.assert_allclose(got, want, **TOL)
    got, want = fit_both(LinearDiscriminantAnalysis, lambda m, X, c: m.fit(X, c).transform(X), device, X, c)
    np.testing.assert_allclose(np.abs(got), np.abs(want), **TOL)  # a component's sign is free


@pytest.mark.parametrize("device", DEVICES)
def test_scipy_special_functions(device):
    a = np.random.default_rng(4).normal(size=(3, 5)).astype(np.float32) * 10
    x = pcp.tensor(a, device=device)
    got = scipy_special.logsumexp(x, axis=1)
    assert isinstance(got, pcp.Tensor)
    np.testing.assert_allclose(got.numpy(), np.log(np.exp(a.astype(np.float64)).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(scipy_special.softmax(x, axis=0).numpy(),
                               np.exp(a) / np.exp(a.astype(np.float64)).sum(axis=0), rtol=1e-5, atol=1e-7)
