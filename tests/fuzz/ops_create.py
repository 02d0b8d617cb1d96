"""Creation: zeros, ones, full, zeros_like, ones_like, arange, eye, rand, randn, randint (also as
pcp.random.*), asarray, tensor, from_numpy, from_dlpack; random.seed and the RNG state."""
import dataclasses
import math

import numpy as np

from . import reference as R
from .cases import Op, fn, register
from .inputs import LITERAL_CLASSES, SHAPES, TENSOR_CLASSES, Cls, Lit, shape_code, shape_expectation, tensor
from .reference import Invalid, Unspecified

ITEMSIZE = R.ITEMSIZE

# dtype arguments: every pcp dtype, names as strings, a NumPy type and things that are not dtypes
DTYPE_ARGS = ["pcp.bool_", "pcp.int32", "pcp.int64", "pcp.float16", "pcp.bfloat16", "pcp.float32", "pcp.float64",
              "'float64'", "'complex64'", "np.float32", "5", "'int8'"]
DEVICE_ARGS = ["'cpu'", "'gpu'", "'vulkan:7'", "'cuda'", "''", "5", "'gpu:-1'"]


def dtype_name(d, default="float32"):
    """The pcp dtype name an argument means, or Invalid / Unspecified."""
    import pcp
    if d is None:
        return default
    if isinstance(d, pcp.DType):
        if d.name not in ITEMSIZE:
            raise Unspecified("unknown DType value")
        return d.name
    if isinstance(d, str):
        if d in ITEMSIZE:
            return d
        raise Invalid(f"unknown dtype {d!r}")
    if d is np.float32:
        raise Unspecified("NumPy type as dtype")
    raise Invalid(f"dtype {d!r}")


def check_device(dev):
    if dev is None or dev == "cpu":
        return
    if dev in ("gpu", "gpu:0", "vulkan:0", "cuda", "cuda:0"):
        api = _gpu_api()
        if api is None:
            raise Invalid("no GPU")
        if dev.startswith(("vulkan", "cuda")) and not dev.startswith(api):
            raise Invalid(f"this machine's GPU runtime is {api}")
        return
    if isinstance(dev, str) and dev in ("vulkan:7", "", "gpu:-1", "tpu"):
        raise Invalid(f"no device {dev!r}")
    if not isinstance(dev, str):
        raise Invalid("device must be a string")
    raise Unspecified(dev)


def _gpu_api():
    """The GPU runtime's name ('vulkan', 'cuda', 'metal'), or None without a GPU."""
    import pcp
    names = [d for d in pcp.devices() if not d.startswith("cpu")]
    return names[0].split(":")[0] if names else None


def _shape_of(shape, dtype):
    e = shape_expectation(shape, ITEMSIZE[dtype])
    if e == "error":
        raise Invalid("bad shape")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return shape, e


def _filled(value):
    def ref(shape, dtype=None, device=None):
        name = dtype_name(dtype)
        check_device(device)
        shape, e = _shape_of(shape, name)
        if e != "ok":
            return R.Shape(shape)
        return np.full(shape, value)
    return ref


def _dtype_kw(k, kw, default="float32"):
    d = kw.get("dtype")
    if d is None:
        return default
    c = d.code()
    return c.removeprefix("pcp.").replace("bool_", "bool") if c.startswith("pcp.") else None


def shape_classes():
    """Shapes as the first argument; sizes that cannot be allocated may raise MemoryError."""
    out = []
    for s in SHAPES:
        src = shape_code(s)
        val = eval(src) if src != "None" else None
        ok = shape_expectation(val, 8) == "ok" if val is not None else False
        out.append(Cls(f"shape={src}", literal=Lit(src), must_work=ok))
    return out


_CREATE_EXTRA = [{"dtype": d} for d in DTYPE_ARGS] + [{"device": d} for d in DEVICE_ARGS]
for _name, _value in (("zeros", 0), ("ones", 1)):
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _filled(_value), _dtype_kw, classes=shape_classes(),
                extra=_CREATE_EXTRA))


def _full_ref(shape, fill_value, dtype=None, device=None):
    if isinstance(fill_value, bool):
        default = "bool"
    elif isinstance(fill_value, int):
        default = "int64"
    elif isinstance(fill_value, float):
        default = "float32"
    else:
        raise Invalid("fill_value must be a number")
    name = dtype_name(dtype, default)
    check_device(device)
    shape, e = _shape_of(shape, name)
    if name in ("int32", "int64") and isinstance(fill_value, float) and not math.isfinite(fill_value):
        raise Unspecified("NaN/inf into an int tensor")
    if name in ("int32", "int64") and isinstance(fill_value, int):
        lo, hi = (-2**31, 2**31 - 1) if name == "int32" else (-2**63, 2**63 - 1)
        if not lo <= fill_value <= hi:
            raise Invalid("fill value out of range of the dtype")
    if isinstance(fill_value, int) and not -2**63 <= fill_value < 2**63:
        raise Invalid("fill value does not fit in int64")
    if e != "ok":
        return R.Shape(shape)
    if name in ("int32", "int64"):
        return np.full(shape, int(fill_value), dtype=np.int64)
    return np.full(shape, fill_value, dtype=np.float64 if name != "bool" else bool)


def _full_rule(k, kw):
    if "dtype" in kw:
        return _dtype_kw(k, kw)
    return {"weak_bool": "bool", "weak_int": "int64", "weak_float": "float32"}.get(k[1])


def build_full(x, p, ctx):
    fill = p.get("fill", "1.5")
    kw = {k: Lit(v) for k, v in p.items() if k != "fill"}
    v = eval(fill)
    kind = "weak_bool" if isinstance(v, bool) else "weak_int" if isinstance(v, int) else \
        "weak_float" if isinstance(v, float) else None
    return [x, Lit(fill, kind)], kw


_FILLS = ["7", "True", "2**40", "2**63", "2**70", "-2**63", "float('nan')", "float('inf')", "1e300", "'a'", "None"]
register(Op("pcp.full", fn("pcp.full"), _full_ref, _full_rule, build=build_full, classes=shape_classes(),
            cross=[{"fill": "1.5"}],
            extra=[{"fill": f} for f in _FILLS] + [{"fill": f, "dtype": "pcp.int32"} for f in
                                                    ("7", "2**31", "2**40", "-2**31 - 1", "1.5", "float('nan')")]
            + [{"fill": "1.5", "dtype": d} for d in DTYPE_ARGS] + [{"fill": "300.0", "dtype": "pcp.float16"},
                                                                    {"fill": "1e300", "dtype": "pcp.float32"}]))


def _like(value):
    def ref(x, dtype=None, device=None):
        name = dtype_name(dtype, getattr(x, "pdt", None) or "float32")
        check_device(device)
        return np.full(np.shape(x), value)
    return ref


def _like_rule(k, kw):
    return _dtype_kw(k, kw, R.same(k[0]))


for _name, _value in (("zeros_like", 0), ("ones_like", 1)):
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _like(_value), _like_rule,
                extra=[{"dtype": d} for d in DTYPE_ARGS] + [{"device": d} for d in DEVICE_ARGS]))

# ----------------------------------------------------------------------------------------------
# arange / eye


def _arange_ref(start, stop=None, step=1, dtype=None, device=None):
    for v in (start, stop, step):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise Invalid("arange takes numbers")
        if isinstance(v, float) and not math.isfinite(v):
            raise Invalid("not finite")
        if isinstance(v, int) and not -2**63 <= v < 2**63:
            raise Invalid("does not fit in int64")
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise Invalid("step is zero")
    floats = any(isinstance(v, float) for v in (start, stop, step))
    name = dtype_name(dtype, "float32" if floats else "int64")
    check_device(device)
    n = max(math.ceil((stop - start) / step), 0) if floats else max(-((start - stop) // step), 0)
    if n > 2**63 - 1:
        raise Invalid("too many elements")
    if n > 2**26:
        return R.Shape((n,))
    vals = start + step * np.arange(n, dtype=np.float64 if floats else np.int64)
    return R.Value(vals, err_scale=np.abs(vals) * 10)


def _arange_rule(k, kw):
    if "dtype" in kw:
        return _dtype_kw(k, kw)
    return "float32" if "weak_float" in k else "int64"


def _lits(*srcs):
    kinds = []
    for s in srcs:
        v = eval(s)
        kinds.append(Lit(s, "weak_bool" if isinstance(v, bool) else "weak_int" if isinstance(v, int) else
                         "weak_float" if isinstance(v, float) else None))
    return kinds


_ARANGE = [("5",), ("2", "10", "3"), ("0", "1", "0.1"), ("10", "0", "-1"), ("0", "10", "0"), ("0", "2**40"),
           ("10**19",), ("float('nan')",), ("float('inf')",), ("0", "5", "1e-300"), ("-2**63", "2**63 - 1"),
           ("0", "-5"), ("0.5",), ("'a'",), ("None",), ("1", "2**70"), ("0", "3", "2**63 - 1"), ("2**62", "-2**62", "-1")]
register(Op("pcp.arange", fn("pcp.arange"), _arange_ref, _arange_rule, classes=[], cross=[],
            fixed=[(f"args={','.join(a)}", list(_lits(*a)), {}, None) for a in _ARANGE]
            + [(f"dtype={d}", _lits("6"), {"dtype": Lit(d)}, None) for d in DTYPE_ARGS]
            + [(f"device={d}", _lits("6"), {"device": Lit(d)}, None) for d in DEVICE_ARGS]))


def _eye_ref(n, m=None, k=0, dtype=None, device=None):
    for v in (n, m, k):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise Invalid("eye takes ints")
    m = n if m is None else m
    if n < 0 or m < 0:
        raise Invalid("negative size")
    name = dtype_name(dtype)
    check_device(device)
    if n * m > 2**63 - 1 or n * m * ITEMSIZE[name] > 2**63 - 1:
        raise Invalid("too big")
    if n * m > 2**26:
        return R.Shape((n, m))
    return np.eye(n, m, max(min(k, 10**6), -10**6))


_EYE = [("3",), ("0",), ("-1",), ("3", "0"), ("2", "5"), ("3", "None", "1"), ("3", "None", "-5"), ("3", "3", "2**63 - 1"),
        ("3", "3", "-2**63"), ("2**31",), ("2**32",), ("2**62",), ("3", "-4"), ("1.5",), ("2**70",), ("None",)]
register(Op("pcp.eye", fn("pcp.eye"), _eye_ref, lambda k, kw: _dtype_kw(k, kw), classes=[], cross=[],
            fixed=[(f"args={','.join(a)}", list(_lits(*a)), {}, None) for a in _EYE]
            + [(f"dtype={d}", _lits("3"), {"dtype": Lit(d)}, None) for d in DTYPE_ARGS]))

# ----------------------------------------------------------------------------------------------
# random


def _random_ref(kind):
    def ref(shape, dtype=None, device=None):
        name = dtype_name(dtype)
        if name not in R.FLOAT_SET:
            raise Invalid("random floats need a float dtype")
        check_device(device)
        shape, e = _shape_of(shape, name)
        if e != "ok":
            return R.Shape(shape)
        if kind == "rand":
            return R.Shape(shape, lambda v: bool(np.all((v >= 0) & (v <= 1))), "in [0, 1]")
        return R.Shape(shape, lambda v: bool(np.all(np.isfinite(v))), "finite")
    return ref


for _name in ("rand", "randn"):
    register(Op(f"pcp.{_name}", fn(f"pcp.{_name}"), _random_ref(_name), _dtype_kw, classes=shape_classes(),
                extra=_CREATE_EXTRA, covers=(f"pcp.{_name}", f"pcp.random.{_name}")))


def _randint_ref(low, high, shape, dtype=None, device=None):
    for v in (low, high):
        if isinstance(v, bool) or not isinstance(v, int):
            raise Invalid("bounds must be ints")
        if not -2**63 <= v < 2**63:
            raise Invalid("bound does not fit in int64")
    if high <= low:
        raise Invalid("high <= low")
    name = dtype_name(dtype, "int64")
    if name == "int32" and not (-2**31 <= low and high <= 2**31):
        raise Invalid("bounds out of int32")
    check_device(device)
    shape, e = _shape_of(shape, name)
    if e != "ok":
        return R.Shape(shape)
    if name in R.FLOAT_SET or name == "bool":
        raise Unspecified("randint with a non-int dtype")
    return R.Shape(shape, lambda v: bool(np.all((v >= low) & (v < high))), f"in [{low}, {high})")


_RANDINT = [("0", "10"), ("5", "5"), ("10", "0"), ("-2**63", "2**63 - 1"), ("0", "2**63"), ("0", "2**70"),
            ("0", "1"), ("1.5", "3"), ("None", "3")]
register(Op("pcp.randint", fn("pcp.randint"), _randint_ref, lambda k, kw: _dtype_kw(k, kw, "int64"), classes=[],
            cross=[], covers=("pcp.randint", "pcp.random.randint"),
            fixed=[(f"args={','.join(a)}", _lits(*a) + [Lit("(2, 3)")], {}, None) for a in _RANDINT]
            + [(f"shape={shape_code(s)}", _lits("0", "10") + [Lit(shape_code(s))], {},
                None if shape_expectation(s, 8) != "any" else "any") for s in SHAPES]
            + [(f"int32,args={','.join(a)}", _lits(*a) + [Lit("(4,)")], {"dtype": Lit("pcp.int32")}, None)
               for a in (("0", "10"), ("0", "2**31"), ("0", "2**40"), ("-2**31", "2**31 - 1"))]
            + [(f"dtype={d}", _lits("0", "10") + [Lit("(4,)")], {"dtype": Lit(d)}, None) for d in DTYPE_ARGS]))


def _seed_ref(s):
    if isinstance(s, bool) or not isinstance(s, int):
        raise Invalid("seed must be an int")
    if not -2**63 <= s < 2**64:
        raise Invalid("seed out of range")
    if s < 0:
        raise Unspecified("negative seed")
    return R.Check(lambda r: r is None, "None")


def _rng_state_ref(seed, offset):
    for v in (seed, offset):
        if isinstance(v, bool) or not isinstance(v, int):
            raise Invalid("ints")
        if not 0 <= v < 2**64:
            raise Invalid("negative or beyond uint64")  # a ValueError naming the argument
    return R.Check(lambda r: r is None, "None")


_SEEDS = ["0", "1", "-1", "2**63 - 1", "2**64 - 1", "2**64", "2**70", "1.5", "None", "'a'"]
register(
    Op("pcp.random.seed", fn("pcp.random.seed"), _seed_ref, None, classes=[], cross=[],
       fixed=[(f"seed={s}", [Lit(s)], {}, None) for s in _SEEDS], names=("seed",)),
    Op("pcp.random.set_rng_state", fn("pcp.random.set_rng_state"), _rng_state_ref, None, classes=[], cross=[],
       fixed=[(f"state={a},{b}", [Lit(a), Lit(b)], {}, None) for a, b in
              (("0", "0"), ("1", "2**64 - 1"), ("-1", "0"), ("0", "-1"), ("2**64", "0"), ("None", "0"))]
       + [("round_trip", [Lit("*pcp.random.get_rng_state()")], {}, None)], names=("set_rng_state", "rng")),
    Op("pcp.random.get_rng_state", fn("pcp.random.get_rng_state"),
       lambda: R.Check(lambda r: isinstance(r, tuple) and len(r) == 2, "a (seed, offset) tuple"), None,
       classes=[], cross=[], fixed=[("-", [], {}, None)]),
)

# ----------------------------------------------------------------------------------------------
# conversions from Python and NumPy data


def _has_big_int(data):
    if isinstance(data, (list, tuple)):
        return any(_has_big_int(d) for d in data)
    return isinstance(data, int) and not isinstance(data, bool) and not -2**63 <= data < 2**63


def _data_ref(data, dtype=None, device=None, requires_grad=False):
    """pcp.tensor / pcp.asarray: the values of data, cast to dtype."""
    import pcp
    check_device(device)
    if isinstance(data, pcp.Tensor):
        raise Unspecified("a pcp tensor as data")
    if data is None or isinstance(data, (str, bytes)):
        raise Invalid("not numeric data")
    default = getattr(data, "pdt", None)
    name = dtype_name(dtype, default) if dtype is not None else default
    if _has_big_int(data):  # as NumPy: fine as a float or bool, too big for an integer type
        if name not in R.FLOAT_SET | {"bool"}:
            raise Invalid("a Python int beyond int64")
        data = np.asarray(data, dtype=np.float64)
    a = np.asarray(data)
    if a.dtype.kind in "OcSU":
        raise Invalid("unsupported dtype")
    if a.dtype.kind == "u" and a.size and a.max() > 2**63 - 1:
        raise Unspecified("uint64 beyond int64")
    default = getattr(data, "pdt", None) or ("float32" if a.dtype.kind == "f" and not isinstance(data, np.ndarray)
                                             else None)
    name = dtype_name(dtype, default) if dtype is not None else default
    if requires_grad and name not in R.FLOAT_SET and not (name is None and a.dtype.kind == "f"):
        raise Invalid("requires_grad on a non-float tensor")
    if name in ("int32", "int64") and a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise Unspecified("NaN/inf to int")
    if name in ("int32", "int64") and a.dtype.kind == "f":
        a = np.trunc(a)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _data_rule(k, kw):
    if "dtype" in kw:
        return _dtype_kw(k, kw)
    return {"weak_float": "float32", "weak_int": "int64", "weak_bool": "bool"}.get(k[0], k[0])


_DATA_EXTRA = [{"dtype": d} for d in DTYPE_ARGS] + [{"device": d} for d in DEVICE_ARGS]
# A Python int beyond int64 is valid data for a float or bool dtype: _data_ref decides.
_DATA_CLASSES = TENSOR_CLASSES + [dataclasses.replace(c, expect=None) if c.name == "py_bigint" else c
                                  for c in LITERAL_CLASSES] + [
    Cls("py_nested_empty", literal=Lit("[[], []]", None, (2, 0)), must_work=False),
    Cls("py_mixed", literal=Lit("[1, 2.5, True]", None, (3,)), must_work=False),
    Cls("py_nan_list", literal=Lit("[float('nan'), float('inf'), -0.0]", None, (3,)), must_work=False),
    Cls("py_int_overflow_list", literal=Lit("[1, 2**63]", None, (2,)), must_work=False),
    Cls("py_tuple", literal=Lit("((1, 2), (3, 4))", None, (2, 2)), must_work=False),
    Cls("np_int8", literal=Lit("np.array([-128, 127], dtype=np.int8)", "int64", (2,)), must_work=False),
    Cls("np_datetime", literal=Lit("np.array(['2024-01-01'], dtype='datetime64[D]')"), expect="error"),
    Cls("np_structured", literal=Lit("np.zeros(2, dtype=[('a', 'f4')])"), expect="error"),
]
register(
    Op("pcp.tensor", fn("pcp.tensor"), _data_ref, _data_rule, classes=_DATA_CLASSES, extra=_DATA_EXTRA
       + [{"requires_grad": "True"}, {"requires_grad": "True", "dtype": "pcp.int64"}],
       names=("tensor", "requires_grad")),
    Op("pcp.asarray", fn("pcp.asarray"), _data_ref, _data_rule, classes=_DATA_CLASSES, extra=_DATA_EXTRA),
)


def _from_numpy_ref(a):
    if not isinstance(a, np.ndarray):
        raise Invalid("from_numpy takes a NumPy array")
    if a.dtype.kind in "OcSUMV":
        raise Invalid("unsupported dtype")
    if a.dtype.kind == "u" and a.size and a.max() > 2**63 - 1:
        raise Unspecified("uint64 beyond int64")
    return a.astype(np.float64) if a.dtype.kind == "f" else a


_NP_CLASSES = [c for c in _DATA_CLASSES if c.literal is not None] + [
    Cls("np_f32", literal=Lit("np.arange(6, dtype=np.float32).reshape(2, 3)", "float32", (2, 3))),
    Cls("np_empty", literal=Lit("np.zeros((0, 3), dtype=np.float32)", "float32", (0, 3))),
    Cls("np_bool", literal=Lit("np.array([True, False])", "bool", (2,))),
    Cls("np_f64_0d", literal=Lit("np.array(1.5)", "float64", ())),
    Cls("np_bcast", literal=Lit("np.broadcast_to(np.arange(3.0), (2, 3))", "float64", (2, 3)), must_work=False),
    Cls("pcp_tensor", literal=Lit("pcp.ones((2, 3))", "float32", (2, 3)), expect="error"),
]
register(Op("pcp.from_numpy", fn("pcp.from_numpy"), _from_numpy_ref, lambda k, kw: None, classes=_NP_CLASSES))
OPS_FROM_NUMPY_WRITE = register(Op(
    "pcp.from_numpy#readonly_write",
    # Writing through a tensor that shares a read-only NumPy array (here the bytes of b) must
    # be refused, as NumPy refuses it, instead of changing an immutable bytes object.
    lambda a, kw: ("b = bytes(12); t = pcp.from_numpy(np.frombuffer(b, dtype=np.float32)); t[...] = 1.0",
                   "np.frombuffer(b, dtype=np.float32)"),
    lambda: R.Check(lambda r: not np.any(r), "the bytes object unchanged (or an error)"), None, classes=[],
    cross=[], fixed=[("-", [], {}, None)], names=("index_assign", "from_numpy", "read-only", "readonly",
                                                  "writable", "writeable")))


def _from_dlpack_ref(obj):
    import pcp
    if obj is None or isinstance(obj, (int, float, str, list)) or type(obj) is object:
        raise Invalid("not a DLPack producer")
    if isinstance(obj, np.ndarray) and (not obj.flags.writeable or obj.dtype.kind in "OcSUMV"):
        raise Unspecified("NumPy does not export this array over DLPack")
    if isinstance(obj, pcp.Tensor):
        raise Unspecified("pcp tensor")
    try:
        a = np.asarray(obj)
    except Exception:
        raise Unspecified("not convertible")
    if a.dtype.kind in "cOu":
        raise Unspecified("dtype")
    return a.astype(np.float64) if a.dtype.kind == "f" else a


_TORCH = [("torch_f32", "torch.arange(6.0).reshape(2, 3)", (2, 3)), ("torch_T", "torch.arange(6.0).reshape(2, 3).T", (3, 2)),
          ("torch_step", "torch.arange(10.0)[::3]", (4,)), ("torch_offset", "torch.arange(10.0)[4:]", (6,)),
          ("torch_bool", "torch.tensor([True, False])", (2,)), ("torch_int32", "torch.arange(4, dtype=torch.int32)", (4,)),
          ("torch_uint8", "torch.arange(4, dtype=torch.uint8)", (4,)), ("torch_f16", "torch.ones(3, dtype=torch.float16)", (3,)),
          ("torch_bf16", "torch.ones(3, dtype=torch.bfloat16)", (3,)), ("torch_complex", "torch.zeros(2, dtype=torch.complex64)", (2,)),
          ("torch_empty", "torch.zeros(0, 3)", (0, 3)), ("torch_0d", "torch.tensor(2.5)", ()),
          ("torch_expand", "torch.ones(1, 3).expand(4, 3)", (4, 3)), ("torch_grad", "torch.ones(2, requires_grad=True)", (2,))]
_DLPACK_CLASSES = [c for c in _NP_CLASSES if c.name.startswith("np_")] + \
    [Cls(n, literal=Lit(src, None, s), must_work=False) for n, src, s in _TORCH] + \
    [Cls("pcp_roundtrip", literal=Lit("pcp.arange(6).reshape(2, 3)", "int64", (2, 3))),
     Cls("none", literal=Lit("None"), expect="error"), Cls("object", literal=Lit("object()"), expect="error"),
     Cls("py_list", literal=Lit("[1.0, 2.0]"), expect="error")]
def _on_other_device(ctx):
    return [tensor((2, 3), "float32", device=ctx.other)] if ctx.other else None


register(Op("pcp.from_dlpack", fn("pcp.from_dlpack"), _from_dlpack_ref, lambda k, kw: None,
            classes=_DLPACK_CLASSES, errors=(BufferError,), fixed=[("other_device", _on_other_device, {}, "may_raise")]))
