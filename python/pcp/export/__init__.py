"""pcp.export.stablehlo: a traced function written as StableHLO MLIR text, the IR that XLA and
IREE compile.

The function is traced as pcp.compile traces it (run once eagerly, every primitive recorded)
and its plan is written as one function, @main, that is pure: the tensors the plan reads from
outside (a model's parameters, an optimizer's state) are arguments after the traced ones, the
host scalars its ops read (an optimizer's step count and learning rate) are 0-d float64
arguments after those, and what the plan writes in place (parameters and state updated by an
optimizer step) and the .grad it leaves are results after the function's own outputs.
"""

from .. import _core
from .._compile import _arrays_as_tensors, _signature, scalar_names, trace
from . import _mlir
from ._rules import REFUSED, RULES, ExportError, fused_ops

__all__ = ["stablehlo", "Exported", "ExportError"]

# Primitives whose outputs may share their input's memory: an in-place write to one changes the
# others, which a pure function cannot express once they are read again.
_VIEWS = {"reshape", "permute", "broadcast_to", "slice", "split", "alias"}


class ExportedValue:
    """An argument or result of the exported function: its name, role, shape and dtype.

    role is, for arguments: "argument" (the traced function's tensor argument `index`,
    flattened: .tensor is the example given), "captured" (a tensor the function reads from
    outside, e.g. a parameter: .tensor is it), "constant" (a tensor the function made itself,
    over CONSTANT_LIMIT elements, passed rather than embedded: .tensor is its value), "scalar" (a
    host scalar: .value is what it held when traced; index: its name, e.g. "adamw_step.lr");
    for results: "output" (the function's output `index`, flattened), "updated" (the new value of
    captured tensor `index`, written in place by the traced code) or "grad" (the .grad left on
    captured tensor `index`); and "embedded" for the constants the module holds (.tensor is the
    value: an `arange`, a Python number, a mask the function made)."""

    def __init__(self, name, role, index, shape, dtype, tensor=None, value=None):
        self.name, self.role, self.index = name, role, index
        self.shape, self.dtype, self.tensor, self.value = tuple(shape), dtype, tensor, value

    def __repr__(self):
        return f"<{self.name}: {self.role} {self.index}, {self.shape} {self.dtype}>"


class Exported:
    """A function exported as StableHLO: .text (the MLIR module), .arguments and .results
    (ExportedValue each, in the order of @main's arguments and results), .ops (the plan's
    primitives, in order, each fused node followed by the ops it runs)."""

    def __init__(self, text, arguments, results, ops, constants=()):
        self.text, self.arguments, self.results, self.ops = text, arguments, results, ops
        self.constants = list(constants)  # the embedded ones (role "embedded")

    def signature(self):
        """@main's arguments and results, one a line, each with its origin, and the constants
        the module embeds (a scalar's value shown)."""
        def line(v):
            value = f" = {v.tensor.item()!r}" if v.role == "embedded" and v.tensor is not None and not v.shape else ""
            return f"  {v.name}: {v.role} {v.index}, {v.shape} {v.dtype}{value}"
        return "\n".join(["arguments:"] + [line(a) for a in self.arguments] + ["results:"] +
                         [line(r) for r in self.results] + ["embedded constants:"] + [line(c) for c in self.constants])

    def save(self, path):
        """Writes .text to path (conventionally a .mlir file)."""
        with open(path, "w") as f:
            f.write(self.text)

    def __str__(self):
        return self.text


def stablehlo(fn, *args, **kwargs):
    """Traces fn on the example arguments (running it once, as pcp.compile's first call does)
    and writes the plan as StableHLO MLIR text.

    Args:
        fn: a function of tensors (nested in tuples, lists and dicts with Python values), as for
            pcp.compile; a whole training step (forward, backward, clipping, optimizer step)
            exports, its parameter and state updates becoming results.
        args, kwargs: example arguments: the exported function takes tensors of their shapes
            and dtypes (a NumPy array is one, converted as an eager call converts it).

    Returns:
        An Exported: .text is the module (one public function @main); .arguments and .results
        say what each of @main's arguments and results is.

    Raises:
        ValueError (pcp.export.ExportError): a primitive that no exported function can hold as
            PCP runs it (dropout: its random draws), a view of memory that is not dense, or a
            tensor read again after another view of its memory was written in place; a function
            that returns no tensor and updates none (the module would compute nothing); and the
            trace's own errors (see pcp.compile).

    Example:
        >>> w = pcp.tensor([[1.0], [2.0]])
        >>> exp = pcp.export.stablehlo(lambda x: (x @ w).tanh(), pcp.ones((3, 2)))
        >>> [(a.role, a.shape) for a in exp.arguments]
        [('argument', (3, 2)), ('captured', (2, 1))]
        >>> "stablehlo.dot_general" in exp.text
        True
    """
    if not callable(fn):
        raise TypeError(f"export.stablehlo: expected a callable, got {type(fn).__name__}")
    # NumPy arrays become tensors, as an eager call converts them: the module's arguments (not
    # constants baked into it).
    args, kwargs = _arrays_as_tensors(args), _arrays_as_tensors(kwargs)
    leaves, _, _ = _signature(args, kwargs)
    out, plan, _, _ = trace(fn, leaves, args, kwargs)
    exported = export_plan(plan, leaves)
    if not exported.results:
        raise ExportError(f"export.stablehlo: the function returned no tensor (it returned {type(out).__name__}) "
                          "and updated none: the module would compute nothing")
    return exported


# Constants a function makes are embedded in the module up to this many elements; larger ones
# (a causal mask of a long context, say) are passed as arguments of role "constant".
CONSTANT_LIMIT = 1 << 16


def export_plan(plan, examples=None):
    """The StableHLO of a traced plan (a pcp.compile CacheEntry's .plan; examples: its tensor
    arguments, for .arguments' .tensor); see stablehlo(). Lowered twice: the first pass finds
    which constants the plan writes (optimizer state a first step made), which stay arguments."""
    rec = _core.plan_record(plan)
    first = _lower(rec, examples, embed=set())
    written = {i for i, (vid, _) in enumerate(rec["captured"]) if any(r.role == "updated" and r.index == i
                                                                        for r in first.results)}
    grads = {k for k, vid in rec["grads"]}
    constants = set(rec.get("constants", ()))
    embed = {i for i, (vid, t) in enumerate(rec["captured"])
             if vid in constants and i not in written and i not in grads and t.size <= CONSTANT_LIMIT}
    return _lower(rec, examples, embed) if embed else first


def _lower(rec, examples, embed):
    """The module of a plan record, the captured tensors at indices `embed` as constants in it."""
    specs = [(tuple(shape), dtype) for shape, dtype, _ in rec["values"]]
    constants = set(rec.get("constants", ()))
    em = _mlir.Emitter()
    env, arguments, params, embedded = {}, [], [], []

    def argument(vid, role, index, shape, dtype, **extra):
        v = _mlir.Value(f"%arg{len(params)}", shape, dtype)
        params.append(v)
        arguments.append(ExportedValue(v.name, role, index, shape, dtype, **extra))
        if vid is not None:
            env[vid] = v
        return v

    for i, vid in enumerate(rec["args"]):
        argument(vid, "argument", i, *specs[vid], tensor=examples[i] if examples else None)
    captured_params = {}  # captured index -> its parameter (embedded ones have none)
    for i, (vid, t) in enumerate(rec["captured"]):
        if i in embed:
            values = t.astype(_core.DType.float32).numpy() if specs[vid][1] == "bfloat16" else t.numpy()  # exact
            env[vid] = em.array(values, *specs[vid])
            embedded.append(ExportedValue(env[vid].name, "embedded", i, *specs[vid], tensor=t))
        else:
            captured_params[i] = argument(vid, "constant" if vid in constants else "captured", i, *specs[vid], tensor=t)
    names, _ = scalar_names(rec)
    scalars = [argument(None, "scalar", name, (), "float64", value=h.value) for name, h in zip(names, rec["scalars"])]

    group = {}  # value -> the values sharing its memory (through view primitives)
    stale = {}  # value -> the op whose in-place write left it out of date
    for n in rec["nodes"]:
        op = n["op"]
        rule = RULES.get(op)
        if rule is None:
            why = REFUSED.get(op, "no StableHLO lowering is written for it")
            raise ExportError(f"export.stablehlo: the plan holds '{op}': {why}")
        ins = []
        for vid in n["inputs"]:
            if vid in stale:
                raise ExportError(f"export.stablehlo: {op} reads a value whose memory {stale[vid]} wrote in place "
                                  "through another view; a pure function cannot express that")
            ins.append(env[vid] if vid >= 0 else None)
        out = rule(em, ins, n["attrs"], [specs[o] for o in n["outputs"]], [scalars[k] for k in n["scalars"]])
        outs, writes = out if isinstance(out, tuple) else (out, {})
        for vid, v in zip(n["outputs"], outs):
            _check(op, v, specs[vid])
            env[vid] = v
            group[vid] = group.setdefault(n["inputs"][0], {n["inputs"][0]}) if op in _VIEWS else set()
            group[vid].add(vid)
        for i, v in writes.items():
            vid = n["inputs"][i]
            _check(op, v, specs[vid])
            env[vid] = v
            for other in group.setdefault(vid, {vid}) - {vid}:
                stale[other] = op

    results, values = [], []

    def result(vid, role, index):
        if vid in stale:
            raise ExportError(f"export.stablehlo: {role} {index} is a value {stale[vid]} wrote in place through "
                              "another view; a pure function cannot express that")
        values.append(env[vid])
        results.append(ExportedValue(f"result {len(results)}", role, index, *specs[vid]))

    for i, vid in enumerate(rec["outputs"]):
        result(vid, "output", i)
    for i, (vid, _) in enumerate(rec["captured"]):
        if i in captured_params and env[vid] is not captured_params[i]:
            result(vid, "updated", i)
    for k, vid in rec["grads"]:
        if vid >= 0:
            result(vid, "grad", k)
    ops = []
    for n in rec["nodes"]:
        ops += [n["op"]] + (fused_ops(n["attrs"]) if n["op"] == "fused_elementwise" else [])
    return Exported(_mlir.module("pcp_plan", params, values, em.lines), arguments, results, ops, embedded)


def _check(op, v, spec):
    if (v.shape, v.dtype) != spec:
        raise AssertionError(f"export.stablehlo: the {op} rule made {v.shape} {v.dtype}, the plan has {spec}")
