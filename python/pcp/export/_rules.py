"""How each PCP primitive is written in StableHLO: one function per primitive (or family).

A rule gets the emitter, the node's input values (None for an input left out), its attributes,
its output specs ((shape, dtype) each) and its host scalars (0-d float64 arguments of the exported
function), and returns the output values; a primitive that writes its inputs in place returns
(outputs, {input index: new value}). Rules compute what the primitive's kernels compute, in the
same types (float32 math in float32, the optimizers' bias corrections in float64 then rounded).
"""
import math
import struct

from ._mlir import is_float

SQRT1_2, INV_SQRT_2PI, GELU_K, GELU_C = 0.7071067811865476, 0.3989422804014327, 0.7978845608028654, 0.044715


class ExportError(ValueError):
    """A plan that no exported function can express as PCP runs it (the message says why)."""


# ---------------------------------------------------------------- elementwise
def _gelu_tanh_inner(em, x):
    """tanh(k (x + c x^3)) and x^2."""
    x2 = em.mul(x, x)
    inner = em.mul(em.mul(x, em.scalar_op("add", em.scalar_op("multiply", x2, GELU_C), 1.0)), em.const(GELU_K, x.dtype))
    return em.unary("tanh", inner), x2


def _unary(op):
    def rule(em, ins, attrs, outs, scalars):
        x = ins[0]
        simple = {"neg": "negate", "abs": "abs", "exp": "exponential", "log": "log", "sqrt": "sqrt",
                  "rsqrt": "rsqrt", "sin": "sine", "cos": "cosine", "tanh": "tanh", "sigmoid": "logistic",
                  "sign": "sign", "logical_not": "not", "bitwise_not": "not", "floor": "floor", "ceil": "ceil",
                  "round": "round_nearest_even", "expm1": "exponential_minus_one", "log1p": "log_plus_one",
                  "tan": "tan"}
        if op in simple:
            return [em.unary(simple[op], x)]
        if op in ("erf", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"):
            return [em.chlo(op, x)]
        if op == "trunc":  # toward zero: floor above 0, ceil below
            return [em.select(em.compare(x, em.const(0, x.dtype), "LT"), em.unary("ceil", x), em.unary("floor", x))]
        if op in ("log2", "log10"):
            return [em.scalar_op("multiply", em.unary("log", x), 1 / math.log(2 if op == "log2" else 10))]
        if op == "relu":
            return [em.binary("maximum", x, em.const(0, x.dtype))]
        if op == "square":
            return [em.mul(x, x)]
        if op == "silu":
            return [em.mul(x, em.unary("logistic", x))]
        if op == "gelu":  # x Phi(x)
            cdf = em.scalar_op("multiply", em.scalar_op("add", em.chlo("erf", em.scalar_op("multiply", x, SQRT1_2)), 1.0), 0.5)
            return [em.mul(x, cdf)]
        if op == "gelu_tanh":
            t, _ = _gelu_tanh_inner(em, x)
            return [em.mul(em.scalar_op("multiply", x, 0.5), em.scalar_op("add", t, 1.0))]
        raise AssertionError(op)
    return rule


_ARITH = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "pow": "power",
          "maximum": "maximum", "minimum": "minimum", "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
          "atan2": "atan2", "bitwise_left_shift": "shift_left", "bitwise_right_shift": "shift_right_arithmetic"}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


def _sign_bit(em, b):
    """b < 0, or b is -0 (1 / -0 is -inf); a NaN's sign is not read."""
    zero = em.const(0, b.dtype)
    return em.binary("or", em.compare(b, zero, "LT"), em.compare(em.div(em.const(1, b.dtype), b), zero, "LT"))


def _copysign(em, a, b):
    magnitude = em.unary("abs", a)
    return em.select(_sign_bit(em, b), em.unary("negate", magnitude), magnitude)


def _hypot(em, a, b):
    """max * sqrt(1 + (min / max)^2): the squares cannot overflow; equal magnitudes (zeros,
    infinities) give max * sqrt(2)."""
    big = em.binary("maximum", em.unary("abs", a), em.unary("abs", b))
    small = em.binary("minimum", em.unary("abs", a), em.unary("abs", b))
    q = em.div(small, big)
    scaled = em.mul(big, em.unary("sqrt", em.scalar_op("add", em.mul(q, q), 1.0)))
    return em.select(em.compare(big, small, "EQ"), em.scalar_op("multiply", big, math.sqrt(2)), scaled)


def _floored(em, a, b, want):
    """Python's a % b (want "remainder") or a // b ("floor_divide"), as the CPU kernels compute them."""
    zero = em.const(0, a.dtype)
    m = em.binary("remainder", a, b)  # C's: a's sign
    fix = em.binary("and", em.compare(m, zero, "NE"),
                    em.compare(em.compare(m, zero, "LT"), em.compare(b, zero, "LT"), "NE"))
    if not is_float(a.dtype):  # by zero gives 0, as NumPy
        by_zero = em.compare(b, zero, "EQ")
        if want == "remainder":
            return em.select(by_zero, zero, em.select(fix, em.add(m, b), m))
        q = em.div(a, b)
        return em.select(by_zero, zero, em.select(fix, em.sub(q, em.const(1, a.dtype)), q))
    if want == "remainder":
        m = em.select(fix, em.add(m, b), m)
        return em.select(em.compare(m, zero, "EQ"), _copysign(em, zero, b), m)
    d = em.div(em.sub(a, m), b)
    d = em.select(fix, em.scalar_op("subtract", d, 1.0), d)
    f = em.unary("floor", d)
    rounded = em.select(em.compare(em.sub(d, f), em.const(0.5, a.dtype), "GT"), em.scalar_op("add", f, 1.0), f)
    quotient = em.div(a, b)
    rounded = em.select(em.compare(d, zero, "EQ"), _copysign(em, zero, quotient), rounded)
    special = em.binary("or", em.compare(b, zero, "EQ"),
                        em.binary("or", em.compare(em.unary("abs", a), em.const(math.inf, a.dtype), "EQ"),
                                  em.compare(em.unary("abs", b), em.const(math.inf, a.dtype), "EQ")))
    return em.select(special, quotient, rounded)


def _binary(op):
    def rule(em, ins, attrs, outs, scalars):
        dtype, shape = attrs["dtype"], attrs["shape"]
        a, b = (em.broadcast(em.convert(v, dtype), shape) for v in ins)
        if op in _COMPARE:
            return [em.compare(a, b, _COMPARE[op])]
        if op in _ARITH:
            return [em.binary(_ARITH[op], a, b)]
        if op == "hypot":
            return [_hypot(em, a, b)]
        if op == "copysign":
            return [_copysign(em, a, b)]
        if op == "nextafter":
            return [em.chlo("next_after", a, b)]
        if op in ("remainder", "floor_divide"):
            return [_floored(em, a, b, op)]
        x, g = a, b
        if op == "gelu_grad":  # g (Phi(x) + x phi(x))
            cdf = em.scalar_op("multiply", em.scalar_op("add", em.chlo("erf", em.scalar_op("multiply", x, SQRT1_2)), 1.0), 0.5)
            pdf = em.scalar_op("multiply", em.unary("exponential", em.scalar_op("multiply", em.mul(x, x), -0.5)), INV_SQRT_2PI)
            return [em.mul(g, em.add(cdf, em.mul(x, pdf)))]
        if op == "gelu_tanh_grad":
            t, x2 = _gelu_tanh_inner(em, x)
            dt = em.mul(em.sub(em.const(1.0, x.dtype), em.mul(t, t)),
                        em.scalar_op("multiply", em.scalar_op("add", em.scalar_op("multiply", x2, 3 * GELU_C), 1.0), GELU_K))
            return [em.mul(g, em.scalar_op("multiply", em.add(em.scalar_op("add", t, 1.0), em.mul(x, dt)), 0.5))]
        raise AssertionError(op)
    return rule


def _where(em, ins, attrs, outs, scalars):
    shape, dtype = attrs["shape"], outs[0][1]
    return [em.select(em.broadcast(ins[0], shape), em.broadcast(em.convert(ins[1], dtype), shape),
                      em.broadcast(em.convert(ins[2], dtype), shape))]


def _astype(em, ins, attrs, outs, scalars):
    return [em.convert(ins[0], attrs["dtype"])]


def _cast_multi(em, ins, attrs, outs, scalars):
    return [em.convert(x, attrs["dtype"]) for x in ins]


def _sum_rows_multi(em, ins, attrs, outs, scalars):
    return [em.reduce(x, [0], "add") for x in ins]


def _identity(em, ins, attrs, outs, scalars):
    return [ins[0]]


# ---------------------------------------------------------------- shapes
def _reshape(em, ins, attrs, outs, scalars):
    return [em.reshape(ins[0], attrs["shape"])]


def _permute(em, ins, attrs, outs, scalars):
    return [em.transpose(ins[0], attrs["perm"])]


def _broadcast_to(em, ins, attrs, outs, scalars):
    return [em.broadcast(ins[0], attrs["shape"])]


def _strided(em, x, axis, start, length, step):
    """x[start : start + length * step : step] along axis (step may be negative)."""
    if step < 0:
        x, start, step = em.reverse(x, [axis]), x.shape[axis] - 1 - start, -step
    stop = start + (length - 1) * step + 1 if length else start
    return em.slice_axis(x, axis, start, stop, step)


def _slice(em, ins, attrs, outs, scalars):
    return [_strided(em, ins[0], attrs["axis"], attrs["start"], attrs["len"], attrs["step"])]


def _slice_scatter(em, ins, attrs, outs, scalars):
    g, shape, axis, start, step = ins[0], attrs["shape"], attrs["axis"], attrs["start"], attrs["step"]
    n = g.shape[axis]
    if step < 0:  # the same positions, visited upwards
        g, start, step = em.reverse(g, [axis]), start + (n - 1) * step, -step
    low, high, interior = [0] * len(shape), [0] * len(shape), [0] * len(shape)
    low[axis], interior[axis] = start, step - 1
    high[axis] = shape[axis] - start - (max(n - 1, 0) * step + min(n, 1))
    if n == 0:
        return [em.const(0, g.dtype, shape)]
    return [em.pad(g, low, high, interior)]


def _concatenate(em, ins, attrs, outs, scalars):
    return [em.concatenate(ins, attrs["axis"])]


def _split(em, ins, attrs, outs, scalars):
    out, pos, axis = [], 0, attrs["axis"]
    for n in attrs["lengths"]:
        out.append(em.slice_axis(ins[0], axis, pos, pos + n))
        pos += n
    return out


def _alias(em, ins, attrs, outs, scalars):
    """A view of the value's memory: its elements in memory order, then a slice of them."""
    x, shape, strides, offset = ins[0], attrs["shape"], attrs["strides"], attrs["offset"]
    base = attrs.get("base_strides")
    if base is None or len(base) != len(x.shape):
        raise ExportError("export.stablehlo: this plan's views (alias) do not say how their base is laid out; "
                          "trace the function again with this PCP")
    # The base in memory order: dimensions by decreasing stride must tile its memory densely.
    order = sorted((i for i in range(len(x.shape)) if x.shape[i] != 1), key=lambda i: -base[i])
    expect = 1
    for i in reversed(order):
        if base[i] != expect:
            raise ExportError(f"export.stablehlo: a view of a {tuple(x.shape)} value with strides {tuple(base)} "
                              "that does not cover its memory densely")
        expect *= x.shape[i]
    flat = em.reshape(em.transpose(x, order + [i for i in range(len(x.shape)) if i not in order]), [expect])
    numel = math.prod(shape)
    # The view: contiguous, or a permutation of a contiguous block.
    dims = sorted((i for i in range(len(shape)) if shape[i] != 1), key=lambda i: -strides[i])
    expect_s = 1
    for i in reversed(dims):
        if strides[i] != expect_s:
            raise ExportError(f"export.stablehlo: a view {tuple(shape)} with strides {tuple(strides)} of a "
                              f"{tuple(x.shape)} value (only dense views are exported)")
        expect_s *= shape[i]
    block = em.reshape(em.slice_axis(flat, 0, offset, offset + numel), [shape[i] for i in dims] or [numel])
    if not dims:
        return [em.reshape(block, shape)]
    inverse = [dims.index(i) for i in range(len(shape)) if i in dims]
    return [em.reshape(em.transpose(block, inverse), shape)]


# ---------------------------------------------------------------- reductions, products, indexing
def _reduce(kind):
    def rule(em, ins, attrs, outs, scalars):
        x, axes, keep = ins[0], attrs["axes"], attrs["keepdims"]
        if kind in ("add", "maximum", "minimum"):
            return [em.reduce(x, axes, kind, keep)]
        rest = [i for i in range(len(x.shape)) if i not in axes]
        moved = em.transpose(x, rest + list(axes))
        flat = em.reshape(moved, [x.shape[i] for i in rest] + [math.prod(x.shape[a] for a in axes)])
        return [em.reshape(em.arg_reduce(flat, kind == "argmax"), outs[0][0])]
    return rule


def _matmul(em, ins, attrs, outs, scalars):
    a, b = ins[:2]
    batch, dtype = list(attrs["batch"]), outs[0][1]
    a = em.broadcast(a, batch + list(a.shape[-2:]))
    b = em.broadcast(em.convert(b, a.dtype), batch + list(b.shape[-2:]))
    if attrs.get("alpha", 1.0) == 1.0:
        p = em.dot(a, b, len(batch), dtype)
    else:
        wide = "float64" if dtype == "float64" else "float32"  # scaled as written: rounded once
        p = em.convert(em.scalar_op("multiply", em.dot(a, b, len(batch), wide), attrs["alpha"]), dtype)
    # A plan's epilogue forms, lowered as the ops they fold: (gelu(p), p), or gelu'(h) p.
    epilogue = attrs.get("epilogue")
    if epilogue == "gelu_tanh":
        return [_unary("gelu_tanh")(em, [p], {}, outs, scalars)[0], p]
    if epilogue == "dgelu_tanh":
        shape = list(outs[0][0])
        return _binary("gelu_tanh_grad")(em, [ins[2], p], {"dtype": dtype, "shape": shape}, outs, scalars)
    return [p]


def _positive(em, idx, size):
    """Indices with negative ones counted from the end, as PCP's gathers take them."""
    return em.select(em.compare(idx, em.const(0, idx.dtype), "LT"), em.add(idx, em.const(size, idx.dtype)), idx)


def _take(em, ins, attrs, outs, scalars):
    x, idx, axis = ins[0], ins[1], attrs["axis"]
    return [em.gather(x, _positive(em, idx, x.shape[axis]), axis)]


def _check_indices(em, ins, attrs, outs, scalars):
    """The indices as int64, negatives counted from the end. A module cannot raise: an index out
    of range is not refused there (XLA's gathers clamp it; a one_hot row of it is zeros)."""
    idx = em.convert(ins[0], "int64")
    return [_positive(em, idx, attrs["size"]) if attrs["negatives"] else idx]


def _scatter_add(em, ins, attrs, outs, scalars):
    src, idx, axis, shape = ins[0], ins[1], attrs["axis"], attrs["shape"]
    return [em.scatter_add(em.const(0, src.dtype, shape), _positive(em, idx, shape[axis]), src, axis)]


# ---------------------------------------------------------------- sorting and scans
def _key_less(em, a, b):
    """a < b with NaN above every number, as PCP's sorts order them."""
    lt = em.compare(a, b, "LT")
    if not is_float(a.dtype):
        return lt
    b_nan, a_num = em.compare(b, b, "NE"), em.compare(a, a, "EQ")
    return em.binary("or", lt, em.binary("and", b_nan, a_num))


def _argsort(em, ins, attrs, outs, scalars):
    """stablehlo.sort of (x, iota) along the axis, stable; descending swaps the comparison."""
    x, axis = ins[0], attrs["axis"]
    if not x.shape:
        return [em.const(0, "int64")]
    idx = em.iota(x.shape, axis)
    region = em._region([x.dtype, x.dtype, "int64", "int64"],
                        lambda a, b, ai, bi: [_key_less(em, b, a) if attrs["descending"] else _key_less(em, a, b)])
    _, order = em._emit("stablehlo.sort", [x, idx], [(x.shape, x.dtype), (x.shape, "int64")],
                        f"dimension = {axis} : i64, is_stable = true", region)
    return [order]


def _cumulative(kind):
    def rule(em, ins, attrs, outs, scalars):
        x = ins[0]
        return [em.running(x, attrs["axis"], kind, attrs["reverse"]) if x.shape else x]
    return rule


def _cumulative_prod_backward(em, ins, attrs, outs, scalars):
    """dx_i = prod_{k<i} x_k * sum_{j>=i} g_j prod_{i<k<=j} x_k, with no division (zeros in x
    are exact), in float64 as the CPU's kernel: per row an (n, n) matrix [i, k] of x_k where
    k > i (1 elsewhere), whose running products along k are the products over (i, j]."""
    x, g = ins
    if not x.shape:
        return [g]
    nd, axis, dtype = len(x.shape), attrs["axis"] % len(x.shape), x.dtype
    perm = [d for d in range(nd) if d != axis] + [axis]
    x64, g64 = (em.convert(em.transpose(t, perm), "float64") for t in (x, g))
    lead, n = list(x64.shape[:-1]), x64.shape[-1]
    square = lead + [n, n]
    i, k = em.iota(square, nd - 1), em.iota(square, nd)
    xk = em.broadcast(em.reshape(x64, lead + [1, n]), square)
    gk = em.broadcast(em.reshape(g64, lead + [1, n]), square)
    one, zero = em.const(1, "float64", square), em.const(0, "float64", square)
    spans = em.running(em.select(em.compare(k, i, "GT"), xk, one), nd, "multiply")
    prefix = em.reduce(em.select(em.compare(k, i, "LT"), xk, one), [nd], "multiply")
    tail = em.reduce(em.select(em.compare(k, i, "GE"), em.mul(gk, spans), zero), [nd], "add")
    dx = em.convert(em.mul(prefix, tail), dtype)
    return [em.transpose(dx, [perm.index(d) for d in range(nd)])]


def _searchsorted(em, ins, attrs, outs, scalars):
    """How many of sorted order before each value (left: key_less(s, v); right: not key_less(v, s))."""
    s, v = ins
    shape = list(v.shape) + [s.shape[0]]
    sb = em.broadcast(s, shape)
    vb = em.broadcast(em.reshape(v, list(v.shape) + [1]), shape)
    before = em.unary("not", _key_less(em, vb, sb)) if attrs["right"] else _key_less(em, sb, vb)
    return [em.reduce(em.convert(before, "int64"), [len(shape) - 1], "add")]


# ---------------------------------------------------------------- nn
def _causal_mask(em, shape, T):
    """True where a row of a (..., n) tensor of causal (T, n) blocks keeps its column."""
    rows = math.prod(shape[:-1])
    r = em.iota([rows // T, T, shape[-1]], 1)
    c = em.iota([rows // T, T, shape[-1]], 2)
    return em.reshape(em.compare(c, r, "LE"), shape)


def _softmax_of(em, x, log, causal_T=0):
    if causal_T:
        x = em.select(_causal_mask(em, x.shape, causal_T), x, em.const(-math.inf, x.dtype, x.shape))
    shifted = em.sub(x, em.reduce(x, [-1], "maximum", keepdims=True))
    e = em.unary("exponential", shifted)
    total = em.reduce(e, [-1], "add", keepdims=True)
    return em.sub(shifted, em.unary("log", total)) if log else em.div(e, total)


def _softmax(log):
    def rule(em, ins, attrs, outs, scalars):
        return [_softmax_of(em, ins[0], log, attrs["causal_T"])]
    return rule


def _softmax_backward(log):
    def rule(em, ins, attrs, outs, scalars):
        y, g = ins
        if log:
            return [em.sub(g, em.mul(em.unary("exponential", y), em.reduce(g, [-1], "add", keepdims=True)))]
        return [em.mul(y, em.sub(g, em.reduce(em.mul(g, y), [-1], "add", keepdims=True)))]
    return rule


def _mean_last(em, x):
    return em.scalar_op("divide", em.reduce(x, [-1], "add", keepdims=True), x.shape[-1])


def _layer_norm(em, ins, attrs, outs, scalars):
    x, w, b = ins[:3]
    xf = em.convert(x, "float32")
    if len(ins) > 3:  # the residual form a plan makes: x + r normalized, the sum a fourth output
        xf = em.add(xf, em.convert(ins[3], "float32"))
    mean = _mean_last(em, xf)
    centered = em.sub(xf, mean)
    rstd = em.unary("rsqrt", em.scalar_op("add", _mean_last(em, em.mul(centered, centered)), attrs["eps"]))
    y = em.mul(centered, rstd)
    if w is not None:
        y = em.mul(y, em.convert(w, "float32"))
    if b is not None:
        y = em.add(y, em.convert(b, "float32"))
    return [em.convert(y, outs[0][1]), mean, rstd] + ([xf] if len(ins) > 3 else [])


def _layer_norm_backward(em, ins, attrs, outs, scalars):
    x, w, g, mean, rstd = ins[:5]
    dtype = x.dtype
    xf, gf = em.convert(x, "float32"), em.convert(g, "float32")
    xhat = em.mul(em.sub(xf, mean), rstd)
    lead = list(range(len(x.shape) - 1))
    gw, gb = em.reduce(em.mul(gf, xhat), lead, "add"), em.reduce(gf, lead, "add")
    gxhat = gf if w is None else em.mul(gf, em.convert(w, "float32"))
    gx = em.mul(rstd, em.sub(em.sub(gxhat, _mean_last(em, gxhat)), em.mul(xhat, _mean_last(em, em.mul(gxhat, xhat)))))
    if len(ins) > 5:  # the accumulate form a plan makes: another gradient added
        gx = em.add(ins[5], gx)
    out = [em.convert(v, dtype) for v in (gx, gw, gb)]
    if "partial_rows" in attrs:  # a plan's form: rows whose column sums are (gw, gb); here the sums in row 0
        rows = em.reshape(em.concatenate([out[1], out[2]], 0), [1, 2 * x.shape[-1]])
        out = [out[0], em.pad(rows, [0, 0], [attrs["partial_rows"] - 1, 0], [0, 0])]
    return out + [em.convert(out[0], outs[-1][1])] if "low_dtype" in attrs else out  # (a folded cast of gx)


def _target_mask(em, logits, targets, ignore):
    """(one-hot of the targets over the last axis, per-row true where the target counts)."""
    t = em.convert(targets, "int64")
    hot = em.compare(em.iota(logits.shape, len(logits.shape) - 1), em.reshape(t, list(t.shape) + [1]), "EQ")
    return hot, em.compare(t, em.const(ignore, "int64"), "NE")


def _cross_entropy(em, ins, attrs, outs, scalars):
    logits, targets = em.convert(ins[0], outs[0][1]), ins[1]  # (16-bit logits of a float32 loss: widened)
    hot, valid = _target_mask(em, logits, targets, attrs["ignore_index"])
    m = em.reduce(logits, [-1], "maximum", keepdims=True)
    lse = em.add(em.unary("log", em.reduce(em.unary("exponential", em.sub(logits, m)), [-1], "add", keepdims=True)), m)
    picked = em.reduce(em.select(hot, logits, em.const(0, logits.dtype, logits.shape)), [-1], "add")
    lse_rows = em.reshape(lse, targets.shape)
    loss = em.select(valid, em.sub(lse_rows, picked), em.const(0, logits.dtype, targets.shape))
    out = [loss]
    for shape, dtype in outs[1:]:
        if dtype == "int32":  # the targets as the GPU read them (keep_targets): ignored ones -1
            out.append(em.convert(em.select(valid, targets, em.const(-1, targets.dtype, targets.shape)), "int32"))
        elif len(shape) == 2:  # the GPU's per-row (max, log-sum-exp)
            rows = [shape[0], 1]
            out.append(em.concatenate([em.reshape(m, rows), em.reshape(lse, rows)], 1))
        else:  # how many targets count
            out.append(em.reduce(em.convert(em.convert(valid, "int64"), dtype), list(range(len(targets.shape))), "add"))
    return out


def _cross_entropy_backward(em, ins, attrs, outs, scalars):
    # In the logits' type (float32 for 16-bit ones, as the kernels), then in the gradient's.
    logits, g, targets = ins[0], ins[1], ins[2]
    if logits.dtype in ("float16", "bfloat16"):
        logits = em.convert(logits, "float32")
    hot, valid = _target_mask(em, logits, targets, attrs["ignore_index"])
    p = _softmax_of(em, logits, False)
    d = em.sub(p, em.convert(hot, logits.dtype))
    scale = em.select(valid, em.convert(g, logits.dtype), em.const(0, logits.dtype, targets.shape))
    return [em.convert(em.mul(d, em.reshape(scale, list(targets.shape) + [1])), outs[0][1])]


def _heads(em, ins, H):
    """(q, k, v) as (B, H, T, D) from a packed (B, T, 3C) input or three 4-D inputs."""
    if not H:
        return ins[0], ins[1], ins[2]
    B, T, C3 = ins[0].shape
    C = C3 // 3
    return tuple(em.transpose(em.reshape(em.slice_axis(ins[0], 2, i * C, (i + 1) * C), [B, T, H, C // H]), [0, 2, 1, 3])
                 for i in range(3))


def _merge(em, x):  # (B, H, T, D) -> (B, T, H D)
    B, H, T, D = x.shape
    return em.reshape(em.transpose(x, [0, 2, 1, 3]), [B, T, H * D])


def _t(em, x):
    return em.transpose(x, [0, 1, 3, 2])


def _scores(em, q, k, scale, causal):
    s = em.dot(em.scalar_op("multiply", q, scale), _t(em, k), 2, q.dtype)
    if causal:
        T, S = s.shape[2], s.shape[3]
        keep = em.broadcast(em.compare(em.iota([T, S], 1), em.iota([T, S], 0), "LE"), s.shape)
        s = em.select(keep, s, em.const(-math.inf, s.dtype, s.shape))
    return s


def _no_dropout(attrs, op):
    if attrs["dropout_p"]:
        raise ExportError(f"export.stablehlo: {op} with dropout draws random numbers, which the exported "
                          "function would not draw as PCP does; export with dropout off (model.eval())")


def _attention(em, ins, attrs, outs, scalars):
    _no_dropout(attrs, "attention")
    H = attrs["packed_heads"]
    q, k, v = _heads(em, ins, H)
    s = _scores(em, q, k, attrs["scale"], attrs["causal"])
    sf = em.convert(s, "float32")
    m = em.reduce(sf, [-1], "maximum", keepdims=True)
    lse = em.add(em.unary("log", em.reduce(em.unary("exponential", em.sub(sf, m)), [-1], "add", keepdims=True)), m)
    p = em.convert(em.unary("exponential", em.sub(sf, lse)), v.dtype)
    o = em.dot(p, v, 2, v.dtype)
    lse_shape = outs[1][0]
    return [_merge(em, o) if H else o, em.reshape(lse, lse_shape), em.const(0, "int32", outs[2][0])]


def _attention_backward(em, ins, attrs, outs, scalars):
    _no_dropout(attrs, "attention")
    H = attrs["packed_heads"]
    q, k, v = _heads(em, ins, H)
    g = ins[3] if H else ins[5]
    if H:
        B, T, C = g.shape
        g = em.transpose(em.reshape(g, [B, T, H, C // H]), [0, 2, 1, 3])
    p = _softmax_of(em, _scores(em, q, k, attrs["scale"], attrs["causal"]), False)
    dv = em.dot(_t(em, p), g, 2, v.dtype)
    dp = em.dot(g, _t(em, v), 2, v.dtype)
    ds = em.scalar_op("multiply", em.mul(p, em.sub(dp, em.reduce(em.mul(dp, p), [-1], "add", keepdims=True))), attrs["scale"])
    dq, dk = em.dot(ds, k, 2, q.dtype), em.dot(_t(em, ds), q, 2, k.dtype)
    if H:
        return [em.concatenate([_merge(em, d) for d in (dq, dk, dv)], 2)]
    return [dq, dk, dv]


def _dropout(em, ins, attrs, outs, scalars):
    _no_dropout({"dropout_p": attrs["p"]}, "dropout")
    return [ins[0]]


# The op numbering of a fused program's instructions (cpp/pcp/core/op_kinds.h).
UNARY_OPS = ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "gelu",
             "gelu_tanh", "silu", "square", "sign", "erf", "logical_not", "bitwise_not", "floor", "ceil", "trunc",
             "round", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p",
             "log2", "log10"]
BINARY_OPS = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "gelu_grad", "gelu_tanh_grad", "eq", "ne",
              "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "atan2", "hypot", "copysign",
              "nextafter", "remainder", "floor_divide", "bitwise_left_shift", "bitwise_right_shift"]


# A typed program's register types (cpp/pcp/ops/fused.cpp): 0 float32, 1 float16, 2 bfloat16.
REGISTER_TYPES = ["float32", "float16", "bfloat16"]


def fused_ops(attrs):
    """The op names of a fused_elementwise program, in order ("convert": a cast)."""
    code = attrs["code"]
    return ["convert" if not code[i] and code[i + 1] == -1 else (BINARY_OPS if code[i] else UNARY_OPS)[code[i + 1]]
            for i in range(0, len(code), 4)]


def _fused(em, ins, attrs, outs, scalars):
    """A fused_elementwise program, instruction by instruction: float32 registers, each 16-bit
    instruction's result rounded to its type, outputs in their instructions' types."""
    code, shape = attrs["code"], attrs["shape"]
    types = attrs.get("types", [0] * (len(code) // 4))
    regs = [x if t == 0 else em.convert(x, "float32") for x, t in zip(ins, attrs.get("input_types", [0] * len(ins)))]
    for bits in attrs.get("immediates", []):  # float32 bit patterns
        regs.append(em.const(struct.unpack("<f", struct.pack("<I", bits))[0], "float32"))
    rounded = {}  # register -> its 16-bit value
    for i, op, t in zip(range(0, len(code), 4), fused_ops(attrs), types):
        a, b = regs[code[i + 2]], regs[code[i + 3]]
        if op == "convert":
            r = em.broadcast(a, shape)
        elif code[i]:
            r = _binary(op)(em, [a, b], {"dtype": "float32", "shape": shape}, None, None)[0]
        else:
            r = em.broadcast(_unary(op)(em, [a], {}, None, None)[0], shape)
        if t:
            rounded[len(regs)] = em.convert(r, REGISTER_TYPES[t])
            r = em.convert(rounded[len(regs)], "float32")
        regs.append(r)
    return [rounded.get(r, regs[r]) for r in attrs["outputs"]]


# ---------------------------------------------------------------- optimizers (write their inputs)
def _f32(em, x64):
    return em.convert(x64, "float32")


def _adam(decoupled):
    def rule(em, ins, attrs, outs, scalars):
        n = len(ins) // 4
        step, lr64 = scalars
        b1, b2, eps, wd = attrs["beta1"], attrs["beta2"], attrs["eps"], attrs["weight_decay"]
        # bias corrections in float64, rounded to float32, as the kernels take them
        bc1 = _f32(em, em.sub(em.const(1.0, "float64"), em.binary("power", em.const(b1, "float64"), step)))
        bc2 = _f32(em, em.sub(em.const(1.0, "float64"), em.binary("power", em.const(b2, "float64"), step)))
        lr = _f32(em, lr64)
        inv_bc1 = em.div(em.const(1.0, "float32"), bc1)
        inv_sqrt_bc2 = em.div(em.const(1.0, "float32"), em.unary("sqrt", bc2))
        writes = {}
        for i in range(n):
            p, g, m, v = ins[i], ins[n + i], ins[2 * n + i], ins[3 * n + i]
            if not decoupled and wd:
                g = em.add(g, em.scalar_op("multiply", p, wd))
            m = em.add(em.scalar_op("multiply", m, b1), em.scalar_op("multiply", g, 1.0 - b1))
            v = em.add(em.scalar_op("multiply", v, b2), em.scalar_op("multiply", em.mul(g, g), 1.0 - b2))
            denom = em.scalar_op("add", em.mul(em.unary("sqrt", v), inv_sqrt_bc2), eps)
            update = em.div(em.mul(lr, em.mul(m, inv_bc1)), denom)
            if decoupled:
                p = em.mul(p, em.sub(em.const(1.0, "float32"), em.scalar_op("multiply", lr, wd)))
            writes.update({i: em.sub(p, update), 2 * n + i: m, 3 * n + i: v})
        return [], writes
    return rule


def _sgd(em, ins, attrs, outs, scalars):
    first64, lr64 = scalars
    mom, damp, wd, nesterov = attrs["momentum"], attrs["dampening"], attrs["weight_decay"], attrs["nesterov"]
    n = len(ins) // (3 if mom else 2)
    lr = _f32(em, lr64)
    first = em.compare(first64, em.const(0.0, "float64"), "NE")
    writes = {}
    for i in range(n):
        p, g = ins[i], ins[n + i]
        if wd:
            g = em.add(g, em.scalar_op("multiply", p, wd))
        step = g
        if mom:
            later = em.add(em.scalar_op("multiply", ins[2 * n + i], mom), em.scalar_op("multiply", g, 1.0 - damp))
            buf = em.select(first, g, later)
            writes[2 * n + i] = buf
            step = em.add(g, em.scalar_op("multiply", buf, mom)) if nesterov else buf
        writes[i] = em.sub(p, em.mul(lr, step))
    return [], writes


def _clip_grad_norm(em, ins, attrs, outs, scalars):
    total = em.const(0.0, "float64")
    for g in ins:
        g64 = em.convert(g, "float64")
        total = em.add(total, em.reduce(em.mul(g64, g64), range(len(g.shape)), "add"))
    norm = em.unary("sqrt", total)
    scale = em.div(em.const(attrs["max_norm"], "float64"), em.scalar_op("add", norm, attrs["eps"]))
    factor = _f32(em, em.binary("minimum", scale, em.const(1.0, "float64")))  # only ever scaled down
    return [em.convert(norm, outs[0][1])], {i: em.mul(g, factor) for i, g in enumerate(ins)}


RULES = {
    "where": _where, "astype": _astype, "cast_multi": _cast_multi, "copy": _identity, "to_device": _identity,
    "reshape": _reshape, "permute": _permute, "broadcast_to": _broadcast_to, "slice": _slice,
    "slice_scatter": _slice_scatter, "concatenate": _concatenate, "split": _split, "alias": _alias,
    "sum": _reduce("add"), "max": _reduce("maximum"), "min": _reduce("minimum"),
    "argmax": _reduce("argmax"), "argmin": _reduce("argmin"),
    "matmul": _matmul, "take": _take, "scatter_add": _scatter_add, "argsort": _argsort,
    "cumulative_sum": _cumulative("add"), "cumulative_prod": _cumulative("multiply"), "searchsorted": _searchsorted,
    "cumulative_prod_backward": _cumulative_prod_backward, "check_indices": _check_indices,
    "softmax": _softmax(False), "log_softmax": _softmax(True),
    "softmax_backward": _softmax_backward(False), "log_softmax_backward": _softmax_backward(True),
    "layer_norm": _layer_norm, "layer_norm_backward": _layer_norm_backward,
    "cross_entropy": _cross_entropy, "cross_entropy_backward": _cross_entropy_backward,
    "attention": _attention, "attention_backward": _attention_backward, "dropout": _dropout,
    "fused_elementwise": _fused, "adam_step": _adam(False), "adamw_step": _adam(True), "sgd_step": _sgd, "clip_grad_norm": _clip_grad_norm,
    "sum_rows_multi": _sum_rows_multi,
}
for _op in UNARY_OPS:
    RULES[_op] = _unary(_op)
for _op in BINARY_OPS:
    RULES[_op] = _binary(_op)
# Primitives with no StableHLO rule, with why (dropout and attention with dropout are refused by
# their rules, for their random draws).
REFUSED = {}
