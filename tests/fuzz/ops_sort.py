"""Sorting, scans and searches: argsort, sort, cumsum, cumprod, prod, searchsorted, unique and
take_along_axis (CPU kernels; a GPU refuses the first seven with NotImplementedError)."""
import numpy as np

from . import reference as R
from .cases import Op, Skip, fn, method, register
from .inputs import AXES, Lit, TensorArg, _py, like, shape_of
from .ops_reduce import _reducer, axes, build_reduce
from .reference import ALL, NUMERIC, Invalid, Unspecified


def _one_axis(axis, ndim):
    """An int axis in range for max(ndim, 1) dimensions (0-d tensors sort as one element)."""
    if axis is None or isinstance(axis, tuple):
        raise Invalid("one int axis")
    return axes(axis, max(ndim, 1))


def _keys(x):
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise Invalid("not numbers")
    return x.astype(np.float64) if x.dtype.kind == "f" else x


def _argsort_ref(x, axis=-1, descending=False, stable=True):
    k = _keys(x)
    ax = _one_axis(axis, k.ndim)
    k = k.reshape(1) if k.ndim == 0 else k
    if descending:  # stable: equal values keep their order; NaNs (the largest) first
        k = np.where(np.isnan(k), -np.inf, -k.astype(np.float64)) if k.dtype.kind == "f" else -k.astype(np.int64)
    out = np.argsort(k, axis=ax, kind="stable")
    return out.reshape(np.shape(x))


def _sort_ref(x, axis=-1, descending=False, stable=True):
    x = np.asarray(x)
    idx = _argsort_ref(x, axis, descending)
    if x.ndim == 0:
        return x
    return np.take_along_axis(x, idx, _one_axis(axis, x.ndim))


def _cumulative(f):
    def ref(x, axis=None):
        x = np.asarray(x)
        if x.dtype.kind not in "biuf":
            raise Invalid("not numbers")
        ax = None if axis is None else _one_axis(axis, x.ndim)
        v = x.astype(np.int64) if x.dtype.kind in "biu" else x.astype(np.float64)
        if v.dtype.kind == "f" and np.any(np.abs(v[np.isfinite(v)]) > 1e18):
            raise Unspecified("running values overflow float32")
        if ax is not None and x.ndim == 0:
            return f(v.reshape(1), axis=0).reshape(())
        out = f(v, axis=ax)
        if f is np.cumprod and v.dtype.kind == "f":
            return R.Value(out, err_scale=np.cumprod(np.abs(v), axis=ax))
        return out
    return ref


def _prod(x, ax, keepdims):
    v = x.astype(np.int64) if x.dtype.kind in "biu" else x.astype(np.float64)
    if v.dtype.kind == "f" and np.any(np.abs(v[np.isfinite(v)]) > 1e18):
        raise Unspecified("products overflow float32")
    return np.prod(v, axis=ax, keepdims=keepdims)


def _int64_or_same(k, kw):
    return R.summed(k[0])  # as sum: ints and bools count in int64


def _searchsorted_ref(sorted_, values, side="left"):
    s, v = np.asarray(sorted_), np.asarray(values)
    if s.dtype.kind not in "biuf" or v.dtype.kind not in "biuf":
        raise Invalid("not numbers")
    if s.ndim != 1:
        raise Invalid("sorted must be 1-D")
    if side not in ("left", "right"):
        raise Invalid("side")
    if not np.array_equal(np.sort(s), s, equal_nan=s.dtype.kind == "f"):
        raise Unspecified("the haystack is not sorted (not checked: documented)")
    return np.searchsorted(s, v, side=side)


def build_searchsorted(x, p, ctx):
    """x sorted (the ref sorts it too) as the haystack, and a needle of the token's kind."""
    if not isinstance(x, TensorArg):
        raise Skip
    token = p.get("values", "same")
    kw = {"side": Lit(p["side"])} if "side" in p else {}
    values = {"same": like(x), "0d": like(x, shape=()), "2d": like(x, shape=(2, 3))}.get(token)
    if values is None:
        return [x, Lit(token)], kw
    return [x, values], kw


def _unique_ref(x):
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise Invalid("not numbers")
    flat = x.reshape(-1)
    if x.dtype.kind == "f" and np.isnan(flat).any():
        raise Unspecified("NaNs: each is its own value (checked in tests/test_ops_sort.py)")
    return np.unique(flat)


def _take_along_ref(x, indices, axis):
    x, i = np.asarray(x), np.asarray(indices)
    if i.dtype.kind not in "iu" or x.ndim != i.ndim:
        raise Invalid("integer indices of x's rank")
    ax = _one_axis(axis, x.ndim)
    if x.ndim == 0:
        raise Unspecified("0-d")
    n = x.shape[ax]
    if np.any((i < -n) | (i >= n)):
        raise Invalid("index out of range")
    return np.take_along_axis(x, i % max(n, 1), ax)


def build_take_along(x, p, ctx):
    s = shape_of(x)
    if not s:
        raise Skip  # 0-d: take_along_axis needs an axis
    token = p.get("indices", "valid")
    n = s[-1]
    if token == "valid":
        src = f"np.arange({int(np.prod(s))}).reshape({_py(s)}) % {max(n, 1)} - {n // 2}"
    elif token == "broadcast":
        src = f"np.zeros({_py(s[:-1] + (2,) if len(s) == 1 else (1,) + s[1:-1] + (2,))}, dtype=np.int64)"
    elif token == "out_of_range":
        src = f"np.full({_py(s)}, {n})"
    else:
        src = f"np.zeros({_py(s[:-1] + (1,))}, dtype=np.float32)"
    return [x, Lit(f"pcp.tensor({src})"), Lit("-1")], {}


_AXIS_CROSS = [{}, {"axis": "0"}]
_AXIS_EXTRA = [{"axis": _py(a) if not isinstance(a, str) else a} for a in AXES] + \
    [{"descending": "True"}, {"axis": "0", "descending": "True"}, {"stable": "False"}]


def build_axis(x, p, ctx):
    kw = {k: Lit(v) for k, v in p.items()}
    return [x], kw


for _name, _ref in (("argsort", _argsort_ref), ("sort", _sort_ref)):
    _rule = (lambda k, kw: "int64") if _name == "argsort" else (lambda k, kw: R.same(k[0]))
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _ref, _rule, build=build_axis, cross=_AXIS_CROSS,
                extra=_AXIS_EXTRA, dtypes=ALL),
             Op(f"Tensor.{_name}", method(_name), _ref, _rule, build=build_axis, cross=_AXIS_CROSS,
                extra=_AXIS_EXTRA[:6], dtypes=ALL))

_SCAN_EXTRA = [{"axis": _py(a) if not isinstance(a, str) else a} for a in AXES]
for _name, _f in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _cumulative(_f), _int64_or_same, build=build_axis,
                cross=[{}, {"axis": "0"}, {"axis": "-1"}], extra=_SCAN_EXTRA, dtypes=ALL),
             Op(f"Tensor.{_name}", method(_name), _cumulative(_f), _int64_or_same, build=build_axis,
                cross=[{}, {"axis": "-1"}], extra=_SCAN_EXTRA[:6], dtypes=ALL))

_PROD_EXTRA = [{"axis": a if isinstance(a, str) else _py(a)} for a in AXES] + \
    [{"axis": a, "keepdims": "True"} for a in ("None", "-1", "(0, 1)", "()")]
register(Op("pcp.prod", fn("pcp.prod"), _reducer(_prod), _int64_or_same, build=build_reduce,
            cross=[{}, {"axis": "-1"}, {"axis": "0"}], extra=_PROD_EXTRA, dtypes=ALL),
         Op("Tensor.prod", method("prod"), _reducer(_prod), _int64_or_same, build=build_reduce,
            cross=[{}, {"axis": "-1"}], extra=_PROD_EXTRA[:8], dtypes=ALL))

register(Op("pcp.searchsorted", fn("pcp.searchsorted"), _searchsorted_ref, lambda k, kw: "int64",
            build=build_searchsorted, cross=[{}, {"side": "'right'"}],
            extra=[{"values": "0d"}, {"values": "2d"}, {"side": "'middle'"}, {"values": "None"},
                   {"values": "'a'"}, {"values": "2.5"}], dtypes=ALL))

register(Op("pcp.unique", fn("pcp.unique"), _unique_ref, lambda k, kw: R.same(k[0]), dtypes=ALL))

register(Op("pcp.take_along_axis", fn("pcp.take_along_axis"), _take_along_ref, lambda k, kw: R.same(k[0]),
            build=build_take_along, cross=[{}],
            extra=[{"indices": "broadcast"}, {"indices": "out_of_range"}, {"indices": "float"}], dtypes=ALL))
