"""Autograd: every differentiable op's gradient against central finite differences of its NumPy
reference (entries '<op>#grad'), nested pcp.grad against analytic second derivatives
('#grad2'), saved tensors modified in place before backward (must raise), backward, the grad and
requires_grad setters, pcp.grad / value_and_grad / no_grad / enable_grad / set_grad_enabled."""
import dataclasses

import numpy as np

from . import reference as R
from .cases import OPS, Op, Skip, method, register
from .inputs import LITERAL_CLASSES, TENSOR_CLASSES, Cls, Lit, TensorArg, like, shape_of, tensor
from .ops_elementwise import UNARY
from .reference import FLOAT_SET, FLOATS, Invalid, Unspecified

AUTOGRAD_NAMES = ("backward", "grad", "modified", "in-place", "inplace", "version", "index_assign", "saved",
                  "requires_grad")


def grad_classes(kind):
    """Smooth inputs (no ties, no zeros) in several shapes and views."""
    t = ((3, 2), "{}.T", "{}.T")
    b = ((1, 3), "{}.broadcast_to((2, 3))", "np.broadcast_to({}, (2, 3))")
    r = ((2, 3), "{}[::-1, ::-1]", "{}[::-1, ::-1]")
    return [Cls("grad", (2, 3), kind=kind), Cls("grad_rank3", (2, 3, 4), kind=kind), Cls("grad_rank0", (), kind=kind),
            Cls("grad_vector", (5,), kind=kind), Cls("grad_transposed", view=t, kind=kind),
            Cls("grad_broadcast", view=b, kind=kind), Cls("grad_reversed", view=r, kind=kind),
            Cls("grad_empty", (0, 3), kind=kind)]


def _float_leaves(v, out):
    if isinstance(v, (list, tuple)):
        return type(v)(_float_leaves(i, out) for i in v)
    if isinstance(v, np.ndarray) and getattr(v, "pdt", None) in FLOAT_SET:
        c = np.array(v, dtype=np.float64)  # writable, independent of views and broadcasting
        out.append(c)
        return c
    return v


def finite_differences(ref):
    """Reference gradient of sum(y * (y + 1)), y = ref(...), with respect to every float
    tensor argument in the order cases.call_source differentiates them, computed in float64;
    a float64 case on the CPU must match it to 1e-5, one computed in float32 to 3e-3."""
    def grad(*args, **kwargs):
        leaves = []
        float32 = any(getattr(v, "pdt", None) == "float32" for v in list(args) + list(kwargs.values()))
        args = _float_leaves(list(args), leaves)
        kwargs = {k: _float_leaves(v, leaves) for k, v in kwargs.items()}

        def loss():
            out = ref(*args, **kwargs)
            if isinstance(out, (R.Shape, R.Check)):
                raise Unspecified("no values to differentiate")
            y = np.asarray(out.value if isinstance(out, R.Value) else out, dtype=np.float64)
            return float(np.sum(y * (y + 1)))

        loss()  # an invalid input raises here, before any perturbation
        grads = []
        for a in leaves:
            g = np.zeros_like(a)
            for i in np.ndindex(a.shape):
                old = a[i]
                h = 1e-6 * max(1.0, abs(old))
                a[i] = old + h
                up = loss()
                a[i] = old - h
                down = loss()
                a[i] = old
                g[i] = (up - down) / (2 * h)
            grads.append(g)
        tol = (1e-5, 1e-6) if R.DEVICE == "cpu" and not float32 else (3e-3, 3e-3)
        return R.Value(tuple(grads), tol=tol)
    return grad


def grad_variant(name, kind="distinct", cross=None):
    """'<name>#grad': in float64, and in float32, where the fused float32 kernels of backward
    (layer norm's, attention's, the tanh GELU's) run."""
    op = OPS[name]
    return register(Op(f"{name}#grad", op.call, finite_differences(op.ref), None, build=op.build,
                       cross=cross or op.cross[:1], classes=grad_classes(kind), grid_dtypes=("float64", "float32"),
                       dtypes=FLOAT_SET, names=op.names + ("grad", "backward"), covers=op.covers, check="grad"))


for _name, (_ref, _rule, _dt, _dom, _) in UNARY.items():
    if _dom:
        grad_variant(f"pcp.{_name}", "positive" if _dom == "positive" else "distinct")
for _name in ("add", "sub", "mul", "maximum", "minimum"):
    grad_variant(f"pcp.{_name}", cross=[{"other": "same"}, {"other": "0d"}])
for _name in ("div", "pow"):
    grad_variant(f"pcp.{_name}", "positive", cross=[{"other": "same"}, {"other": "0d"}])
for _name in ("sum", "mean", "max", "min", "var", "logsumexp"):
    grad_variant(f"pcp.{_name}", cross=[{}, {"axis": "-1"}, {"axis": "0"}])
for _name in ("softmax", "log_softmax"):
    grad_variant(f"pcp.{_name}", cross=[{}, {"axis": "0"}])
grad_variant("pcp.layer_norm", cross=[{"affine": "both"}, {"affine": "none"}])
grad_variant("pcp.cross_entropy", cross=[{"targets": "valid"}, {"targets": "ignored", "reduction": "'sum'"}])
grad_variant("pcp.matmul", cross=[{"b": "matrix"}, {"b": "vector"}])
grad_variant("pcp.scaled_dot_product_attention", cross=[{"kv": "same"}, {"kv": "same", "causal": "True"}])
grad_variant("pcp.where")
grad_variant("pcp.gelu#approximate", cross=[{"approximate": "'tanh'"}, {"approximate": "'none'"}])
grad_variant("pcp.cumsum", cross=[{"axis": "-1"}])
grad_variant("pcp.cumprod", "positive", cross=[{"axis": "0"}])
grad_variant("pcp.clip", cross=[{"min": "-1", "max": "1"}])
grad_variant("pcp.take", cross=[{"idx": "valid"}, {"idx": "2d", "axis": "0"}])
grad_variant("pcp.embedding", cross=[{"idx": "2d"}])
grad_variant("Tensor.__getitem__", cross=[{"key": "slice(None, None, -1)"}, {"key": "t_valid"}, {"key": "x0 > 0"}])
for _name, _cross in (("pcp.reshape", [{"shape": "minus1"}]), ("pcp.transpose", [{"axes": "default"}]),
                      ("pcp.permute", [{"axes": "reverse"}]), ("pcp.swapaxes", [{"a": "0", "b": "-1"}]),
                      ("pcp.unsqueeze", [{"axis": "0"}]), ("pcp.squeeze", [{}]), ("pcp.flatten", [{}]),
                      ("pcp.broadcast_to", [{"shape": "lead"}]), ("pcp.concatenate", [{"seq": "pair"}]),
                      ("pcp.stack", [{"seq": "pair", "axis": "-1"}]), ("pcp.tril", [{}]), ("pcp.triu", [{"k": "1"}]),
                      ("pcp.sum_to", [{"shape": "last"}]), ("pcp.contiguous", [{}]), ("pcp.copy", [{}]),
                      ("pcp.dropout", [{"p": "0.0"}])):
    grad_variant(_name, cross=_cross)
grad_variant("pcp.qkv_attention", cross=[{"num_heads": "2"}, {"num_heads": "1", "causal": "True"}])
OPS["pcp.qkv_attention#grad"].classes = [Cls("grad_qkv", (1, 3, 6), kind="distinct"),
                                         Cls("grad_qkv_batch", (2, 2, 12), kind="distinct")]


# ----------------------------------------------------------------------------------------------
# second derivatives through nested pcp.grad


def _grad2_call(name):
    return lambda a, kw: ("", f"pcp.grad(lambda x: pcp.grad(lambda y: pcp.{name}(y).sum())(x).sum())({a[0]})")


for _name, (_ref, _rule, _dt, _dom, _second) in UNARY.items():
    if _second is not None:
        register(Op(f"pcp.{_name}#grad2", _grad2_call(_name),
                    lambda x, f=_second: R.Value(f(np.asarray(x, dtype=np.float64)), tol=(1e-7, 1e-9)
                                                 if R.DEVICE == "cpu" else (3e-3, 3e-3)),
                    None, classes=grad_classes("positive" if _dom == "positive" else "distinct")[:4],
                    grid_dtypes=("float64",), dtypes=FLOAT_SET, names=(_name, "grad"), covers=("pcp.grad",),
                    check="grad2"))

# ----------------------------------------------------------------------------------------------
# a saved tensor modified in place between forward and backward must make backward raise

_W = "pcp.no_grad()({}.__setitem__)(Ellipsis, 0.0)"  # x[...] = 0 under no_grad, on one line
INPLACE = {
    "mul_saved_input": f"y = (x0 * x1).sum(); {_W.format('x1')}; y.backward()",
    "exp_saved_output": f"y = pcp.exp(x0); s = y.sum(); {_W.format('y')}; s.backward()",
    "softmax_saved_output": f"y = pcp.softmax(x0, -1); s = (y * x1).sum(); {_W.format('y')}; s.backward()",
    "matmul_saved_input": f"y = (x0[None] @ x1[:, None]).sum(); {_W.format('x1')}; y.backward()",
    "write_through_view": f"v = x1[1:]; y = (x0 * x1).sum(); {_W.format('v')}; y.backward()",
    "write_base_of_saved_view": f"v = x1[1:]; y = (x0[1:] * v).sum(); {_W.format('x1')}; y.backward()",
    "leaf_itself": f"y = (x0 * x0).sum(); {_W.format('x0')}; y.backward()",
    "set_grad_enabled": "y = (x0 * x1).sum(); pcp.set_grad_enabled(False); x1[0] = 0.0; "
                        "pcp.set_grad_enabled(True); y.backward()",
    "sigmoid_saved_output": f"y = pcp.sigmoid(x0); s = y.sum(); {_W.format('y')}; s.backward()",
}


def _inplace_args(ctx):
    return [tensor((3,), "float32", "distinct", ctx.device, grad=True), tensor((3,), "float32", "distinct2", ctx.device)]


for _v, _code in INPLACE.items():
    register(Op(f"autograd#inplace_{_v}", lambda a, kw, c=_code: (c, "x0.grad"), lambda *a: R.Expect.ERROR, None,
                classes=[], cross=[], fixed=[("-", _inplace_args, {}, None)], errors=(RuntimeError,),
                names=AUTOGRAD_NAMES, covers=("pcp.no_grad", "Tensor.backward")))
# Control: add saves nothing, so changing its input after the forward pass is fine.
register(Op("autograd#inplace_not_saved", lambda a, kw: (f"y = (x0 + x1).sum(); {_W.format('x1')}; y.backward()",
                                                         "x0.grad"),
            lambda *a: np.ones(3), None, classes=[], cross=[], fixed=[("-", _inplace_args, {}, "may_raise")],
            errors=(RuntimeError,), names=AUTOGRAD_NAMES, covers=("pcp.no_grad",)))

# A backward pass without retain_graph frees what the graph saved: a second pass through it must
# raise, also through a part shared with a new graph; with retain_graph it adds up.
RELEASED = {
    "second_pass": "y = (x0 * x1).sum(); y.backward(); y.backward()",
    "shared_part": "h = pcp.exp(x0); (h * x1).sum().backward(); h.sum().backward()",
    "grad_after_backward": "y = (x0 * x1).sum(); y.backward(); pcp._core.autograd_grad(y, [x0])",
}
for _v, _code in RELEASED.items():
    register(Op(f"autograd#released_{_v}", lambda a, kw, c=_code: (c, "x0.grad"), lambda *a: R.Expect.ERROR, None,
                classes=[], cross=[], fixed=[("-", _inplace_args, {}, None)], errors=(RuntimeError,),
                names=AUTOGRAD_NAMES + ("retain_graph",), covers=("Tensor.backward",)))
register(Op("autograd#released_retained", lambda a, kw: ("y = (x0 + x1).sum(); y.backward(retain_graph=True); "
                                                         "y.backward()", "x0.grad"),
            lambda *a: np.full(3, 2.0), None, classes=[], cross=[], fixed=[("-", _inplace_args, {}, None)],
            errors=(RuntimeError,), names=AUTOGRAD_NAMES + ("retain_graph",), covers=("Tensor.backward",)))

# ----------------------------------------------------------------------------------------------
# backward, retain_grad, the grad and requires_grad setters


def _with_grad(x, p, ctx):
    if not isinstance(x, TensorArg) or x.dtype not in FLOAT_SET:
        raise Skip
    x = dataclasses.replace(x, grad=True)
    extra = p.get("other")
    if extra == "same":
        return [x, like(x, kind="distinct2")], {}
    if extra == "bad":
        return [x, like(x, shape=shape_of(x) + (2,))], {}
    if extra == "lit":
        return [x, Lit(p["value"])], {}
    return [x], {}


def _as_f(x):
    return np.asarray(x, dtype=np.float64)


def _backward_ref(x, *rest):
    return 2 * _as_f(x)


def _nonscalar_ref(x):
    if np.size(x) != 1:
        raise Invalid("backward of a tensor with more than one element needs a gradient")
    return 2 * _as_f(x)


def _grad_arg_ref(x, g):
    if np.shape(g) != np.shape(x):
        raise Invalid("gradient of the wrong shape")
    return 2 * _as_f(x) * _as_f(g)


_FLOAT = ("float16", "bfloat16", "float32", "float64")
_BW = dict(build=_with_grad, grid_dtypes=_FLOAT, dtypes=FLOAT_SET, errors=(RuntimeError,), names=AUTOGRAD_NAMES)
register(
    Op("Tensor.backward", lambda a, kw: ("x0.retain_grad(); (x0 * x0).sum().backward()", "x0.grad"), _backward_ref,
       None, covers=("Tensor.backward", "Tensor.retain_grad"), **_BW),
    Op("Tensor.backward#nonscalar", lambda a, kw: ("x0.retain_grad(); (x0 * x0).backward()", "x0.grad"),
       _nonscalar_ref, None, **_BW),
    Op("Tensor.backward#grad_arg", lambda a, kw: ("x0.retain_grad(); (x0 * x0).backward(x1)", "x0.grad"),
       _grad_arg_ref, None, cross=[{"other": "same"}, {"other": "bad"}], **_BW),
    Op("Tensor.backward#create_graph",
       lambda a, kw: ("x0.retain_grad(); (x0 * x0).sum().backward(create_graph=True)", "x0.grad"), _backward_ref,
       None, **_BW),
    Op("Tensor.backward#twice", lambda a, kw: ("x0.retain_grad(); y = (x0 * x0).sum(); y.backward(); y.backward()",
                                               "x0.grad"), lambda x: R.Expect.ANY, None, **_BW),
    Op("Tensor.backward#no_grad_input", lambda a, kw: ("", "(x0 * x0).sum().backward()"),
       lambda x: R.Expect.ERROR, None, grid_dtypes=_FLOAT, errors=(RuntimeError,), names=AUTOGRAD_NAMES),
)


def _set_grad_ref(x, g):
    if g is None:
        return R.Check(lambda r: r is None, "None")
    if not isinstance(g, np.ndarray):
        raise Invalid("grad must be a Tensor or None")
    if getattr(g, "pdt", None) is None:
        raise Unspecified("a NumPy array as grad")
    if g.shape != np.shape(x):
        raise Invalid("grad of another shape than the tensor")
    return np.array(g, dtype=np.float64)


def _requires_grad_ref(x, *flag):
    if getattr(x, "pdt", None) not in FLOAT_SET and (not flag or flag[0]):
        raise Invalid("only floating-point tensors can require grad")
    return R.Check(lambda r: r is True, "True")


def _requires_grad_method_ref(x):
    _requires_grad_ref(x)
    return R.Check(lambda r: getattr(r, "requires_grad", None) is True, "the tensor, now requiring grad")


register(
    Op("Tensor.grad#set", lambda a, kw: (f"x0.grad = {a[1]}", "x0.grad"), _set_grad_ref, None, build=_with_grad,
       cross=[{"other": "same"}], extra=[{"other": "bad"}] + [{"other": "lit", "value": v} for v in
                                                              ("None", "'a'", "1.0", "np.ones((2, 3))")],
       grid_dtypes=_FLOAT, dtypes=FLOAT_SET, covers=("Tensor.grad",), names=("grad",)),
    Op("Tensor.requires_grad#set", lambda a, kw: ("x0.requires_grad = True", "x0.requires_grad"), _requires_grad_ref,
       None, covers=("Tensor.requires_grad",), names=("requires_grad",)),
    Op("Tensor.requires_grad_", method("requires_grad_"), _requires_grad_method_ref, None, names=("requires_grad",)),
    Op("Tensor.retain_grad", method("retain_grad"), lambda x: R.Expect.ANY, None, names=("retain_grad", "grad")),
    Op("Tensor.grad_fn#result", lambda a, kw: ("", f"(x0 * 2).grad_fn"),
       lambda x: R.Check(lambda r: r is not None, "the op that made it"), None, build=_with_grad,
       grid_dtypes=_FLOAT, dtypes=FLOAT_SET, covers=("Tensor.grad_fn", "Tensor.is_leaf")),
)

# ----------------------------------------------------------------------------------------------
# function transforms and grad mode


def _pytree(x):
    if isinstance(x, (list, tuple, dict)):
        raise Unspecified("a pytree argument")


def _grad_square_ref(x):
    _pytree(x)
    if getattr(x, "pdt", None) not in FLOAT_SET:
        raise Invalid("grad needs floating-point tensors")
    return 2 * _as_f(x)


def _grad_nonscalar_ref(x):
    _pytree(x)
    if getattr(x, "pdt", None) not in FLOAT_SET or np.size(x) != 1:
        raise Invalid("not a one-element float output")
    return 2 * _as_f(x)


def _argnums_ref(x, y, argnums):
    _pytree(x)
    if isinstance(argnums, bool) or not isinstance(argnums, (int, tuple)):
        raise Invalid("argnums")
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not all(isinstance(i, int) and not isinstance(i, bool) and -2 <= i < 2 for i in nums):
        raise Invalid("argnums out of range")
    if len(set(i % 2 for i in nums)) != len(nums):
        raise Unspecified("repeated argnums")
    args = (x, y)
    if any(getattr(args[i], "pdt", None) not in FLOAT_SET for i in nums):
        raise Invalid("only float tensors can be differentiated")
    if any(getattr(a, "pdt", None) is None for a in args) and any(
            not isinstance(a, np.ndarray) for a in args):
        raise Unspecified("x * y with a Python number")
    grads = [_as_f(y), _as_f(x)]
    return grads[argnums] if isinstance(argnums, int) else tuple(grads[i] for i in nums)


def _value_and_grad_ref(x):
    _pytree(x)
    if getattr(x, "pdt", None) not in FLOAT_SET:
        raise Invalid("grad needs floating-point tensors")
    a = _as_f(x)
    return R.Value((np.sum(a * a), 2 * a), tol=(2e-3, 2e-3))


def _partner_build(x, p, ctx):
    return [x, like(x, kind="distinct2"), Lit(p["argnums"])], {}


# pcp.grad takes tensors or pytrees of them: tensors, and values that are neither
_GRAD_CLASSES = TENSOR_CLASSES + [c for c in LITERAL_CLASSES if c.name in ("none", "string", "object", "py_float",
                                                                         "py_int", "np_readonly")]
_GRAD = dict(names=("grad",), errors=(), classes=_GRAD_CLASSES)
register(
    Op("pcp.grad", lambda a, kw: ("", f"pcp.grad(lambda x: (x * x).sum())({a[0]})"), _grad_square_ref, None,
       dtypes=FLOAT_SET, **_GRAD),
    Op("pcp.grad#nonscalar", lambda a, kw: ("", f"pcp.grad(lambda x: x * x)({a[0]})"), _grad_nonscalar_ref, None,
       dtypes=FLOAT_SET, grid_dtypes=_FLOAT, **_GRAD),
    Op("pcp.grad#argnums", lambda a, kw: ("", f"pcp.grad(lambda x, y: (x * y).sum(), argnums={a[2]})({a[0]}, {a[1]})"),
       _argnums_ref, None, build=_partner_build, cross=[{"argnums": "0"}, {"argnums": "(0, 1)"}],
       extra=[{"argnums": v} for v in ("1", "-1", "2", "-3", "(0, 0)", "()", "'a'", "None", "1.5")],
       dtypes=FLOAT_SET, grid_dtypes=_FLOAT, **dict(_GRAD, names=_GRAD.get("names", ("grad",)) + ("mul",))),
    Op("pcp.grad#not_a_tensor", lambda a, kw: ("", f"pcp.grad(lambda x: 1.0)({a[0]})"), lambda x: R.Expect.ERROR,
       None, grid_dtypes=("float32",), **_GRAD),
    Op("pcp.grad#unused", lambda a, kw: ("", f"pcp.grad(lambda x: pcp.ones(()))({a[0]})"),
       lambda x: np.zeros(np.shape(x)) if getattr(x, "pdt", None) in FLOAT_SET else R.Expect.ANY
       if isinstance(x, (list, tuple)) else R.Expect.ERROR, None,
       grid_dtypes=_FLOAT, dtypes=FLOAT_SET, **_GRAD),
    Op("pcp.grad#pytree", lambda a, kw: ("", f"pcp.grad(lambda d: (d['a'] * d['b'][0]).sum())"
                                             f"({{'a': {a[0]}, 'b': [{a[1]}]}})"),
       lambda x, y: R.Check(lambda r: isinstance(r, dict) and set(r) == {"a", "b"} and isinstance(r["b"], list),
                            "{'a': grad, 'b': [grad]}"),
       None, build=lambda x, p, ctx: ([x, like(x)], {}), grid_dtypes=_FLOAT, dtypes=FLOAT_SET, **_GRAD),
    Op("pcp.value_and_grad", lambda a, kw: ("", f"pcp.value_and_grad(lambda x: (x * x).sum())({a[0]})"),
       _value_and_grad_ref, None, dtypes=FLOAT_SET, grid_dtypes=_FLOAT, names=("grad", "value_and_grad"),
       classes=_GRAD_CLASSES),
)


def _compiled_ref(x):
    # f(x) twice: the first call traces, the second replays the plan; both give x * x + 1.
    if getattr(x, "pdt", None) not in FLOAT_SET:
        raise Unspecified("pcp.compile of a non-float input follows the ops it runs")
    a = _as_f(x)
    return R.Value(a * a + 1, tol=(2e-3, 2e-3))


register(
    Op("pcp.compile", lambda a, kw: ("", f"(lambda f: [f({a[0]}), f({a[0]})][1])(pcp.compile(lambda x: x * x + 1.0))"),
       _compiled_ref, None, dtypes=FLOAT_SET, grid_dtypes=_FLOAT, names=("compile", "mul", "add", "pcp.compile"),
       classes=TENSOR_CLASSES),
)


def _replayed_ref(x):
    # Traced on -x, replayed on x: a result frozen at trace time (an op computed outside a
    # primitive, as logical_not once was) would answer for -x, wrong wherever x is not 0.
    if getattr(x, "pdt", None) not in FLOAT_SET:
        raise Unspecified("pcp.compile of a non-float input follows the ops it runs")
    return ~(_as_f(x) > 0)


register(
    Op("pcp.compile#replay", lambda a, kw: ("", f"(lambda f: [f(-{a[0]}), f({a[0]})][1])"
                                                f"(pcp.compile(lambda x: pcp.logical_not(x > 0)))"),
       _replayed_ref, None, dtypes=FLOAT_SET, grid_dtypes=_FLOAT, names=("compile", "logical_not"),
       classes=TENSOR_CLASSES),
)


register(
    # Any tensor (zero-size, any dtype, a view) exports or raises; a non-tensor is a Python value.
    Op("pcp.export.stablehlo", lambda a, kw: ("", f"pcp.export.stablehlo(lambda x: x * x + 1.0, {a[0]}).text"),
       lambda x: R.Check(lambda r: isinstance(r, str) and "func.func public @main" in r, "an MLIR module")
       if getattr(x, "pdt", None) in FLOAT_SET else R.Expect.ANY, None, grid_dtypes=_FLOAT,
       names=("export", "stablehlo"), classes=TENSOR_CLASSES),
)


register(
    # A path to nothing, a folder, or not a path at all: an error, never a crash.
    Op("pcp.load_plan", lambda a, kw: ("", f"pcp.load_plan({a[0]})"), lambda x: R.Expect.ERROR, None,
       classes=TENSOR_CLASSES + LITERAL_CLASSES, grid_dtypes=_FLOAT, names=(), errors=(OSError,)),
)


def _mode_args(ctx):
    return [tensor((3,), "float32", "distinct", ctx.device, grad=True)]


register(
    Op("pcp.no_grad", lambda a, kw: ("", "pcp.no_grad()(lambda: x0 * x0)().requires_grad"), lambda x: False, None,
       classes=[], cross=[], fixed=[("decorator", _mode_args, {}, None)], names=("no_grad",)),
    Op("pcp.no_grad#context", lambda a, kw: ("", "(lambda m: (m.__enter__(), (x0 * x0).requires_grad, "
                                                 "m.__exit__(None, None, None))[1])(pcp.no_grad())"),
       lambda x: False, None, classes=[], cross=[], fixed=[("-", _mode_args, {}, None)], names=("no_grad",)),
    Op("pcp.enable_grad", lambda a, kw: ("", "pcp.no_grad()(lambda: pcp.enable_grad()(lambda: x0 * x0)())()"
                                             ".requires_grad"),
       lambda x: True, None, classes=[], cross=[], fixed=[("inside_no_grad", _mode_args, {}, None)],
       names=("enable_grad",)),
    Op("pcp.set_grad_enabled", lambda a, kw: (f"pcp.set_grad_enabled({a[0]})", "pcp.is_grad_enabled()"),
       lambda v: bool(v) if isinstance(v, bool) else R.Expect.ERROR if v is None or isinstance(v, str)
       else R.Expect.ANY, None, classes=[], cross=[],
       fixed=[(f"value={v}", [Lit(v)], {}, None) for v in ("True", "False", "None", "1", "'a'", "np.bool_(False)")],
       names=("set_grad_enabled", "bool"), covers=("pcp.set_grad_enabled", "pcp.is_grad_enabled")),
)


def _autocast_ref(x, v):
    """The dtype of a matmul inside pcp.autocast(v): the scope's type, or an error for another."""
    if v not in ("bfloat16", "float16"):
        return R.Expect.ERROR
    return R.Check(lambda r: r == v, repr(v))


register(
    Op("pcp.autocast", lambda a, kw: ("", f"str(pcp.autocast({a[1]})(lambda: {a[0]} @ {a[0]}.T)().dtype)"),
       _autocast_ref, None, classes=[], cross=[],
       fixed=[(f"dtype={v}", lambda ctx, v=v: [tensor((3, 4), "float32", "distinct", ctx.device), Lit(v)], {}, None)
              for v in ("'bfloat16'", "'float16'", "'float32'", "None", "3", "'x'")],
       names=("autocast",)),
)
