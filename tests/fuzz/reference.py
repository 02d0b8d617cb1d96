"""What a case should do, and how its outcome is classified.

The whole rule set is this table; each row is implemented by the function named beside it.

  outcome of the case                                           status   where
  ------------------------------------------------------------  -------  ----------------------
  the worker process died by a signal                           CRASH    runner.Pool.run
  no answer within --timeout seconds (per case)                 HANG     runner.Pool.run
  raised a type outside ACCEPTABLE (RuntimeError only for       UNCLEAR  check_exception
    autograd entries, BufferError only for DLPack entries)
  raised with a pybind11 / C++ runtime message (BAD_MESSAGES)   UNCLEAR  check_exception
  raised without naming the op the user called (Op.names),     UNCLEAR  check_exception
    unless it names a bad dtype/device argument (or is a DLPack
    BufferError from the library on the other side)
  raised although the input is valid, the op declares the       WRONG    classify
    dtype as supported (Op.dtypes) and the reference has a
    value (e.g. sum/any/all of an empty axis, matmul with a
    zero inner dimension, a view or a 0-d tensor)
  returned although the reference says the input is invalid     WRONG    classify
    (Expect.ERROR: bad axes, shapes that do not broadcast,
    indices out of range, sizes that overflow int64, ...)
  returned a value whose type, shape, dtype (DTYPE RULES) or    WRONG    compare
    values (TOL, NaN matches NaN, inf matches inf) differ
    from the float64 NumPy reference rounded to the dtype
  anything else                                                 OK

A NotImplementedError on the GPU that names the device is the declared way the Vulkan backend says
"float64/integer arithmetic is CPU-only" (docs/gpu.md); it is OK when it names the op.

Where PCP documents semantics that differ from NumPy, the references follow PCP (docs/guide.md,
tests/test_ops_elementwise.py): Python floats make float32 tensors, Python scalars are weak in
promotion, int and bool inputs of float-only math give float32 (but average in float64, as NumPy's mean
and var), bool + bool is or and bool * bool and (NumPy), bool - bool is an error, int sums give
int64, logsumexp of an empty axis is -inf, cross_entropy has classes on the last
axis. Values are computed in float64 from inputs that are exactly representable in every dtype
(multiples of 1/4, plus the special values), then rounded to the result's dtype.
"""
import math
import re

import numpy as np

DTYPES = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int32", "int64"]
ALL = frozenset(DTYPES)
DEVICE = "cpu"  # the device of the case being checked (set by the worker)
FLOAT_SET = frozenset(FLOATS)
NUMERIC = frozenset(INTS + FLOATS)

# Tolerance of a result of each dtype against the rounded float64 reference (conftest.TOL, with a
# little room for the GPU's float32 transcendental functions).
TOL = {
    "float64": (1e-12, 1e-12),
    "float32": (2e-5, 2e-6),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
}

# Exceptions a user may see from bad input (docs/guide.md: "Bad input raises ValueError, TypeError or
# IndexError naming the op"); allocation failures and integer overflow are also fine.
ACCEPTABLE = (ValueError, TypeError, IndexError, NotImplementedError, MemoryError, OverflowError,
              ZeroDivisionError)

# Messages that leak the binding layer instead of saying what is wrong with the input.
BAD_MESSAGES = re.compile(r"incompatible function arguments|Unable to cast|std::bad_alloc|"
                          r"bad_array_new_length|std::length_error|vector::_M|basic_string")

# Internal op names that must not stand in for the op the user called.
INTERNAL_NAMES = ("unary op", "binary op", "reduction")

# The GPU's declared "not yet" (docs/gpu.md): "<op>: float64 ... on vulkan:0 yet".
GPU_DECLARED = re.compile(r"^\w+: .*\b(float64|int64|int32|bool)\b.* on (vulkan|metal):\d+")

# Messages about a dtype or device argument name the argument instead of the op; that is enough.
ARGUMENT_MESSAGES = re.compile(r"^(unknown dtype|unsupported dtype|device '|unknown device)")


class Invalid(Exception):
    """Raised by a reference: the input is invalid, so PCP must raise."""


class Unspecified(Exception):
    """Raised by a reference: neither NumPy nor PCP's documentation fixes the outcome."""


class Expect:
    ERROR = "error"   # must raise an acceptable error
    ANY = "any"       # may return or raise (an acceptable error)


class Value:
    """A reference value (NumPy array or Python object); `lenient` marks elements where either
    NaN or the reference is right (activations at +-inf: PyTorch gives NaN, the limit is finite)."""

    def __init__(self, value, lenient=None, err_scale=None, tol=None, free=None):
        self.value, self.lenient, self.err_scale, self.tol = value, lenient, err_scale, tol
        self.free = free  # elements where any value in [-1, 1] is accepted (driver-defined)


class Shape:
    """Only the shape (and dtype rule) is checked: results too big to read, or random values."""

    def __init__(self, shape, predicate=None, what=""):
        self.shape, self.predicate, self.what = tuple(shape), predicate, what


class Check:
    """A property the result must have (random values, repr, a device tuple, ...)."""

    def __init__(self, predicate, what):
        self.predicate, self.what = predicate, what


# NumPy errors that mean "this input is invalid" (so PCP must raise too); other NumPy errors
# leave the outcome open (Expect.ANY).
NUMPY_INVALID = re.compile(
    r"out of bounds|out of range|could not be broadcast|cannot broadcast|duplicate value|"
    r"repeated axis|has no identity|empty sequence|cannot reshape|negative dimensions|"
    r"too big|mismatch|must have the same|must be equal|does not match|exceeds|"
    r"only integers, slices|index|too many indices|must be a|"
    r"all the input array dimensions|axis \d+ is out|boolean index")


def expectation(ref, args, kwargs):
    """Runs a reference; returns Value/Shape, Expect.ERROR or Expect.ANY."""
    with np.errstate(all="ignore"):
        try:
            out = ref(*args, **kwargs)
        except Invalid:
            return Expect.ERROR
        except Unspecified:
            return Expect.ANY
        except np.exceptions.AxisError:
            return Expect.ERROR
        except (IndexError, TypeError, OverflowError):
            return Expect.ERROR
        except ValueError as e:
            return Expect.ERROR if NUMPY_INVALID.search(str(e)) else Expect.ANY
        except (ZeroDivisionError, MemoryError):
            return Expect.ANY
    if isinstance(out, (Value, Shape, Check)) or (isinstance(out, str) and out in (Expect.ERROR, Expect.ANY)):
        return out
    return Value(out)


# ----------------------------------------------------------------------------------------------
# DTYPE RULES: the result dtype PCP documents for each kind of op (docs/guide.md,
# tests/test_ops_elementwise.py PROMOTION). An input's kind is its dtype name, or 'weak_int',
# 'weak_float', 'weak_bool' for Python scalars; None means "not known here" (rule not checked).

_CATEGORY = {"bool": 0, "int32": 1, "int64": 1, "float16": 2, "bfloat16": 2, "float32": 2, "float64": 2}
ITEMSIZE = {"bool": 1, "int32": 4, "int64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
_WIDTH = {"bool": 1, "int32": 32, "int64": 64, "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


def promote(a, b):
    """Result dtype of binary arithmetic on kinds a and b (weak Python scalars as in JAX/PyTorch)."""
    if a is None or b is None:
        return None
    weak_a, weak_b = a.startswith("weak"), b.startswith("weak")
    if weak_a and weak_b:
        return None
    if weak_a:
        a, b = b, a
    if b.startswith("weak"):
        if b == "weak_float":
            return a if _CATEGORY[a] == 2 else "float32"
        if b == "weak_int":
            return "int64" if a == "bool" else a
        return a  # weak bool
    ca, cb = _CATEGORY[a], _CATEGORY[b]
    if ca != cb:
        return a if ca > cb else b
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return a if _WIDTH[a] >= _WIDTH[b] else b


def arith(a, b):
    """+ - * and friends: promote; bools stay bools (+ is or, * is and, as NumPy)."""
    return promote(a, b)


def power(a, b):
    """**: promote, and bool ** bool counts in int64."""
    r = promote(a, b)
    return "int64" if r == "bool" else r


def truediv(a, b):
    r = promote(a, b)
    return None if r is None else ("float32" if _CATEGORY[r] < 2 else r)


def floating(a):
    """Float-only math (exp, softmax, mean, ...): ints and bools compute in the default float32."""
    if a is None or a.startswith("weak"):
        return None
    return a if _CATEGORY[a] == 2 else "float32"


def averaged(a):
    """mean and var: floats keep their dtype, ints and bools average in float64 (as NumPy)."""
    if a is None or a.startswith("weak"):
        return None
    return a if _CATEGORY[a] == 2 else "float64"


def same(a):
    return None if a is None or a.startswith("weak") else a


def summed(a):
    """sum: ints and bools add up in int64 (NumPy on Linux)."""
    if a is None or a.startswith("weak"):
        return None
    return a if _CATEGORY[a] == 2 else "int64"


# ----------------------------------------------------------------------------------------------
# numeric references (float64)


def unwrap(v):
    """The array of a reference result (Value or plain)."""
    return v.value if isinstance(v, Value) else v


def bf16_round(x):
    """float64 -> nearest bfloat16 (ties to even), returned as float64."""
    f = np.asarray(x, dtype=np.float64).astype(np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    out = rounded.view(np.float32).astype(np.float64)
    return np.where(np.isnan(f), np.nan, out)


NP_DTYPE = {"bool": np.bool_, "int32": np.int32, "int64": np.int64, "float16": np.float16,
            "float32": np.float32, "float64": np.float64}


def round_to(x, dtype):
    """The values of x as a tensor of `dtype` would hold them (float64 for float dtypes)."""
    x = np.asarray(x)
    if dtype == "bfloat16":
        return bf16_round(x.astype(np.float64))
    if dtype in FLOAT_SET:
        return x.astype(NP_DTYPE[dtype]).astype(np.float64)
    if dtype == "bool":
        return x.astype(bool)
    if x.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            return x.astype(NP_DTYPE[dtype])
    return x.astype(NP_DTYPE[dtype])


def as_float(x):
    """float64 values of x for float math; ints and bools are first rounded to float32, the
    default float that PCP computes them in."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":
        return x.astype(np.float32).astype(np.float64)
    return x.astype(np.float64) if x.dtype.kind == "f" else x


def inf_slices(x, axis):
    """Slices along `axis` that hold an infinity: softmax there is NaN in PyTorch, so either
    NaN or the limit is accepted."""
    return np.broadcast_to(np.any(np.isinf(x), axis=axis, keepdims=True), x.shape)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    return _erf(as_float(x))


def sigmoid(x):
    x = as_float(x)
    return np.exp(-np.logaddexp(0.0, -x))


def gelu(x):
    x = as_float(x)
    return Value(0.5 * x * (1.0 + erf(x / math.sqrt(2.0))), lenient=np.isinf(x))


def gelu_tanh(x):
    x = as_float(x)
    return Value(0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3))),
                 lenient=np.isinf(x))


def silu(x):
    x = as_float(x)
    return Value(x * sigmoid(x), lenient=np.isinf(x))


def logsumexp(x, axis=None, keepdims=False):
    x = as_float(x)
    if x.size == 0 and axis is None:
        return np.full((1,) * x.ndim if keepdims else (), -np.inf)
    if x.size == 0:
        return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))  # -inf, NumPy's shapes
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if keepdims:
        return r
    return np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


def softmax(x, axis=-1):
    x = as_float(x)
    norm_axis(axis, x.ndim)
    if x.ndim == 0:
        r = softmax(x.reshape(1), 0)
        return Value(r.value.reshape(()), lenient=r.lenient.reshape(()))
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return Value(e / e.sum(axis=axis, keepdims=True), lenient=inf_slices(x, axis))


def log_softmax(x, axis=-1):
    x = as_float(x)
    norm_axis(axis, x.ndim)
    if x.ndim == 0:
        r = log_softmax(x.reshape(1), 0)
        return Value(r.value.reshape(()), lenient=r.lenient.reshape(()))
    if x.size == 0:
        return x.copy()
    # (x - m) - log(sum exp(x - m)): x - logsumexp(x) cancels when x is near the float's max
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    r = (x - m) - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return Value(r, lenient=inf_slices(x, axis))


def norm_axis(axis, ndim):
    """A valid axis index or Invalid (bools are not axes; NumPy's integer rules otherwise)."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise Invalid(f"axis {axis!r} is not an integer")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise Invalid(f"axis {axis} out of range")
    return axis % max(ndim, 1)


# ----------------------------------------------------------------------------------------------
# comparison of a result with the reference


def to_numpy(t):
    """float64 (or exact int/bool) NumPy copy of a pcp tensor on any device (as conftest.to_np)."""
    import pcp
    t = t.to("cpu")
    if t.dtype in (pcp.float16, pcp.bfloat16, pcp.float32):
        return np.asarray(t.astype(pcp.float64).numpy())
    return np.array(t.numpy())


def compare(result, expected, out_dtype, device):
    """None when result matches the expectation, else a short description of the difference."""
    import pcp
    if isinstance(expected, Check):
        return None if expected.predicate(result) else f"returned {_short(result)}, expected {expected.what}"
    if isinstance(expected, Shape):
        if not isinstance(result, pcp.Tensor):
            return f"returned {type(result).__name__}, expected a Tensor"
        if tuple(result.shape) != expected.shape:
            return f"shape {tuple(result.shape)}, expected {expected.shape}"
        if out_dtype is not None and result.dtype.name != out_dtype:
            return f"dtype {result.dtype.name}, expected {out_dtype}"
        if expected.predicate is not None and not expected.predicate(to_numpy(result)):
            return f"values are not {expected.what}"
        return None
    return _compare_value(result, expected.value, out_dtype, expected.lenient, expected.err_scale, expected.tol,
                          expected.free)


def _compare_value(result, ref, out_dtype, lenient=None, err_scale=None, tol=None, free=None):
    import pcp
    if isinstance(ref, (list, tuple)):
        if not isinstance(result, (list, tuple)):
            return f"returned {type(result).__name__}, expected a {type(ref).__name__}"
        if len(result) != len(ref):
            return f"{len(result)} items, expected {len(ref)}"
        for i, (r, e) in enumerate(zip(result, ref)):
            d = _compare_value(r, e, out_dtype, tol=tol)
            if d:
                return f"item {i}: {d}"
        return None
    if isinstance(ref, (bool, int, float)) and not isinstance(ref, np.generic):
        return _compare_scalar(result, ref)
    ref = np.asarray(ref)
    if isinstance(result, pcp.Tensor):
        if tuple(result.shape) != ref.shape:
            return f"shape {tuple(result.shape)}, expected {ref.shape}"
        if out_dtype is not None and result.dtype.name != out_dtype:
            return f"dtype {result.dtype.name}, expected {out_dtype}"
        got = to_numpy(result)
        dtype = result.dtype.name
    elif hasattr(result, "__array__") or hasattr(result, "__dlpack__"):  # NumPy / PyTorch results
        dtype = str(result.dtype).replace("torch.", "")
        r = result.detach() if hasattr(result, "detach") else result
        got = np.asarray(r.float() if dtype == "bfloat16" else r)
        if got.shape != ref.shape:
            return f"shape {got.shape}, expected {ref.shape}"
        if out_dtype is not None and dtype != out_dtype:
            return f"dtype {dtype}, expected {out_dtype}"
        if got.dtype.kind == "f":
            got = got.astype(np.float64)
    else:
        return f"returned {type(result).__name__}, expected a Tensor"
    if ref.dtype.kind == "c" or ref.dtype == object:
        return f"got {got.ravel()[:4]}, expected {ref.ravel()[:4]}"
    e = round_to(ref, dtype)
    if dtype not in TOL:
        bad = got != e
    else:
        rtol, atol = tol or TOL[dtype]
        e = e.astype(np.float64)
        scale = np.abs(np.where(np.isfinite(e), e, 0))
        if err_scale is not None:
            scale = scale + np.asarray(err_scale, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            ok = (np.isnan(got) & np.isnan(e)) | (got == e) | (np.abs(got - e) <= atol + rtol * scale)
            if err_scale is not None:  # partial sums beyond the accumulator's range may overflow
                acc_max = np.finfo(np.float64 if dtype == "float64" else np.float32).max
                ok |= ~np.isfinite(got) & (np.broadcast_to(err_scale, ok.shape) > acc_max)
            if lenient is not None:
                ok |= np.broadcast_to(lenient, ok.shape) & np.isnan(got)
            if free is not None:
                ok |= np.broadcast_to(free, ok.shape) & (np.abs(got) <= 1)
        bad = ~ok
    if np.any(bad):
        idx = [tuple(int(j) for j in i) for i in np.argwhere(bad)[:3]]
        detail = ", ".join(f"{i}: got {got[i]!r} expected {e[i]!r}" for i in idx)
        return f"{int(np.sum(bad))} of {bad.size} values differ ({dtype}): {detail}"
    return None


def _short(v):
    s = repr(v)
    return s if len(s) < 60 else s[:57] + "..."


def _compare_scalar(result, ref):
    if type(result) is not type(ref):
        return f"returned {type(result).__name__} {result!r}, expected {type(ref).__name__} {ref!r}"
    if isinstance(ref, float):
        if math.isnan(ref) and math.isnan(result):
            return None
        if result == ref or abs(result - ref) <= 1e-6 * abs(ref):
            return None
    elif result == ref:
        return None
    return f"returned {result!r}, expected {ref!r}"


# ----------------------------------------------------------------------------------------------
# exceptions


def _names(name, message):
    """Whether `message` names `name` as a word (so 'max' is not found in 'maximum:'); the
    in-place spelling counts too ('requires_grad_:' names requires_grad)."""
    name = name.lower()
    if not name[:1].isalnum():
        return name in message
    return re.search(rf"(?<!\w){re.escape(name)}_?(?!\w)", message) is not None


def check_exception(exc, op, device):
    """(status, detail) for an exception PCP raised: UNCLEAR when its type or message is not one
    a user can act on, else None (the caller decides between OK and WRONG)."""
    name = type(exc).__name__
    msg = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    detail = f"{name}: {msg}"
    if not isinstance(exc, ACCEPTABLE + tuple(op.errors)):
        return "UNCLEAR", f"{detail} (exception type)"
    # A call without its required arguments is Python's calling error (pybind11 words it as
    # "f(): incompatible function arguments ... Invoked with: " and nothing after it).
    missing_arguments = re.search(r"Invoked with:\s*$", str(exc)) is not None
    if BAD_MESSAGES.search(str(exc)) and not missing_arguments:
        return "UNCLEAR", f"{detail} (binding message)"
    if not op.names or ARGUMENT_MESSAGES.match(msg) or isinstance(exc, BufferError):
        return None  # BufferError: the DLPack producer/consumer on the other side refused
    if device != "cpu" and isinstance(exc, NotImplementedError) and GPU_DECLARED.match(msg):
        return None  # a CPU-only dtype on the GPU, named by the op that met it (maybe inside the case's code)
    low = msg.lower()
    if not any(_names(n, low) for n in op.names):
        return "UNCLEAR", f"{detail} (does not name {op.names[0]!r})"
    for internal in INTERNAL_NAMES:
        if low.startswith(internal) and not any(n.lower().startswith(internal) for n in op.names):
            return "UNCLEAR", f"{detail} (internal op name)"
    return None
