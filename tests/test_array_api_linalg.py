"""pcp.array_api.linalg against NumPy in float64: the decompositions (host LAPACK, in the input's
precision) by their defining identities, the products and norms (PCP ops) by value and gradient."""
import math

import numpy as np
import pytest

import pcp
import pcp.array_api as xp
from conftest import DEVICES, numeric_grad

la = xp.linalg
RTOL = {pcp.float32: 2e-5, pcp.float64: 1e-12}


def data(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def spd(n, batch=(), seed=0):
    a = data(batch + (n, n), seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def close(got, want, dtype, scale=1.0):
    assert got.dtype == dtype, (got.dtype, dtype)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=RTOL[dtype] * 50,
                               atol=RTOL[dtype] * 50 * scale)


@pytest.mark.parametrize("dtype", [pcp.float32, pcp.float64], ids=str)
def test_decompositions_satisfy_their_identities(dtype):
    a = data((2, 5, 3))
    x = pcp.tensor(a, dtype=dtype)
    u, s, vh = la.svd(x, full_matrices=False)
    close(u @ (s[..., None] * vh), a, dtype, 3)
    close(la.svdvals(x), np.linalg.svd(a, compute_uv=False), dtype, 3)
    q, r = la.qr(x)
    close(q @ r, a, dtype, 3)
    close(xp.matrix_transpose(q) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)), dtype)
    m = spd(4, (2,))
    t = pcp.tensor(m, dtype=dtype)
    w, v = la.eigh(t)
    close(v @ (w[..., None] * xp.matrix_transpose(v)), m, dtype, 10)
    close(la.eigvalsh(t), np.linalg.eigvalsh(m), dtype, 10)
    low = la.cholesky(t)
    close(low @ xp.matrix_transpose(low), m, dtype, 10)
    close(la.cholesky(t, upper=True), np.swapaxes(np.linalg.cholesky(m), -1, -2), dtype, 3)
    close(la.inv(t) @ t, np.broadcast_to(np.eye(4), (2, 4, 4)), dtype)
    close(la.det(t), np.linalg.det(m), dtype, float(np.abs(np.linalg.det(m)).max()))
    sign, logabs = la.slogdet(t)
    close(sign, np.ones(2), dtype)
    close(logabs, np.linalg.slogdet(m)[1], dtype, 10)
    b = data((2, 4, 2), 1)
    close(t @ la.solve(t, pcp.tensor(b, dtype=dtype)), b, dtype, 3)
    close(la.solve(t, pcp.tensor(b[0, :, 0], dtype=dtype)), np.linalg.solve(m, b[0, :, 0]), dtype, 3)
    close(la.pinv(x), np.linalg.pinv(a), dtype, 3)
    assert la.matrix_rank(pcp.tensor(np.outer([1.0, 2.0, 3.0], [1.0, 0.5]), dtype=dtype)).item() == 1


def test_decompositions_refuse_what_they_cannot_do():
    with pytest.raises(ValueError, match="linalg.cholesky"):
        la.cholesky(pcp.tensor([[1.0, 2.0], [2.0, 1.0]]))  # not positive-definite
    with pytest.raises(ValueError, match="linalg.inv"):
        la.inv(pcp.tensor([[1.0, 2.0], [2.0, 4.0]]))  # singular
    with pytest.raises(ValueError, match="square"):
        la.det(pcp.ones((2, 3)))
    x = pcp.tensor(data((3, 3)), requires_grad=True)
    with pytest.raises(NotImplementedError, match="linalg.svd: no gradient"):
        la.svd(x)  # a result that silently stops the gradient is refused
    with pcp.no_grad():
        assert la.svd(x).S.shape == (3,)


@pytest.mark.parametrize("device", DEVICES)
def test_norms_products_and_diagonals_on_each_device(device):
    a = data((2, 3, 4)).astype(np.float32)
    x = pcp.tensor(a, device=device)
    for ord in (2, 1, 0, math.inf, -math.inf, 3, 0.5):
        want = np.linalg.norm(a.reshape(-1), ord=ord) if ord != 0.5 else (np.abs(a) ** 0.5).sum() ** 2
        np.testing.assert_allclose(la.vector_norm(x, ord=ord).numpy(), want, rtol=2e-5)
    np.testing.assert_allclose(la.vector_norm(x, axis=(0, 2), keepdims=True).numpy(),
                               np.sqrt((a ** 2).sum(axis=(0, 2), keepdims=True)), rtol=2e-5)
    big = pcp.tensor([3e30, 4e30], device=device)  # the squares would overflow float32
    np.testing.assert_allclose(la.vector_norm(big).numpy(), 5e30, rtol=1e-6)
    for ord in ("fro", 1, -1, math.inf, -math.inf, 2, -2, "nuc"):
        np.testing.assert_allclose(la.matrix_norm(x, ord=ord).numpy(), np.linalg.norm(a, ord=ord, axis=(-2, -1)),
                                   rtol=2e-5)
    for offset in (0, 1, -1, 3, -2, 5):
        np.testing.assert_allclose(la.diagonal(x, offset=offset).numpy(), np.diagonal(a, offset, -2, -1))
    np.testing.assert_allclose(la.trace(x, offset=1).numpy(), np.trace(a, 1, -2, -1), rtol=1e-6)
    np.testing.assert_allclose(la.outer(x[0, 0], x[1, 1]).numpy(), np.outer(a[0, 0], a[1, 1]), rtol=1e-6)
    np.testing.assert_allclose(la.cross(x[..., :3], x[..., 1:]).numpy(), np.cross(a[..., :3], a[..., 1:]), rtol=1e-5,
                               atol=1e-6)
    m = pcp.tensor(a[0, :, :3], device=device)
    for n in (0, 1, 3, 4):
        np.testing.assert_allclose(la.matrix_power(m, n).numpy(), np.linalg.matrix_power(a[0, :, :3], n), rtol=1e-5,
                                   atol=1e-5)
    np.testing.assert_allclose(la.matrix_power(m, -2).numpy(), np.linalg.matrix_power(a[0, :, :3], -2), rtol=1e-3)


def test_norm_gradients_match_finite_differences():
    a = data((3, 4))
    for fn in (lambda t: la.vector_norm(t), lambda t: la.vector_norm(t, ord=3, axis=1),
               lambda t: la.matrix_norm(t, ord=1), lambda t: la.trace(t, offset=1), lambda t: la.diagonal(t) * 2.0):
        t = pcp.tensor(a, requires_grad=True)
        fn(t).sum().backward()

        def loss(v, fn=fn):
            return float(fn(pcp.tensor(v)).sum().item())
        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(loss, a, eps=1e-6), rtol=1e-6, atol=1e-7)
