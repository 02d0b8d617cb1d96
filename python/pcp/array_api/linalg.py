"""The standard's linalg extension (2024.12).

Products, norms, traces, diagonals and cross products are PCP ops: they run on the inputs' device
and are differentiable. The decompositions and solvers (cholesky, det, eigh, eigvalsh, inv, pinv,
qr, slogdet, solve, svd, svdvals, matrix_rank, the spectral and nuclear matrix norms, and negative
matrix powers) are computed on the host by NumPy's LAPACK in the input's precision (float32 stays
float32), and handed back on the input's device. PCP has no VJPs for them yet: with gradients
recording, an input that requires grad is refused (NotImplementedError) instead of giving a
result that silently stops the gradient.

Example:
    >>> import pcp
    >>> import pcp.array_api as xp
    >>> a = xp.asarray([[4.0, 1.0], [1.0, 3.0]])
    >>> [round(v, 4) for v in xp.linalg.eigvalsh(a).tolist()]
    [2.382, 4.618]
"""
import builtins
import math
from collections import namedtuple

import numpy as np

import pcp

from .dtypes import default_int, float32, float64
from .functions import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401 (the extension lists them)

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])

_LAPACK = {float32: np.float32, float64: np.float64}


def _float(x, op):
    """x in a floating dtype LAPACK computes in: float32 and float64 as they are; 16-bit floats,
    integers and bools in float32 (PCP's default float)."""
    if not isinstance(x, pcp.Tensor):
        raise TypeError(f"linalg.{op}: expected a tensor, got {type(x).__name__}")
    return x if x.dtype in _LAPACK else pcp.astype(x, float32)


def _host(x, op, min_ndim=2, square=False):
    """x's values as a NumPy array for LAPACK, after the checks every decomposition makes."""
    x = _float(x, op)
    if x.requires_grad and pcp.is_grad_enabled():
        raise NotImplementedError(f"linalg.{op}: no gradient yet (NumPy's LAPACK computes it on the host); call it "
                                  "under pcp.no_grad() or on x.detach()")
    if x.ndim < min_ndim:
        raise ValueError(f"linalg.{op}: x must have at least {min_ndim} dimensions, got shape {tuple(x.shape)}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{op}: x must be a stack of square matrices, got shape {tuple(x.shape)}")
    return x.numpy().astype(_LAPACK[x.dtype], copy=False), x


def _back(value, like):
    return pcp.asarray(np.ascontiguousarray(value).astype(_LAPACK[like.dtype], copy=False), device=like.device)


def _lapack(op, fn):
    """Runs fn, turning LAPACK's LinAlgError into ValueError naming the op."""
    try:
        return fn()
    except np.linalg.LinAlgError as e:
        raise ValueError(f"linalg.{op}: {e}") from None


# -- decompositions and solvers (host LAPACK) ---------------------------------------------------


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of symmetric positive-definite matrices: lower L (x = L L^T), or upper
    U = L^T. ValueError if a matrix is not positive-definite."""
    a, like = _host(x, "cholesky", square=True)
    lower = _lapack("cholesky", lambda: np.linalg.cholesky(a))
    return _back(np.swapaxes(lower, -1, -2) if upper else lower, like)


def det(x, /):
    """The determinants of a stack of square matrices."""
    a, like = _host(x, "det", square=True)
    return _back(np.linalg.det(a), like)


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    a, like = _host(x, "eigh", square=True)
    w, v = _lapack("eigh", lambda: np.linalg.eigh(a))
    return EighResult(_back(w, like), _back(v, like))


def eigvalsh(x, /):
    """Eigenvalues of symmetric matrices, ascending."""
    a, like = _host(x, "eigvalsh", square=True)
    return _back(_lapack("eigvalsh", lambda: np.linalg.eigvalsh(a)), like)


def inv(x, /):
    """The inverses of a stack of square matrices; ValueError if one is singular."""
    a, like = _host(x, "inv", square=True)
    return _back(_lapack("inv", lambda: np.linalg.inv(a)), like)


def pinv(x, /, *, rtol=None):
    """The Moore-Penrose pseudo-inverse; singular values at most rtol * the largest count as zero
    (rtol defaults to max(M, N) * eps of the dtype)."""
    a, like = _host(x, "pinv")
    if rtol is None:
        rtol = builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps
    rtol = rtol.numpy() if isinstance(rtol, pcp.Tensor) else rtol
    return _back(_lapack("pinv", lambda: np.linalg.pinv(a, rcond=np.asarray(rtol)[..., None] if np.ndim(rtol) else rtol)),
                 like)


def qr(x, /, *, mode="reduced"):
    """Q with orthonormal columns and upper-triangular R with x = Q R ('reduced' or 'complete')."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    a, like = _host(x, "qr")
    q, r = _lapack("qr", lambda: np.linalg.qr(a, mode=mode))
    return QRResult(_back(q, like), _back(r, like))


def slogdet(x, /):
    """The sign and the log of the absolute value of the determinants (no overflow)."""
    a, like = _host(x, "slogdet", square=True)
    sign, logabs = np.linalg.slogdet(a)
    return SlogdetResult(_back(sign, like), _back(logabs, like))


def solve(x1, x2, /):
    """X with x1 X = x2 for square x1 (x2 a vector when 1-D, as the standard says); ValueError if
    x1 is singular."""
    a, like = _host(x1, "solve", square=True)
    b, _ = _host(pcp.astype(x2, like.dtype) if isinstance(x2, pcp.Tensor) else x2, "solve", min_ndim=1)
    if b.ndim == 1:  # a vector: solved against every matrix of the stack
        return _back(_lapack("solve", lambda: np.linalg.solve(a, b[..., None])[..., 0]), like)
    return _back(_lapack("solve", lambda: np.linalg.solve(a, b)), like)


def svd(x, /, *, full_matrices=True):
    """U, S, Vh with x = U diag(S) Vh, S descending."""
    a, like = _host(x, "svd")
    u, s, vh = _lapack("svd", lambda: np.linalg.svd(a, full_matrices=full_matrices))
    return SVDResult(_back(u, like), _back(s, like), _back(vh, like))


def svdvals(x, /):
    """The singular values, descending."""
    a, like = _host(x, "svdvals")
    return _back(_lapack("svdvals", lambda: np.linalg.svd(a, compute_uv=False)), like)


def matrix_rank(x, /, *, rtol=None):
    """The number of singular values above rtol * the largest (rtol defaults as pinv's), in the
    default integer dtype."""
    a, like = _host(x, "matrix_rank")
    s = np.linalg.svd(a, compute_uv=False)
    if rtol is None:
        rtol = builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps
    rtol = rtol.numpy() if isinstance(rtol, pcp.Tensor) else np.asarray(rtol)
    tol = s.max(axis=-1, initial=0.0) * rtol
    rank = (s > np.asarray(tol)[..., None]).sum(axis=-1)
    return pcp.asarray(rank.astype(np.int64), dtype=default_int(like.device), device=like.device)


# -- products, norms and reductions (PCP ops: on the device, differentiable) ----------------------


def _matrix_axes_ok(x, op):
    if x.ndim < 2:
        raise ValueError(f"linalg.{op}: x must have at least 2 dimensions, got shape {tuple(x.shape)}")


def matrix_power(x, n, /):
    """x multiplied by itself n times (the identity for n = 0; inv(x)^-n for n < 0)."""
    _matrix_axes_ok(x, "matrix_power")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.matrix_power: x must be square, got shape {tuple(x.shape)}")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if n < 0:
        x, n = inv(x), -n
    result = pcp.broadcast_to(pcp.eye(x.shape[-1], dtype=x.dtype, device=x.device), tuple(x.shape))
    result, base = pcp.copy(result), x
    while n:  # by squaring
        if n & 1:
            result = pcp.matmul(result, base)
        n >>= 1
        if n:
            base = pcp.matmul(base, base)
    return result


def outer(x1, x2, /):
    """The outer product of two vectors."""
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: expected two vectors, got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    return pcp.mul(pcp.reshape(x1, (-1, 1)), pcp.reshape(x2, (1, -1)))


def diagonal(x, /, *, offset=0):
    """The diagonal of the last two axes (above it for offset > 0, below for offset < 0)."""
    _matrix_axes_ok(x, "diagonal")
    m, n = x.shape[-2], x.shape[-1]
    rows = range(builtins.max(0, -offset), builtins.min(m, n - offset)) if -m < offset < n else range(0)
    flat = pcp.reshape(x, tuple(x.shape[:-2]) + (m * n,))
    index = pcp.tensor([r * n + r + offset for r in rows], dtype=pcp.int64)
    return pcp.take(flat, index, axis=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the diagonal (in dtype; integers in the default integer dtype)."""
    from .functions import sum as _sum
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along axis (the other axes broadcast)."""
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"linalg.cross: axis {axis} must have length 3, got shapes {tuple(x1.shape)} and "
                         f"{tuple(x2.shape)}")

    def part(t, i):
        return pcp.take(t, pcp.tensor([i], dtype=pcp.int64), axis=axis)

    a = [part(x1, i) for i in range(3)]
    b = [part(x2, i) for i in range(3)]
    return pcp.concatenate([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]],
                           axis=axis)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The p-norm of vectors over axis (all of x when None; a tuple flattens those axes): ord any
    real p, inf (largest magnitude), -inf (smallest) or 0 (how many are non-zero)."""
    x = _float(x, "vector_norm")
    mag = pcp.abs(x)
    if ord == math.inf:
        return pcp.max(mag, axis=axis, keepdims=keepdims) if math.prod(x.shape) else pcp.zeros((), dtype=x.dtype)
    if ord == -math.inf:
        return pcp.min(mag, axis=axis, keepdims=keepdims)
    if ord == 0:
        return pcp.sum(pcp.astype(pcp.ne(mag, 0), x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return pcp.sum(mag, axis=axis, keepdims=keepdims)
    if ord == 2:
        # scaled by the largest magnitude, so that the squares neither overflow nor underflow
        big = (pcp.max(mag, axis=axis, keepdims=True) if math.prod(x.shape)
               else pcp.zeros((1,) * x.ndim, dtype=x.dtype, device=x.device))
        safe = pcp.where(pcp.gt(big, 0), big, 1.0)
        safe = pcp.where(pcp.lt(safe, math.inf), safe, 1.0)
        norm = pcp.mul(pcp.sqrt(pcp.sum(pcp.square(pcp.div(mag, safe)), axis=axis, keepdims=True)), safe)
        norm = pcp.where(pcp.eq(big, math.inf), math.inf, norm)
        if not keepdims:
            norm = pcp.squeeze(norm, axis=axis if axis is not None else tuple(range(x.ndim)))
        return norm
    return pcp.pow(pcp.sum(pcp.pow(mag, float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """The norm of the matrices of the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf or -inf."""
    _matrix_axes_ok(x, "matrix_norm")
    x = _float(x, "matrix_norm")
    axes = (-2, -1)
    if ord == "fro":
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2)
    if ord in ("nuc", 2, -2):
        s = svdvals(x)
        r = pcp.sum(s, axis=-1) if ord == "nuc" else (pcp.max(s, axis=-1) if ord == 2 else pcp.min(s, axis=-1))
        return pcp.reshape(r, tuple(r.shape) + (1, 1)) if keepdims else r
    if ord in (1, -1, math.inf, -math.inf):
        sums = pcp.sum(pcp.abs(x), axis=-2 if ord in (1, -1) else -1, keepdims=True)
        pick = pcp.max if ord in (1, math.inf) else pcp.min
        r = pick(sums, axis=axes, keepdims=True)
        return r if keepdims else pcp.reshape(r, tuple(x.shape[:-2]))
    raise ValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}")


__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
           "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
           "svdvals", "tensordot", "trace", "vecdot", "vector_norm", "EighResult", "QRResult", "SlogdetResult",
           "SVDResult"]
