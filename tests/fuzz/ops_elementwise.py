"""Elementwise ops: unary math, binary arithmetic and comparisons (functions, methods and
operators, reflected forms too), logical ops, where and clip."""
import numpy as np

from . import reference as R
from .cases import Op, Skip, binop, builtin, fn, method, rbinop, register, unop
from .inputs import Lit, TensorArg, dtype_of, like, shape_of, tensor
from .reference import ALL, NUMERIC, Invalid

# ----------------------------------------------------------------------------------------------
# unary


def _relu(x):
    return np.where(np.isnan(x), x, np.maximum(x, 0)) if np.asarray(x).dtype.kind == "f" else np.maximum(x, 0)


def _float(f):
    """A float-only function: ints and bools are computed as float64 (PCP gives float32)."""
    return lambda x: f(R.as_float(x))


def _trig(f):
    """sin/cos: GPU drivers are only accurate within [-pi, pi] (Vulkan leaves the rest to them),
    so on the GPU any value in [-1, 1] is accepted for |x| > 1e4."""
    def ref(x):
        x = R.as_float(x)
        if R.DEVICE == "cpu":
            return f(x)
        return R.Value(f(x), free=np.abs(x) > 1e4)
    return ref


def _keep(f):
    """A dtype-preserving function; refuses bool like PCP documents (TypeError)."""
    def ref(x):
        if np.asarray(x).dtype == bool:
            raise Invalid("not defined for bool")
        return f(x)
    return ref


# name -> (reference, dtype rule, declared dtypes, grad domain, second derivative or None)
UNARY = {
    "neg": (_keep(np.negative), R.same, NUMERIC, "any", lambda x: 0 * x),
    "abs": (_keep(np.abs), R.same, NUMERIC, "any", None),
    "square": (_keep(np.square), R.same, NUMERIC, "any", lambda x: 2 + 0 * x),
    "sign": (_keep(np.sign), R.same, NUMERIC, None, None),
    "relu": (_keep(_relu), R.same, NUMERIC, "any", None),
    "exp": (_float(np.exp), R.floating, NUMERIC, "any", np.exp),
    "log": (_float(np.log), R.floating, NUMERIC, "positive", lambda x: -1 / x**2),
    "sqrt": (_float(np.sqrt), R.floating, NUMERIC, "positive", lambda x: -0.25 * x**-1.5),
    "rsqrt": (_float(lambda x: 1 / np.sqrt(x)), R.floating, NUMERIC, "positive", lambda x: 0.75 * x**-2.5),
    "sin": (_trig(np.sin), R.floating, NUMERIC, "any", lambda x: -np.sin(x)),
    "cos": (_trig(np.cos), R.floating, NUMERIC, "any", lambda x: -np.cos(x)),
    "tanh": (_float(np.tanh), R.floating, NUMERIC, "any", lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    "sigmoid": (R.sigmoid, R.floating, NUMERIC, "any",
                lambda x: R.sigmoid(x) * (1 - R.sigmoid(x)) * (1 - 2 * R.sigmoid(x))),
    "erf": (R.erf, R.floating, NUMERIC, "any", lambda x: -4 * x / np.sqrt(np.pi) * np.exp(-x * x)),
    "gelu": (R.gelu, R.floating, NUMERIC, "any", None),
    "silu": (R.silu, R.floating, NUMERIC, "any", None),
}



def _whole(f):
    """Rounding: integers are returned as they are; bool is refused (TypeError)."""
    def ref(x):
        x = np.asarray(x)
        if x.dtype == bool:
            raise Invalid("not defined for bool")
        return x if x.dtype.kind in "iu" else f(x)
    return ref


# The Array API standard's element-wise math (no grad domain: their VJPs are checked in test_vjp.py).
UNARY.update({
    "floor": (_whole(np.floor), R.same, NUMERIC, None, None),
    "ceil": (_whole(np.ceil), R.same, NUMERIC, None, None),
    "trunc": (_whole(np.trunc), R.same, NUMERIC, None, None),
    "round": (_whole(np.round), R.same, NUMERIC, None, None),
    "tan": (_trig(np.tan), R.floating, NUMERIC, None, None),
    **{name: (_float(f), R.floating, NUMERIC, None, None) for name, f in (
        ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
        ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh), ("expm1", np.expm1),
        ("log1p", np.log1p), ("log2", np.log2), ("log10", np.log10))},
})

for _name, (_ref, _rule, _dtypes, _dom, _) in UNARY.items():
    register(
        Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _ref, lambda k, kw, r=_rule: r(k[0]), dtypes=_dtypes),
        Op(f"Tensor.{_name}", method(_name), _ref, lambda k, kw, r=_rule: r(k[0]), dtypes=_dtypes,
           grid_dtypes=("bool", "int32", "float16", "float32")),
    )

register(
    Op("Tensor.__neg__", unop("-"), UNARY["neg"][0], lambda k, kw: R.same(k[0]), dtypes=NUMERIC, names=("neg",)),
    Op("Tensor.__abs__", builtin("abs"), UNARY["abs"][0], lambda k, kw: R.same(k[0]), dtypes=NUMERIC,
       names=("abs",)),
    Op("pcp.logical_not", fn("pcp.logical_not"), lambda x: np.logical_not(x), lambda k, kw: "bool"),
    # NumPy/PyTorch: ~ is bitwise not on ints and bools, a TypeError on floats.
    Op("Tensor.__invert__", unop("~"), lambda x: np.invert(x), lambda k, kw: R.same(k[0]),
       dtypes=frozenset({"bool", "int32", "int64"}), names=("invert", "logical_not", "~", "bitwise_not")),
    Op("pcp.bitwise_not", fn("pcp.bitwise_not"), lambda x: np.invert(x), lambda k, kw: R.same(k[0]),
       dtypes=frozenset({"bool", "int32", "int64"}), names=("invert", "logical_not", "bitwise_not")),
)


def _gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return R.gelu_tanh(x)
    if approximate != "none":
        raise Invalid("approximate")
    return R.gelu(x)


_GELU_EXTRA = [{"approximate": "'tanh'"}, {"approximate": "'none'"}, {"approximate": "'fast'"},
               {"approximate": "None"}, {"approximate": "1"}]
OPS_GELU = register(
    Op("pcp.gelu#approximate", fn("pcp.gelu"), _gelu_ref, lambda k, kw: R.floating(k[0]), dtypes=NUMERIC,
       cross=[], extra=_GELU_EXTRA, grid_dtypes=("float32",)),
    Op("Tensor.gelu#approximate", method("gelu"), _gelu_ref, lambda k, kw: R.floating(k[0]), dtypes=NUMERIC,
       cross=[], extra=_GELU_EXTRA, grid_dtypes=("float32",)),
)

# ----------------------------------------------------------------------------------------------
# binary


def weak_check(*vals):
    """PCP documents that a Python int must fit in int64 ('add: ... does not fit in int64')."""
    for v in vals:
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
            raise Invalid("Python int does not fit in int64")


def _num(v):
    """Operand for arithmetic: bools count as int64 (PCP's bool arithmetic)."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    a = np.asarray(v) if isinstance(v, (list, np.ndarray)) else v
    if isinstance(a, np.ndarray) and a.dtype == bool:
        return a.astype(np.int64)
    return a


def low_precision_check(a, b):
    """A Python scalar beyond a float tensor's range: PCP (like PyTorch) rounds it to the tensor's
    dtype (inf) before the op, NumPy computes in float64; either is accepted."""
    from .inputs import FLOAT_MAX
    for t, s in ((a, b), (b, a)):
        dt = getattr(t, "pdt", None)
        dt = "float32" if dt in ("bool", "int32", "int64") and isinstance(s, float) else dt  # computed in float32
        if dt in FLOAT_MAX and isinstance(s, (int, float)) and not isinstance(s, bool) \
                and np.isfinite(s) and abs(s) > FLOAT_MAX[dt]:
            raise R.Unspecified("scalar beyond the tensor's float range")


def cast_ints_to_low_float(a, b):
    """An int tensor meeting a float16/bfloat16 tensor is cast to that dtype first (PyTorch's
    and PCP's promotion), so int32 extremes become +-inf."""
    da, db = getattr(a, "pdt", None), getattr(b, "pdt", None)
    if da in R.INTS and db in ("float16", "bfloat16"):
        a = R.round_to(np.asarray(a, dtype=np.float64), db)
    if db in R.INTS and da in ("float16", "bfloat16"):
        b = R.round_to(np.asarray(b, dtype=np.float64), da)
    return a, b


def _arith(f, bools=True):
    def ref(a, b):
        weak_check(a, b)
        low_precision_check(a, b)
        a, b = cast_ints_to_low_float(a, b)
        if bools and all(np.asarray(v).dtype.kind == "b" for v in (a, b)):
            if f is np.subtract:
                raise Invalid("bool - bool (NumPy refuses it too)")
            return f(a, b)  # NumPy: + is or, * is and
        return f(_num(a), _num(b)) if bools else f(a, b)
    return ref


def _logical_xor(a, b):
    if any(np.asarray(v).dtype.kind == "O" for v in (a, b)):
        raise Invalid("not numbers")  # NumPy's object loop looks for a .logical_xor method
    return np.logical_xor(a, b)


def _div(a, b):
    return np.true_divide(R.as_float(_num(a)), R.as_float(_num(b)))


def _pow(a, b):
    a, b = _num(a), _num(b)
    ints = all(np.asarray(v).dtype.kind in "iu" for v in (a, b))
    if ints and np.any(np.asarray(b) < 0):
        raise R.Unspecified("integer to a negative integer power")
    return np.power(a, b)


def _bitwise(f):
    def ref(a, b):
        weak_check(a, b)
        for v in (a, b):
            if np.asarray(v).dtype.kind not in "biu":
                raise Invalid("bitwise op on a float")
        return f(a, b)
    return ref


def _floating_fn(f):
    """The standard's floating functions of two arguments: integers and bools are taken as floats."""
    def ref(a, b):
        if any(np.asarray(v).dtype.kind == "O" for v in (a, b)):
            raise Invalid("not numbers")
        return f(R.as_float(_num(a)), R.as_float(_num(b)))
    return ref


def _nextafter(a, b):
    """C's nextafter in the promoted dtype where NumPy has it (float32, float64); float16's and
    bfloat16's steps are checked in tests/test_ops_elementwise.py."""
    if any(np.asarray(v).dtype.kind == "O" for v in (a, b)):
        raise Invalid("not numbers")
    da, db = getattr(a, "pdt", None), getattr(b, "pdt", None)
    dt = R.truediv(da, db) if da and db else None
    if dt not in ("float32", "float64"):
        raise R.Unspecified("no NumPy reference for these operands")
    np_dt = np.float32 if dt == "float32" else np.float64
    return np.nextafter(R.as_float(_num(a)).astype(np_dt), R.as_float(_num(b)).astype(np_dt))


def _floor_divide(a, b):
    """Python's //; the standard's x / y where y is zero or either is infinite (NumPy gives NaN for
    inf // 2)."""
    a, b = _num(a), _num(b)
    q = np.floor_divide(a, b)
    if np.result_type(q).kind != "f":
        return q
    special = (np.asarray(b) == 0) | np.isinf(a) | np.isinf(b)
    return np.where(special, np.true_divide(a, b), q)


def _shift(f):
    def ref(a, b):
        weak_check(a, b)
        for v in (a, b):
            if np.asarray(v).dtype.kind not in "iu":
                raise Invalid("a shift of a bool or a float")
        a, b = np.asarray(a), np.asarray(b)
        width = 8 * np.result_type(a, b).itemsize
        out = f(a, np.clip(b, 0, width - 1))  # a count outside [0, width) shifts every bit out
        beyond = (b < 0) | (b >= width)
        return np.where(beyond, np.where(a < 0, -1, 0) if f is np.right_shift else 0, out).astype(out.dtype)
    return ref


def _power_rule(k, kw):
    """bools count in int64 (pow, floor_divide, remainder)."""
    return R.power(k[0], k[1])


def _shift_rule(k, kw):
    r = R.promote(k[0], k[1])
    return r if r in ("int32", "int64") else None


def _cmp_rule(k, kw):
    return "bool"


def _arith_rule(k, kw):
    return R.arith(k[0], k[1])


def _div_rule(k, kw):
    return R.truediv(k[0], k[1])


def _promote_rule(k, kw):
    return R.promote(k[0], k[1])


def _bitwise_rule(k, kw):
    r = R.promote(k[0], k[1])
    return r if r in ("bool", "int32", "int64") else None


# name -> (reference, dtype rule, declared dtypes, operator, reflected operator)
BINARY = {
    "add": (_arith(np.add), _arith_rule, ALL, "+"),
    "sub": (_arith(np.subtract), _arith_rule, ALL, "-"),
    "mul": (_arith(np.multiply), _arith_rule, ALL, "*"),
    "div": (_arith(_div, False), _div_rule, ALL, "/"),
    "pow": (_arith(_pow, False), lambda k, kw: R.power(k[0], k[1]), NUMERIC, "**"),
    "maximum": (_arith(np.maximum, False), _promote_rule, ALL, None),
    "minimum": (_arith(np.minimum, False), _promote_rule, ALL, None),
    "eq": (_arith(np.equal, False), _cmp_rule, ALL, "=="),
    "ne": (_arith(np.not_equal, False), _cmp_rule, ALL, "!="),
    "lt": (_arith(np.less, False), _cmp_rule, ALL, "<"),
    "le": (_arith(np.less_equal, False), _cmp_rule, ALL, "<="),
    "gt": (_arith(np.greater, False), _cmp_rule, ALL, ">"),
    "ge": (_arith(np.greater_equal, False), _cmp_rule, ALL, ">="),
    "logical_and": (_arith(np.logical_and, False), _cmp_rule, ALL, None),
    "logical_or": (_arith(np.logical_or, False), _cmp_rule, ALL, None),
    "logical_xor": (_arith(_logical_xor, False), _cmp_rule, ALL, None),
    "atan2": (_arith(_floating_fn(np.arctan2), False), _div_rule, ALL, None),
    "hypot": (_arith(_floating_fn(np.hypot), False), _div_rule, ALL, None),
    "copysign": (_arith(_floating_fn(np.copysign), False), _div_rule, ALL, None),
    "nextafter": (_arith(_nextafter, False), _div_rule, ALL, None),
    "remainder": (_arith(lambda a, b: np.remainder(_num(a), _num(b)), False), _power_rule, NUMERIC, "%"),
    "floor_divide": (_arith(_floor_divide, False), _power_rule, NUMERIC, "//"),
}
DUNDER = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "==": "eq", "!=": "ne", "<": "lt",
          "<=": "le", ">": "gt", ">=": "ge", "%": "mod", "//": "floordiv"}
REFLECTED = {"+": "radd", "-": "rsub", "*": "rmul", "/": "rtruediv", "**": "rpow", "%": "rmod", "//": "rfloordiv"}
BITWISE = {"&": ("and", np.bitwise_and, "logical_and"), "|": ("or", np.bitwise_or, "logical_or"),
           "^": ("xor", np.bitwise_xor, "logical_xor")}

# The other operand: a tensor of the same shape (with every input class), or, with the normal
# input, broadcasting shapes, every dtype, Python scalars at the edges of each type, NumPy values,
# lists, a tensor on the other device and things that are not numbers.
SCALARS = ["0", "1", "-1", "2", "2**31", "2**40", "2**63 - 1", "-2**63", "2**63", "2**70", "-2**70", "1.5",
           "0.0", "-0.0", "float('nan')", "float('inf')", "1e300", "True", "False"]
OTHERS_LIT = {
    "np_f64_scalar": Lit("np.float64(2.5)", None, ()),  # a Python float too: weak or not is open
    "np_i64_scalar": Lit("np.int64(3)", None, ()),
    "np_f32_row": Lit("np.array([1.0, -2.0, 0.5], dtype=np.float32)", "float32", (3,)),
    "np_f64": Lit("np.ones((2, 3))", "float64", (2, 3)),
    "np_i32": Lit("np.arange(6, dtype=np.int32).reshape(2, 3)", "int32", (2, 3)),
    "list_row": Lit("[1.0, -2.0, 0.5]", None, (3,)),
    "none": Lit("None"),
    "string": Lit("'abc'"),
    "object": Lit("object()"),
}
PARTNERS = ["same", "row", "col", "0d", "empty", "bad_shape", "other_device"] + \
    [f"dtype:{d}" for d in R.DTYPES] + [f"scalar:{s}" for s in SCALARS] + list(OTHERS_LIT)


def _scalar_lit(src):
    v = eval(src)
    kind = "weak_bool" if isinstance(v, bool) else "weak_int" if isinstance(v, int) else "weak_float"
    return Lit(src, kind, ())


def partner(x, token, ctx):
    """(the other operand, overrides of the case) for a partner token."""
    shape = shape_of(x)
    if token == "same":
        return like(x), {}
    if token == "row":
        if not shape:
            raise Skip
        return like(x, shape=shape[-1:]), {}
    if token == "col":
        if len(shape) < 2:
            raise Skip
        return like(x, shape=shape[:-1] + (1,)), {}
    if token == "0d":
        return like(x, shape=()), {}
    if token == "empty":
        return like(x, shape=(0,) + shape[1:] if shape else (0,)), {}
    if token == "bad_shape":
        return like(x, shape=(4,)), {}
    if token == "other_device":
        if ctx.other is None:
            raise Skip
        return like(x, device=ctx.other), {"must_work": False}
    if token.startswith("dtype:"):
        return like(x, dtype=token[6:]), {}
    if token.startswith("scalar:"):
        # Scalars beyond the tensor's type may be refused; a wrong value is still WRONG.
        return _scalar_lit(token[7:]), {"must_work": token[7:] in ("0", "1", "-1", "2", "1.5", "True")}
    return OTHERS_LIT[token], {"must_work": False}


def build_binary(x, p, ctx):
    other, over = partner(x, p.get("other", "same"), ctx)
    return [x, other], {}, over


def build_reflected(x, p, ctx):
    token = p.get("other", "scalar:2")
    if token.startswith(("same", "row", "col", "0d", "empty", "bad", "dtype", "other_device")):
        raise Skip  # a Tensor on the left calls its own operator, not the reflected one
    if not isinstance(x, TensorArg):
        raise Skip  # the reflected form needs a Tensor on the right
    other, over = partner(x, token, ctx)
    return [x, other], {}, over


def _swap(ref):
    return lambda a, b: ref(b, a)


def _swap_rule(rule):
    return lambda k, kw: rule([k[1], k[0]], kw)


_CROSS = [{"other": "same"}]
_EXTRA = [{"other": t} for t in PARTNERS if t != "same"]
_REFL_CROSS = [{"other": "scalar:2"}]
_REFL_EXTRA = [{"other": t} for t in PARTNERS if t.startswith("scalar:") or t in OTHERS_LIT]

for _name, (_ref, _rule, _dtypes, _sym) in BINARY.items():
    _kw = dict(build=build_binary, cross=_CROSS, extra=_EXTRA, dtypes=_dtypes)
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _ref, _rule, **_kw))
    if _name in ("maximum", "minimum", "pow"):
        register(Op(f"Tensor.{_name}", method(_name), _ref, _rule, **_kw))
    if _sym:
        dunder = DUNDER[_sym]
        register(Op(f"Tensor.__{dunder}__", binop(_sym), _ref, _rule, names=(_name, _sym), **_kw))
        if _sym in REFLECTED:
            register(Op(f"Tensor.__{REFLECTED[_sym]}__", rbinop(_sym), _swap(_ref), _swap_rule(_rule),
                        names=(_name, _sym), build=build_reflected, cross=_REFL_CROSS,
                        # 'abc' % x is Python's string formatting, which never asks the tensor
                        extra=[e for e in _REFL_EXTRA if not (_sym == "%" and e["other"] == "string")],
                        dtypes=_dtypes))

def _register_integer_op(name, dunder, sym, ref, rule, names, dtypes):
    """pcp.<name>, Tensor.__<dunder>__ and its reflected form, for ops of integers (and bools)."""
    register(
        Op(f"pcp.{name}", fn(f"pcp.{name}"), ref, rule, names=names, build=build_binary, cross=_CROSS, extra=_EXTRA,
           dtypes=dtypes),
        Op(f"Tensor.__{dunder}__", binop(sym), ref, rule, names=names, build=build_binary, cross=_CROSS,
           extra=_EXTRA, dtypes=dtypes),
        Op(f"Tensor.__r{dunder}__", rbinop(sym), _swap(ref), _swap_rule(rule), names=names, build=build_reflected,
           cross=_REFL_CROSS, extra=_REFL_EXTRA, dtypes=dtypes),
    )


for _sym, (_word, _npf, _logical) in BITWISE.items():
    _register_integer_op(f"bitwise_{_word}", _word, _sym, _bitwise(_npf), _bitwise_rule,
                         (_word, _logical, _sym, f"bitwise_{_word}"), frozenset({"bool", "int32", "int64"}))
for _sym, (_word, _npf) in {"<<": ("left", np.left_shift), ">>": ("right", np.right_shift)}.items():
    _register_integer_op(f"bitwise_{_word}_shift", f"{_word[0]}shift", _sym, _shift(_npf), _shift_rule,
                         (f"bitwise_{_word}_shift", _sym), frozenset({"int32", "int64"}))

# ----------------------------------------------------------------------------------------------
# where and clip


def _where_ref(c, a, b):
    weak_check(a, b)
    return np.where(np.asarray(c) != 0, a, b)


def _where_rule(k, kw):
    return R.promote(k[1], k[2])


def build_where(x, p, ctx):
    """x is the first branch; the condition and the other branch take its shape."""
    token = p.get("other", "same")
    cond = like(x, dtype="bool")
    other, over = partner(x, token, ctx)
    return [cond, x, other], {}, over


def build_where_cond(x, p, ctx):
    """x is the condition (any dtype: nonzero is True); both branches take its shape."""
    return [x, like(x, dtype="float32"), like(x, dtype="float32", kind="positive")], {}


register(
    Op("pcp.where", fn("pcp.where"), _where_ref, _where_rule, build=build_where, cross=_CROSS, extra=_EXTRA),
    Op("pcp.where#cond", fn("pcp.where"), _where_ref, _where_rule, build=build_where_cond),
)


def _clip_ref(x, min=None, max=None):
    weak_check(min, max)
    x = np.asarray(x) if not isinstance(x, np.ndarray) else x  # a Python number becomes a 0-d tensor
    if isinstance(x, np.ndarray) and x.dtype == bool:
        x = x.astype(np.int64) if (min is not None or max is not None) else x
    r = x
    if min is not None:
        r = np.maximum(r, min)
    if max is not None:
        r = np.minimum(r, max)
    return r


def _clip_rule(k, kw):
    return None  # clip promotes like maximum/minimum; the bounds' kinds are not tracked here


_CLIP = [{"min": "-1", "max": "1"}, {"min": "1", "max": "-1"}, {"min": "0"}, {"max": "0.5"},
         {"min": "float('nan')"}, {"min": "2**70"}, {"min": "'a'"}, {"min": "None", "max": "None"},
         {"min": "-float('inf')", "max": "float('inf')"}]


def build_clip(x, p, ctx):
    kw = {k: Lit(v) for k, v in p.items()}
    if p.get("min") == "row":
        if not shape_of(x):
            raise Skip
        kw["min"] = like(x, shape=shape_of(x)[-1:])
    return [x], kw


register(
    Op("pcp.clip", fn("pcp.clip"), _clip_ref, _clip_rule, build=build_clip, cross=[{"min": "-1", "max": "1"}],
       extra=_CLIP + [{"min": "row"}]),
    Op("Tensor.clip", method("clip"), _clip_ref, _clip_rule, build=build_clip, cross=[{"min": "0"}],
       extra=_CLIP, grid_dtypes=("int32", "float16", "float32")),
)
