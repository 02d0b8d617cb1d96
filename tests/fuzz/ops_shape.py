"""Shape and view ops: reshape/view, flatten, transpose/permute/swapaxes/T/mT, squeeze,
unsqueeze/expand_dims, broadcast_to/expand, contiguous/copy/clone, concatenate, stack, split,
tril, triu."""
import math

import numpy as np

from . import reference as R
from .cases import Op, Skip, attr, fn, method, register
from .inputs import SHAPES, Lit, Seq, TensorArg, _py, like, shape_code, shape_of
from .ops_reduce import axes
from .reference import Invalid, Unspecified


def _same(k, kw):
    return R.same(k[0])


def _int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _shape_arg(shape):
    if _int(shape):
        return (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(_int(d) for d in shape):
        raise Invalid(f"shape {shape!r}")
    return tuple(int(d) for d in shape)


# ----------------------------------------------------------------------------------------------
# reshape / view


def _reshape_ref(x, shape):
    x = np.asarray(x)
    shape = _shape_arg(shape)
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise Invalid("bad reshape")
    known = math.prod(d for d in shape if d != -1)
    if known == 0 and any(d > 2**40 for d in shape):
        raise Unspecified("zero-size shape with a huge dimension (NumPy refuses, PCP may not)")
    if -1 in shape:
        if known == 0:
            raise Invalid("-1 with a zero-size shape")
        if x.size % known:
            raise Invalid("size")
    elif known != x.size:
        raise Invalid("size")
    return x.reshape(shape)


def _reshape_variants(x):
    s = shape_of(x)
    n = math.prod(s)
    return {"flat": (n,), "minus1": (-1,), "split": (1, -1), "zero_d": (), "wrong": (n + 1,), "two_minus1": (-1, -1),
            "minus2": (-2, -n) if n else (-2,)}


def build_reshape(x, p, ctx):
    token = p["shape"]
    v = _reshape_variants(x)
    if token in v:
        if token == "zero_d" and math.prod(shape_of(x)) != 1:
            raise Skip
        return [x, Lit(_py(v[token]))], {}
    return [x, Lit(token)], {}


def build_reshape_varargs(x, p, ctx):
    """Tensor.reshape(*shape): the same shapes as separate arguments."""
    args, kw = build_reshape(x, p, ctx)[:2]
    val = eval(args[1].code())
    if isinstance(val, tuple):
        return [x] + [Lit(_py(d)) for d in val], kw
    return args, kw


_RESHAPE_CROSS = [{"shape": "flat"}, {"shape": "minus1"}, {"shape": "split"}]
_RESHAPE_EXTRA = [{"shape": t} for t in ("zero_d", "wrong", "two_minus1", "minus2")] + \
    [{"shape": shape_code(s)} for s in SHAPES]


def _reshape_varargs_ref(x, *shape):
    return _reshape_ref(x, shape[0] if len(shape) == 1 else shape)


register(
    Op("pcp.reshape", fn("pcp.reshape"), _reshape_ref, _same, build=build_reshape, cross=_RESHAPE_CROSS,
       extra=_RESHAPE_EXTRA),
    Op("Tensor.reshape", method("reshape"), _reshape_varargs_ref, _same, build=build_reshape_varargs,
       cross=_RESHAPE_CROSS, extra=_RESHAPE_EXTRA, grid_dtypes=("bool", "int64", "float32")),
    Op("Tensor.view", method("view"), _reshape_varargs_ref, _same, build=build_reshape_varargs,
       cross=_RESHAPE_CROSS[:2], extra=_RESHAPE_EXTRA, grid_dtypes=("float32",), names=("view", "reshape")),
)

# ----------------------------------------------------------------------------------------------
# flatten


def _flatten_ref(x, start_axis=0, end_axis=-1):
    x = np.asarray(x)
    if x.ndim == 0:
        if start_axis in (0, -1) and end_axis in (0, -1):
            return x.reshape(1)
        raise Invalid("axis of a 0-d tensor")
    s, e = axes(start_axis, x.ndim, False), axes(end_axis, x.ndim, False)
    if s is None or e is None:
        raise Invalid("None axis")
    if s > e:
        raise Invalid("start after end")
    return x.reshape(x.shape[:s] + (math.prod(x.shape[s:e + 1]),) + x.shape[e + 1:])


_FLAT_EXTRA = [{"start_axis": a, "end_axis": b} for a, b in
               (("1", "-1"), ("0", "0"), ("1", "0"), ("-5", "1"), ("0", "5"), ("2**70", "0"), ("None", "-1"))]
register(
    Op("pcp.flatten", fn("pcp.flatten"), _flatten_ref, _same, cross=[{}, {"start_axis": "1"}], extra=_FLAT_EXTRA),
    Op("Tensor.flatten", method("flatten"), _flatten_ref, _same, cross=[{}], extra=_FLAT_EXTRA,
       grid_dtypes=("float32",)),
)

# ----------------------------------------------------------------------------------------------
# transpose / permute / swapaxes / T / mT


def _perm(axes_, ndim):
    if axes_ is None:
        return None
    if not isinstance(axes_, (tuple, list)):
        raise Invalid("axes must be a sequence")
    if len(axes_) != ndim:
        raise Invalid("axes length")
    out = [axes(a, ndim) for a in axes_] if ndim else []
    if len(set(out)) != len(out):
        raise Invalid("repeated axis")
    return out


def _transpose_ref(x, axes_=None):
    x = np.asarray(x)
    return np.transpose(x, _perm(axes_, x.ndim))


def _permute_ref(x, axes_):
    x = np.asarray(x)
    if axes_ is None:
        raise Invalid("permute needs axes")
    return np.transpose(x, _perm(axes_, x.ndim))


def _method_axes_ref(x, *axes_):
    x = np.asarray(x)
    if len(axes_) == 1 and isinstance(axes_[0], (tuple, list)):
        axes_ = tuple(axes_[0])
    return np.transpose(x, _perm(axes_ if axes_ else None, x.ndim))


def _method_permute_ref(x, *axes_):
    """Tensor.permute(*axes): no axes is the empty permutation (valid for 0-d tensors only)."""
    x = np.asarray(x)
    if len(axes_) == 1 and isinstance(axes_[0], (tuple, list)):
        axes_ = tuple(axes_[0])
    return np.transpose(x, _perm(tuple(axes_), x.ndim))


def build_axes(x, p, ctx):
    s = shape_of(x)
    token = p["axes"]
    nd = len(s)
    perms = {"reverse": tuple(range(nd))[::-1], "identity": tuple(range(nd)),
             "negative": tuple(range(-nd, 0))[::-1], "short": tuple(range(nd - 1)) if nd else (0,),
             "repeat": (0,) * nd if nd >= 2 else (0, 0), "out_of_range": tuple(range(1, nd + 1)) if nd else (1,)}
    if token == "default":
        return [x], {}
    if token in perms:
        return [x, Lit(_py(perms[token]))], {}
    return [x, Lit(token)], {}


def build_axes_varargs(x, p, ctx):
    args, kw = build_axes(x, p, ctx)[:2]
    if len(args) == 2:
        val = eval(args[1].code())
        if isinstance(val, tuple):
            return [x] + [Lit(_py(v)) for v in val], kw
    return args, kw


_AX_CROSS = [{"axes": "reverse"}, {"axes": "negative"}]
_AX_EXTRA = [{"axes": t} for t in ("identity", "short", "repeat", "out_of_range", "None", "(0, 2**70)", "'ab'",
                                    "(0.0, 1.0)")]
register(
    Op("pcp.transpose", fn("pcp.transpose"), _transpose_ref, _same, build=build_axes,
       cross=[{"axes": "default"}] + _AX_CROSS, extra=_AX_EXTRA),
    Op("pcp.permute", fn("pcp.permute"), _permute_ref, _same, build=build_axes, cross=_AX_CROSS, extra=_AX_EXTRA),
    Op("Tensor.transpose", method("transpose"), _method_axes_ref, _same, build=build_axes_varargs,
       cross=[{"axes": "default"}, {"axes": "reverse"}], extra=_AX_EXTRA, grid_dtypes=("float32",)),
    Op("Tensor.permute", method("permute"), _method_permute_ref, _same, build=build_axes_varargs,
       cross=_AX_CROSS[:1], extra=_AX_EXTRA, grid_dtypes=("float32",)),
)


def _swapaxes_ref(x, a, b):
    x = np.asarray(x)
    return np.swapaxes(x, axes(a, x.ndim, False), axes(b, x.ndim, False))


_SWAP_EXTRA = [{"a": a, "b": b} for a, b in (("0", "0"), ("-1", "0"), ("0", "2"), ("-3", "0"), ("2**63 - 1", "0"),
                                              ("None", "0"), ("1.0", "0"))]


def build_swap(x, p, ctx):
    return [x, Lit(p["a"]), Lit(p["b"])], {}


register(
    Op("pcp.swapaxes", fn("pcp.swapaxes"), _swapaxes_ref, _same, build=build_swap, cross=[{"a": "0", "b": "-1"}],
       extra=_SWAP_EXTRA),
    Op("Tensor.swapaxes", method("swapaxes"), _swapaxes_ref, _same, build=build_swap,
       cross=[{"a": "0", "b": "-1"}], extra=_SWAP_EXTRA, grid_dtypes=("float32",)),
    # NumPy: .T reverses every axis; .mT swaps the last two and needs at least 2 dimensions.
    Op("Tensor.T", attr("T"), lambda x: np.asarray(x).T, _same, names=("T", "transpose", "permute")),
    Op("Tensor.mT", attr("mT"), lambda x: _mT(x), _same, names=("mT", "transpose", "swapaxes")),
)


def _mT(x):
    x = np.asarray(x)
    if x.ndim < 2:
        raise Invalid("mT needs 2 dimensions")
    return np.swapaxes(x, -1, -2)


# ----------------------------------------------------------------------------------------------
# squeeze / unsqueeze / expand_dims


def _squeeze_ref(x, axis=None):
    x = np.asarray(x)
    ax = axes(axis, x.ndim)
    if ax is not None:
        for a in (ax if isinstance(ax, tuple) else (ax,)):
            if x.shape[a] != 1:
                raise Invalid("squeeze of an axis whose size is not 1")
    return np.squeeze(x, ax)


def _unsqueeze_ref(x, axis):
    x = np.asarray(x)
    return np.expand_dims(x, axes(axis, x.ndim + 1, False))


_SQ_EXTRA = [{"axis": a} for a in ("0", "-1", "(0, 1)", "2", "-3", "2**70", "None", "(0, 0)")]
_UNSQ = [{"axis": a} for a in ("0", "-1")]
_UNSQ_EXTRA = [{"axis": a} for a in ("2", "3", "-3", "-4", "2**63 - 1", "-2**63", "None", "1.5", "(0, 1)")]


def build_axis(x, p, ctx):
    return [x] + ([Lit(p["axis"])] if "axis" in p else []), {}


register(
    Op("pcp.squeeze", fn("pcp.squeeze"), _squeeze_ref, _same, build=build_axis, cross=[{}], extra=_SQ_EXTRA),
    Op("Tensor.squeeze", method("squeeze"), _squeeze_ref, _same, build=build_axis, cross=[{}],
       extra=_SQ_EXTRA, grid_dtypes=("float32",)),
    Op("pcp.unsqueeze", fn("pcp.unsqueeze"), _unsqueeze_ref, _same, build=build_axis, cross=_UNSQ,
       extra=_UNSQ_EXTRA),
    Op("pcp.expand_dims", fn("pcp.expand_dims"), _unsqueeze_ref, _same, build=build_axis, cross=_UNSQ[:1],
       extra=_UNSQ_EXTRA),
    Op("Tensor.unsqueeze", method("unsqueeze"), _unsqueeze_ref, _same, build=build_axis, cross=_UNSQ[1:],
       extra=_UNSQ_EXTRA, grid_dtypes=("float32",)),
)

# ----------------------------------------------------------------------------------------------
# broadcast_to / expand


def _broadcast_ref(x, shape):
    pdt = getattr(x, "pdt", None) or {"b": "bool", "i": "int64"}.get(np.asarray(x).dtype.kind, "float32")
    itemsize = R.ITEMSIZE.get(pdt, 4)
    x = np.asarray(x)
    shape = _shape_arg(shape)
    if any(d < 0 for d in shape):
        raise Unspecified("-1 in a broadcast shape (PyTorch: keep the size)")
    if math.prod(d for d in shape if d > 1) * itemsize > 2**63 - 1:
        raise Invalid("size in bytes overflows int64 (PCP refuses even views of that size)")
    try:
        np.broadcast_shapes(x.shape, shape)
    except ValueError:
        raise Invalid("not broadcastable")
    if np.broadcast_shapes(x.shape, shape) != shape:
        raise Invalid("not broadcastable to the target")
    if math.prod(shape) > 2**24:
        return R.Shape(shape)  # a view far too big to read back
    return np.broadcast_to(x, shape)


def _broadcast_varargs_ref(x, *shape):
    return _broadcast_ref(x, shape[0] if len(shape) == 1 and not _int(shape[0]) else shape)


def build_broadcast(x, p, ctx):
    s = shape_of(x)
    token = p["shape"]
    v = {"lead": (4,) + s, "same": s, "bad": s[:-1] + (s[-1] + 1,) if s else (2,),
         "huge": (2**31, 2**31) if len(s) <= 2 and all(d == 1 for d in s) else None,
         "minus1": (-1,) * len(s)}
    if token in v:
        if v[token] is None:
            raise Skip
        return [x, Lit(_py(v[token]))], {}
    return [x, Lit(token)], {}


def build_broadcast_varargs(x, p, ctx):
    args, kw = build_broadcast(x, p, ctx)[:2]
    val = eval(args[1].code())
    if isinstance(val, tuple) and val:
        return [x] + [Lit(_py(d)) for d in val], kw
    return args, kw


_BC_EXTRA = [{"shape": t} for t in ("bad", "minus1")] + [{"shape": shape_code(s)} for s in SHAPES]
register(
    Op("pcp.broadcast_to", fn("pcp.broadcast_to"), _broadcast_ref, _same, build=build_broadcast,
       cross=[{"shape": "lead"}, {"shape": "same"}, {"shape": "huge"}], extra=_BC_EXTRA),
    Op("Tensor.broadcast_to", method("broadcast_to"), _broadcast_varargs_ref, _same, build=build_broadcast_varargs,
       cross=[{"shape": "lead"}], extra=_BC_EXTRA, grid_dtypes=("float32",)),
    Op("Tensor.expand", method("expand"), _broadcast_varargs_ref, _same, build=build_broadcast_varargs,
       cross=[{"shape": "lead"}], extra=_BC_EXTRA, grid_dtypes=("float32",), names=("expand", "broadcast_to")),
)

# ----------------------------------------------------------------------------------------------
# copies


def _copy_ref(x):
    return np.array(x)


register(
    Op("pcp.contiguous", fn("pcp.contiguous"), _copy_ref, _same),
    Op("pcp.copy", fn("pcp.copy"), _copy_ref, _same),
    Op("Tensor.contiguous", method("contiguous"), _copy_ref, _same, grid_dtypes=("bool", "float16", "float32")),
    Op("Tensor.copy", method("copy"), _copy_ref, _same, grid_dtypes=("bool", "float16", "float32")),
    Op("Tensor.clone", method("clone"), _copy_ref, _same, grid_dtypes=("float32",), names=("clone", "copy")),
)

# ----------------------------------------------------------------------------------------------
# concatenate / stack / split


def _seq(tensors):
    if not isinstance(tensors, (list, tuple)):
        raise Invalid("needs a sequence of tensors")
    if not tensors:
        raise Invalid("needs at least one tensor")
    if any(t is None or isinstance(t, (str, bytes)) for t in tensors):
        raise Invalid("items must be tensors or numbers")
    return [np.asarray(t) for t in tensors]


def _concat_ref(tensors, axis=0):
    ts = _seq(tensors)
    if any(t.ndim == 0 for t in ts):
        raise Invalid("zero-dimensional")
    ax = axes(axis, ts[0].ndim, False)
    if ax is None:
        raise Unspecified("axis=None flattens in NumPy")
    return np.concatenate([t.astype(np.float64) if any(u.dtype.kind == "f" for u in ts) else t for t in ts], axis=ax)


def _stack_ref(tensors, axis=0):
    ts = _seq(tensors)
    if len({t.shape for t in ts}) != 1:
        raise Invalid("shapes differ")
    ax = axes(axis, ts[0].ndim + 1, False)
    if ax is None:
        raise Invalid("axis None")
    return np.stack([t.astype(np.float64) if any(u.dtype.kind == "f" for u in ts) else t for t in ts], axis=ax)


def _seq_rule(k, kw):
    return None


def build_seq(x, p, ctx):
    token = p.get("seq", "pair")
    s = shape_of(x)
    items = {"pair": [x, like(x)], "single": [x], "empty": [], "mismatch": [x, like(x, shape=s + (2,))],
             "bad_last": [x, like(x, shape=s[:-1] + (s[-1] + 1,) if s else (1,))],
             "dtype": [x, like(x, dtype="float64" if getattr(x, "dtype", "") != "float64" else "int32")],
             "other_device": [x, like(x, device=ctx.other)] if ctx.other else None,
             "with_none": [x, Lit("None")], "numpy": [x, Lit(f"np.ones({s!r})", "float64", s)]}[token]
    if items is None:
        raise Skip
    kw = {"axis": Lit(p["axis"])} if "axis" in p else {}
    over = {"must_work": token not in ("other_device", "numpy", "dtype")}
    return [Seq(items, tuple=p.get("tuple") == "yes")], kw, over


_SEQ_EXTRA = [{"seq": t} for t in ("single", "empty", "mismatch", "bad_last", "dtype", "other_device", "with_none",
                                    "numpy")] + [{"seq": "pair", "axis": a} for a in ("1", "-1", "2", "-3", "2**70",
                                                                                       "None", "1.5")] + \
    [{"seq": "pair", "tuple": "yes"}]
register(
    Op("pcp.concatenate", fn("pcp.concatenate"), _concat_ref, _seq_rule, build=build_seq,
       cross=[{"seq": "pair"}, {"seq": "pair", "axis": "-1"}], extra=_SEQ_EXTRA),
    Op("pcp.stack", fn("pcp.stack"), _stack_ref, _seq_rule, build=build_seq,
       cross=[{"seq": "pair"}, {"seq": "pair", "axis": "-1"}], extra=_SEQ_EXTRA),
)


def _split_ref(x, indices_or_sections, axis=0):
    x = np.asarray(x)
    ax = axes(axis, x.ndim, False)
    if ax is None:
        raise Invalid("axis None")
    ios = indices_or_sections
    if _int(ios):
        if ios <= 0 or x.shape[ax] % ios:
            raise Invalid("sections must divide the axis")
    elif isinstance(ios, (list, tuple)):
        if not all(_int(i) for i in ios):
            raise Invalid("indices must be ints")
    else:
        raise Invalid("indices_or_sections")
    return list(np.split(x, ios, axis=ax))


def build_split(x, p, ctx):
    return [x, Lit(p["ios"])], {"axis": Lit(p["axis"])} if "axis" in p else {}


_SPLIT_EXTRA = [{"ios": s} for s in ("1", "3", "0", "-1", "2**63 - 1", "[1]", "[0, 0, 5]", "[-1]", "[2, 1]", "[]",
                                      "[2**70]", "1.5", "None")] + \
    [{"ios": "1", "axis": a} for a in ("-1", "2", "-3", "None")]
register(
    Op("pcp.split", fn("pcp.split"), _split_ref, _same, build=build_split, cross=[{"ios": "2"}, {"ios": "[1]"}],
       extra=_SPLIT_EXTRA),
    Op("Tensor.split", method("split"), _split_ref, _same, build=build_split, cross=[{"ios": "[1]"}],
       extra=_SPLIT_EXTRA, grid_dtypes=("float32",)),
)

# ----------------------------------------------------------------------------------------------
# tril / triu


def _tri(f):
    def ref(x, k=0):
        x = np.asarray(x)
        if x.ndim < 2:
            raise Invalid("needs 2 dimensions")
        if not _int(k):
            raise Invalid("k")
        return f(x, max(min(int(k), 10**6), -10**6))  # beyond the matrix: all or nothing
    return ref


_K = [{"k": k} for k in ("1", "-1", "100", "-100", "2**63 - 1", "-2**63", "2**70", "1.5", "None")]
for _name, _f in (("tril", np.tril), ("triu", np.triu)):
    register(
        Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _tri(_f), _same, cross=[{}, {"k": "1"}], extra=_K),
        Op(f"Tensor.{_name}", method(_name), _tri(_f), _same, cross=[{}], extra=_K, grid_dtypes=("float32",)),
    )
