"""A small writer of StableHLO MLIR text in MLIR's generic operation form.

Every value is an SSA name with its shape and dtype; each method appends one operation and
returns its result. The generic form ("stablehlo.add"(%a, %b) : (types) -> type) is what every
MLIR parser reads, whatever the dialect's version prints for its pretty form.
"""
import math

import numpy as np

_TYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
          "int32": "i32", "int64": "i64", "bool": "i1"}
# Bit patterns of the non-finite floats (MLIR reads a hex literal as the element's bits).
_SPECIAL = {"float32": (0x7F800000, 0xFF800000, 0x7FC00000), "float64": (0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000),
            "float16": (0x7C00, 0xFC00, 0x7E00), "bfloat16": (0x7F80, 0xFF80, 0x7FC0)}
_LIMITS = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1), "bool": (0, 1)}


def is_float(dtype):
    return dtype in _SPECIAL


def mlir_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + _TYPES[dtype] + ">"


def literal(value, dtype):
    """value as a dense<...> element of dtype."""
    if dtype == "bool":
        return "true" if value else "false"
    if not is_float(dtype):
        return str(int(value))
    value = float(value)
    if math.isfinite(value):
        text = repr(value)  # MLIR wants a point before an exponent: 1.0e-05, not 1e-05
        return text.replace("e", ".0e") if "e" in text and "." not in text else text
    inf, ninf, nan = _SPECIAL[dtype]
    bits = nan if math.isnan(value) else inf if value > 0 else ninf
    return f"0x{bits:X}"


def lowest(dtype):
    return -math.inf if is_float(dtype) else _LIMITS[dtype][0]


def highest(dtype):
    return math.inf if is_float(dtype) else _LIMITS[dtype][1]


class Value:
    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return mlir_type(self.shape, self.dtype)


def _nested(x):
    return "[" + ", ".join(_nested(i) for i in x) + "]" if isinstance(x, list) else ("true" if x else "false")


def _ints(xs):
    return "array<i64" + (": " + ", ".join(str(int(x)) for x in xs) if len(xs) else "") + ">"


def _list(xs):
    return "[" + ", ".join(str(int(x)) for x in xs) + "]"


class Emitter:
    def __init__(self):
        self.lines = []
        self._count = 0

    def _name(self):
        self._count += 1
        return f"%{self._count}"

    def _emit(self, op, operands, results, attrs="", region=""):
        """Appends one operation with len(results) results ((shape, dtype) each)."""
        name = self._name()
        outs = [Value(name if len(results) == 1 else f"{name}#{i}", s, d) for i, (s, d) in enumerate(results)]
        lhs = name if len(results) == 1 else f"{name}:{len(results)}"
        types = ", ".join(v.type for v in outs)
        self.lines.append(f'{lhs} = "{op}"({", ".join(v.name for v in operands)}){region}'
                          f'{" {" + attrs + "}" if attrs else ""} : ({", ".join(v.type for v in operands)}) -> '
                          f'{types if len(outs) == 1 else "(" + types + ")"}')
        return outs[0] if len(outs) == 1 else outs

    def op(self, op, operands, shape, dtype, attrs=""):
        return self._emit("stablehlo." + op, operands, [(shape, dtype)], attrs)

    # ----- values
    def array(self, data, shape, dtype):
        """A constant holding data (a NumPy array of the values, shape `shape`), exactly: its
        elements' bits as hex (little-endian), or true/false for bool."""
        shape = tuple(shape)
        if 0 in shape:
            return self.const(0, dtype, shape)
        a = np.asarray(data).reshape(shape)
        if dtype == "bool":
            body = _nested(a.tolist())
        else:
            if dtype == "bfloat16":  # exact in float32: its upper 16 bits
                bits = (np.asarray(a, np.float32).view(np.uint32) >> 16).astype("<u2")
            else:
                bits = np.asarray(a, {"float32": "<f4", "float64": "<f8", "float16": "<f2", "int32": "<i4",
                                      "int64": "<i8"}[dtype])
            body = '"0x' + bits.tobytes().hex().upper() + '"'
        return self._emit("stablehlo.constant", [], [(shape, dtype)], f"value = dense<{body}> : {mlir_type(shape, dtype)}")

    def const(self, value, dtype, shape=()):
        c = self._emit("stablehlo.constant", [], [((), dtype)], f"value = dense<{literal(value, dtype)}> : {mlir_type((), dtype)}")
        return self.broadcast(c, shape)

    def iota(self, shape, dim, dtype="int64"):
        return self.op("iota", [], shape, dtype, f"iota_dimension = {dim} : i64")

    def convert(self, x, dtype):
        if x.dtype == dtype:
            return x
        if dtype == "bool":  # nonzero is true
            return self.compare(x, self.const(0, x.dtype, x.shape), "NE")
        return self.op("convert", [x], x.shape, dtype)

    # ----- shapes
    def broadcast(self, x, shape):
        """x broadcast to shape as NumPy does (trailing dimensions aligned)."""
        shape = tuple(shape)
        if x.shape == shape:
            return x
        lead = len(shape) - len(x.shape)
        squeezed = [i for i, d in enumerate(x.shape) if d == 1 and shape[lead + i] != 1]
        if squeezed:  # size-1 dimensions that grow are dropped first: broadcast_in_dim maps sizes 1:1 or from 1
            x = self.reshape(x, [d for i, d in enumerate(x.shape) if i not in squeezed])
        dims = [lead + i for i in range(len(shape) - lead) if i not in squeezed]
        return self.op("broadcast_in_dim", [x], shape, x.dtype, f"broadcast_dimensions = {_ints(dims)}")

    def reshape(self, x, shape):
        return x if tuple(shape) == x.shape else self.op("reshape", [x], shape, x.dtype)

    def transpose(self, x, perm):
        if list(perm) == list(range(len(perm))):
            return x
        return self.op("transpose", [x], [x.shape[p] for p in perm], x.dtype, f"permutation = {_ints(perm)}")

    def slice(self, x, starts, limits, strides=None):
        strides = strides or [1] * len(starts)
        shape = [max(0, -(-(e - b) // s)) for b, e, s in zip(starts, limits, strides)]
        return self.op("slice", [x], shape, x.dtype,
                       f"start_indices = {_ints(starts)}, limit_indices = {_ints(limits)}, strides = {_ints(strides)}")

    def slice_axis(self, x, axis, start, stop, step=1):
        starts, limits, strides = [0] * len(x.shape), list(x.shape), [1] * len(x.shape)
        starts[axis], limits[axis], strides[axis] = start, stop, step
        return self.slice(x, starts, limits, strides)

    def reverse(self, x, axes):
        return self.op("reverse", [x], x.shape, x.dtype, f"dimensions = {_ints(axes)}")

    def concatenate(self, xs, axis):
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        return self.op("concatenate", xs, shape, xs[0].dtype, f"dimension = {axis} : i64")

    def pad(self, x, low, high, interior):
        shape = [lo + d + hi + max(0, d - 1) * it for d, lo, hi, it in zip(x.shape, low, high, interior)]
        return self.op("pad", [x, self.const(0, x.dtype)], shape, x.dtype,
                       f"edge_padding_low = {_ints(low)}, edge_padding_high = {_ints(high)}, interior_padding = {_ints(interior)}")

    # ----- arithmetic
    def unary(self, op, x):
        return self.op(op, [x], x.shape, x.dtype)

    def binary(self, op, a, b):
        """a op b, broadcast as NumPy does, in a's dtype (b converted)."""
        shape = _broadcast_shapes(a.shape, b.shape)
        a, b = self.broadcast(a, shape), self.broadcast(self.convert(b, a.dtype), shape)
        return self.op(op, [a, b], shape, a.dtype)

    def add(self, a, b): return self.binary("add", a, b)
    def sub(self, a, b): return self.binary("subtract", a, b)
    def mul(self, a, b): return self.binary("multiply", a, b)
    def div(self, a, b): return self.binary("divide", a, b)

    def scalar_op(self, op, x, value):
        return self.binary(op, x, self.const(value, x.dtype))

    def compare(self, a, b, direction):
        shape = _broadcast_shapes(a.shape, b.shape)
        a, b = self.broadcast(a, shape), self.broadcast(self.convert(b, a.dtype), shape)
        kind = "FLOAT" if is_float(a.dtype) else "UNSIGNED" if a.dtype == "bool" else "SIGNED"
        return self.op("compare", [a, b], shape, "bool",
                       f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                       f"compare_type = #stablehlo<comparison_type {kind}>")

    def select(self, cond, a, b):
        shape = _broadcast_shapes(_broadcast_shapes(cond.shape, a.shape), b.shape)
        return self.op("select", [self.broadcast(cond, shape), self.broadcast(a, shape),
                                  self.broadcast(self.convert(b, a.dtype), shape)], shape, a.dtype)

    def chlo(self, op, x, *more):
        return self._emit("chlo." + op, [x, *more], [(x.shape, x.dtype)])

    # ----- reductions and products
    def _region(self, arg_types, body):
        """A one-block region: body(args) appends its operations and returns the values yielded."""
        outer, self.lines = self.lines, []
        args = [Value(self._name(), (), d) for d in arg_types]
        results = body(*args)
        self.lines.append(f'"stablehlo.return"({", ".join(v.name for v in results)}) : '
                          f'({", ".join(v.type for v in results)}) -> ()')
        inner, self.lines = self.lines, outer
        head = "^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in args) + "):"
        return " ({\n    " + head + "\n      " + "\n      ".join(inner) + "\n    })"

    def reduce(self, x, axes, kind, keepdims=False):
        """Sum ("add"), product ("multiply"), "maximum" or "minimum" of x over axes."""
        init = {"add": 0, "multiply": 1, "maximum": lowest(x.dtype), "minimum": highest(x.dtype)}[kind]
        if x.dtype == "bool":
            init, kind = (0, "or") if kind in ("add", "maximum") else (1, "and")
        axes = sorted(a % len(x.shape) for a in axes) if x.shape else []
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
        region = self._region([x.dtype, x.dtype], lambda a, b: [self.op(kind, [a, b], (), x.dtype)])
        out = self._emit("stablehlo.reduce", [x, self.const(init, x.dtype)], [(shape, x.dtype)],
                         f"dimensions = {_ints(axes)}", region)
        return self.reshape(out, [1 if i in axes else d for i, d in enumerate(x.shape)]) if keepdims else out

    def running(self, x, axis, kind, reverse=False):
        """Running sums ("add") or products ("multiply") of x along axis (from the end when
        reverse): a reduce_window whose window spans the axis, padded with the identity before (after)."""
        n, nd = x.shape[axis], len(x.shape)
        init = 1 if kind == "multiply" else 0
        window = [n if i == axis else 1 for i in range(nd)]
        pads = ", ".join(f"[{(0, n - 1) if reverse else (n - 1, 0)}]".replace("(", "").replace(")", "")
                         if i == axis else "[0, 0]" for i in range(nd))
        region = self._region([x.dtype, x.dtype], lambda a, b: [self.op(kind, [a, b], (), x.dtype)])
        return self._emit("stablehlo.reduce_window", [x, self.const(init, x.dtype)], [(x.shape, x.dtype)],
                          f"window_dimensions = {_ints(window)}, window_strides = {_ints([1] * nd)}, "
                          f"padding = dense<[{pads}]> : tensor<{nd}x2xi64>", region)

    def arg_reduce(self, x, largest):
        """Index (int64) of the first largest (or smallest) element along x's last axis."""
        axis = len(x.shape) - 1
        idx = self.iota(x.shape, axis)
        shape = x.shape[:-1]

        def body(av, ai, bv, bi):
            better = self.compare(av, bv, "GT" if largest else "LT")
            same = self.compare(av, bv, "EQ")
            if is_float(x.dtype):  # NaN wins, as in NumPy; two NaNs tie (the first index wins)
                a_nan, b_nan = self.compare(av, av, "NE"), self.compare(bv, bv, "NE")
                better = self.op("or", [better, self.op("and", [a_nan, self.op("not", [b_nan], (), "bool")], (), "bool")],
                                 (), "bool")
                same = self.op("or", [same, self.op("and", [a_nan, b_nan], (), "bool")], (), "bool")
            tie = self.op("and", [same, self.compare(ai, bi, "LT")], (), "bool")
            take_a = self.op("or", [better, tie], (), "bool")
            return [self.select(take_a, av, bv), self.select(take_a, ai, bi)]

        region = self._region([x.dtype, "int64", x.dtype, "int64"], body)
        init = lowest(x.dtype) if largest else highest(x.dtype)
        _, index = self._emit("stablehlo.reduce", [x, idx, self.const(init, x.dtype), self.const(0, "int64")],
                              [(shape, x.dtype), (shape, "int64")], f"dimensions = {_ints([axis])}", region)
        return index

    def dot(self, a, b, nbatch, dtype):
        """Batched a (batch..., M, K) @ b (batch..., K, N)."""
        batch = list(range(nbatch))
        shape = list(a.shape[:nbatch]) + [a.shape[-2], b.shape[-1]]
        return self.op("dot_general", [a, b], shape, dtype,
                       f"dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = {_list(batch)}, "
                       f"rhs_batching_dimensions = {_list(batch)}, lhs_contracting_dimensions = [{nbatch + 1}], "
                       f"rhs_contracting_dimensions = [{nbatch}]>")

    def gather(self, x, indices, axis):
        """x's slices at indices along axis: shape x[:axis] + indices.shape + x[axis + 1:]."""
        p = len(indices.shape)
        shape = list(x.shape[:axis]) + list(indices.shape) + list(x.shape[axis + 1:])
        offset = list(range(axis)) + list(range(axis + p, len(shape)))
        sizes = [1 if i == axis else d for i, d in enumerate(x.shape)]
        return self.op("gather", [x, indices], shape, x.dtype,
                       f"dimension_numbers = #stablehlo.gather<offset_dims = {_list(offset)}, "
                       f"collapsed_slice_dims = [{axis}], start_index_map = [{axis}], index_vector_dim = {p}>, "
                       f"slice_sizes = {_ints(sizes)}, indices_are_sorted = false")

    def scatter_add(self, zeros, indices, updates, axis):
        """zeros with updates (shape zeros[:axis] + indices.shape + zeros[axis + 1:]) added at
        indices along axis."""
        p = len(indices.shape)
        window = list(range(axis)) + list(range(axis + p, len(updates.shape)))
        region = self._region([zeros.dtype, zeros.dtype], lambda a, b: [self.op("add", [a, b], (), zeros.dtype)])
        return self._emit("stablehlo.scatter", [zeros, indices, updates], [(zeros.shape, zeros.dtype)],
                          f"scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {_list(window)}, "
                          f"inserted_window_dims = [{axis}], scatter_dims_to_operand_dims = [{axis}], "
                          f"index_vector_dim = {p}>, indices_are_sorted = false, unique_indices = false", region)


def _broadcast_shapes(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def module(name, args, results, body_lines):
    """The text of a module with one public function @main(args) -> results."""
    params = ", ".join(f"{a.name}: {a.type}" for a in args)
    types = ", ".join(r.type for r in results)
    ret = f'"func.return"({", ".join(r.name for r in results)}) : ({types}) -> ()'
    lines = [f"module @{name} {{", f"  func.func public @main({params}) -> ({types}) {{"]
    lines += ["    " + line.replace("\n", "\n    ") for line in body_lines + [ret]]
    lines += ["  }", "}", ""]
    return "\n".join(lines)
