"""The op table's types, how a case becomes Python source, and the systematic grid.

An `Op` says how to call one public function or Tensor member (`call`), how to build its
arguments from the input under test (`build`), its NumPy reference (`ref`), its result dtype
rule (`dtype`) and which dtypes it supports on valid input (`dtypes`). The entries live in the
ops_*.py modules, one per family; `OPS` maps each entry's name to it.

A `Case` is one call: its arguments as source (inputs.TensorArg/Lit/Seq), so `reproducer(case)`
is a one-line Python program that does exactly what the worker did.
"""
import json
import re
from dataclasses import dataclass, field
from typing import Callable

from . import inputs
from .inputs import Cls, Lit, Seq, TensorArg, from_json, to_json
from .reference import ALL, FLOATS

OPS = {}


@dataclass
class Op:
    name: str                          # unique: 'pcp.sum', 'Tensor.sum', 'Tensor.__add__', ...
    call: Callable                     # (arg sources, kwarg sources) -> (statement, expression)
    ref: Callable = None               # NumPy reference on the arguments' counterparts
    dtype: Callable = None             # result dtype from the argument kinds (reference.DTYPE RULES)
    build: Callable = None             # (x, params, ctx) -> (args, kwargs); default: x and params
    cross: list = field(default_factory=lambda: [{}])   # params tried with every input class
    extra: list = field(default_factory=list)           # params tried with the normal input only
    dtypes: frozenset = ALL            # dtypes whose valid inputs must work (declared support)
    grid_dtypes: tuple = tuple(inputs.DTYPES)
    classes: list = None               # input classes of x (default: tensors and literals)
    names: tuple = None                # names an error message may use (default: last part of name;
                                       # () when the message comes from another library)
    covers: tuple = None               # public names this entry exercises (default: name)
    errors: tuple = ()                 # extra acceptable exception types
    check: str = "value"               # 'value', 'grad' (finite differences) or 'grad2'
    fixed: list = field(default_factory=list)  # (id, args, kwargs, expect) cases of their own

    def __post_init__(self):
        base = self.name.split("#")[0]   # 'pcp.where#cond': another input of pcp.where
        if self.names is None:
            self.names = (base.split(".")[-1],)
        if self.covers is None:
            self.covers = (base,)


def register(*ops):
    for op in ops:
        assert op.name not in OPS, op.name
        OPS[op.name] = op
    return ops


# ----------------------------------------------------------------------------------------------
# call styles


def _join(args, kwargs):
    return ", ".join(list(args) + [f"{k}={v}" for k, v in kwargs.items()])


def fn(path):
    return lambda a, kw: ("", f"{path}({_join(a, kw)})")


def method(name):
    return lambda a, kw: ("", f"{a[0]}.{name}({_join(a[1:], kw)})")


def _operand(src):
    """An operand of an operator, parenthesised unless it is a name or a plain literal
    (so that `(-1) ** x0` is not read as `-(1 ** x0)`)."""
    if re.fullmatch(r"[A-Za-z_]\w*|\d+(\.\d*)?|'[^']*'", src):
        return src
    return f"({src})"


def binop(sym):
    return lambda a, kw: ("", f"{_operand(a[0])} {sym} {_operand(a[1])}")


def rbinop(sym):
    """Reflected operator: the Tensor is args[0], the other operand is written on the left."""
    return lambda a, kw: ("", f"{_operand(a[1])} {sym} {_operand(a[0])}")


def unop(sym):
    return lambda a, kw: ("", f"{sym}{a[0]}")


def builtin(name):
    return lambda a, kw: ("", f"{name}({_join(a, kw)})")


def attr(name):
    return lambda a, kw: ("", f"{a[0]}.{name}")


# ----------------------------------------------------------------------------------------------
# cases


@dataclass
class Case:
    id: str
    op: str
    device: str
    args: list
    kwargs: dict
    cls: str = "normal"
    dtype: str = None
    must_work: bool = True
    expect: str = None        # class override of the reference: 'error' or 'any'

    def to_json(self):
        d = dict(self.__dict__)
        d["args"] = [to_json(a) for a in self.args]
        d["kwargs"] = {k: to_json(v) for k, v in self.kwargs.items()}
        return json.dumps(d)

    @classmethod
    def from_json(cls, s):
        d = json.loads(s)
        d["args"] = [from_json(a) for a in d["args"]]
        d["kwargs"] = {k: from_json(v) for k, v in d["kwargs"].items()}
        return cls(**d)


def name_tensors(case):
    """Gives every tensor argument a variable x0, x1, ...: [(name, TensorArg)] in order, and the
    source of each argument with tensors replaced by their names."""
    named = []

    def src(a):
        if isinstance(a, TensorArg):
            named.append((f"x{len(named)}", a))
            return named[-1][0]
        if isinstance(a, Seq):
            inner = [src(i) for i in a.items]
            if a.tuple:
                return f"({inner[0]},)" if len(inner) == 1 else f"({', '.join(inner)})"
            return f"[{', '.join(inner)}]"
        return a.code()

    args = [src(a) for a in case.args]
    kwargs = {k: src(v) for k, v in case.kwargs.items()}
    return named, args, kwargs


def call_source(case, op, named, args, kwargs):
    """(statement, expression) that calls the op; a 'grad' entry differentiates
    sum(y * (y + 1)) of the op's result y with respect to every float tensor argument."""
    stmt, expr = op.call(args, kwargs)
    if op.check == "grad":
        wrt = [n for n, t in named if t.dtype in FLOATS]
        params = ", ".join(wrt)
        expr = (f"pcp.grad(lambda {params}: ((y := {expr}) * (y + 1)).sum(), "
                f"argnums={tuple(range(len(wrt)))!r})({params})")
    return stmt, expr


def render(case):
    """(setup lines, statement, expression) of a case; a case of another device than the CPU
    runs with that device as the default (creation functions then make tensors there)."""
    named, args, kwargs = name_tensors(case)
    setup = [f"{n} = {t.code(case.device)}" for n, t in named]
    if case.device != "cpu":
        setup.insert(0, f"pcp.set_default_device({case.device!r})")
    stmt, expr = call_source(case, OPS[case.op], named, args, kwargs)
    return setup, stmt, expr


def reproducer(case):
    setup, stmt, expr = render(case)
    lines = ["import numpy as np, pcp"] + setup + ([stmt] if stmt else []) + [expr]
    if "torch." in stmt + expr or any("torch." in s for s in setup):
        lines[0] += ", torch"
    return "; ".join(lines)


# ----------------------------------------------------------------------------------------------
# the grid


@dataclass
class Ctx:
    device: str
    other: str = None         # the other device (mixed-device inputs), or None without a GPU


def default_build(x, p, ctx):
    return [x], {k: (v if isinstance(v, (TensorArg, Lit, Seq)) else Lit(v)) for k, v in p.items()}


class Skip(Exception):
    """Raised by a builder: this input class makes no sense for the op."""


def param_id(p):
    return ",".join(f"{k}={v.code() if hasattr(v, 'code') else v}" for k, v in p.items()) or "-"


def make_case(op, cls, dtype, p, ctx, case_id=None):
    """A case of `op` with input class `cls`; a builder may return a third item, overrides of
    the case's must_work / expect (e.g. an operand that is invalid whatever the input)."""
    x = cls.make(dtype, ctx.device, ctx.other)
    built = (op.build or default_build)(x, p, ctx)
    args, kwargs = built[0], built[1]
    over = built[2] if len(built) > 2 else {}
    return Case(case_id or f"{op.name}/{cls.name}/{dtype or '-'}/{param_id(p)}", op.name, ctx.device,
                args, kwargs, cls.name, dtype, over.get("must_work", cls.must_work) and cls.must_work,
                cls.expect or over.get("expect"))


def classes_of(op, ctx):
    if op.classes is not None:
        return op.classes
    tensors = inputs.tensor_classes(ctx.device, ctx.other is not None)
    if op.name.startswith("Tensor."):
        return tensors  # a method or operator of a Tensor: the receiver is a Tensor
    return tensors + inputs.LITERAL_CLASSES


def grid(op, ctx):
    """Every case of one op: each input class x dtype with each `cross` param, the `extra`
    params with the normal input in every dtype, and the op's fixed cases."""
    classes = classes_of(op, ctx)
    for p in op.cross:
        for cls in classes:
            dtypes = [None] if cls.literal is not None else [d for d in op.grid_dtypes if d in cls.dtypes]
            if op.check == "grad" and ctx.device != "cpu":
                dtypes = ["float32"]  # the GPU computes in float32
            for dtype in dtypes:
                try:
                    yield make_case(op, cls, dtype, p, ctx)
                except Skip:
                    pass
    base = classes[0] if classes else None
    for p in op.extra if base else ():
        for dtype in op.grid_dtypes if base.literal is None else [None]:
            try:
                yield make_case(op, base, dtype, p, ctx)
            except Skip:
                pass
    for case_id, args, kwargs, expect in op.fixed:
        args = args(ctx) if callable(args) else args
        if args is None:
            continue
        # expect: None (the reference decides), 'error', 'any', or 'may_raise' (checked when it returns)
        must_work = expect != "may_raise"
        yield Case(f"{op.name}/{case_id}", op.name, ctx.device, args, kwargs, case_id, None, must_work,
                   None if expect == "may_raise" else expect)


def all_grid(ctx, names=None):
    for name, op in OPS.items():
        if names is None or name in names:
            yield from grid(op, ctx)


from . import ops_elementwise, ops_reduce, ops_shape, ops_index, ops_nn, ops_create, ops_tensor, ops_sort  # noqa: E402,F401,E501
from . import ops_autograd, ops_runtime  # noqa: E402,F401
