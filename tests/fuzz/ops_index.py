"""Indexing: Tensor.__getitem__ / __setitem__ (NumPy's basic and advanced indexing), take,
embedding and one_hot."""
import dataclasses

import numpy as np

from . import reference as R
from .cases import Op, Skip, fn, register
from .inputs import TENSOR_CLASSES, Cls, Lit, TensorArg, like, shape_of, tensor
from .ops_create import dtype_name
from .reference import Invalid, Unspecified


def _same(k, kw):
    return R.same(k[0])


# ----------------------------------------------------------------------------------------------
# index tensors and index-like arguments

def index_arg(x, token, ctx, n=None):
    """An index argument for a dimension of size n (default: x's first)."""
    s = shape_of(x)
    n = (s[0] if s else 1) if n is None else n
    dev = x.device if isinstance(x, TensorArg) else ctx.device
    ints = {"valid": [0, n - 1] if n else [], "negative": [-1] if n else [], "oob": [n], "oob_neg": [-n - 1],
            "empty": [], "huge": [2**62]}
    if token in ints:
        return TensorArg(f"np.array({ints[token]!r}, dtype=np.int64)", "int64", dev, shape=(len(ints[token]),))
    if token == "2d":
        return TensorArg(f"(np.arange(4).reshape(2, 2) % {max(n, 1)})", "int64", dev, shape=(2, 2))
    if token == "0d":
        return TensorArg("np.array(0)", "int64", dev, shape=())
    if token == "int32":
        return TensorArg(f"np.array([{max(n - 1, 0)}, 0], dtype=np.int32)", "int32", dev, shape=(2,))
    if token == "float":
        return TensorArg("np.array([0.0, 1.0])", "float32", dev, shape=(2,))
    if token == "bool":
        return TensorArg(f"np.arange({n}) % 2 == 0", "bool", dev, shape=(n,))
    if token == "other_device":
        if ctx.other is None:
            raise Skip
        return TensorArg("np.array([0], dtype=np.int64)", "int64", ctx.other, shape=(1,))
    return Lit(token)


INDEX_TOKENS = ["valid", "negative", "oob", "oob_neg", "empty", "huge", "2d", "0d", "int32", "float", "bool",
                "other_device", "[0, 1]", "0", "np.array([0, 1])", "np.array([0, 1], dtype=np.uint8)", "None",
                "'a'", "1.5"]


def _index_over(token, ctx):
    # docs/gpu.md: index tensors may stay on the CPU when the data is on the GPU.
    if token == "other_device":
        return {"must_work": ctx.device != "cpu"}
    return {"must_work": token not in ("np.array([0, 1], dtype=np.uint8)",)}


# ----------------------------------------------------------------------------------------------
# take / embedding / one_hot


def _int_index(idx):
    a = np.asarray(idx)
    if a.dtype.kind not in "iu":
        raise Invalid("indices must be integers")
    return a


def _take_ref(x, indices, axis=None):
    x = np.asarray(x)
    idx = _int_index(indices)
    if axis is not None:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise Invalid("axis")
        if not -x.ndim <= axis < x.ndim:
            raise Invalid("axis out of range")
    n = x.size if axis is None else x.shape[axis]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise Invalid("index out of range")
    return np.take(x, idx, axis=axis)


def build_take(x, p, ctx):
    s = shape_of(x)
    axis = p.get("axis")
    n = (int(np.prod(s)) if s else 1) if axis in (None, "None") else (s[0] if s else 1)
    token = p.get("idx", "valid")
    idx = index_arg(x, token, ctx, n)
    kw = {"axis": Lit(axis)} if axis is not None else {}
    return [x, idx], kw, _index_over(token, ctx)


_TAKE_EXTRA = [{"idx": t} for t in INDEX_TOKENS[1:]] + [{"idx": "valid", "axis": a} for a in
                                                         ("-1", "2", "-3", "2**70", "1.5")]
register(
    Op("pcp.take", fn("pcp.take"), _take_ref, _same, build=build_take,
       cross=[{"idx": "valid"}, {"idx": "valid", "axis": "0"}], extra=_TAKE_EXTRA),
    Op("Tensor.take", lambda a, kw: ("", f"{a[0]}.take({', '.join(a[1:] + [f'{k}={v}' for k, v in kw.items()])})"),
       _take_ref, _same, build=build_take, cross=[{"idx": "valid", "axis": "0"}], extra=_TAKE_EXTRA[:12],
       grid_dtypes=("float32",)),
)


def _embedding_ref(weight, indices):
    w = np.asarray(weight)
    if w.ndim != 2:
        raise Invalid("weight must be 2-D")
    idx = _int_index(indices)
    n = w.shape[0]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise Invalid("index out of range")
    return w[idx]


def build_embedding(x, p, ctx):
    token = p.get("idx", "valid")
    return [x, index_arg(x, token, ctx)], {}, _index_over(token, ctx)


register(Op("pcp.embedding", fn("pcp.embedding"), _embedding_ref, _same, build=build_embedding,
            cross=[{"idx": "valid"}], extra=[{"idx": t} for t in INDEX_TOKENS[1:]]))


def _one_hot_ref(indices, num_classes, dtype=None):
    dtype_name(dtype)  # an unknown dtype is refused
    idx = _int_index(indices)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise Invalid("num_classes")
    if num_classes < 0:
        raise Unspecified("negative num_classes (PyTorch: infer)")
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise Invalid("index out of range")
    if idx.size * num_classes > 2**26:
        return R.Shape(idx.shape + (num_classes,))
    return (idx[..., None] == np.arange(num_classes)).astype(np.int64)


def _one_hot_rule(k, kw):
    d = kw.get("dtype")
    if d is None or not d.code().startswith("pcp."):
        return None
    return d.code().removeprefix("pcp.").replace("bool_", "bool")


def build_one_hot(x, p, ctx):
    kw = {"dtype": Lit(p["dtype"])} if "dtype" in p else {}
    return [x, Lit(p.get("n", "6"))], kw


# Indices 1..5 (ints) in every shape and view; float and bool inputs must be refused.
ONE_HOT_CLASSES = [dataclasses.replace(c, kind="positive") for c in TENSOR_CLASSES if c.kind != "special"]
register(Op("pcp.one_hot", fn("pcp.one_hot"), _one_hot_ref, _one_hot_rule, build=build_one_hot,
            classes=ONE_HOT_CLASSES, dtypes=frozenset({"int32", "int64"}), cross=[{"n": "6"}],
            extra=[{"n": n} for n in ("0", "5", "-1", "2**31", "2**40", "2**70", "1.5", "None")]
            + [{"n": "6", "dtype": d} for d in ("pcp.int64", "pcp.bool_", "pcp.float16", "'float32'", "'x'")]))

# ----------------------------------------------------------------------------------------------
# __getitem__ / __setitem__

KEYS_2D = ["0", "-1", "1", "2", "-3", "2**63 - 1", "2**70", "1.5", "True", "False", "None", "...", "(..., 0)",
           "(0, ..., 0)", "(..., ...)", "slice(None)", "slice(None, None, -1)", "slice(None, None, 0)",
           "slice(-100, 100)", "slice(1, None, 2)", "slice(None, None, 2**63 - 1)", "slice(2**70)",
           "slice(None, None, -2**63)", "(0, 0, 0)", "(slice(None), None, 0)", "'a'", "[0, 1]", "[[0, 1], [1, 0]]",
           "[]", "[-3]", "[5]", "[True, False]", "np.array([0, 1])", "np.array([True, False])",
           "np.array([True, False, True])", "np.ones((2, 3), dtype=bool)", "np.array([1.0])",
           "np.array([0, 1], dtype=np.uint8)", "np.array([2**63], dtype=np.uint64)", "np.int32(1)",
           "(slice(None), [0, 2])", "([0, 1], [1, 2])", "(0, [0, 1])", "([[0], [1]], [[1, 2]])", "(..., [0, 2])",
           "(slice(None, None, -1), [2, 0])", "x0 > 0"]
KEYS_3D = ["([0], slice(None), [1])", "(slice(None), [0, 1], [1, 2])", "(0, slice(None), [0, 3])",
           "(None, ..., None, 0)", "([0, 1], ..., 0)"]
KEY_TENSORS = ["t_valid", "t_2d", "t_0d", "t_int32", "t_float", "t_bool", "t_bool_bad", "t_bool0d", "t_empty",
               "t_oob", "t_other_device"]


def _key(x, token, ctx):
    """A key argument: source, or a pcp index tensor (t_*)."""
    if token.startswith("t_"):
        t = token[2:]
        if t == "bool_bad":
            return TensorArg("np.array([True, False, True])", "bool", x.device, shape=(3,))
        if t == "bool0d":
            return TensorArg("np.array(True)", "bool", x.device, shape=())
        return index_arg(x, {"valid": "valid", "oob": "oob"}.get(t, t), ctx)
    if "x0" in token and not isinstance(x, TensorArg):
        raise Skip
    return Lit(token)


def _getitem_ref(x, key):
    x = np.asarray(x)
    if isinstance(key, np.ndarray) and key.dtype.kind == "u" and key.dtype.itemsize == 8:
        raise Unspecified("uint64 index")
    return x[key]


def build_getitem(x, p, ctx):
    token = p["key"]
    if p.get("rank3") and isinstance(x, TensorArg):
        x = like(x, shape=(2, 3, 4))
    # PCP refuses Python bools as indices on purpose ('use a boolean tensor'); other devices'
    # index tensors are only promised to work on the CPU (docs/gpu.md).
    over = {"must_work": token not in ("t_other_device", "np.array([0, 1], dtype=np.uint8)", "np.int32(1)", "True",
                                       "False") or (token == "t_other_device" and ctx.device != "cpu")}
    return [x, _key(x, token, ctx)], {}, over


_GET_CROSS = [{"key": k} for k in ("0", "slice(None, None, -1)", "...", "None", "t_valid")]
_GET_EXTRA = [{"key": k} for k in KEYS_2D + KEY_TENSORS if k not in ("0", "slice(None, None, -1)", "...", "None",
                                                                     "t_valid")] + \
    [{"key": k, "rank3": True} for k in KEYS_3D]
register(Op("Tensor.__getitem__", lambda a, kw: ("", f"{a[0]}[{a[1]}]"), _getitem_ref, _same, build=build_getitem,
            cross=_GET_CROSS, extra=_GET_EXTRA, names=("index", "getitem")))


def _setitem_ref(x, key, value):
    if not isinstance(x, np.ndarray):
        raise Invalid("not a tensor")
    if not x.flags.writeable:
        raise Invalid("read-only (broadcast) destination")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        raise Invalid("value does not fit in int64")
    if value is None or isinstance(value, str):
        raise Invalid("value is not a number")
    y = np.array(x)
    if y.dtype.kind in "iub" and isinstance(value, float) and not np.isfinite(value):
        raise Unspecified("NaN/inf into an int tensor")
    y[key] = value
    return y


VALUES = ["7", "1.5", "float('nan')", "True", "2**40", "2**70", "None", "'a'", "[1.0, 2.0, 3.0]", "np.arange(3.0)",
          "v_row", "v_bad", "v_0d", "v_int32", "v_other_device"]


def build_setitem(x, p, ctx):
    key, value = p["key"], p["value"]
    if value.startswith("v_"):
        if not isinstance(x, TensorArg):
            raise Skip
        s = shape_of(x)
        v = value[2:]
        if v == "other_device" and ctx.other is None:
            raise Skip
        val = {"row": lambda: like(x, shape=s[-1:] if s else ()), "bad": lambda: like(x, shape=(4,)),
               "0d": lambda: like(x, shape=()), "int32": lambda: like(x, shape=s[-1:] if s else (), dtype="int32"),
               "other_device": lambda: like(x, shape=s[-1:] if s else (), device=ctx.other)}[v]()
    else:
        if "x0" in value and not isinstance(x, TensorArg):
            raise Skip
        val = Lit(value)
    if p.get("grad") and isinstance(x, TensorArg):
        if x.dtype not in R.FLOAT_SET or x.view:
            raise Skip
        x = dataclasses.replace(x, grad=True)
    over = {"must_work": value not in ("v_other_device", "v_int32"), "expect": "error" if p.get("grad") else None}
    return [x, _key(x, key, ctx), val], {}, over


_SET_CROSS = [{"key": "...", "value": "7"}, {"key": "...", "value": "v_row"}]
_SET_EXTRA = [{"key": "0", "value": v} for v in VALUES] + \
    [{"key": k, "value": "7"} for k in ("slice(None, None, -1)", "[0, 1]", "[1, 1]", "x0 > 0", "t_bool", "t_valid",
                                         "(slice(None), [0, 2])", "2", "t_oob", "(..., ...)", "np.array([True])")] + \
    [{"key": "slice(1, None)", "value": "x0[:-1]"}, {"key": "slice(None, -1)", "value": "x0[1:]"},
     {"key": "...", "value": "x0.T"}, {"key": "...", "value": "x0[::-1]"}, {"key": "...", "value": "7", "grad": True}]
register(Op("Tensor.__setitem__", lambda a, kw: (f"{a[0]}[{a[1]}] = {a[2]}", a[0]), _setitem_ref, _same,
            build=build_setitem, cross=_SET_CROSS, extra=_SET_EXTRA, names=("index_assign", "index", "setitem")))
