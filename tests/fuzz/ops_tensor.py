"""Tensor conversions, protocols and properties: astype/to, item, tolist, numpy, __array__,
DLPack (NumPy and PyTorch consumers), int/float/bool/index/len/repr/hash, shape, strides, dtype,
device, ... and the constructor."""
import numpy as np

from . import reference as R
from .cases import Op, Skip, attr, builtin, fn, method, register, unop
from .inputs import Lit, TensorArg
from .ops_create import DEVICE_ARGS, DTYPE_ARGS, ITEMSIZE, check_device, dtype_name
from .reference import ALL, Invalid, Unspecified

INT_RANGE = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}


def _pdt(x):
    return getattr(x, "pdt", None)


def _astype_ref(x, dtype):
    if dtype is None:
        raise Unspecified("dtype None (NumPy: float64)")
    name = dtype_name(dtype)
    a = np.asarray(x)
    if name == "bool":
        return a != 0
    if name in INT_RANGE:
        if a.dtype.kind == "f":
            lo, hi = INT_RANGE[name]
            if not np.all(np.isfinite(a)) or np.any((a < lo) | (a > hi)):
                raise Unspecified("float to int out of range (undefined in C++)")
            a = np.trunc(a)
        return a.astype(np.int64).astype(R.NP_DTYPE[name]) if a.dtype.kind == "f" else a.astype(R.NP_DTYPE[name])
    return a.astype(np.float64)


def build_astype(x, p, ctx):
    return [x, Lit(p["dtype"])], {}


def _target_rule(k, kw):
    return None


_AS_CROSS = [{"dtype": d} for d in DTYPE_ARGS[:7]]
_AS_EXTRA = [{"dtype": d} for d in DTYPE_ARGS[7:] + ["None", "'bfloat16'"]]
register(
    Op("pcp.astype", fn("pcp.astype"), _astype_ref, _target_rule, build=build_astype, cross=_AS_CROSS,
       extra=_AS_EXTRA),
    Op("Tensor.astype", method("astype"), _astype_ref, _target_rule, build=build_astype, cross=_AS_CROSS[::2],
       extra=_AS_EXTRA),
)


def _to_ref(x, arg):
    import pcp
    if isinstance(arg, pcp.DType):
        return _astype_ref(x, arg)
    if isinstance(arg, str) and arg in ITEMSIZE or isinstance(arg, type) or arg is None:
        raise Unspecified("a dtype name or a NumPy type")
    if not isinstance(arg, str):
        raise Invalid("to() takes a device or a dtype")
    check_device(arg)
    return np.array(x)


register(Op("Tensor.to", method("to"), _to_ref, None, build=lambda x, p, ctx: ([x, Lit(p["to"])], {}),
            cross=[{"to": "'cpu'"}, {"to": "pcp.float32"}],
            extra=[{"to": d} for d in DEVICE_ARGS + DTYPE_ARGS + ["None"]]))

# ----------------------------------------------------------------------------------------------
# Python scalars and lists


def _python_scalar(v, pdt):
    if pdt == "bool":
        return bool(v)
    if pdt in INT_RANGE:
        return int(v)
    return float(v)


def _item_ref(x):
    a = np.asarray(x)
    if a.size != 1:
        raise Invalid("item() of a tensor with more than one element")
    return _python_scalar(a.reshape(()).item(), _pdt(x))


def _tolist_ref(x):
    a = np.asarray(x)
    pdt = _pdt(x)

    def conv(v):
        return [conv(i) for i in v] if isinstance(v, list) else _python_scalar(v, pdt)
    return R.Check(lambda r, want=conv(a.tolist()): _same_list(r, want), f"{conv(a.tolist())!r:.80}")


def _same_list(r, want):
    if isinstance(want, list):
        return isinstance(r, list) and len(r) == len(want) and all(_same_list(a, b) for a, b in zip(r, want))
    if type(r) is not type(want):
        return False
    if isinstance(want, float):
        return (np.isnan(want) and np.isnan(r)) or r == want or abs(r - want) <= 1e-6 * abs(want)
    return r == want


def _repr_ref(x):
    """A str; for small integer tensors it must show every value exactly."""
    a = np.asarray(x)
    if _pdt(x) in INT_RANGE and 0 < a.size <= 12:
        want = [str(int(v)) for v in a.ravel()]
        return R.Check(lambda r: isinstance(r, str) and all(w in r for w in want), f"a str showing {want}")
    return R.Check(lambda r: isinstance(r, str), "a str")


def _int_ref(x):
    a = np.asarray(x)
    if a.size != 1:
        raise Invalid("int() of a tensor with more than one element")
    v = a.reshape(()).item()
    if isinstance(v, float) and not np.isfinite(v):
        raise Invalid("int() of NaN or inf")
    return int(v)


def _float_ref(x):
    a = np.asarray(x)
    if a.size != 1:
        raise Invalid("float() of a tensor with more than one element")
    return float(a.reshape(()).item())


def _complex_ref(x):
    v = _float_ref(x)
    return R.Check(lambda r: isinstance(r, complex) and r.imag == 0 and (r.real == v or (v != v and r.real != r.real)),
                   f"complex({v})")


def _bool_ref(x):
    a = np.asarray(x)
    if a.size == 0:
        raise Unspecified("truth value of an empty tensor")
    if a.size != 1:
        raise Invalid("ambiguous truth value")
    return bool(a.reshape(()).item())


def _index_ref(x):
    a = np.asarray(x)
    if _pdt(x) not in INT_RANGE:
        raise Invalid("only integer tensors are indices")
    if a.size != 1:
        raise Invalid("more than one element")
    if a.ndim:
        raise Unspecified("1-element tensor with dimensions as an index")
    return int(a.item())


def _len_ref(x):
    a = np.asarray(x)
    if a.ndim == 0:
        raise Invalid("len() of a 0-d tensor")
    return a.shape[0]


register(
    Op("Tensor.item", method("item"), _item_ref, None),
    Op("Tensor.tolist", method("tolist"), _tolist_ref, None),
    Op("Tensor.__int__", builtin("int"), _int_ref, None, names=("int", "item", "integer")),
    Op("Tensor.__float__", builtin("float"), _float_ref, None, names=("float", "item")),
    Op("Tensor.__complex__", builtin("complex"), _complex_ref, None, names=("complex", "item")),
    Op("Tensor.__bool__", builtin("bool"), _bool_ref, None, names=("bool", "truth", "item")),
    Op("Tensor.__index__", method("__index__"), _index_ref, None, names=("index", "integer")),
    Op("Tensor.__len__", builtin("len"), _len_ref, None, names=("len",)),
    Op("Tensor.__repr__", builtin("repr"), _repr_ref, None, names=("repr",)),
    Op("Tensor.__hash__", builtin("hash"), lambda x: R.Check(lambda r: isinstance(r, int), "an int"), None,
       names=("hash",)),
)

# ----------------------------------------------------------------------------------------------
# NumPy and DLPack


def _numpy_ref(x):
    if _pdt(x) == "bfloat16":
        raise Invalid("NumPy has no bfloat16")
    return np.array(x)


def _numpy_rule(k, kw):
    return k[0]


def _array_ref(x):
    return np.array(x)


def _array_rule(k, kw):
    return "float32" if k[0] == "bfloat16" else k[0]


def _dlpack_ref(consumer):
    def ref(x):
        if getattr(x, "dev", "cpu") != "cpu":
            raise Invalid("GPU memory is not exported as host memory (BufferError)")
        if consumer == "numpy" and _pdt(x) == "bfloat16":
            raise Unspecified("NumPy has no bfloat16")
        return R.Value(np.array(x))
    return ref


def _dlpack_device_ref(x):
    if getattr(x, "dev", "cpu") == "cpu":
        return (1, 0)
    return R.Check(lambda r: r != (1, 0), "not (1, 0) = kDLCPU for a GPU tensor")


def build_torch_consumer(x, p, ctx):
    """PyTorch's from_dlpack aborts the process on negative strides, whoever exports them
    (NumPy's reversed arrays too): not a PCP bug, so such views are not sent to it."""
    if isinstance(x, TensorArg) and x.view:
        a = eval(x.view[1].format(x.np), {"np": np})
        if any(s < 0 for s in a.strides):
            raise Skip
    return [x], {}


register(
    Op("Tensor.numpy", method("numpy"), _numpy_ref, _numpy_rule),
    Op("Tensor.__array__", fn("np.asarray"), _array_ref, _array_rule, names=("numpy", "array", "bfloat16")),
    # DLPack consumers report what they cannot import as BufferError or RuntimeError.
    Op("Tensor.__dlpack__", fn("np.from_dlpack"), _dlpack_ref("numpy"), _numpy_rule,
       errors=(BufferError, RuntimeError), names=()),  # the consumer's own messages
    Op("Tensor.__dlpack__#torch", fn("torch.from_dlpack"), _dlpack_ref("torch"), _numpy_rule,
       errors=(BufferError, RuntimeError), names=(), build=build_torch_consumer),
    Op("Tensor.__dlpack_device__", method("__dlpack_device__"), _dlpack_device_ref, None, names=("dlpack",)),
)

# ----------------------------------------------------------------------------------------------
# properties


def _strides_ref(x):
    a = np.asarray(x)
    if a.size == 0:  # any strides address no element
        return R.Check(lambda r: isinstance(r, tuple) and len(r) == a.ndim, f"{a.ndim} strides")
    return tuple(s // a.itemsize for s in a.strides)


def _device_ref(x):
    import pcp
    want = pcp.device(getattr(x, "dev", "cpu"))
    return R.Check(lambda r: r == want, repr(want))


PROPS = {
    "shape": lambda x: tuple(np.shape(x)),
    "ndim": lambda x: np.ndim(x),
    "size": lambda x: int(np.size(x)),
    "itemsize": lambda x: ITEMSIZE[_pdt(x)],
    "nbytes": lambda x: int(np.size(x)) * ITEMSIZE[_pdt(x)],
    "strides": _strides_ref,
    "dtype": lambda x: R.Check(lambda r, d=_pdt(x): getattr(r, "name", None) == d, f"pcp.{_pdt(x)}"),
    "device": _device_ref,
    "requires_grad": lambda x: False,
    "is_leaf": lambda x: True,
    "grad": lambda x: R.Check(lambda r: r is None, "None"),
    "grad_fn": lambda x: R.Check(lambda r: r is None, "None"),
}
for _name, _ref in PROPS.items():
    register(Op(f"Tensor.{_name}", attr(_name), _ref, None))

register(
    Op("Tensor.is_contiguous", method("is_contiguous"), lambda x: R.Check(lambda r: isinstance(r, bool), "a bool"),
       None),
    Op("Tensor.detach", method("detach"), lambda x: np.array(x), lambda k, kw: R.same(k[0])),
    Op("pcp.Tensor", fn("pcp.Tensor"), lambda *a: R.Expect.ERROR, None, classes=[], cross=[],
       fixed=[("no_args", [], {}, "error"), ("from_list", [Lit("[1.0, 2.0]")], {}, "any")],
       names=("Tensor", "constructor"), covers=("pcp.Tensor", "Tensor.__init__")),
)

ALL_DTYPES = ALL

# ----------------------------------------------------------------------------------------------
# the Array API standard's entry points


def _to_device_ref(x, device):
    if not isinstance(device, str):
        raise Invalid("to_device() takes a device")
    check_device(device)
    return np.array(x)


def _namespace_ref(x):
    return R.Check(lambda r: getattr(r, "__name__", None) == "pcp.array_api", "the module pcp.array_api")


register(
    Op("Tensor.to_device", method("to_device"), _to_device_ref, None,
       build=lambda x, p, ctx: ([x, Lit(p["to"])], {}), cross=[{"to": "'cpu'"}],
       extra=[{"to": d} for d in DEVICE_ARGS + ["None"]], names=("to_device", "device")),
    Op("Tensor.__array_namespace__", method("__array_namespace__"), _namespace_ref, None, names=("array_namespace",)),
    Op("Tensor.__pos__", unop("+"), lambda x: np.array(x), lambda k, kw: R.same(k[0]), dtypes=ALL, names=("positive",)),
)
