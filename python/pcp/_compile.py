"""pcp.compile: a function traced once per input signature into a plan, replayed after.

The first call with a new signature runs the function eagerly while the C++ trace
(cpp/pcp/plan/trace.h) records every primitive it applies; later calls with that signature
run the recorded plan directly, without the Python code. The signature is everything the
trace depends on: the structure of the arguments (tuples, lists, dicts), the shape, dtype,
device and strides of each tensor, the values of Python scalars and strings, the identity of
other objects (a Module passed in), and the autocast and grad modes.
"""
import functools
import time

from . import _core
from ._core import Tensor

_SCALARS = (int, float, bool, str, bytes, complex, type(None))
_replay_hooks = None  # while a plan is traced: the hooks its replays run first


def on_replay(hook):
    """Registers hook() to run before each replay of the plan being traced (nothing outside a
    trace). Host-side state a traced step changes and its plan would not (an optimizer's step
    count, the learning rate it reads from its group) is kept up by such hooks: they advance it
    and set the host scalars (_core.HostScalar) the recorded ops read."""
    if _replay_hooks is not None:
        _replay_hooks.append(hook)


def _describe(t):
    return f"Tensor{tuple(t.shape)} {t.dtype} on {t.device}"


def _flatten(obj, path, leaves, key, described):
    """Appends obj's tensors to leaves and its signature to key; described gets (path, text)."""
    if isinstance(obj, Tensor):
        # The same tensor twice is one value of the plan: which earlier argument it repeats is
        # part of the signature (hash: the tensor's identity, whatever Python object holds it).
        same = next((i for i, t in enumerate(leaves) if hash(t) == hash(obj)), None)
        leaves.append(obj)
        key.append(("T", tuple(obj.shape), str(obj.dtype), str(obj.device), tuple(obj.strides), same))
        described.append((path, _describe(obj) + ("" if obj.is_contiguous() else f" strides {tuple(obj.strides)}")))
    elif isinstance(obj, (tuple, list)):
        key.append((type(obj).__name__, len(obj)))
        for i, x in enumerate(obj):
            _flatten(x, f"{path}[{i}]", leaves, key, described)
    elif isinstance(obj, dict):
        key.append(("dict", tuple(obj)))
        for k, x in obj.items():
            _flatten(x, f"{path}[{k!r}]", leaves, key, described)
    elif isinstance(obj, _SCALARS) or type(obj).__name__ == "DType":
        key.append(("V", type(obj).__name__, obj))
        described.append((path, repr(obj)))
    else:  # a Module, an optimizer, a function: by identity (its tensors are captured by reference)
        key.append(("O", type(obj).__name__, id(obj)))
        described.append((path, f"{type(obj).__name__} object at {id(obj):#x}"))


def _signature(args, kwargs):
    leaves, key, described = [], [], []
    for i, a in enumerate(args):
        _flatten(a, f"argument {i}", leaves, key, described)
    for k in sorted(kwargs):
        key.append(("kw", k))
        _flatten(kwargs[k], f"argument {k!r}", leaves, key, described)
    modes = (str(_core.autocast_dtype()), _core.is_grad_enabled())
    key.append(modes)
    described.append(("autocast, grad mode", f"{modes[0]}, {modes[1]}"))
    return leaves, tuple(key), described


def _flatten_out(out, tensors):
    """The output's structure with each tensor replaced by its index in tensors."""
    if isinstance(out, Tensor):
        tensors.append(out.detach() if out.requires_grad else out)
        return ("T", len(tensors) - 1)
    if isinstance(out, (tuple, list)):
        return (type(out), [_flatten_out(x, tensors) for x in out])
    if isinstance(out, dict):
        return (dict, [(k, _flatten_out(x, tensors)) for k, x in out.items()])
    return ("V", out)


def _rebuild(tree, tensors):
    kind, body = tree
    if kind == "T":
        return tensors[body]
    if kind == "V":
        return body
    if kind is dict:
        return {k: _rebuild(x, tensors) for k, x in body}
    items = [_rebuild(x, tensors) for x in body]
    return kind(items) if kind is list else tuple(items) if kind is tuple else kind(*items)


class CacheEntry:
    """One plan of a compiled function: its signature, why it was traced, its size and use."""

    def __init__(self, plan, out_tree, described, reason, trace_seconds, hooks):
        self.plan, self.out_tree, self.described = plan, out_tree, described
        self.reason, self.trace_seconds, self.calls, self.hooks = reason, trace_seconds, 1, hooks

    def __repr__(self):
        return (f"<plan of {self.plan.num_nodes} ops, traced in {self.trace_seconds * 1e3:.1f} ms "
                f"({self.reason}), {self.calls} calls>")


class Compiled:
    """A function compiled by pcp.compile: call it as the function itself.

    Each call with a signature not seen before traces the function (running it eagerly and
    recording its primitives); a call with a known signature replays that plan. Outputs are
    tensors without autograd history: to get gradients, compile a function that computes them
    (pcp.value_and_grad(loss_fn)). Inside another compiled function's trace the function runs
    inline, so the outer plan records it.
    """

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._plans = {}

    def __call__(self, *args, **kwargs):
        if _core.is_tracing():
            return self._fn(*args, **kwargs)
        leaves, key, described = _signature(args, kwargs)
        entry = self._plans.get(key)
        if entry is None:
            return self._trace(key, described, leaves, args, kwargs)
        entry.calls += 1
        for hook in entry.hooks:
            hook()
        return _rebuild(entry.out_tree, entry.plan.run(leaves))

    def _trace(self, key, described, leaves, args, kwargs):
        global _replay_hooks
        reason = self._why(described)
        start = time.perf_counter()
        trace = _core.Trace(leaves)
        _replay_hooks = hooks = []
        try:
            out = self._fn(*args, **kwargs)
            tensors = []
            tree = _flatten_out(out, tensors)
            plan = trace.finish(tensors)
        finally:
            _replay_hooks = None
            trace.close()
            del trace  # frees what the trace held
        self._plans[key] = CacheEntry(plan, tree, described, reason, time.perf_counter() - start, hooks)
        return _rebuild(tree, tensors)

    def _why(self, described):
        """Why a new plan: the first call, or what differs from the most recent plan's signature."""
        if not self._plans:
            return "first call"
        last = dict(list(self._plans.values())[-1].described)
        now = dict(described)
        for path, text in described:
            if last.get(path) != text:
                return f"{path}: {last[path]} -> {text}" if path in last else f"{path}: new ({text})"
        for path in last:
            if path not in now:
                return f"{path}: no longer passed"
        return "the structure of the arguments changed"

    def cache_info(self):
        """The plans made so far, oldest first, each with why it was traced.

        Returns:
            A list of CacheEntry: .reason (e.g. "first call" or "argument 0: Tensor(4, 3)
            float32 on cpu -> Tensor(5, 3) float32 on cpu"), .plan (its .num_nodes, .ops),
            .trace_seconds and .calls.

        Example:
            >>> f = pcp.compile(lambda x: (x * 2.0).sum())
            >>> _ = f(pcp.ones(3)); _ = f(pcp.ones(3)); _ = f(pcp.ones(4))
            >>> [(e.reason, e.calls) for e in f.cache_info()]
            [('first call', 2), ('argument 0: Tensor(3,) float32 on cpu -> Tensor(4,) float32 on cpu', 1)]
        """
        return list(self._plans.values())


def compile(fn):
    """Compiles fn into plans: traced once per input signature, replayed after.

    The first call with a given signature (the structure of the arguments; each tensor's shape,
    dtype, device and strides; the values of Python scalars and strings; the identity of other
    objects; the autocast and grad modes) runs fn eagerly and records every primitive it
    applies into a plan; later calls with that signature replay the plan without running the
    Python code. Tensors fn reads that are not arguments (a model's parameters) are read by
    reference: a replay sees their current values. Compose with transforms:
    ``pcp.compile(pcp.value_and_grad(loss_fn))`` is one plan with the forward and its gradient.

    Args:
        fn: a function of tensors (and Python values, nested in tuples, lists and dicts)
            returning tensors (nested likewise).

    Returns:
        A Compiled callable; its cache_info() lists the plans and why each was traced.

    Raises:
        ValueError: at trace time, when fn does what a plan cannot replay, naming the op:
            reading a traced tensor on the host (item(), tolist(), numpy(), bool(), float(),
            printing it), drawing random numbers (rand, randn, dropout), writing a traced
            tensor in place (x[...] = v, an optimizer step), or setting .grad of a tensor it
            reads (backward(): use value_and_grad); and as the ops fn calls raise them.

    Example:
        >>> w = pcp.tensor([[1.0], [2.0]])
        >>> f = pcp.compile(lambda x: (x @ w).sum())
        >>> f(pcp.ones((3, 2))).item()   # traced
        9.0
        >>> f(pcp.zeros((3, 2))).item()  # replayed on new values
        0.0
    """
    if not callable(fn):
        raise TypeError(f"compile: expected a callable, got {type(fn).__name__}")
    return Compiled(fn)
