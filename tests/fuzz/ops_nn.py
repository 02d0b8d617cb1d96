"""Neural-network ops: matmul, softmax, log_softmax, layer_norm, cross_entropy, dropout and
attention (scaled_dot_product_attention, qkv_attention)."""
import math

import numpy as np

from . import reference as R
from .cases import Op, Skip, binop, fn, method, rbinop, register
from .inputs import Cls, Lit, TensorArg, like, shape_of, tensor
from .reference import FLOAT_SET, NUMERIC, Invalid, Unspecified

# ----------------------------------------------------------------------------------------------
# matmul


def _matmul_ref(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "fiub" or b.dtype.kind not in "fiub":
        raise Invalid("not numbers")
    if a.ndim == 0 or b.ndim == 0:
        raise Invalid("matmul of a 0-d operand")
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        if a.dtype.kind == "b" and b.dtype.kind == "b":
            raise Invalid("matmul of bools")
        out = np.matmul(a.astype(np.int64), b.astype(np.int64))  # integers wrap, as NumPy's
        return out.astype(np.result_type(a, b))
    wide = np.float64 in (a.dtype, b.dtype)  # an integer operand meets float64: computed in float64
    af, bf = (a.astype(np.float64), b.astype(np.float64)) if wide else (R.as_float(a), R.as_float(b))
    return R.Value(np.matmul(af, bf), err_scale=np.matmul(np.abs(af), np.abs(bf)))


def build_matmul(x, p, ctx):
    """b so that x @ b is defined (x's last axis against b's first), or one of the variants."""
    s = shape_of(x)
    k = s[-1] if s else 3
    token = p.get("b", "matrix")
    shapes = {"matrix": (k, 4), "vector": (k,), "batched": (3, k, 2), "zero_n": (k, 0), "bad_k": (k + 1, 2),
              "scalar": ()}
    if token in shapes:
        return [x, like(x, shape=shapes[token])], {}
    if token == "other_device":
        if ctx.other is None:
            raise Skip
        return [x, like(x, shape=(k, 4), device=ctx.other)], {}, {"must_work": False}
    if token.startswith("dtype:"):
        return [x, like(x, shape=(k, 4), dtype=token[6:])], {}
    return [x, Lit(token)], {}, {"must_work": False}


def build_rmatmul(x, p, ctx):
    """A NumPy array on the left of a Tensor (NumPy defers to Tensor.__rmatmul__)."""
    if not isinstance(x, TensorArg) or not shape_of(x):
        raise Skip
    k = shape_of(x)[0]
    return [x, Lit(f"np.ones((2, {k}))", "float64", (2, k))], {}, {"must_work": False}


def _matmul_rule(k, kw):
    r = R.promote(k[0], k[1])
    return r if r in FLOAT_SET else None


_MM_EXTRA = [{"b": t} for t in ("vector", "batched", "zero_n", "bad_k", "scalar", "other_device", "None", "'a'",
                                 "[[1.0, 2.0]]")] + [{"b": f"dtype:{d}"} for d in R.DTYPES]
_MM = dict(build=build_matmul, cross=[{"b": "matrix"}], extra=_MM_EXTRA, dtypes=FLOAT_SET)
register(
    Op("pcp.matmul", fn("pcp.matmul"), _matmul_ref, _matmul_rule, **_MM),
    Op("Tensor.matmul", method("matmul"), _matmul_ref, _matmul_rule, **_MM),
    Op("Tensor.__matmul__", binop("@"), _matmul_ref, _matmul_rule, names=("matmul", "@"), **_MM),
    Op("Tensor.__rmatmul__", rbinop("@"), lambda a, b: _matmul_ref(b, a), None, names=("matmul", "@"),
       build=build_rmatmul, dtypes=FLOAT_SET),
)

# ----------------------------------------------------------------------------------------------
# softmax family


def _softmax_ref(f):
    def ref(x, axis=-1):
        return f(x, axis)
    return ref


_AXIS = [{"axis": a} for a in ("0", "1", "-2", "2", "-3", "2**63 - 1", "-2**63", "2**70", "None", "1.5", "(0, 1)")]
for _name, _f in (("softmax", R.softmax), ("log_softmax", R.log_softmax)):
    register(
        Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _softmax_ref(_f), lambda k, kw: R.floating(k[0]), dtypes=NUMERIC,
           cross=[{}, {"axis": "0"}], extra=_AXIS),
        Op(f"Tensor.{_name}", method(_name), _softmax_ref(_f), lambda k, kw: R.floating(k[0]), dtypes=NUMERIC,
           extra=_AXIS[:4], grid_dtypes=("int32", "float16", "float32")),
    )

# ----------------------------------------------------------------------------------------------
# layer_norm


def _layer_norm_ref(x, weight=None, bias=None, eps=1e-5):
    x = np.asarray(x)
    if x.ndim == 0:
        raise Invalid("layer_norm of a 0-d tensor")
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise Invalid("eps")
    if not eps >= 0:
        raise Unspecified("negative or NaN eps")
    x = R.as_float(x)
    if np.any(np.abs(x[np.isfinite(x)]) > 1e15):
        raise Unspecified("(x - mean)**2 overflows float32")
    n = x.shape[-1]
    for w in (weight, bias):
        if w is not None and np.shape(w) != (n,):
            raise Invalid("weight/bias shape")
    if x.size == 0:
        return x.copy()
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    if weight is not None:
        y = y * R.as_float(weight)
    if bias is not None:
        y = y + R.as_float(bias)
    return R.Value(y, err_scale=10 * np.abs(y))


def build_layer_norm(x, p, ctx):
    s = shape_of(x)
    n = s[-1] if s else 1
    which = p.get("affine", "both")
    kw = {}
    if which in ("both", "weight"):
        kw["weight"] = like(x, shape=(n,), kind="positive")
    if which in ("both", "bias"):
        kw["bias"] = like(x, shape=(n,))
    if which == "bad_weight":
        kw["weight"] = like(x, shape=(n + 1,))
    if which == "weight_2d":
        kw["weight"] = like(x, shape=(1, n))
    if which == "other_device":
        if ctx.other is None:
            raise Skip
        kw["weight"] = like(x, shape=(n,), device=ctx.other)
        return [x], kw, {"must_work": False}
    if "eps" in p:
        kw["eps"] = Lit(p["eps"])
    return [x], kw


# With weight or bias the result promotes over them too (float16 x, float32 weight: float32).
register(Op("pcp.layer_norm", fn("pcp.layer_norm"), _layer_norm_ref,
            lambda k, kw: None if {"weight", "bias"} & set(kw) else R.floating(k[0]),
            build=build_layer_norm, dtypes=FLOAT_SET, cross=[{"affine": "both"}],
            extra=[{"affine": a} for a in ("none", "weight", "bias", "bad_weight", "weight_2d", "other_device")]
            + [{"affine": "none", "eps": e} for e in ("0.0", "-1.0", "float('nan')", "1e300", "'a'", "None")]))

# ----------------------------------------------------------------------------------------------
# cross_entropy (classes on the last axis)


def _cross_entropy_ref(logits, targets, ignore_index=-100, reduction="mean"):
    x = np.asarray(logits)
    t = np.asarray(targets)
    if reduction not in ("mean", "sum", "none"):
        raise Invalid("reduction")
    if x.ndim == 0:
        raise Invalid("0-d logits")
    if t.dtype.kind not in "iu":
        raise Invalid("targets must be integers")
    if t.shape != x.shape[:-1]:
        raise Invalid("targets shape")
    if not isinstance(ignore_index, int) or isinstance(ignore_index, bool):
        raise Invalid("ignore_index")
    c = x.shape[-1]
    if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
        raise Unspecified("infinite or NaN logits")
    keep = t != ignore_index
    if np.any((t[keep] < 0) | (t[keep] >= c)):
        raise Invalid("target out of range")
    logp = R.unwrap(R.log_softmax(x, -1)) if x.size else np.zeros(x.shape)
    tt = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, tt[..., None], axis=-1)[..., 0] if x.size else np.zeros(t.shape)
    loss = np.where(keep, -picked, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / keep.sum() if keep.sum() else np.float64(np.nan)


def build_cross_entropy(x, p, ctx):
    s = shape_of(x)
    if not s:
        return [x, Lit("0")], {}
    c = s[-1]
    lead = s[:-1]
    n = int(np.prod(lead)) if lead else 1
    token = p.get("targets", "valid")
    tdtype = "int64"
    if token == "valid":
        src = f"(np.arange({n}) % {max(c, 1)}).reshape({lead!r})"
    elif token == "int32":
        src, tdtype = f"(np.arange({n}) % {max(c, 1)}).reshape({lead!r})", "int32"
    elif token == "ignored":
        src = f"np.where(np.arange({n}) % 2 == 0, -100, np.arange({n}) % {max(c, 1)}).reshape({lead!r})"
    elif token == "all_ignored":
        src = f"np.full({lead!r}, -100)"
    elif token == "too_big":
        src = f"np.full({lead!r}, {c})"
    elif token == "negative":
        src = f"np.full({lead!r}, -1)"
    elif token == "huge":
        src = f"np.full({lead!r}, 2**62)"
    elif token == "wrong_shape":
        src = f"np.zeros({lead + (2,)!r}, dtype=np.int64)"
    elif token == "float":
        return [x, like(x, shape=lead, dtype="float32")], {}
    elif token == "other_device":
        if ctx.other is None:
            raise Skip
        return [x, tensor(lead, "int64", device=ctx.other)], {}, {"must_work": False}
    else:
        raise KeyError(token)
    t = TensorArg(src, tdtype, x.device if isinstance(x, TensorArg) else "cpu", shape=lead)
    kw = {k: Lit(v) for k, v in p.items() if k != "targets"}
    return [x, t], kw


_CE_EXTRA = [{"targets": t} for t in ("int32", "ignored", "all_ignored", "too_big", "negative", "huge", "wrong_shape",
                                      "float", "other_device")] + \
    [{"targets": "valid", "reduction": r} for r in ("'sum'", "'none'", "'average'", "None")] + \
    [{"targets": "ignored", "ignore_index": i} for i in ("0", "-1", "2**63", "1.5")]
register(Op("pcp.cross_entropy", fn("pcp.cross_entropy"), _cross_entropy_ref, lambda k, kw: R.floating(k[0]),
            build=build_cross_entropy, dtypes=FLOAT_SET, cross=[{"targets": "valid"}], extra=_CE_EXTRA))

# ----------------------------------------------------------------------------------------------
# dropout


def _dropout_ref(x, p=0.5, training=True):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise Invalid("p must be in [0, 1]")
    if not training or p == 0:
        return np.array(x)
    x = R.as_float(x)
    if p == 1:
        return np.zeros_like(x)
    scaled = x / (1 - p)

    def ok(got):
        with np.errstate(invalid="ignore"):
            close = np.isclose(got, scaled, rtol=2e-2, atol=1e-6, equal_nan=True) | (got == 0)
        return bool(np.all(close))
    return R.Shape(x.shape, ok, f"0 or x / (1 - {p})")


# Not training, dropout is the identity: the input's own dtype.
register(Op("pcp.dropout", fn("pcp.dropout"), _dropout_ref,
            lambda k, kw: None if "training" in kw else R.floating(k[0]), dtypes=FLOAT_SET,
            cross=[{"p": "0.5"}],
            extra=[{"p": p} for p in ("0.0", "1.0", "-0.1", "1.5", "float('nan')", "2", "'a'", "None")]
            + [{"p": "0.5", "training": "False"}, {"p": "1.0", "training": "False"}]))

# ----------------------------------------------------------------------------------------------
# attention


def _attention(q, k, v, causal=False, scale=None):
    q, k, v = R.as_float(q), R.as_float(k), R.as_float(v)
    if any(not np.all(np.abs(t) < 1e4) for t in (q, k, v) if t.dtype.kind == "f"):
        raise Unspecified("infinite, NaN or huge inputs")
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise Invalid("attention needs (..., T, D)")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise Invalid("attention shapes")
    np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if scale is None:
        if q.shape[-1] == 0:
            raise Unspecified("default scale of D = 0")
        scale = 1 / math.sqrt(q.shape[-1])
    if k.shape[-2] == 0:
        raise Unspecified("attention over no keys")
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if causal:
        t, u = s.shape[-2:]
        if t != u:
            raise Unspecified("causal attention with T != S")
        s = np.where(np.tril(np.ones((t, u), bool)), s, -np.inf)
    return np.matmul(R.unwrap(R.softmax(s, -1)), v)


def _sdpa_ref(q, k, v, causal=False, scale=None, dropout_p=0.0):
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) or not 0 <= dropout_p <= 1:
        raise Invalid("dropout_p")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise Invalid("scale")
    out = _attention(q, k, v, causal, scale)
    if dropout_p:
        return R.Shape(out.shape)
    return R.Value(out, err_scale=4 * np.abs(out) + 1e-3)


def build_sdpa(x, p, ctx):
    s = shape_of(x)
    token = p.get("kv", "same")
    if token == "same":
        k, v = like(x), like(x, kind="unit")
    elif token == "longer_kv" and len(s) >= 2:
        k, v = like(x, shape=s[:-2] + (s[-2] + 2, s[-1])), like(x, shape=s[:-2] + (s[-2] + 2, 5))
    elif token == "bad_d" and len(s) >= 1:
        k, v = like(x, shape=s[:-1] + (s[-1] + 1,)), like(x)
    elif token == "bad_batch" and len(s) >= 2:
        k = like(x, shape=(4,) + s)
        v = like(x, shape=(5,) + s)
    elif token == "empty_kv" and len(s) >= 2:
        k, v = like(x, shape=s[:-2] + (0, s[-1])), like(x, shape=s[:-2] + (0, s[-1]))
    elif token == "other_device" and ctx.other:
        k, v = like(x, device=ctx.other), like(x, device=ctx.other)
        return [x, k, v], {}, {"must_work": False}
    else:
        raise Skip
    return [x, k, v], {n: Lit(val) for n, val in p.items() if n != "kv"}


_SDPA_EXTRA = [{"kv": t} for t in ("longer_kv", "bad_d", "bad_batch", "empty_kv", "other_device")] + \
    [{"kv": "same", "causal": "True"}, {"kv": "same", "scale": "0.0"}, {"kv": "same", "scale": "-1.0"},
     {"kv": "same", "scale": "float('nan')"}, {"kv": "same", "scale": "'a'"}, {"kv": "same", "dropout_p": "0.5"},
     {"kv": "same", "dropout_p": "1.0"}, {"kv": "same", "dropout_p": "-0.1"}, {"kv": "same", "dropout_p": "2.0"},
     {"kv": "longer_kv", "causal": "True"}]
register(Op("pcp.scaled_dot_product_attention", fn("pcp.scaled_dot_product_attention"), _sdpa_ref,
            lambda k, kw: R.floating(R.promote(R.promote(k[0], k[1]), k[2]) if len(k) >= 3 else k[0]), build=build_sdpa, dtypes=FLOAT_SET, cross=[{"kv": "same"}],
            extra=_SDPA_EXTRA, names=("scaled_dot_product_attention", "attention")))


def _qkv_ref(qkv, num_heads, causal=False, scale=None, dropout_p=0.0):
    x = np.asarray(qkv)
    h = num_heads
    if isinstance(h, bool) or not isinstance(h, int) or h <= 0:
        raise Invalid("num_heads")
    if x.ndim != 3 or x.shape[-1] % 3 or (x.shape[-1] // 3) % h:
        raise Invalid("qkv shape")
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) or not 0 <= dropout_p <= 1:
        raise Invalid("dropout_p")
    b, t, c3 = x.shape
    c = c3 // 3
    if c == 0:
        raise Unspecified("no channels")

    def heads(a):
        return a.reshape(b, t, h, c // h).transpose(0, 2, 1, 3)
    q, k, v = (heads(R.as_float(x[..., i * c:(i + 1) * c])) for i in range(3))
    out = _attention(q, k, v, causal, scale).transpose(0, 2, 1, 3).reshape(b, t, c)
    if dropout_p:
        return R.Shape(out.shape)
    return R.Value(out, err_scale=4 * np.abs(out) + 1e-3)


QKV_CLASSES = [Cls("qkv", (2, 3, 12), kind="unit"), Cls("qkv_one", (1, 1, 6), kind="unit"),
               Cls("qkv_empty_batch", (0, 3, 12)), Cls("qkv_empty_time", (2, 0, 12)), Cls("qkv_empty_c", (2, 3, 0)),
               Cls("qkv_not3", (2, 3, 10)), Cls("qkv_2d", (3, 12)), Cls("qkv_transposed", (2, 3, 12), kind="unit",
                                                                       view=((3, 2, 12), "{}.transpose(1, 0, 2)",
                                                                             "{}.transpose(1, 0, 2)")),
               Cls("qkv_special", (1, 2, 6), kind="special"), Cls("none", literal=Lit("None"), expect="error")]
register(Op("pcp.qkv_attention", fn("pcp.qkv_attention"), _qkv_ref, lambda k, kw: R.floating(k[0]),
            dtypes=FLOAT_SET, classes=QKV_CLASSES, grid_dtypes=tuple(R.FLOATS),
            cross=[{"num_heads": "2"}, {"num_heads": "1", "causal": "True"}],
            extra=[{"num_heads": h} for h in ("0", "-1", "3", "5", "2**40", "2**70", "1.5", "None")]
            + [{"num_heads": "2", "dropout_p": d} for d in ("0.5", "1.0", "-1.0")]
            + [{"num_heads": "2", "scale": s} for s in ("0.0", "float('inf')")],
            names=("qkv_attention", "attention")))
