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

import numpy as np

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


def _arrays_as_tensors(obj):
    """obj with each NumPy array (nested in tuples, lists and dicts) made a tensor, as an eager
    op converts it: an argument of the plan, where by identity it would be a stale constant."""
    if isinstance(obj, np.ndarray):
        from . import asarray
        return asarray(obj)
    if isinstance(obj, (tuple, list)) and any(isinstance(x, (np.ndarray, tuple, list, dict)) for x in obj):
        return type(obj)(_arrays_as_tensors(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _arrays_as_tensors(x) for k, x in obj.items()}
    return obj


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


def _leaves_of(out):
    if isinstance(out, (tuple, list)):
        return [x for v in out for x in _leaves_of(v)]
    if isinstance(out, dict):
        return _leaves_of(list(out.values()))
    return [out]


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


def trace(fn, leaves, args, kwargs):
    """Runs fn(*args, **kwargs) once under a trace whose arguments are the tensors in leaves:
    (what it returned, the plan, the output structure, the replay hooks it registered)."""
    global _replay_hooks
    t = _core.Trace(leaves)
    _replay_hooks = hooks = []
    try:
        out = fn(*args, **kwargs)
        tensors = []
        tree = _flatten_out(out, tensors)
        plan = t.finish(tensors)
    finally:
        _replay_hooks = None
        t.close()
        del t  # frees what the trace held
    return _rebuild(tree, tensors), plan, tree, hooks


class CacheEntry:
    """One plan of a compiled function: its signature, why it was traced, its size and use."""

    def __init__(self, plan, out_tree, described, reason, trace_seconds, hooks):
        self.plan, self.out_tree, self.described = plan, out_tree, described
        self.reason, self.trace_seconds, self.calls, self.hooks = reason, trace_seconds, 1, hooks

    @property
    def nodes(self):
        """The plan's nodes (ops it runs, after fusion)."""
        return self.plan.num_nodes

    @property
    def dispatches(self):
        """The GPU commands (kernel dispatches, copies, transfers) of its last run; None on the CPU."""
        return self.plan.commands

    def __repr__(self):
        per_run = "" if self.dispatches is None else f", {self.dispatches} GPU dispatches per run"
        return (f"<plan of {self.nodes} ops{per_run}, traced in {self.trace_seconds * 1e3:.1f} ms "
                f"({self.reason}), {self.calls} calls>")


class Compiled:
    """A function compiled by pcp.compile: call it as the function itself.

    Each call with a signature not seen before traces the function (running it eagerly and
    recording its primitives); a call with a known signature replays that plan. Outputs are
    tensors without autograd history: to get gradients, compile a function that computes them
    (pcp.value_and_grad(loss_fn)). Inside another compiled function's trace the function runs
    inline, so the outer plan records it.
    """

    def __init__(self, fn, command_lists=False):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._command_lists = command_lists
        self._plans = {}

    def __call__(self, *args, **kwargs):
        if _core.is_tracing():
            return self._fn(*args, **kwargs)
        args, kwargs = _arrays_as_tensors(args), _arrays_as_tensors(kwargs)
        leaves, key, described = _signature(args, kwargs)
        entry = self._plans.get(key)
        if entry is None:
            return self._trace(key, described, leaves, args, kwargs)
        entry.calls += 1
        for hook in entry.hooks:
            hook()
        return _rebuild(entry.out_tree, entry.plan.run(leaves))

    def _trace(self, key, described, leaves, args, kwargs):
        reason = self._why(described)
        start = time.perf_counter()
        out, plan, tree, hooks = trace(self._fn, leaves, args, kwargs)
        if plan.num_nodes == 0 and not any(isinstance(t, Tensor) for t in _leaves_of(out)):
            raise ValueError(f"pcp.compile: the function returned no tensor (it returned {type(out).__name__}) and "
                             "changed none, so its plan would compute nothing: return the tensors it computes")
        plan.command_lists = self._command_lists
        self._plans[key] = CacheEntry(plan, tree, described, reason, time.perf_counter() - start, hooks)
        return out

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

    def save(self, path, names=None):
        """Writes the most recent plan to a file another process runs with pcp.load_plan (see
        save_plan), with its output structure.

        Args:
            path: the file to write (one safetensors file; its folder must exist).
            names: a dict of name to a tensor the plan captures (a parameter), by which the
                loaded plan's .named gives it (default None).

        Returns:
            None.

        Raises:
            ValueError: nothing has been traced yet.

        Example:
            >>> import os, tempfile
            >>> f = pcp.compile(lambda x: x * 2.0)
            >>> _ = f(pcp.ones(2))
            >>> f.save(os.path.join(tempfile.mkdtemp(), "double.pcpplan"))
        """
        if not self._plans:
            raise ValueError("save: nothing traced yet: call the compiled function first")
        entry = list(self._plans.values())[-1]
        save_plan(entry.plan, path, _tree_to_json(entry.out_tree), names)

    def to_bytes(self, names=None):
        """The plan file save() would write, as bytes (what DiLoCo's shepherd sends its workers).

        Args:
            names: as save's.

        Returns:
            bytes.

        Raises:
            ValueError: nothing has been traced yet, or a named tensor the plan does not capture.

        Example:
            >>> f = pcp.compile(lambda x: x * 2.0)
            >>> _ = f(pcp.ones(2))
            >>> pcp.load_plan(f.to_bytes())(pcp.ones(2)).tolist()
            [2.0, 2.0]
        """
        if not self._plans:
            raise ValueError("save: nothing traced yet: call the compiled function first")
        entry = list(self._plans.values())[-1]
        return plan_bytes(entry.plan, _tree_to_json(entry.out_tree), names)

    def cache_info(self):
        """The plans made so far, oldest first, each with why it was traced.

        Returns:
            A list of CacheEntry: .reason (e.g. "first call" or "argument 0: Tensor(4, 3)
            float32 on cpu -> Tensor(5, 3) float32 on cpu"), .plan (its .num_nodes, .ops),
            .nodes, .dispatches (the GPU commands of its last run, None on the CPU),
            .trace_seconds and .calls.

        Example:
            >>> f = pcp.compile(lambda x: (x * 2.0).sum())
            >>> _ = f(pcp.ones(3)); _ = f(pcp.ones(3)); _ = f(pcp.ones(4))
            >>> [(e.reason, e.calls) for e in f.cache_info()]
            [('first call', 2), ('argument 0: Tensor(3,) float32 on cpu -> Tensor(4,) float32 on cpu', 1)]
        """
        return list(self._plans.values())


def compile(fn, command_lists=False):
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
        command_lists: on a Vulkan GPU, record each plan's dispatches into command lists on
            its first replay and resubmit them on later calls, so no host code runs per node
            (nodes that depend on the host at each call, such as an optimizer step or dropout,
            run live between the lists). The lists keep their buffers, up to about twice the
            plan's peak memory, and outputs are handed out as copies. It pays where the host,
            not the GPU, limits a step; plan.replay_mode says how a plan replays.

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
    return Compiled(fn, bool(command_lists))


# Plan files: one safetensors file whose tensors are the plan's captured tensors ("captured.<i>")
# and whose metadata holds "format" (pcp-plan), "version" and "graph", a JSON object: the values'
# specs, the arguments, captured values, nodes (primitive name, attributes, input and output
# values, host scalars and random draws by index), outputs, .grad effects, host scalars (value,
# name, how a run advances it), random draws (counts) and the output structure.
PLAN_FORMAT, PLAN_VERSION = "pcp-plan", 1
# How an optimizer step's host scalars advance before each run of a loaded plan, as the
# optimizer would: the step count by one, the first-step flag to false, the learning rate kept.
_SCALAR_ROLES = {"adam_step": ("step", "lr"), "adamw_step": ("step", "lr"), "sgd_step": ("first_step", "lr")}
_ADVANCE = {"step": "count", "first_step": "zero", "lr": "keep"}


def _tree_to_json(tree):
    kind, body = tree
    if kind == "T":
        return ["T", body]
    if kind == "V":
        return ["V", body if isinstance(body, (int, float, str, bool, type(None))) else repr(body)]
    if kind is dict:
        return ["dict", [[k, _tree_to_json(x)] for k, x in body]]
    return ["list" if kind is list else "tuple", [_tree_to_json(x) for x in body]]


def _tree_from_json(j):
    kind, body = j
    if kind in ("T", "V"):
        return (kind, body)
    if kind == "dict":
        return (dict, [(k, _tree_from_json(x)) for k, x in body])
    return (list if kind == "list" else tuple, [_tree_from_json(x) for x in body])


def scalar_names(rec):
    """Names for a plan record's host scalars ("adamw_step.lr", ...) and how each advances
    before a run ("count", "zero" or "keep")."""
    names, advance = [], []
    for h_index in range(len(rec["scalars"])):
        node = next(n for n in rec["nodes"] if h_index in n["scalars"])
        roles = _SCALAR_ROLES.get(node["op"])
        role = roles[node["scalars"].index(h_index)] if roles else "value"
        name = f"{node['op']}.{role}"
        names.append(name if name not in names else f"{name}.{h_index}")
        advance.append(_ADVANCE.get(role, "keep"))
    return names, advance


def _plan_contents(plan, tree, names):
    """(tensors, metadata) of a plan file: its captured tensors (parameters, optimizer state,
    constants: their values now) and its graph as JSON, with `names` ({name: captured tensor})
    recorded as captured indices."""
    import json
    rec = _core.plan_record(plan)
    scalar_names_, advance = scalar_names(rec)
    graph = {k: v for k, v in rec.items() if k not in ("captured", "scalars")}
    graph["captured"] = [vid for vid, _ in rec["captured"]]
    graph["scalars"] = [{"name": n, "value": h.value, "advance": a}
                        for n, h, a in zip(scalar_names_, rec["scalars"], advance)]
    graph["tree"] = tree if tree is not None else ["tuple", [["T", i] for i in range(len(rec["outputs"]))]]
    named = {}
    for name, t in (names or {}).items():
        k = next((i for i, (_, c) in enumerate(rec["captured"]) if _core._same_tensor(c, t)), None)
        if k is None:
            raise ValueError(f"save: '{name}' is not a tensor the plan reads (only its captured tensors can be named)")
        named[name] = k
    graph["names"] = named
    tensors = {f"captured.{i}": t for i, (_, t) in enumerate(rec["captured"])}
    return tensors, {"format": PLAN_FORMAT, "version": str(PLAN_VERSION), "graph": json.dumps(graph)}


def save_plan(plan, path, tree=None, names=None):
    """Writes a plan (a CacheEntry's .plan) to one safetensors file, atomically: its captured
    tensors (parameters, optimizer state, constants: their values now) and its graph as JSON in
    the file's metadata, with a SHA-256 of both. pcp.load_plan runs it in another process without
    the code that traced it.

    Args:
        plan: the plan.
        path: the file (its folder must exist).
        tree: the output structure (Compiled.save passes it; default: a flat tuple).
        names: a dict of name to a tensor the plan captures, kept for LoadedPlan.named (default None).

    Returns:
        None.

    Raises:
        ValueError: a plan holding a .grad effect on a tensor it does not capture, or a named
            tensor it does not capture.
    """
    from .serialization import save_safetensors
    tensors, metadata = _plan_contents(plan, tree, names)
    save_safetensors(tensors, path, metadata=metadata)


def plan_bytes(plan, tree=None, names=None):
    """save_plan's file as bytes."""
    from .serialization import dumps_safetensors
    tensors, metadata = _plan_contents(plan, tree, names)
    return dumps_safetensors(tensors, metadata)


class LoadedPlan:
    """A plan read from a file (pcp.load_plan): call it with the traced tensor arguments, in
    order, flattened. Before each call the optimizer steps' host scalars advance as the optimizer
    would (step counts by one); .scalars maps their names ("adamw_step.lr", ...) to HostScalars
    whose .value may be set (a learning-rate schedule). .plan is the C++ plan, .captured its
    tensors (the parameters and optimizer state it updates in place), .named those saved with a
    name ({name: tensor}), .device where it runs and .nbytes the size of the file it came from."""

    def __init__(self, plan, tree, scalars, advance, captured, named, device, nbytes):
        self.plan, self._tree, self.scalars, self._advance, self.captured = plan, tree, scalars, advance, captured
        self.named, self.device, self.nbytes = named, device, nbytes

    def __call__(self, *tensors):
        for name, how in self._advance.items():
            if how == "count":
                self.scalars[name].value += 1
            elif how == "zero":
                self.scalars[name].value = 0.0
        return _rebuild(self._tree, self.plan.run(list(tensors)))


def load_plan(source, device=None):
    """Reads a plan file (Compiled.save, save_plan), or its bytes (Compiled.to_bytes), checks it
    and returns it ready to run, where it was traced or on `device`.

    Args:
        source: the file's path, or its contents as bytes.
        device: where to run it (default None: where it was traced). A plan traced on one device
            runs on another: its parameters and optimizer state move there, integer arguments
            traced on the CPU (token ids, targets) stay host inputs, and every value's shape,
            dtype and device is inferred again.

    Returns:
        A LoadedPlan: call it with the traced arguments' tensors, in order.

    Raises:
        TypeError: a source that is neither a path nor bytes.
        ValueError: not a plan file, a version this PCP does not read, or a graph that does not
            fit together (its shapes are inferred again before anything runs), naming what.
        pcp.serialization.SafetensorsError: a damaged file: truncated, or its bytes not those
            its SHA-256 was taken of (a ValueError).
        OSError: no such file.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "f.pcpplan")
        >>> f = pcp.compile(lambda x: (x * 3.0).sum())
        >>> _ = f(pcp.ones(4))
        >>> f.save(path)
        >>> pcp.load_plan(path)(pcp.ones(4) * 2.0).item()
        24.0
    """
    import json
    import os
    from .serialization import load_safetensors, loads_safetensors
    if isinstance(source, (bytes, bytearray, memoryview)):
        what, nbytes = "the plan's bytes", len(source)
        tensors, meta = loads_safetensors(source, name="plan")
    elif isinstance(source, (str, os.PathLike)):  # open() would take an int as a file descriptor
        what, nbytes = str(source), os.path.getsize(source)
        tensors, meta = load_safetensors(source)
    else:
        raise TypeError(f"load_plan: path must be a str or os.PathLike (or the plan's bytes), got "
                        f"{type(source).__name__}")
    if meta.get("format") != PLAN_FORMAT:
        raise ValueError(f"load_plan: {what} is not a PCP plan file (format {meta.get('format')!r})")
    if meta.get("version") != str(PLAN_VERSION):
        raise ValueError(f"load_plan: {what} is a version {meta.get('version')} plan file; this PCP reads "
                         f"version {PLAN_VERSION}")
    try:
        graph = json.loads(meta["graph"])
        values = graph["values"]
        captured = []
        for i, vid in enumerate(graph["captured"]):
            t = tensors[f"captured.{i}"]
            traced_on = values[vid][2]  # placed by plan_from_record when a device is given
            captured.append((vid, t if device is not None or str(t.device) == traced_on else t.to(traced_on)))
        scalars = {s["name"]: _core.HostScalar(float(s["value"])) for s in graph["scalars"]}
        advance = {s["name"]: s["advance"] for s in graph["scalars"]}
        rec = dict(graph, captured=captured, scalars=[scalars[s["name"]] for s in graph["scalars"]])
        tree = _tree_from_json(graph["tree"])
        names = {str(k): int(v) for k, v in graph.get("names", {}).items()}
    except (KeyError, IndexError, TypeError, ValueError, json.JSONDecodeError) as e:
        raise ValueError(f"load_plan: {what} holds a malformed graph ({type(e).__name__}: {e})") from None
    plan = _core.plan_from_record(rec, None if device is None else str(_core.device(device)))
    held = _core.plan_record(plan)["captured"]  # the tensors the plan holds (moved, when placed)
    if any(k < 0 or k >= len(held) for k in names.values()):
        raise ValueError(f"load_plan: {what} names a captured tensor it does not have")
    on = str(_core.device(device)) if device is not None else (held[0][1].device if held else "cpu")
    return LoadedPlan(plan, tree, scalars, advance, [t for _, t in held], {n: held[k][1] for n, k in names.items()},
                      str(on), nbytes)
