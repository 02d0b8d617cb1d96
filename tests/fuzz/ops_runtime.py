"""Runtime functions (devices, memory, threads, dtypes), pcp.nn layers and losses, pcp.optim
optimizers and clipping, and the fused optimizer kernels they call (pcp._core.*_step)."""
import dataclasses

import numpy as np

from . import reference as R
from .cases import Op, Skip, fn, register
from .inputs import TENSOR_CLASSES, Lit, TensorArg, like, shape_of, tensor
from .ops_create import check_device
from .ops_elementwise import _gelu_ref
from .ops_index import ONE_HOT_CLASSES
from .ops_nn import _cross_entropy_ref, _dropout_ref, _layer_norm_ref, build_cross_entropy
from .reference import FLOAT_SET, Invalid, Unspecified

DEVICES = ["None", "'cpu'", "'gpu'", "'gpu:0'", "'vulkan:0'", "'gpu:7'", "'vulkan:-1'", "'vulkan:99999999999999999999'",
           "'metal:0'", "'cuda'", "''", "'CPU'", "'cpu:0'", "5", "object()", "b'cpu'"]


def _device_ref(allow_none=True, result=None):
    def ref(dev=None):
        if dev is None and not allow_none:
            raise Invalid("a device name is required")
        if dev is not None and not isinstance(dev, str):
            raise Invalid("device names are strings")
        if isinstance(dev, str):
            if dev in ("gpu:7", "vulkan:-1", "vulkan:99999999999999999999", "metal:0", "", "CPU", "cpu:0"):
                raise Unspecified(dev) if dev in ("CPU", "cpu:0", "metal:0") else Invalid(f"no device {dev!r}")
            check_device(dev)
        return R.Check(result or (lambda r: True), "a result")
    return ref


def _device_cases():
    return [(f"device={d}", [Lit(d)] if d != "None" else [], {}, None) for d in DEVICES]


_RT = dict(classes=[], cross=[], fixed=_device_cases())
register(
    Op("pcp.devices", fn("pcp.devices"), lambda: R.Check(lambda r: isinstance(r, list) and r[0] == "cpu",
                                                          "a list starting with 'cpu'"), None,
       classes=[], cross=[], fixed=[("-", [], {}, None)]),
    Op("pcp.device", fn("pcp.device"), _device_ref(result=lambda r: isinstance(r, str)), None, **_RT),
    Op("pcp.set_default_device", fn("pcp.set_default_device"), _device_ref(False), None, names=("set_default_device", "device"), **_RT),
    Op("pcp.get_default_device", fn("pcp.get_default_device"), lambda: R.Check(lambda r: isinstance(r, str), "a str"),
       None, classes=[], cross=[], fixed=[("-", [], {}, None)]),
    Op("pcp.synchronize", fn("pcp.synchronize"), _device_ref(), None, names=("synchronize", "device"), **_RT),
    Op("pcp.memory_stats", fn("pcp.memory_stats"), _device_ref(result=lambda r: isinstance(r, dict)), None,
       names=("memory_stats", "device"), **_RT),
    Op("pcp.reset_peak_memory_stats", fn("pcp.reset_peak_memory_stats"), _device_ref(), None,
       names=("reset_peak_memory_stats", "device"), **_RT),
    Op("pcp.clear_cache", fn("pcp.clear_cache"), _device_ref(), None, names=("clear_cache", "device"), **_RT),
    Op("pcp.gpu_info", fn("pcp.gpu_info"), lambda dev="gpu": R.Expect.ANY if dev in ("gpu", "cpu", "vulkan:0", "gpu:0")
       else _device_ref(False)(dev), None, names=("gpu_info", "device", "gpu"), **_RT),
    Op("pcp.cpu_features", fn("pcp.cpu_features"), lambda: R.Check(lambda r: isinstance(r, dict), "a dict"), None,
       classes=[], cross=[], fixed=[("-", [], {}, None)]),
    Op("pcp.get_num_threads", fn("pcp.get_num_threads"), lambda: R.Check(lambda r: isinstance(r, int) and r >= 1,
                                                                          "a positive int"), None,
       classes=[], cross=[], fixed=[("-", [], {}, None)]),
)


def _threads_ref(n):
    if isinstance(n, bool) or not isinstance(n, int):
        raise Invalid("an int")
    if not -2**31 <= n < 2**31:
        raise Invalid("out of range")
    return R.Expect.ANY  # more threads than the machine has may be refused or capped


register(Op("pcp.set_num_threads", fn("pcp.set_num_threads"), _threads_ref, None, classes=[], cross=[],
            fixed=[(f"n={n}", [Lit(n)], {}, None) for n in ("1", "2", "0", "-1", "10**4", "2**31 - 1", "2**40",
                                                             "2**70", "1.5", "None")],
            names=("set_num_threads", "threads")))


def _precision_ref(p):
    if not isinstance(p, str):
        raise Invalid("a str")
    if p not in ("highest", "high", "medium"):
        raise Invalid("no such precision")
    return R.Expect.ANY


# Each case sets the precision, then puts the default back for the cases after it.
register(Op("pcp.set_float32_matmul_precision",
            lambda a, kw: ("", f"(pcp.set_float32_matmul_precision({a[0]}), "
                               "pcp.set_float32_matmul_precision('highest'))[0]"),
            _precision_ref, None, classes=[], cross=[],
            fixed=[(f"p={v}", [Lit(v)], {}, None) for v in ("'highest'", "'high'", "'medium'", "'low'", "''", "None",
                                                             "3", "b'high'")],
            names=("set_float32_matmul_precision", "precision")))
register(Op("pcp.get_float32_matmul_precision", fn("pcp.get_float32_matmul_precision"),
            lambda: R.Check(lambda r: r in ("highest", "high"), "'highest' or 'high'"), None,
            classes=[], cross=[], fixed=[("-", [], {}, None)]))


def _to_device_ref(x, dev):
    _device_ref(False)(dev)
    return np.array(x)


register(Op("pcp.to_device", fn("pcp.to_device"), _to_device_ref, lambda k, kw: R.same(k[0]),
            build=lambda x, p, ctx: ([x, Lit(p["dev"])], {}),
            cross=[{"dev": "'cpu'"}, {"dev": "'gpu'"}], extra=[{"dev": d} for d in DEVICES],
            names=("to_device", "device")))


def _dtype_value_ref(use):
    def ref(v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise Invalid("an int")
        if not 0 <= v < 7:
            if use in ("ctor", "name"):
                raise Unspecified("pybind11 enums accept any int")
            raise Invalid("no such dtype")
        return R.Expect.ANY
    return ref


# A DType made from an out-of-range int must not reach the kernels.
_DTYPE_USES = {"ctor": "pcp.DType({})", "zeros": "pcp.zeros((2,), dtype=pcp.DType({}))",
               "astype": "pcp.ones((2,)).astype(pcp.DType({}))", "name": "pcp.DType({}).name"}
for _use, _tmpl in _DTYPE_USES.items():
    register(Op(f"pcp.DType#{_use}", lambda a, kw, t=_tmpl: ("", t.format(a[0])), _dtype_value_ref(_use), None,
                classes=[], cross=[], fixed=[(f"value={v}", [Lit(v)], {}, None) for v in
                                              ("0", "6", "7", "-1", "255", "2**31", "2**70", "1.5", "None")],
                names=("DType", "dtype"), covers=("pcp.DType",)))

# ----------------------------------------------------------------------------------------------
# pcp.nn

_W = "pcp.tensor(np.linspace(-1, 1, {i} * {o}).reshape({o}, {i}), dtype=pcp.float32)"
_B = "pcp.tensor(np.linspace(0, 1, {o}), dtype=pcp.float32)"


def _linear_call(a, kw):
    i, o = a[1], a[2]
    bias = kw.get("bias", "True")
    stmt = f"m = pcp.nn.Linear({i}, {o}, bias={bias}); m.weight = {_W.format(i=i, o=o)}"
    if bias == "True":
        stmt += f"; m.bias = {_B.format(o=o)}"
    return stmt, f"m({a[0]})"


def _linear_ref(x, i, o, bias=True):
    for v in (i, o):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > 2**20:
            raise Invalid("features must be small non-negative ints")
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[-1] != i:
        raise Invalid("x's last axis is not in_features")
    w = R.round_to(np.linspace(-1, 1, i * o).reshape(o, i), "float32")
    y = R.as_float(x) @ w.T
    if bias:
        y = y + R.round_to(np.linspace(0, 1, o), "float32")
    return R.Value(y, err_scale=np.abs(R.as_float(x)) @ np.abs(w.T) + 1e-6)


def build_linear(x, p, ctx):
    s = shape_of(x)
    i = str(s[-1]) if s else "3"
    io = p.get("io", "same")
    i, o = {"same": (i, "4"), "zero_out": (i, "0"), "mismatch": (str(int(i) + 1), "4"), "negative": ("-1", "4"),
            "huge": ("2**40", "2**40"), "float": ("3.5", "4"), "string": ("'a'", "4")}[io]
    kw = {"bias": Lit(p["bias"])} if "bias" in p else {}
    return [x, Lit(i), Lit(o)], kw


def _linear_rule(k, kw):
    r = R.promote(k[0], "float32")
    return r if r in FLOAT_SET else None


register(Op("pcp.nn.Linear", _linear_call, _linear_ref, _linear_rule, build=build_linear, dtypes=FLOAT_SET,
            cross=[{"io": "same"}], extra=[{"io": v} for v in ("zero_out", "mismatch", "negative", "huge", "float",
                                                                "string")] + [{"io": "same", "bias": "False"}],
            names=("Linear", "matmul", "in_features")))


def _embedding_call(a, kw):
    n, d = a[1], a[2]
    return (f"m = pcp.nn.Embedding({n}, {d}); m.weight = pcp.tensor(np.arange({n} * {d}).reshape({n}, {d}) / 4, "
            f"dtype=pcp.float32)"), f"m({a[0]})"


def _embedding_ref(idx, n, d):
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 or v > 2**20 for v in (n, d)):
        raise Invalid("sizes")
    a = np.asarray(idx)
    if a.dtype.kind not in "iu":
        raise Invalid("indices must be integers")
    if a.size and (a.min() < -n or a.max() >= n):
        raise Invalid("index out of range")
    return (np.arange(n * d).reshape(n, d) / 4)[a]


register(Op("pcp.nn.Embedding", _embedding_call, _embedding_ref, lambda k, kw: "float32",
            build=lambda x, p, ctx: ([x, Lit(p.get("n", "6")), Lit(p.get("d", "2"))], {}),
            classes=ONE_HOT_CLASSES, dtypes=frozenset({"int32", "int64"}), cross=[{}],
            extra=[{"n": "3"}, {"n": "0"}, {"n": "-1"}, {"n": "2**40", "d": "2**40"}, {"d": "0"}],
            names=("Embedding", "embedding")))


def _layer_norm_module_ref(x, n, eps=1e-5):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise Invalid("normalized_shape")
    if np.ndim(x) == 0 or np.shape(x)[-1] != n:
        raise Invalid("last axis")
    return _layer_norm_ref(x, np.ones(n), np.zeros(n), eps)


register(Op("pcp.nn.LayerNorm", lambda a, kw: (f"m = pcp.nn.LayerNorm({a[1]})", f"m({a[0]})"),
            _layer_norm_module_ref, lambda k, kw: R.promote(R.floating(k[0]), "float32"),
            build=lambda x, p, ctx: ([x, Lit(p.get("n") or str(shape_of(x)[-1] if shape_of(x) else 3))], {}),
            dtypes=FLOAT_SET, cross=[{}], extra=[{"n": n} for n in ("1", "0", "-1", "2**40", "1.5")],
            names=("LayerNorm", "layer_norm", "ones", "zeros")))


def _dropout_module_call(a, kw):
    mode = "; m.eval()" if kw.get("eval") == "True" else ""
    return f"m = pcp.nn.Dropout({a[1]}){mode}", f"m({a[0]})"


def _dropout_module_ref(x, p, eval=False):
    return _dropout_ref(x, p, not eval)


# In eval mode Dropout is the identity: the input's own dtype (a uint8 array stays an int64 tensor).
register(Op("pcp.nn.Dropout", _dropout_module_call, _dropout_module_ref,
            lambda k, kw: None if "eval" in kw else R.floating(k[0]),
            build=lambda x, p, ctx: ([x, Lit(p["p"])], {"eval": Lit(p["eval"])} if "eval" in p else {}),
            dtypes=FLOAT_SET, cross=[{"p": "0.5"}, {"p": "0.5", "eval": "True"}],
            extra=[{"p": v} for v in ("0.0", "1.0", "-0.1", "1.5", "float('nan')", "'a'")],
            names=("Dropout", "dropout")))

register(
    Op("pcp.nn.GELU", lambda a, kw: (f"m = pcp.nn.GELU({a[1]})", f"m({a[0]})"), _gelu_ref,
       lambda k, kw: R.floating(k[0]), build=lambda x, p, ctx: ([x, Lit(p["approximate"])], {}),
       dtypes=frozenset(R.NUMERIC), cross=[{"approximate": "'none'"}, {"approximate": "'tanh'"}],
       extra=[{"approximate": v} for v in ("'fast'", "None")], names=("GELU", "gelu")),
    Op("pcp.nn.Sequential", lambda a, kw: ("m = pcp.nn.Sequential(pcp.nn.GELU(), pcp.nn.Dropout(0.0))", f"m({a[0]})"),
       _gelu_ref, lambda k, kw: R.floating(k[0]), dtypes=frozenset(R.NUMERIC), grid_dtypes=("float32", "float64"),
       names=("Sequential", "gelu", "dropout")),
    Op("pcp.nn.Sequential#empty", lambda a, kw: ("", f"pcp.nn.Sequential()({a[0]})"), lambda x: np.array(x),
       lambda k, kw: R.same(k[0]), grid_dtypes=("float32",), names=("Sequential",), classes=TENSOR_CLASSES),
    Op("pcp.nn.ModuleList", lambda a, kw: ("m = pcp.nn.ModuleList([pcp.nn.GELU()])", f"m[0]({a[0]})"), _gelu_ref,
       lambda k, kw: R.floating(k[0]), dtypes=frozenset(R.NUMERIC), grid_dtypes=("float32",),
       names=("ModuleList", "gelu")),
    Op("pcp.nn.Module", lambda a, kw: ("", f"pcp.nn.Module()({a[0]})"), lambda x: R.Expect.ERROR, None,
       grid_dtypes=("float32",), names=("Module", "forward")),
    Op("pcp.nn.cross_entropy", fn("pcp.nn.cross_entropy"), _cross_entropy_ref, lambda k, kw: R.floating(k[0]),
       build=build_cross_entropy, dtypes=FLOAT_SET, cross=[{"targets": "valid"}],
       extra=[{"targets": t} for t in ("too_big", "all_ignored", "wrong_shape")], names=("cross_entropy",)),
)


register(Op("pcp.nn.Module#load_state_dict", lambda a, kw: ("m = pcp.nn.Linear(3, 2)", f"m.load_state_dict({a[0]})"),
            lambda sd: R.Expect.ERROR, None, classes=[], cross=[], errors=(KeyError,),
            fixed=[(n, [Lit(src)], {}, None) for n, src in (
                ("weight_shape", "{'weight': pcp.zeros((4, 4)), 'bias': pcp.zeros((2,))}"),
                ("missing_bias", "{'weight': pcp.zeros((2, 3))}"),
                ("weight_not_tensor", "{'weight': 'abc', 'bias': pcp.zeros((2,))}"),
                ("not_a_dict", "5"))],
            names=("load_state_dict", "weight", "bias", "state"), covers=("pcp.nn.Module",)))


def _mse_ref(a, b, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise Invalid("reduction")
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "b" or b.dtype.kind == "b":
        raise Unspecified("bool inputs")
    if not (a.dtype.kind in "iu" and b.dtype.kind in "iu"):  # ints square in their own type, floats in float
        a, b = R.as_float(a), R.as_float(b)
        if max(np.max(np.abs(v[np.isfinite(v)]), initial=0) for v in (a, b)) > 1e18:
            raise Unspecified("squares overflow float32")
    try:
        if np.broadcast_shapes(a.shape, b.shape) != a.shape:
            raise Invalid("target does not broadcast to the input")
    except ValueError:
        raise Invalid("target does not broadcast to the input")
    d = (a - b) * (a - b)
    if reduction == "none":
        return d
    return np.sum(d) if reduction == "sum" else np.mean(d) if d.size else np.float64(np.nan)


def build_mse(x, p, ctx):
    t = p.get("target", "same")
    s = shape_of(x)
    target = {"same": lambda: like(x, kind="distinct2"), "row": lambda: like(x, shape=s[-1:]),
              "bad": lambda: like(x, shape=s + (2,)), "scalar": lambda: Lit("1.5", "weak_float", ())}[t]()
    return [x, target], {"reduction": Lit(p["reduction"])} if "reduction" in p else {}


register(Op("pcp.nn.mse_loss", fn("pcp.nn.mse_loss"), _mse_ref, lambda k, kw: None, build=build_mse,
            dtypes=FLOAT_SET, cross=[{"target": "same"}],
            extra=[{"target": t} for t in ("row", "bad", "scalar")]
            + [{"target": "same", "reduction": r} for r in ("'sum'", "'none'", "'avg'")],
            names=("mse_loss", "broadcast_to", "sub")))

# ----------------------------------------------------------------------------------------------
# pcp.optim


def _param(x):
    if not isinstance(x, TensorArg):
        raise Skip
    return dataclasses.replace(x, grad=True)


def build_step(x, p, ctx):
    g = p.get("grad", "same")
    s = shape_of(x)
    grads = {"same": lambda: like(x, dtype="float32", kind="distinct2"), "float64": lambda: like(x, dtype="float64"),
             "bad": lambda: like(x, dtype="float32", shape=s + (2,)), "none": lambda: Lit("None"),
             "special": lambda: tensor(s, "float32", "special", ctx.device),
             "other_device": lambda: like(x, dtype="float32", device=ctx.other) if ctx.other else None}[g]()
    if grads is None:
        raise Skip
    kw = {k: Lit(v) for k, v in p.items() if k != "grad"}
    # The fused kernels take contiguous parameters; a view as a parameter may be refused.
    return [_param(x), grads], kw, {"must_work": g != "other_device" and not x.view}


def _opt_call(cls):
    def call(a, kw):
        hyper = ", ".join(f"{k}={v}" for k, v in kw.items())
        return f"x0.grad = {a[1]}; opt = pcp.optim.{cls}([x0]{', ' + hyper if hyper else ''}); opt.step()", "x0"
    return call


def _opt_ref(kind):
    def ref(x, g, lr=None, **hyper):
        if getattr(x, "pdt", None) != "float32":
            raise Invalid("parameters must be float32")
        lr = {"SGD": 1e-2}.get(kind, 1e-3) if lr is None else lr
        if not isinstance(lr, (int, float)) or not 0 <= lr or any(  # NaN refused, as PyTorch does
                isinstance(v, (int, float)) and not isinstance(v, bool) and not 0 <= v for v in hyper.values()):
            raise Invalid("invalid hyperparameters")
        if "betas" in hyper and not all(0 <= b < 1 for b in hyper["betas"]):
            raise Invalid("betas")
        p = np.array(x, dtype=np.float64)
        if g is None:
            return p  # nothing to update
        if not x.flags.writeable:
            raise Invalid("a parameter that is a broadcast view cannot be updated in place")
        if np.shape(g) != p.shape:
            raise Invalid("gradient of another shape")
        g = R.round_to(np.asarray(g, dtype=np.float64), "float32")
        if kind == "SGD":  # first step: the momentum buffer is the gradient itself
            return p - lr * g * (1 + hyper.get("momentum", 0.0) if hyper.get("nesterov") else 1)
        eps = hyper.get("eps", 1e-8)
        wd = hyper.get("weight_decay", 1e-2 if kind == "AdamW" else 0.0)
        if kind == "Adam" and wd:  # no 0 * inf for an infinite parameter, as PyTorch
            g = g + wd * p
        else:
            p = p * (1 - lr * wd)
        with np.errstate(all="ignore"):
            return R.Value(p - lr * g / (np.abs(g) + eps), err_scale=np.abs(p) * 1e-3)
    return ref


_STEP_EXTRA = [{"grad": g} for g in ("float64", "bad", "none", "special", "other_device")]
for _cls, _extra in (("SGD", [{"lr": "0.1", "momentum": "0.9"}, {"lr": "-1.0"}, {"lr": "0.1", "momentum": "0.9",
                                                                                  "nesterov": "True"}]),
                     ("Adam", [{"lr": "0.1", "betas": "(1.0, 0.999)"}, {"lr": "0.1", "eps": "-1.0"},
                               {"lr": "0.1", "weight_decay": "0.1"}]),
                     ("AdamW", [{"lr": "0.1", "weight_decay": "0.0"}, {"lr": "float('nan')"}])):
    register(Op(f"pcp.optim.{_cls}", _opt_call(_cls), _opt_ref(_cls), lambda k, kw: "float32", build=build_step,
                classes=TENSOR_CLASSES, cross=[{"grad": "same", "lr": "0.1"}],
                extra=[dict(e, lr=e.get("lr", "0.1")) for e in _STEP_EXTRA] + [dict({"grad": "same"}, **e)
                                                                                 for e in _extra],
                dtypes=frozenset({"float32"}), names=(_cls, "grad", "param", "step", "astype", "contiguous")))


def _clip_ref(x, g, max_norm=1.0):
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) or not max_norm > 0:
        raise Invalid("max_norm must be positive")
    if g is None:
        return 0.0
    if np.shape(g) != np.shape(x):
        raise Invalid("gradient of another shape")
    total = float(np.sqrt(np.sum(R.round_to(np.asarray(g, dtype=np.float64), "float32") ** 2)))

    def close(r):
        r = float(r.item()) if hasattr(r, "item") else r
        return isinstance(r, float) and (r == total or abs(r - total) <= 1e-5 * max(total, 1e-30)
                                         or (np.isnan(r) and np.isnan(total)))
    return R.Check(close, f"the gradient norm {total!r}")


def _clip_call(a, kw):
    return f"x0.grad = {a[1]}", f"pcp.optim.clip_grad_norm([x0], {kw.get('max_norm', '1.0')})"


def _clip_scaled_call(a, kw):
    return f"x0.grad = {a[1]}; pcp.optim.clip_grad_norm([x0], {kw.get('max_norm', '1.0')})", "x0.grad"


def _clip_scaled_ref(x, g, max_norm=1.0):
    _clip_ref(x, g, max_norm)
    g = R.round_to(np.asarray(g, dtype=np.float64), "float32")
    total = np.sqrt(np.sum(g ** 2))
    scale = max_norm / (total + 1e-6)
    return g * scale if scale < 1 else g


_CLIP_EXTRA = [{"grad": g} for g in ("float64", "bad", "none", "special")] + \
    [{"grad": "same", "max_norm": m} for m in ("0.0", "-1.0", "float('nan')", "float('inf')", "1e-30", "'a'")]
register(
    Op("pcp.optim.clip_grad_norm", _clip_call, _clip_ref, None, build=build_step, classes=TENSOR_CLASSES,
       cross=[{"grad": "same"}], extra=_CLIP_EXTRA, dtypes=frozenset({"float32"}),
       names=("clip_grad_norm", "grad", "astype", "square")),
    Op("pcp.optim.clip_grad_norm#scaled", _clip_scaled_call, _clip_scaled_ref, None, build=build_step,
       classes=TENSOR_CLASSES, cross=[{"grad": "same", "max_norm": "0.5"}], dtypes=frozenset({"float32"}),
       names=("clip_grad_norm", "grad", "mul")),
)

# The fused kernels behind the optimizers take parallel lists; their lengths, shapes and dtypes
# must be checked before any pointer is read.
_P = "pcp.ones((3,))"
_CORE = {
    "sgd_lists_differ": f"pcp._core.sgd_step([{_P}], [], [], False, 0.1, 0.0, 0.0, 0.0, False)",
    "sgd_grad_shape": f"pcp._core.sgd_step([{_P}], [pcp.ones((2,))], [], False, 0.1, 0.0, 0.0, 0.0, False)",
    "sgd_momentum_missing": f"pcp._core.sgd_step([{_P}], [{_P}], [], True, 0.1, 0.9, 0.0, 0.0, False)",
    "sgd_int_param": f"pcp._core.sgd_step([pcp.ones((3,), dtype=pcp.int32)], [{_P}], [], False, 0.1, 0.0, 0.0, 0.0, "
                     f"False)",
    "sgd_noncontiguous": "pcp._core.sgd_step([pcp.ones((3, 2)).T], [pcp.ones((2, 3))], [], False, 0.1, 0.0, 0.0, "
                         "0.0, False)",
    "adam_lists_differ": f"pcp._core.adam_step([{_P}], [{_P}], [{_P}], [], 1, 0.1, 0.9, 0.999, 1e-8, 0.0, False)",
    "adam_state_shape": f"pcp._core.adam_step([{_P}], [{_P}], [pcp.ones((1,))], [pcp.ones((1,))], 1, 0.1, 0.9, "
                        f"0.999, 1e-8, 0.0, False)",
    "adam_step_zero": f"pcp._core.adam_step([{_P}], [{_P}], [{_P}], [{_P}], 0, 0.1, 0.9, 0.999, 1e-8, 0.0, False)",
    "adam_float64": f"pcp._core.adam_step([pcp.ones((3,), dtype=pcp.float64)], [{_P}], [{_P}], [{_P}], 1, 0.1, 0.9, "
                    f"0.999, 1e-8, 0.0, False)",
    "clip_float64": "pcp._core.clip_grad_norm([pcp.ones((3,), dtype=pcp.float64)], 1.0)",
    "clip_noncontiguous": "pcp._core.clip_grad_norm([pcp.ones((3, 2)).T], 1.0)",
    "clip_empty_list": "pcp._core.clip_grad_norm([], 1.0)",
    # One dispatch for a whole list on a GPU (a table of buffer addresses): empty lists, empty
    # tensors among full ones, mixed dtypes (an error) and devices (each device its own step).
    "adam_empty_lists": "pcp._core.adam_step([], [], [], [], 1, 0.1, 0.9, 0.999, 1e-8, 0.0, False)",
    "adam_empty_tensors": "pcp._core.adam_step(*[[pcp.ones((0,)), pcp.ones((5000,))] for _ in range(4)], 1, 0.1, 0.9, "
                          "0.999, 1e-8, 0.1, False)",
    "adam_mixed_dtypes": f"pcp._core.adam_step(*[[{_P}, pcp.ones((3,), dtype=pcp.float16)] for _ in range(4)], 1, 0.1, "
                         f"0.9, 0.999, 1e-8, 0.0, False)",
    "adam_mixed_devices": f"pcp._core.adam_step(*[[{_P}, pcp.ones((3,), device='cpu')] for _ in range(4)], 1, 0.1, 0.9, "
                          f"0.999, 1e-8, 0.0, False)",
    "adam_grad_on_cpu": f"pcp._core.adam_step([{_P}], [pcp.ones((3,), device='cpu')], [{_P}], [{_P}], 1, 0.1, 0.9, "
                        f"0.999, 1e-8, 0.0, False)",
    "sgd_empty_tensors": "pcp._core.sgd_step([pcp.ones((0,)), pcp.ones((4097,))], [pcp.ones((0,)), pcp.ones((4097,))], "
                         "[], False, 0.1, 0.0, 0.0, 0.0, False)",
    "sgd_mixed_dtypes": f"pcp._core.sgd_step([{_P}, pcp.ones((3,), dtype=pcp.bfloat16)], [{_P}, {_P}], [], False, 0.1, "
                        f"0.0, 0.0, 0.0, False)",
    "clip_empty_tensors": "pcp._core.clip_grad_norm([pcp.ones((0,)), pcp.ones((0,))], 1.0)",
    "clip_mixed_devices": f"pcp._core.clip_grad_norm([{_P}, pcp.ones((3,), device='cpu')], 1.0)",
}
# Whatever the device, these run: no error to expect (the rest must raise).
_RUN = ("adam_step_zero", "clip_empty_list", "sgd_noncontiguous", "clip_noncontiguous", "adam_empty_lists",
        "adam_empty_tensors", "adam_mixed_devices", "adam_grad_on_cpu", "sgd_empty_tensors", "clip_empty_tensors",
        "clip_mixed_devices")
for _name, _code in _CORE.items():
    _fn = _code.split("(")[0]
    register(Op(f"{_fn}#{_name}", lambda a, kw, c=_code: ("", c),
                (lambda: R.Expect.ANY) if _name in _RUN else (lambda: R.Expect.ERROR),
                None, classes=[], cross=[], fixed=[("-", [], {}, None)],
                names=(_fn.split(".")[-1], "sgd", "adam", "clip_grad_norm"), covers=()))
