"""Arguments of a case, written as Python source so that every case is its own reproducer.

A tensor argument is `pcp.tensor(<NumPy expression>, dtype=..., device=...)` followed by an
optional view (`.T`, `[::-1, 1:]`, `.broadcast_to(...)`); the worker evaluates the same NumPy
expression and view for the reference. Any other argument is a literal expression (None, 2**70,
a NumPy array, ...) that both sides evaluate alike.

The input classes below are the grid's rows: shapes (0-d, one element, zero-size in every
position), views (transposed, strided, reversed, offset, broadcast), special values, huge and
negative shapes, wrong Python types and NumPy arrays PCP must convert or refuse.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from .reference import DTYPES, FLOATS

# ----------------------------------------------------------------------------------------------
# argument specs (JSON-serialisable through to_json / from_json)


@dataclass
class TensorArg:
    np: str                   # NumPy expression of the values (float64, int32/int64 or bool)
    dtype: str                # pcp dtype name
    device: str = "cpu"
    view: tuple = ()          # (pcp template, NumPy template), each with one {} for the tensor
    grad: bool = False        # requires_grad=True
    shape: tuple = ()         # shape after the view (for the builders)
    values: str = "normal"    # the values' kind (see values()); partners inherit it

    def code(self, default_device="cpu"):
        extra = "" if self.device == default_device else f", device={self.device!r}"
        extra += ", requires_grad=True" if self.grad else ""
        c = f"pcp.tensor({self.np}, dtype={pcp_dtype(self.dtype)}{extra})"
        return self.view[0].format(c) if self.view else c

    @property
    def kind(self):
        return self.dtype


@dataclass
class Lit:
    code_: str                # a Python expression, evaluated alike for PCP and the reference
    kind: str = None          # dtype-rule kind: 'weak_int', 'weak_float', 'weak_bool', a dtype
    shape: tuple = None       # shape when it is array-like

    def code(self, default_device="cpu"):
        return self.code_


@dataclass
class Seq:
    items: list = field(default_factory=list)
    tuple: bool = False
    kind = None
    shape = None

    def code(self, default_device="cpu"):
        inner = ", ".join(i.code(default_device) for i in self.items)
        if self.tuple:
            return f"({inner},)" if len(self.items) == 1 else f"({inner})"
        return f"[{inner}]"


def pcp_dtype(name):
    """Source of a pcp dtype object ('bool' is pcp.bool_)."""
    return "pcp.bool_" if name == "bool" else f"pcp.{name}"


def to_json(a):
    if isinstance(a, TensorArg):
        return {"T": [a.np, a.dtype, a.device, list(a.view), a.grad, list(a.shape), a.values]}
    if isinstance(a, Lit):
        return {"L": [a.code_, a.kind, None if a.shape is None else list(a.shape)]}
    return {"S": [[to_json(i) for i in a.items], a.tuple]}


def from_json(d):
    if "T" in d:
        np_, dtype, device, view, grad, shape, kind = d["T"]
        return TensorArg(np_, dtype, device, tuple(view), grad, tuple(shape), kind)
    if "L" in d:
        code, kind, shape = d["L"]
        return Lit(code, kind, None if shape is None else tuple(shape))
    items, is_tuple = d["S"]
    return Seq([from_json(i) for i in items], is_tuple)


def lit(value, kind=None):
    """A literal from a Python value; its dtype-rule kind follows Python's scalar types."""
    if kind is None and isinstance(value, bool):
        kind = "weak_bool"
    elif kind is None and isinstance(value, int):
        kind = "weak_int"
    elif kind is None and isinstance(value, float):
        kind = "weak_float"
    code = value if isinstance(value, str) else _py(value)
    return Lit(code, kind)


def _py(value):
    """Python source for a value, keeping NaN/inf and big powers of two readable."""
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**31:
        for e in (31, 32, 40, 62, 63, 64, 70):
            for off in (-1, 0, 1):
                if abs(value) == 2**e + off:
                    s = f"2**{e}" + {-1: " - 1", 0: "", 1: " + 1"}[off]
                    return f"-({s})" if value < 0 and off else (f"-{s}" if value < 0 else s)
    if isinstance(value, tuple):
        return "(" + ", ".join(_py(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return repr(value)


# ----------------------------------------------------------------------------------------------
# values


def _n(shape):
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


# Largest finite and smallest normal value of each float dtype (exactly representable in it).
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
             "float64": 1.7976931348623157e308}
FLOAT_TINY = {"float16": 6.103515625e-05, "bfloat16": 1.1754943508222875e-38,
              "float32": 1.1754943508222875e-38, "float64": 2.2250738585072014e-308}
INT_RANGE = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}


def values(shape, dtype, kind="normal"):
    """NumPy source of `shape` values for a tensor of `dtype`.

    normal: multiples of 1/4 in [-2, 2] (ints: -8..8), exact in every dtype, few ties;
    positive: (0, 2.25] (log, sqrt, divisors); distinct: irrational-looking values without ties
    or zeros (gradients); special: NaN, +-inf, -0.0, the dtype's max and tiny (ints: min/max).
    """
    n, s = _n(shape), tuple(shape)
    if dtype == "bool":
        if kind == "special":
            return f"np.ones({s!r}, dtype=bool)"
        return f"(np.arange({n}) % 3 == 1).reshape({s!r})"
    if dtype in ("int32", "int64"):
        if kind == "special":
            lo, hi = INT_RANGE[dtype]
            return f"np.resize(np.array([{lo}, {hi}, -1, 0, 1, {lo + 1}, {hi - 1}], dtype=np.{dtype}), {s!r})"
        if kind == "positive":
            return f"(np.arange({n}) % 5 + 1).reshape({s!r}).astype(np.{dtype})"
        return f"(np.arange({n}) * 5 % 17 - 8).reshape({s!r}).astype(np.{dtype})"
    if kind == "special":
        big, tiny = FLOAT_MAX[dtype], FLOAT_TINY[dtype]
        return (f"np.resize(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0, {big!r}, {tiny!r}, "
                f"{-big!r}]), {s!r})")
    if kind == "positive":
        return f"((np.arange({n}) * 5 % 17 + 1) / 8).reshape({s!r})"
    if kind == "positive2":
        return f"((np.arange({n}) * 3 % 11 + 2) / 6).reshape({s!r})"
    if kind == "distinct":
        return f"(np.sin(np.arange({n}) * 1.7 + 0.3) * 1.5).reshape({s!r})"
    if kind == "distinct2":
        return f"(np.cos(np.arange({n}) * 1.3 + 0.7) * 1.2).reshape({s!r})"
    if kind == "unit":
        return f"((np.arange({n}) * 5 % 17 - 8) / 10).reshape({s!r})"
    return f"((np.arange({n}) * 5 % 17 - 8) / 4).reshape({s!r})"


def tensor(shape, dtype="float32", kind="normal", device="cpu", view=None, grad=False):
    """A TensorArg; `view` is (base shape, pcp template, NumPy template) or None."""
    if view is None:
        return TensorArg(values(shape, dtype, kind), dtype, device, (), grad, tuple(shape), kind)
    base, pt, nt = view
    out_shape = eval(nt.format("np.zeros(%r)" % (tuple(base),)), {"np": np}).shape
    return TensorArg(values(base, dtype, kind), dtype, device, (pt, nt), grad, tuple(out_shape), kind)


def like(x, shape=None, dtype=None, kind=None, device=None):
    """A plain tensor on x's device, of x's dtype and kind of values unless given
    (special values stay with x: its partner gets ordinary ones)."""
    dev = device or getattr(x, "device", None) or "cpu"
    dt = dtype or (x.dtype if isinstance(x, TensorArg) else "float32")
    if kind is None:  # a partner of a gradient-check input gets other values of the same kind
        kind = {"distinct": "distinct2", "positive": "positive2"}.get(getattr(x, "values", None), "normal")
    if kind in ("distinct", "distinct2", "unit") and dt not in FLOATS:
        kind = "normal"
    return tensor(shape if shape is not None else shape_of(x), dt, kind, dev)


def shape_of(x, default=(2, 3)):
    s = getattr(x, "shape", None)
    return tuple(s) if s is not None else default


def dtype_of(x, default="float32"):
    return x.dtype if isinstance(x, TensorArg) else default


def device_of(x, default="cpu"):
    return x.device if isinstance(x, TensorArg) else default


# ----------------------------------------------------------------------------------------------
# input classes of a tensor argument


@dataclass
class Cls:
    """A row of the grid for a tensor argument: shape, view and values, or a literal."""
    name: str
    shape: tuple = (2, 3)
    view: tuple = None        # (base shape, pcp template, NumPy template)
    kind: str = "normal"
    literal: Lit = None       # a non-tensor input instead of a tensor
    expect: str = None        # 'error' / 'any': overrides the reference for this class
    must_work: bool = True    # valid input: raising where the reference has a value is WRONG
    dtypes: tuple = tuple(DTYPES)  # dtypes this class is tried with
    other_device: bool = False     # the tensor lives on the other device (mixed devices)

    def make(self, dtype, device, other=None):
        if self.literal is not None:
            return self.literal
        dev = other if self.other_device else device
        return tensor(self.shape, dtype, self.kind, dev, self.view)


def _bcast(base, to):
    return (base, "{}.broadcast_to(%r)" % (to,), "np.broadcast_to({}, %r)" % (to,))


TENSOR_CLASSES = [
    Cls("normal"),
    Cls("rank3", (2, 3, 4)),
    Cls("rank0", ()),
    Cls("one", (1,)),
    Cls("one2d", (1, 1)),
    Cls("vector", (5,)),
    Cls("empty", (0,)),
    Cls("empty_first", (0, 3)),
    Cls("empty_last", (3, 0)),
    Cls("empty_mid", (2, 0, 3)),
    Cls("empty_last3", (2, 3, 0)),
    Cls("transposed", view=((3, 2), "{}.T", "{}.T")),
    Cls("permuted", view=((3, 4, 2), "{}.transpose(2, 0, 1)", "{}.transpose(2, 0, 1)")),
    Cls("strided", view=((4, 7), "{}[::2, ::3]", "{}[::2, ::3]")),
    Cls("reversed", view=((2, 3), "{}[::-1, ::-1]", "{}[::-1, ::-1]")),
    Cls("offset", view=((3, 5), "{}[1:, 2:]", "{}[1:, 2:]")),
    Cls("broadcast", view=_bcast((1, 3), (2, 3))),
    Cls("broadcast0d", view=_bcast((), (2, 3))),
    Cls("special", (3, 4), kind="special"),
    Cls("special_one", (1,), kind="special"),  # NaN alone: int(), item(), comparisons of one value
]

# Other devices: a CPU tensor when fuzzing the GPU and the other way round (only when a GPU exists).
MIXED_CLASS = Cls("other_device", other_device=True, must_work=False, dtypes=("float32",))

_NP_RO = "np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), dtype=np.float32).reshape(2, 3)"
LITERAL_CLASSES = [
    Cls("none", literal=Lit("None"), expect="error"),
    Cls("string", literal=Lit("'abc'"), expect="error"),
    Cls("object", literal=Lit("object()"), expect="error"),
    Cls("ragged_list", literal=Lit("[[1.0], [2.0, 3.0]]"), expect="error"),
    Cls("py_bigint", literal=Lit("2**70", "weak_int"), expect="error"),
    Cls("py_int", literal=Lit("3", "weak_int", ()), must_work=False),
    Cls("py_float", literal=Lit("1.5", "weak_float", ()), must_work=False),
    Cls("py_bool", literal=Lit("True", "weak_bool", ()), must_work=False),
    Cls("py_list", literal=Lit("[[1.0, 2.0, 3.0], [-4.0, 5.0, 6.0]]", None, (2, 3)), must_work=False),
    Cls("py_empty_list", literal=Lit("[]", None, (0,)), must_work=False),
    Cls("np_readonly", literal=Lit(_NP_RO, "float32", (2, 3)), must_work=False),
    Cls("np_bigendian", literal=Lit("np.arange(6, dtype='>f4').reshape(2, 3)", "float32", (2, 3)), must_work=False),
    Cls("np_noncontig", literal=Lit("np.arange(24.0).reshape(4, 6)[::2, ::2]", "float64", (2, 3)), must_work=False),
    Cls("np_negstride", literal=Lit("np.arange(6.0).reshape(2, 3)[:, ::-1]", "float64", (2, 3)), must_work=False),
    Cls("np_float16", literal=Lit("np.arange(6, dtype=np.float16).reshape(2, 3)", "float16", (2, 3)), must_work=False),
    Cls("np_uint8", literal=Lit("np.arange(6, dtype=np.uint8).reshape(2, 3) * 50", "int64", (2, 3)), must_work=False),
    Cls("np_uint64", literal=Lit("np.array([[0, 1, 2**64 - 1], [2**63, 5, 6]], dtype=np.uint64)", None, (2, 3)),
        must_work=False),
    Cls("np_complex", literal=Lit("np.arange(6).reshape(2, 3) + 1j", None, (2, 3)), must_work=False),
    Cls("np_object", literal=Lit("np.array([[1, 'a', None], [2, 3, 4]], dtype=object)", None, (2, 3)),
        expect="error"),
    Cls("np_0d", literal=Lit("np.array(2.5)", "float64", ()), must_work=False),
    # NumPy scalars: np.float64 is a Python float, so whether they are weak is left open (kind None)
    Cls("np_scalar", literal=Lit("np.float32(2.5)", None, ()), must_work=False),
]


def tensor_classes(device, has_other_device):
    return TENSOR_CLASSES + ([MIXED_CLASS] if has_other_device else [])


# ----------------------------------------------------------------------------------------------
# other argument classes

# Axis arguments for a tensor of shape (2, 3, 4) or (2, 3): in range, negative, out of range,
# duplicates, empty tuples, huge and non-integer values.
AXES = [None, 0, 1, -1, -2, 2, 3, -3, -4, (), (0,), (0, 1), (1, 0), (0, -1), (0, 0), (1, -2),
        2**31, 2**63 - 1, -2**63, 2**70, 1.5, "'0'", True, [0, 1]]

# Shapes for creation/reshape-like arguments: ordinary, zero-size, element counts and byte sizes
# that overflow int64 or cannot be allocated, negative dims, and non-integer entries.
SHAPES = [(2, 3), (), (0,), (3, 0), (0, 2**62), (2**62, 0), (2**31,), (2**32, 2**32), (2**62,),
          (2**63 - 1,), (2**31, 2**31, 4), (2**64,), (2**70,), (-1,), (2, -3), (1.5,), ("'a'",),
          [2, 3], 6, -1, 2**40, None]


def shape_code(s):
    if isinstance(s, tuple):
        return "(" + ", ".join(x if isinstance(x, str) else _py(x) for x in s) + ("," if len(s) == 1 else "") + ")"
    return _py(s)


def value_of(code):
    """The Python value of literal source (strings in AXES/SHAPES are already source)."""
    return eval(code, {"np": np})


def shape_expectation(shape, itemsize=4):
    """'ok', 'error' or 'any' for a creation function asked for `shape` (NumPy's rules, plus:
    a size that cannot be allocated under the worker's memory limit may raise MemoryError)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        return "error"
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
        return "error"
    if any(d < 0 for d in shape) or any(d > 2**63 - 1 for d in shape):
        return "error"
    n = math.prod(shape)
    if n == 0:
        return "any" if any(d > 2**40 for d in shape) else "ok"
    if n > 2**63 - 1 or n * itemsize > 2**63 - 1:
        return "error"
    if n * itemsize > 2**30:
        return "any"
    return "ok"


FLOAT_DTYPES = tuple(FLOATS)
