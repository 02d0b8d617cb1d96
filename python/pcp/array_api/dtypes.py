"""The standard's data type functions and inspection API on PCP's dtypes: finfo, iinfo, isdtype,
result_type, can_cast and __array_namespace_info__."""
from dataclasses import dataclass

import numpy as np

import pcp

bool = pcp.bool_  # noqa: A001 (the standard's name)
int32, int64 = pcp.int32, pcp.int64
float16, bfloat16, float32, float64 = pcp.float16, pcp.bfloat16, pcp.float32, pcp.float64

SIGNED = (int32, int64)
FLOATS = (float16, bfloat16, float32, float64)
KINDS = {"bool": (bool,), "signed integer": SIGNED, "unsigned integer": (), "integral": SIGNED,
         "real floating": FLOATS, "complex floating": (), "numeric": SIGNED + FLOATS}
_BITS = {bool: 8, int32: 32, int64: 64, float16: 16, bfloat16: 16, float32: 32, float64: 64}


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating-point dtype (the standard's finfo_object)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: object


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (the standard's iinfo_object)."""
    bits: int
    max: int
    min: int
    dtype: object


def _has_64_bits(device):
    """Whether the device computes in float64 and int64: the CPU, and GPUs with shaderFloat64 and
    shaderInt64 (pcp.gpu_info()["float64"])."""
    return str(pcp.device(device)).startswith("cpu") or pcp.gpu_info(str(pcp.device(device)))["float64"]


def default_int(device):
    """The default integer dtype on a device: int64, and int32 on a GPU without 64-bit kernels
    (the standard lets the default differ by device)."""
    return int64 if _has_64_bits(device) else int32


def _dtype_of(type):
    return type.dtype if isinstance(type, pcp.Tensor) else pcp.DType(type)


def finfo(type, /):
    """Machine limits of a floating-point dtype (or of an array's dtype).

    Args:
        type: a floating-point dtype, or a tensor of one.

    Returns:
        A finfo_object: bits, eps, max, min, smallest_normal, dtype.

    Raises:
        TypeError: a dtype that is not floating-point.

    Example:
        >>> import pcp.array_api as xp
        >>> xp.finfo(xp.float32).eps == 2.0 ** -23
        True
    """
    dtype = _dtype_of(type)
    if dtype == bfloat16:  # 8 exponent bits, as float32; 7 explicit mantissa bits
        return finfo_object(16, 2.0 ** -7, float.fromhex("0x1.fep127"), -float.fromhex("0x1.fep127"), 2.0 ** -126, dtype)
    if dtype not in FLOATS:
        raise TypeError(f"finfo: expected a floating-point dtype, got {dtype}")
    f = np.finfo(dtype.name)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), dtype)


def iinfo(type, /):
    """Machine limits of an integer dtype (or of an array's dtype).

    Args:
        type: an integer dtype, or a tensor of one.

    Returns:
        An iinfo_object: bits, max, min, dtype.

    Raises:
        TypeError: a dtype that is not an integer one.

    Example:
        >>> import pcp.array_api as xp
        >>> xp.iinfo(xp.int32).max
        2147483647
    """
    dtype = _dtype_of(type)
    if dtype not in SIGNED:
        raise TypeError(f"iinfo: expected an integer dtype, got {dtype}")
    i = np.iinfo(dtype.name)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), dtype)


def isdtype(dtype, kind):
    """Whether dtype is of a kind: a dtype, a kind's name ('bool', 'signed integer', 'unsigned
    integer', 'integral', 'real floating', 'complex floating', 'numeric') or a tuple of those.

    Raises:
        TypeError: dtype is not a dtype, or kind is none of those.

    Example:
        >>> import pcp.array_api as xp
        >>> xp.isdtype(xp.int64, ("integral", xp.float32)), xp.isdtype(xp.float16, "integral")
        (True, False)
    """
    if not isinstance(dtype, pcp.DType):
        raise TypeError(f"isdtype: expected a dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, pcp.DType):
        return dtype == kind
    if isinstance(kind, str) and kind in KINDS:
        return dtype in KINDS[kind]
    raise TypeError(f"isdtype: kind must be a dtype, one of {sorted(KINDS)} or a tuple of them, got {kind!r}")


def _promote(a, b):
    """The standard's promotion of two dtypes, within a kind (the wider one; float16 with
    bfloat16 gives float32); across kinds, what PCP's operators give."""
    if a == b:
        return a
    for kind in (SIGNED, FLOATS):
        if a in kind and b in kind:
            if {a, b} == {float16, bfloat16}:
                return float32
            return a if _BITS[a] >= _BITS[b] else b
    return (pcp.zeros((), dtype=a) + pcp.zeros((), dtype=b)).dtype


def result_type(*arrays_and_dtypes):
    """The dtype the standard's type promotion gives arrays, dtypes and Python scalars (a scalar
    takes the other operands' dtype: it does not widen them).

    Raises:
        ValueError: nothing given, or nothing but scalars.

    Example:
        >>> import pcp.array_api as xp
        >>> xp.result_type(xp.int32, xp.int64), xp.result_type(xp.float16, 1.5)
        (pcp.int64, pcp.float16)
    """
    dtypes = [x.dtype if isinstance(x, pcp.Tensor) else x for x in arrays_and_dtypes
              if not isinstance(x, (int, float, complex))]
    if not dtypes:
        raise ValueError("result_type: needs at least one array or dtype")
    out = pcp.DType(dtypes[0])
    for d in dtypes[1:]:
        out = _promote(out, pcp.DType(d))
    for s in arrays_and_dtypes:  # a float scalar makes an integral result floating
        if isinstance(s, float) and not isinstance(s, type(True)) and out in SIGNED + (bool,):
            out = _promote(out, float32)
    return out


def can_cast(from_, to, /):
    """Whether the standard's promotion allows from_ (a dtype or array) to become `to`: within a
    kind to one as wide or wider; bool to bool only.

    Example:
        >>> import pcp.array_api as xp
        >>> xp.can_cast(xp.int32, xp.int64), xp.can_cast(xp.float64, xp.float32)
        (True, False)
    """
    a, b = _dtype_of(from_), pcp.DType(to)
    if a == b:
        return True
    return any(a in kind and b in kind for kind in (SIGNED, FLOATS)) and _promote(a, b) == b


class Info:
    """The standard's inspection namespace (__array_namespace_info__())."""

    def capabilities(self):
        """{'boolean indexing': True, 'data-dependent shapes': True, 'max dimensions': 64}."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """PCP's default device (pcp.get_default_device())."""
        return pcp.get_default_device()

    def devices(self):
        """Every device PCP sees: the CPU and each GPU."""
        return [pcp.device(d.split(" ")[0]) for d in pcp.devices()]

    def default_dtypes(self, *, device=None):
        """float32 for real floating; for integers and indices int64, or int32 on a GPU without
        64-bit kernels."""
        integral = default_int(device if device is not None else pcp.get_default_device())
        return {"real floating": float32, "complex floating": None, "integral": integral, "indexing": integral}

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes of a kind (all by default), by name: float16 and bfloat16, which
        PCP has beyond the standard, are left out (the standard names none of them). A GPU holds
        bool, int32 and float32 only where it lacks 64-bit kernels (pcp.gpu_info()["float64"])."""
        device = device if device is not None else pcp.get_default_device()
        every = (bool,) + SIGNED + (float32, float64) if _has_64_bits(device) else (bool, int32, float32)
        chosen = every if kind is None else [d for d in every if isdtype(d, kind)]
        return {d.name: d for d in chosen}


def __array_namespace_info__():
    """The standard's inspection namespace: capabilities, default_device, default_dtypes, devices, dtypes.

    Example:
        >>> import pcp.array_api as xp
        >>> xp.__array_namespace_info__().default_dtypes()["integral"]
        pcp.int64
    """
    return Info()
