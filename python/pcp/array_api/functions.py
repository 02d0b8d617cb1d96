"""The standard's functions, with its signatures, on PCP's ops: each runs on the inputs' device
and is differentiable where its parts are. Those that need kernels PCP does not have yet are not
here (see docs/guide.md, "The Array API standard")."""
import builtins
import math

import numpy as np

import pcp

from .dtypes import SIGNED, bool, default_int, float32, int64

# -- creation -----------------------------------------------------------------------------------


def _target(device):
    """The device a creation function puts its result on."""
    return device if device is not None else pcp.get_default_device()


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in [start, stop) (the standard's arange); integers in the device's
    default integer dtype (int32 on a GPU)."""
    if dtype is None and builtins.all(isinstance(v, int) for v in (start, stop, step) if v is not None):
        dtype = default_int(_target(device))
    return pcp.arange(start, stop, step, dtype=dtype, device=device)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """obj as a tensor: copy=True always copies, False never (ValueError if it must), None when needed."""
    if isinstance(obj, pcp.Tensor):
        same = (dtype is None or pcp.DType(dtype) == obj.dtype) and (device is None or pcp.device(device) == obj.device)
        if copy is False and not same:
            raise ValueError(f"asarray: copy=False, but the {obj.dtype} tensor on {obj.device} must be converted")
        out = obj if same else pcp.asarray(obj, dtype=dtype, device=device)
        return pcp.copy(out) if copy and out is obj else out
    if copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} must be copied into a tensor")
    target = _target(device)
    if dtype is None and isinstance(obj, (int, list, tuple)) and default_int(target) != int64:
        # Python ints take the device's default integer dtype (int32 on a GPU), if they fit it
        out = pcp.asarray(obj)
        if out.dtype == int64:
            if math.prod(out.shape) and not (-2**31 <= int(pcp.min(out)) and int(pcp.max(out)) < 2**31):
                raise OverflowError(f"asarray: Python integers beyond {default_int(target)} for {target}")
            out = pcp.astype(out, default_int(target))
        return out.to(target)
    return pcp.asarray(obj, dtype=dtype, device=target)


def empty(shape, *, dtype=None, device=None):
    """A new tensor (filled with zeros: PCP does not hand out uninitialised memory)."""
    return pcp.zeros(shape, dtype=dtype, device=device)


def empty_like(x, /, *, dtype=None, device=None):
    """A new tensor of x's shape (zeros)."""
    return pcp.zeros_like(x, dtype=dtype, device=device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """Ones on the k-th diagonal (a k beyond the matrix gives zeros, whatever its size)."""
    cols = n_rows if n_cols is None else n_cols
    k = builtins.max(-n_rows, builtins.min(k, cols)) if isinstance(k, int) else k
    return pcp.eye(n_rows, n_cols, k=k, dtype=dtype, device=device)


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor sharing a DLPack producer's memory (copied when device or copy=True asks)."""
    out = pcp.from_dlpack(x)
    if device is not None and pcp.device(device) != out.device:
        if copy is False:
            raise ValueError("from_dlpack: copy=False, but the data must move to another device")
        return out.to(device)
    return pcp.copy(out) if copy else out


def full(shape, fill_value, *, dtype=None, device=None):
    """A tensor of shape filled with fill_value (a Python int: in the device's default integer
    dtype)."""
    if dtype is None and isinstance(fill_value, int) and not isinstance(fill_value, builtins.bool):
        dtype = default_int(_target(device))
    return pcp.full(shape, fill_value, dtype=dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """A tensor like x filled with fill_value."""
    return pcp.full(x.shape, fill_value, dtype=dtype or x.dtype, device=device or x.device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """num values from start to stop (stop included with endpoint), computed in float64."""
    if num < 0:
        raise ValueError(f"linspace: num must be >= 0, got {num}")
    values = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
    return pcp.asarray(values, dtype=dtype or float32, device=_target(device))


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids of 1-D tensors: 'xy' (Cartesian) or 'ij' (matrix) indexing."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) > 1 else i
        view = [1] * len(arrays)
        view[axis] = a.shape[0]
        out.append(pcp.copy(pcp.broadcast_to(pcp.reshape(a, tuple(view)), tuple(shape))))
    return out


def ones(shape, *, dtype=None, device=None):
    """A tensor of ones."""
    return pcp.ones(shape, dtype=dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    """Ones of x's shape."""
    return pcp.ones_like(x, dtype=dtype, device=device)


def zeros(shape, *, dtype=None, device=None):
    """A tensor of zeros."""
    return pcp.zeros(shape, dtype=dtype, device=device)


def zeros_like(x, /, *, dtype=None, device=None):
    """Zeros of x's shape."""
    return pcp.zeros_like(x, dtype=dtype, device=device)


def tril(x, /, *, k=0):
    """The lower triangle (of the last two axes) from diagonal k down."""
    return pcp.tril(x, k)


def triu(x, /, *, k=0):
    """The upper triangle (of the last two axes) from diagonal k up."""
    return pcp.triu(x, k)


# -- data types ---------------------------------------------------------------------------------


def astype(x, dtype, /, *, copy=True, device=None):
    """x in dtype (on device): a new tensor, or x itself when nothing changes and copy=False."""
    if device is not None:
        x = x.to(device)
    if not copy and x.dtype == pcp.DType(dtype):
        return x
    return pcp.astype(x, dtype) if x.dtype != pcp.DType(dtype) else pcp.copy(x)


# -- element-wise ---------------------------------------------------------------------------------


def _unary(op, name):
    def f(x, /):
        return op(x)
    f.__name__, f.__doc__ = name, f"The standard's {name}, element-wise."
    return f


def _binary(op, name):
    def f(x1, x2, /):
        return op(x1, x2)
    f.__name__, f.__doc__ = name, f"The standard's {name}, element-wise, with broadcasting."
    return f


abs = _unary(pcp.abs, "abs")  # noqa: A001
cos, sin, tanh, exp, log, sqrt, square = (_unary(getattr(pcp, n), n) for n in
                                          ("cos", "sin", "tanh", "exp", "log", "sqrt", "square"))
(floor, ceil, trunc, round, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, expm1, log1p, log2,  # noqa: A001
 log10) = (_unary(getattr(pcp, n), n) for n in ("floor", "ceil", "trunc", "round", "tan", "asin", "acos", "atan",
                                                "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p", "log2",
                                                "log10"))
negative = _unary(pcp.neg, "negative")
sign = _unary(pcp.sign, "sign")
bitwise_invert = _unary(pcp.bitwise_not, "bitwise_invert")
logical_not = _unary(pcp.logical_not, "logical_not")
add, subtract, multiply, divide = (_binary(getattr(pcp, n), m) for n, m in
                                   (("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("div", "divide")))
equal, not_equal, less, less_equal, greater, greater_equal = (
    _binary(getattr(pcp, n), m) for n, m in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"),
                                              ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")))
maximum, minimum, pow = (_binary(getattr(pcp, n), n) for n in ("maximum", "minimum", "pow"))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = (_binary(getattr(pcp, n), n) for n in ("bitwise_and", "bitwise_or", "bitwise_xor"))
logical_and, logical_or, logical_xor = (_binary(getattr(pcp, n), n) for n in ("logical_and", "logical_or", "logical_xor"))
(atan2, hypot, copysign, nextafter, remainder, floor_divide, bitwise_left_shift, bitwise_right_shift) = (
    _binary(getattr(pcp, n), n) for n in ("atan2", "hypot", "copysign", "nextafter", "remainder", "floor_divide",
                                          "bitwise_left_shift", "bitwise_right_shift"))


def positive(x, /):
    """+x: a copy of x."""
    return pcp.copy(x)


def reciprocal(x, /):
    """1 / x, element-wise."""
    return pcp.div(pcp.ones_like(x), x)


def isnan(x, /):
    """Where x is NaN (False everywhere for integers and booleans)."""
    return pcp.ne(x, x)


def isinf(x, /):
    """Where x is +-infinity."""
    if x.dtype in SIGNED + (bool,):
        return pcp.zeros(x.shape, dtype=bool, device=x.device)
    return pcp.eq(pcp.abs(x), math.inf)


def isfinite(x, /):
    """Where x is neither NaN nor infinite."""
    if x.dtype in SIGNED + (bool,):
        return pcp.ones(x.shape, dtype=bool, device=x.device)
    return pcp.lt(pcp.abs(x), math.inf)


def signbit(x, /):
    """Where x's sign bit is set: negative numbers, -0.0 and NaNs with the bit set."""
    if x.dtype in SIGNED:
        return pcp.lt(x, 0)
    if x.dtype == bool:
        return pcp.zeros(x.shape, dtype=bool, device=x.device)
    return pcp.lt(pcp.copysign(pcp.ones_like(x), x), 0)


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|))."""
    m = pcp.maximum(x1, x2)
    spread = pcp.log1p(pcp.exp(pcp.neg(pcp.abs(pcp.sub(x1, x2)))))
    return pcp.where(pcp.eq(x1, x2), pcp.add(m, math.log(2)), pcp.add(m, spread))  # equal infinities too


def real(x, /):
    """The real part: x itself, as a new tensor (PCP's dtypes are real)."""
    return pcp.copy(x)


def conj(x, /):
    """The complex conjugate: x itself, as a new tensor (PCP's dtypes are real)."""
    return pcp.copy(x)


def imag(x, /):
    """The imaginary part: zeros of x's shape and dtype (PCP's dtypes are real)."""
    return pcp.zeros_like(x)


def clip(x, /, min=None, max=None):  # noqa: A002
    """x limited to [min, max] (either may be None)."""
    return x if min is None and max is None else pcp.clip(x, min, max)


# -- indexing ------------------------------------------------------------------------------------


def _axis(axis, ndim, op):
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise IndexError(f"{op}: axis {axis} is out of range for {ndim} dimensions")
    return axis % builtins.max(ndim, 1)


def take(x, indices, /, *, axis=None):
    """x's elements at indices (1-D) along axis (None: x must be 1-D)."""
    if axis is None and x.ndim != 1:
        raise ValueError(f"take: axis may be None only for a 1-D array, got shape {tuple(x.shape)}")
    return pcp.take(x, indices, axis=0 if axis is None else axis)


def take_along_axis(x, indices, /, *, axis=-1):
    """x's elements at indices along axis, the other axes broadcast (as NumPy's)."""
    return pcp.take_along_axis(x, indices, axis)


# -- manipulation --------------------------------------------------------------------------------


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape."""
    shape = np.broadcast_shapes(*(tuple(a.shape) for a in arrays))
    return [pcp.broadcast_to(a, shape) for a in arrays]


def broadcast_to(x, /, shape):
    """x broadcast to shape."""
    return pcp.broadcast_to(x, tuple(shape))


def concat(arrays, /, *, axis=0):
    """The arrays joined along axis (None: flattened first)."""
    if axis is None:
        return pcp.concatenate([pcp.reshape(a, (-1,)) for a in arrays], axis=0)
    return pcp.concatenate(list(arrays), axis=axis)


def expand_dims(x, /, axis=0):
    """x with a new axis of length one at axis."""
    return pcp.expand_dims(x, axis)


def _axes(axis, ndim, op):
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(_axis(a, ndim, op) for a in (axis if isinstance(axis, tuple) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: repeated axis in {axis}")
    return axes


def flip(x, /, *, axis=None):
    """x with the order of elements reversed along axis (None: all axes)."""
    index = [slice(None)] * x.ndim
    for a in _axes(axis, x.ndim, "flip"):
        index[a] = slice(None, None, -1)
    return pcp.copy(x[tuple(index)]) if x.ndim else pcp.copy(x)


def moveaxis(x, source, destination, /):
    """x with axes moved from source to destination (ints or tuples)."""
    src = _axes(source, x.ndim, "moveaxis")
    dst = _axes(destination, x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} differ in length")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return pcp.permute(x, tuple(order))


def permute_dims(x, /, axes):
    """x with its axes permuted."""
    return pcp.permute(x, tuple(axes))


def repeat(x, repeats, /, *, axis=None):
    """Each element of x repeated (an int, or one count per element along axis)."""
    if axis is None:
        x, axis = pcp.reshape(x, (-1,)), 0
    axis = _axis(axis, x.ndim, "repeat")
    counts = np.asarray(repeats.numpy() if isinstance(repeats, pcp.Tensor) else repeats, dtype=np.int64)
    if counts.ndim > 1 or (counts < 0).any():
        raise ValueError(f"repeat: repeats must be a non-negative int or 1-D array, got {repeats!r}")
    counts = np.broadcast_to(counts, (x.shape[axis],))
    return pcp.take(x, pcp.asarray(np.repeat(np.arange(x.shape[axis]), counts), device=x.device), axis=axis)


def reshape(x, /, shape, *, copy=None):
    """x in a new shape; copy=True always copies."""
    out = pcp.reshape(x, tuple(shape))
    return pcp.copy(out) if copy else out


def roll(x, /, shift, *, axis=None):
    """x's elements shifted along axis (None: over the flattened array), wrapping around."""
    if axis is None:
        return pcp.reshape(roll(pcp.reshape(x, (-1,)), shift, axis=0), tuple(x.shape))
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, a in zip(shifts, axes):
        a = _axis(a, x.ndim, "roll")
        n = x.shape[a]
        if n:
            x = pcp.take(x, pcp.asarray((np.arange(n) - s) % n, device=x.device), axis=a)
    return x


def squeeze(x, /, axis):
    """x without the given axes of length one."""
    for a in _axes(axis, x.ndim, "squeeze"):
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} of shape {tuple(x.shape)} has length {x.shape[a]}, not 1")
    return pcp.squeeze(x, axis)


def stack(arrays, /, *, axis=0):
    """The arrays joined along a new axis."""
    return pcp.stack(list(arrays), axis=axis)


def tile(x, repetitions, /):
    """x repeated along each axis (repetitions per axis, leading axes added as needed)."""
    reps = tuple(repetitions)
    nd = builtins.max(x.ndim, len(reps))
    shape = (1,) * (nd - x.ndim) + tuple(x.shape)
    reps = (1,) * (nd - len(reps)) + reps
    x = pcp.reshape(x, shape)
    interleaved = tuple(v for s in shape for v in (1, s))
    grown = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    return pcp.reshape(pcp.copy(pcp.broadcast_to(pcp.reshape(x, interleaved), grown)),
                       tuple(r * s for r, s in zip(reps, shape)))


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple."""
    axis = _axis(axis, x.ndim, "unstack")
    return tuple(pcp.take(x, pcp.asarray(i, device=x.device), axis=axis) for i in range(x.shape[axis]))


# -- searching -----------------------------------------------------------------------------------


def argmax(x, /, *, axis=None, keepdims=False):
    """Index of the largest value (the first of ties), in the device's default integer dtype."""
    return _index_dtype(pcp.argmax(x, axis=axis, keepdims=keepdims))


def argmin(x, /, *, axis=None, keepdims=False):
    """Index of the smallest value (the first of ties), in the device's default integer dtype."""
    return _index_dtype(pcp.argmin(x, axis=axis, keepdims=keepdims))


def _index_dtype(indices):
    """int64 indices in the device's default integer dtype (int32 on a GPU)."""
    want = default_int(indices.device)
    return indices if indices.dtype == want else pcp.astype(indices, want)


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """The number of non-zero elements (in the device's default integer dtype)."""
    nonzero = x if x.dtype == bool else pcp.ne(x, pcp.zeros((), dtype=x.dtype, device=x.device))
    return sum(pcp.astype(nonzero, default_int(x.device)), axis=axis, keepdims=keepdims)


def nonzero(x, /):
    """The indices of the non-zero elements, one int64 tensor per axis (found on the host: their
    number depends on the data)."""
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension")
    return tuple(pcp.asarray(i.astype(np.int64), dtype=default_int(x.device), device=x.device)
                 for i in np.nonzero(x.numpy()))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Where each of x2 would go in the ascending 1-D x1 (x1 taken at sorter when given): before
    its equals (side='left') or after them ('right'); in the device's default integer dtype."""
    if sorter is not None:
        x1 = pcp.take(x1, sorter, axis=0)
    return pcp.astype(pcp.searchsorted(x1, x2, side=side), default_int(x1.device))


# -- sorting and sets ------------------------------------------------------------------------------


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """Indices that sort x along axis (always stable), in the device's default integer dtype."""
    return pcp.astype(pcp.argsort(x, axis=axis, descending=descending), default_int(x.device))


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """x sorted along axis (always stable; NaNs last ascending)."""
    return pcp.sort(x, axis=axis, descending=descending)


class UniqueAll(tuple):
    """unique_all's result: (values, indices, inverse_indices, counts), also by name."""
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])
    inverse_indices = property(lambda self: self[2])
    counts = property(lambda self: self[3])


class UniqueCounts(tuple):
    values = property(lambda self: self[0])
    counts = property(lambda self: self[1])


class UniqueInverse(tuple):
    values = property(lambda self: self[0])
    inverse_indices = property(lambda self: self[1])


def _unique(x):
    values, index, inverse, counts = pcp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    idx = default_int(x.device)
    return values, pcp.astype(index, idx), pcp.astype(inverse, idx), pcp.astype(counts, idx)


def unique_all(x, /):
    """The distinct values of x (NaNs each distinct), their first indices in the flattened x, each
    element's value index (x's shape) and the counts."""
    return UniqueAll(_unique(x))


def unique_counts(x, /):
    """The distinct values of x and how often each occurs."""
    values, _, _, counts = _unique(x)
    return UniqueCounts((values, counts))


def unique_inverse(x, /):
    """The distinct values of x and each element's value index (x's shape)."""
    values, _, inverse, _ = _unique(x)
    return UniqueInverse((values, inverse))


def unique_values(x, /):
    """The distinct values of x, ascending (NaNs each distinct)."""
    return pcp.unique(x)


def where(condition, x1, x2, /):
    """x1 where condition holds, else x2."""
    return pcp.where(condition, x1, x2)


# -- statistics ----------------------------------------------------------------------------------


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """The sum over axis, in dtype; by default in x's for floats and in the device's default
    integer dtype for integers and booleans (int64; int32 on a GPU)."""
    if dtype is None and x.dtype in SIGNED + (bool,):
        dtype = default_int(x.device)
    if dtype is not None and x.dtype != pcp.DType(dtype):
        x = pcp.astype(x, dtype)
    out = pcp.sum(x, axis=axis, keepdims=keepdims)
    return out if dtype is None or out.dtype == pcp.DType(dtype) else pcp.astype(out, dtype)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """The largest value over axis."""
    return pcp.max(x, axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """The smallest value over axis."""
    return pcp.min(x, axis=axis, keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """The mean over axis."""
    return pcp.mean(x, axis=axis, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The variance over axis, with correction subtracted from the count."""
    return pcp.var(x, axis=axis, ddof=correction, keepdims=keepdims)


def _in_dtype(x, dtype):
    """x in dtype; by default in x's for floats and in the device's default integer dtype for
    integers and booleans (the standard's sums and products)."""
    if dtype is None and x.dtype in SIGNED + (bool,):
        dtype = default_int(x.device)
    return x if dtype is None or x.dtype == pcp.DType(dtype) else pcp.astype(x, dtype)


def _same_dtype(out, like):
    return out if out.dtype == like.dtype else pcp.astype(out, like.dtype)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    """The product over axis (1 over none), in dtype as sum."""
    x = _in_dtype(x, dtype)
    return _same_dtype(pcp.prod(x, axis=axis, keepdims=keepdims), x)


def _cumulative(op, x, axis, dtype, include_initial, name):
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{name}: axis may be None only for a 1-D array, got shape {tuple(x.shape)}")
        axis = 0
    axis = _axis(axis, x.ndim, name)
    x = _in_dtype(x, dtype)
    out = _same_dtype(op(x, axis=axis), x)
    if include_initial:  # the empty sum (product) first
        shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
        first = pcp.full(shape, 0 if op is pcp.cumsum else 1, dtype=out.dtype, device=x.device)
        out = pcp.concatenate([first, out], axis=axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along axis (None only for 1-D x), in dtype as sum; include_initial puts the
    empty sum, 0, first."""
    return _cumulative(pcp.cumsum, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running products along axis (None only for 1-D x), in dtype as prod; include_initial puts
    the empty product, 1, first."""
    return _cumulative(pcp.cumprod, x, axis, dtype, include_initial, "cumulative_prod")


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """The standard deviation over axis, with correction subtracted from the count."""
    return pcp.sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Whether every element over axis is true."""
    return pcp.all(x, axis=axis, keepdims=keepdims)


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    """Whether some element over axis is true."""
    return pcp.any(x, axis=axis, keepdims=keepdims)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th difference along axis (prepend and append joined first)."""
    axis = _axis(axis, x.ndim, "diff")
    if n < 0:
        raise ValueError(f"diff: n must be >= 0, got {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    x = pcp.concatenate(parts, axis=axis) if len(parts) > 1 else x
    for _ in range(n):
        m = x.shape[axis]
        hi = tuple(slice(1, None) if i == axis else slice(None) for i in range(x.ndim))
        lo = tuple(slice(None, m - 1) if i == axis else slice(None) for i in range(x.ndim))
        x = pcp.logical_xor(x[hi], x[lo]) if x.dtype == bool else pcp.sub(x[hi], x[lo])
    return x


# -- linear algebra -----------------------------------------------------------------------------


def matmul(x1, x2, /):
    """The matrix product (with NumPy's rules for 1-D operands and batches)."""
    return pcp.matmul(x1, x2)


def matrix_transpose(x, /):
    """x with its last two axes swapped."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {tuple(x.shape)}")
    return pcp.swapaxes(x, -1, -2)


def tensordot(x1, x2, /, *, axes=2):
    """The sum of products over axes (an int: x1's last and x2's first; or two sequences)."""
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"tensordot: axes must be >= 0, got {axes}")
        a1, a2 = tuple(range(x1.ndim - axes, x1.ndim)), tuple(range(axes))
    else:
        a1, a2 = (tuple(_axis(a, x.ndim, "tensordot") for a in ax) for ax, x in zip(axes, (x1, x2)))
    free1 = [a for a in range(x1.ndim) if a not in a1]
    free2 = [a for a in range(x2.ndim) if a not in a2]
    k = math.prod(x1.shape[a] for a in a1)
    left = pcp.reshape(pcp.permute(x1, tuple(free1) + a1), (math.prod(x1.shape[a] for a in free1), k))
    right = pcp.reshape(pcp.permute(x2, a2 + tuple(free2)), (k, math.prod(x2.shape[a] for a in free2)))
    return pcp.reshape(pcp.matmul(left, right), tuple(x1.shape[a] for a in free1) + tuple(x2.shape[a] for a in free2))


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along axis, broadcasting the others."""
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has length {x1.shape[axis]} in x1 and {x2.shape[axis]} in x2")
    product = pcp.mul(x1, x2)
    return _same_dtype(pcp.sum(product, axis=axis), product)  # integer sums keep their dtype


__all__ = [
    # creation
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace", "meshgrid",
    "ones", "ones_like", "zeros", "zeros_like", "tril", "triu", "astype",
    # element-wise
    "abs", "add", "bitwise_and", "bitwise_invert", "bitwise_or", "bitwise_xor", "clip", "cos", "divide", "equal",
    "exp", "greater", "greater_equal", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative", "not_equal",
    "positive", "pow", "reciprocal", "sign", "sin", "sqrt", "square", "subtract", "tanh", "floor", "ceil",
    "trunc", "round", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p",
    "log2", "log10", "signbit", "copysign", "logaddexp", "atan2", "hypot", "nextafter", "remainder", "floor_divide",
    "bitwise_left_shift", "bitwise_right_shift", "real", "imag", "conj",
    # indexing, manipulation, searching
    "take", "take_along_axis", "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack", "argmax", "argmin",
    "count_nonzero", "nonzero", "where", "searchsorted", "argsort", "sort", "unique_all", "unique_counts",
    "unique_inverse", "unique_values",
    # statistics, utilities, linear algebra
    "sum", "prod", "cumulative_sum", "cumulative_prod", "max", "min", "mean", "var", "std", "all", "any", "diff", "matmul", "matrix_transpose", "tensordot",
    "vecdot",
]
