"""Reductions: sum, mean, max, min, var, logsumexp, argmax, argmin, any, all and sum_to."""
import numpy as np

from . import reference as R
from .cases import Op, fn, method, register
from .inputs import AXES, Lit, TensorArg, _py, like, shape_of
from .reference import ALL, NUMERIC, Invalid, Unspecified


def axes(axis, ndim, tuples=True):
    """NumPy's axis argument, validated: None, an int in range, or a tuple of distinct ones."""
    if axis is None:
        return None
    if isinstance(axis, (bool, np.bool_)) or isinstance(axis, list):
        raise Unspecified("bool or list axis")  # Python would accept either as an int / a sequence
    if isinstance(axis, tuple):
        if not tuples:
            raise Invalid("tuple axis")
        out = tuple(axes(a, ndim) for a in axis)
        if len(set(out)) != len(out):
            raise Invalid("repeated axis")
        return out
    if not isinstance(axis, (int, np.integer)):
        raise Invalid(f"axis {axis!r}")
    if not -ndim <= axis < ndim:
        raise Invalid(f"axis {axis} out of range")
    return int(axis) % ndim


def _arr(x):
    return np.asarray(x)


def _reducer(f, tuples=True, scale=None):
    def ref(x, axis=None, keepdims=False, **kw):
        x = _arr(x)
        ax = axes(axis, x.ndim, tuples)
        out = f(x, ax, bool(keepdims), **kw)
        if scale is None:
            return out
        return R.Value(out, err_scale=scale(x, ax, bool(keepdims)))
    return ref


def _sum(x, ax, keepdims):
    return np.sum(x.astype(np.int64) if x.dtype == bool else x, axis=ax, keepdims=keepdims)


def _abs_sum(x, ax, keepdims):
    return np.sum(np.abs(R.as_float(x)), axis=ax, keepdims=keepdims)


def _abs_mean(x, ax, keepdims):
    return np.mean(np.abs(R.as_float(x)), axis=ax, keepdims=keepdims) if x.size else None


def _mean(x, ax, keepdims):
    x = np.asarray(x, np.float64)
    if np.any(np.abs(x[np.isfinite(x)]) > 1e37):
        raise Unspecified("the sum may overflow float32 (as NumPy's and PyTorch's float32 means do)")
    return np.mean(x, axis=ax, keepdims=keepdims)


def _var(x, ax, keepdims, ddof=0):
    x = np.asarray(x, np.float64) if np.asarray(x).dtype.kind in "biu" else R.as_float(x)  # ints: float64
    if np.any(np.abs(x[np.isfinite(x)]) > 1e18):
        raise Unspecified("squares overflow float32")
    n = x.size if ax is None else int(np.prod([x.shape[a] for a in (ax if isinstance(ax, tuple) else (ax,))]))
    if n - ddof <= 0:
        raise Unspecified("ddof >= number of elements")
    return np.var(x, axis=ax, ddof=ddof, keepdims=keepdims)


def _var_scale(x, ax, keepdims):
    x = R.as_float(x)
    return 8 * np.mean(x * x, axis=ax, keepdims=keepdims) if x.size else None


def _argx(f):
    def g(x, ax, keepdims):
        return f(x, axis=ax, keepdims=keepdims)
    return g


def _lse(x, ax, keepdims):
    return R.logsumexp(x, axis=ax, keepdims=keepdims)


# name -> (reference, dtype rule, declared dtypes, tuple axes allowed)
REDUCTIONS = {
    "sum": (_reducer(_sum, scale=_abs_sum), lambda k, kw: R.summed(k[0]), ALL),
    "mean": (_reducer(_mean, scale=_abs_mean),
             lambda k, kw: R.averaged(k[0]), NUMERIC),
    "max": (_reducer(lambda x, a, k: np.max(x, axis=a, keepdims=k)), lambda k, kw: R.same(k[0]), ALL),
    "min": (_reducer(lambda x, a, k: np.min(x, axis=a, keepdims=k)), lambda k, kw: R.same(k[0]), ALL),
    "var": (_reducer(_var, scale=_var_scale), lambda k, kw: R.averaged(k[0]), NUMERIC),
    "logsumexp": (_reducer(_lse), lambda k, kw: R.floating(k[0]), NUMERIC),
    "argmax": (_reducer(_argx(np.argmax), tuples=False), lambda k, kw: "int64", NUMERIC),
    "argmin": (_reducer(_argx(np.argmin), tuples=False), lambda k, kw: "int64", NUMERIC),
}

_CROSS = [{}, {"axis": "-1"}, {"axis": "0"}]
_EXTRA = [{"axis": a if isinstance(a, str) else _py(a)} for a in AXES] + \
    [{"axis": a, "keepdims": "True"} for a in ("None", "-1", "(0, 1)", "()")]


def build_reduce(x, p, ctx):
    kw = {k: Lit(v) for k, v in p.items()}
    if isinstance(x, TensorArg) and x.shape == (2, 3) and p.get("axis") in ("2", "-3"):
        x = like(x, shape=(2, 3, 4))  # axes 2 / -3 need a 3-d input to be in range
    return [x], kw


for _name, (_ref, _rule, _dtypes) in REDUCTIONS.items():
    _extra = _EXTRA + ([{"ddof": d} for d in ("1", "2", "5", "-1", "1.5")] if _name == "var" else [])
    register(
        Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _ref, _rule, build=build_reduce, cross=_CROSS, extra=_extra,
           dtypes=_dtypes),
        Op(f"Tensor.{_name}", method(_name), _ref, _rule, build=build_reduce, cross=_CROSS[:2],
           extra=_EXTRA[:8], dtypes=_dtypes, grid_dtypes=("bool", "int32", "float16", "float32")),
    )

# any / all: NumPy's any of nothing is False, all of nothing is True.
for _name, _f in (("any", np.any), ("all", np.all)):
    _ref = _reducer(lambda x, a, k, f=_f: f(x, axis=a, keepdims=k))
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _ref, lambda k, kw: "bool", build=build_reduce, cross=_CROSS,
                extra=_EXTRA),
             Op(f"Tensor.{_name}", method(_name), _ref, lambda k, kw: "bool", build=build_reduce, cross=_CROSS,
                extra=_EXTRA))


def _sum_to_ref(x, shape):
    x = np.asarray(x)
    if not isinstance(shape, (tuple, list)) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise Invalid("shape")
    shape = tuple(shape)
    if len(shape) > x.ndim or any(d < 0 for d in shape):
        raise Invalid("shape")
    try:
        if np.broadcast_shapes(shape, x.shape) != x.shape:
            raise Invalid("not broadcastable")
    except ValueError:
        raise Invalid("not broadcastable")
    lead = x.ndim - len(shape)
    y = x.astype(np.int64) if x.dtype == bool else x
    if lead:
        y = np.sum(y, axis=tuple(range(lead)))
    ax = tuple(i for i, d in enumerate(shape) if d == 1 and y.shape[i] != 1)
    return np.sum(y, axis=ax, keepdims=True) if ax else y


def build_sum_to(x, p, ctx):
    target = p["shape"]
    s = shape_of(x)
    if target == "same":
        src = _py(s)
    elif target == "last":
        src = _py(s[-1:])
    elif target == "ones":
        src = _py((1,) * len(s))
    else:
        src = target
    return [x], {"shape": Lit(src)}


def _float_same(k, kw):
    return k[0] if k[0] in R.FLOAT_SET else None


register(Op("pcp.sum_to", fn("pcp.sum_to"), _sum_to_ref, _float_same, build=build_sum_to, dtypes=NUMERIC,
            cross=[{"shape": "same"}, {"shape": "last"}, {"shape": "ones"}],
            extra=[{"shape": s} for s in ("()", "(3,)", "(4,)", "(2, 1)", "(1, 2, 3)", "(-1,)", "(2**63 - 1,)",
                                          "None", "'a'")]))
