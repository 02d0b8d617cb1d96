"""Optimizer base: parameter groups, zero_grad and state dicts."""
import pcp
from pcp import _core
from pcp._compile import on_replay


def traced_scalar(at_replay, value=None):
    """A hyperparameter for a fused step: `value` (default at_replay()) as is, or, while a step is
    traced into a plan (pcp.compile), a HostScalar holding it that each replay first sets to
    at_replay(): how the step count and a scheduled learning rate stay current in a replayed
    step, and the optimizer's own state keeps pace."""
    if value is None:
        value = at_replay()
    if not _core.is_tracing():
        return value
    cell = _core.HostScalar(float(value))

    def update():
        cell.value = float(at_replay())

    on_replay(update)
    return cell


class Optimizer:
    """Base class of the optimizers: parameter groups (dicts with 'params' and per-group
    hyperparameters, which a schedule may change between steps, e.g. group['lr']), per-parameter
    state, zero_grad, step and state dicts, as PyTorch's ``torch.optim.Optimizer``. Subclasses
    define ``_update(group, params, grads)``.

    ``params`` is an iterable of tensors or of dicts ``{'params': [...], **overrides}``, as in
    PyTorch, so biases and norms can go in a group with weight_decay=0 (as nanoGPT does).
    Parameters must be float32 (the fused update kernels' type; under autocast the master
    weights stay float32).

    Args:
        params: the tensors to optimize, or a list of group dicts.
        defaults: the hyperparameters every group gets unless it overrides them.

    Raises:
        ValueError: no parameters, or a parameter in two groups.
        TypeError: a parameter that is not a float32 Tensor.

    Example:
        >>> w = pcp.zeros(2).requires_grad_()
        >>> b = pcp.zeros(1).requires_grad_()
        >>> opt = pcp.optim.AdamW([{"params": [w]}, {"params": [b], "weight_decay": 0.0}], lr=0.1)
        >>> [g["weight_decay"] for g in opt.param_groups]
        [0.01, 0.0]
    """

    _state_keys = None  # the names of a parameter's state, where the subclass has a fixed set

    def __init__(self, params, defaults):
        if pcp._core.is_tracing():
            # Eager, such an optimizer starts anew on every call; a plan would carry its state
            # (moments, step count) from one call to the next.
            raise ValueError(f"{type(self).__name__}: created inside a function pcp.compile traces; its state would "
                             "carry over between the plan's calls, where each eager call starts anew: create the "
                             "optimizer outside the compiled function")
        self.defaults = dict(defaults)
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        seen = set()
        for g in groups:
            group = {**self.defaults, **g, "params": list(g["params"])}
            for p in group["params"]:
                if not isinstance(p, pcp.Tensor):
                    raise TypeError(f"{type(self).__name__}: parameters must be Tensors, got {type(p).__name__}")
                if p.dtype != pcp.float32:
                    raise TypeError(f"{type(self).__name__}: parameters must be float32 (fused kernels), got {p.dtype}")
                if id(p) in seen:
                    raise ValueError(f"{type(self).__name__}: a parameter appears in more than one group")
                seen.add(id(p))
            self.param_groups.append(group)
        for n, group in enumerate(self.param_groups):
            self._check_group(group, f"{type(self).__name__}: " + (f"parameter group {n}: " if len(groups) > 1 else ""))
        self.state = {}  # id(param) -> dict of state tensors
        self.step_count = 0

    def _rules(self, group):
        """(key, is it valid, what is expected) for each hyperparameter of a group: what the
        constructor and load_state_dict both check."""
        return []

    def _check_group(self, group, where):
        for key, ok, expected in self._rules(group):
            if not ok:
                raise ValueError(f"{where}'{key}' is {group[key]!r}, expected {expected}")

    def zero_grad(self, set_to_none=True):
        """Clears the gradients of every parameter before the next backward. It raises nothing.

        Args:
            set_to_none: set .grad to None (default True), else to zeros.

        Returns:
            None.

        Example:
            >>> w = pcp.ones(2).requires_grad_()
            >>> opt = pcp.optim.SGD([w], lr=0.1)
            >>> (w * w).sum().backward()
            >>> opt.zero_grad()
            >>> w.grad is None
            True
        """
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad = pcp.zeros_like(p)

    def _params_with_grad(self, group):
        """(params, contiguous float32 grads) of the group's parameters that have a gradient."""
        ps, gs = [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            ps.append(p)
            gs.append(p.grad.astype(pcp.float32).contiguous())
        return ps, gs

    def state_dict(self):
        """The step count, each group's hyperparameters, and each parameter's state (moments,
        momentum buffers: detached tensors, sharing storage), with parameters referred to by
        their position across the groups: what load_state_dict and checkpoints take. It raises
        nothing.

        Returns:
            A dict: step, param_groups (list of dicts), state ({position: {name: value}}).

        Example:
            >>> w = pcp.ones(2).requires_grad_()
            >>> opt = pcp.optim.Adam([w])
            >>> (w * w).sum().backward()
            >>> opt.step()
            >>> sd = opt.state_dict()
            >>> sd["step"], sorted(sd["state"][0])
            (1, ['exp_avg', 'exp_avg_sq', 'step'])
        """
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        return {
            "step": self.step_count,
            "param_groups": [{k: v for k, v in g.items() if k != "params"} | {"params": [index[id(p)] for p in g["params"]]}
                             for g in self.param_groups],
            "state": {index[k_id]: {k: t.detach() if isinstance(t, pcp.Tensor) else t for k, t in s.items()}
                      for k_id, s in self.state.items()},
        }

    def load_state_dict(self, sd):
        """Restores what state_dict returned (the state tensors are copied), for an optimizer made
        over the same parameters in the same groups.

        Args:
            sd: a dict as state_dict returns (tuples may come back as lists, as from JSON).

        Returns:
            None.

        Raises:
            ValueError: a state dict that does not fit these groups (their number, sizes or
                settings), a hyperparameter the constructor would refuse (a beta of 1.5), a step
                count that is not a whole number in [0, 2**53) or a parameter's count above the
                optimizer's, or state of the wrong names, shapes, dtypes or values; the message
                names the key. Nothing changes then.

        Example:
            >>> w = pcp.ones(2).requires_grad_()
            >>> a, b = pcp.optim.SGD([w], momentum=0.9), pcp.optim.SGD([w], momentum=0.9)
            >>> (w * w).sum().backward()
            >>> a.step()
            >>> b.load_state_dict(a.state_dict())
            >>> b.step_count
            1
        """
        params = [p for g in self.param_groups for p in g["params"]]
        if len(sd["param_groups"]) != len(self.param_groups):
            raise ValueError(f"load_state_dict: {len(sd['param_groups'])} parameter groups, expected "
                             f"{len(self.param_groups)}")
        for n, (g, saved) in enumerate(zip(self.param_groups, sd["param_groups"])):
            if len(saved["params"]) != len(g["params"]):
                raise ValueError(f"load_state_dict: parameter group {n} has a different number of parameters "
                                 f"({len(saved['params'])} saved, {len(g['params'])} here)")
            if set(saved) != set(g):
                raise ValueError(f"load_state_dict: parameter group {n} has settings {sorted(saved)}, expected "
                                 f"{sorted(g)}")
            for k, v in g.items():
                if k != "params" and not _same_kind(saved[k], v):
                    raise ValueError(f"load_state_dict: parameter group {n}: '{k}' is {saved[k]!r}, expected a "
                                     f"value like {v!r}")
            self._check_group({k: tuple(v) if isinstance(g[k], tuple) else v for k, v in saved.items()},
                              f"load_state_dict: parameter group {n}: ")
        steps = sd["step"]
        if not _count(steps):
            raise ValueError(f"load_state_dict: 'step' is {steps!r}, expected a whole number in [0, 2**53)")
        state = {}
        for i, s in sd["state"].items():
            if not (isinstance(i, int) or str(i).isdigit()) or not 0 <= int(i) < len(params):
                raise ValueError(f"load_state_dict: state for parameter {i!r}, but there are {len(params)}")
            p = params[int(i)]
            if self._state_keys is not None and set(s) != set(self._state_keys):
                raise ValueError(f"load_state_dict: parameter {i} has state {sorted(s)}, expected "
                                 f"{sorted(self._state_keys)}")
            state[id(p)] = {}
            for k, v in s.items():
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    if not hasattr(v, "shape"):
                        raise ValueError(f"load_state_dict: state '{k}' of parameter {i} is {str(v)[:100]!r}")
                    v = pcp.tensor(v)  # a copy: the fused updates write into it
                    if tuple(v.shape) != tuple(p.shape) or v.dtype != p.dtype:
                        raise ValueError(f"load_state_dict: state '{k}' of parameter {i} has dtype {v.dtype} and "
                                         f"shape {tuple(v.shape)}, expected {p.dtype} and {tuple(p.shape)}")
                elif not (isinstance(v, int) and v >= 0 or isinstance(v, float) and v == v):
                    raise ValueError(f"load_state_dict: state '{k}' of parameter {i} is {v!r}")
                elif k == "step" and not (_count(v) and v <= steps):
                    raise ValueError(f"load_state_dict: state 'step' of parameter {i} is {v!r}, expected a whole "
                                     f"number in [0, the optimizer's step {steps}]")
                state[id(p)][k] = v
        for g, saved in zip(self.param_groups, sd["param_groups"]):
            g.update({k: tuple(v) if isinstance(g[k], tuple) else v for k, v in saved.items() if k != "params"})
        self.step_count = int(sd["step"])
        self.state = state

    def step(self):
        """One update of every parameter that has a gradient (those whose .grad is None are left
        alone), in place and without recording a graph; gradients of another floating dtype are
        read as float32. It raises nothing of its own: the parameters were checked when the
        optimizer was made, and a gradient is checked when it is assigned.

        Returns:
            None.

        Example:
            >>> w = pcp.tensor([1.0, 2.0], requires_grad=True)
            >>> opt = pcp.optim.SGD([w], lr=0.5)
            >>> (w * w).sum().backward()  # grad 2w
            >>> opt.step()
            >>> w.tolist()
            [0.0, 0.0]
        """
        self.step_count += 1
        on_replay(self._count_step)  # a traced step: each replay counts too
        with pcp.no_grad():
            for group in self.param_groups:
                ps, gs = self._params_with_grad(group)
                if ps:
                    self._update(group, ps, gs)

    def _count_step(self):
        self.step_count += 1

    def _update(self, group, params, grads):
        """Applies one step to a group's parameters (those with gradients)."""
        raise NotImplementedError


def _count(v):
    """Whether v is a step count: a whole number in [0, 2**53) (exact as the kernels' double)."""
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 53


def _number(v, low=0.0, high=None):
    """Whether v is a number in [low, high) (high None: no bound), NaN refused as PyTorch does."""
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v
            and (high is None or v < high))


def _same_kind(saved, current):
    """Whether a saved hyperparameter can stand for the current one (JSON turns tuples into lists)."""
    if isinstance(current, bool):
        return isinstance(saved, bool)
    if isinstance(current, (int, float)):
        return isinstance(saved, (int, float)) and not isinstance(saved, bool) and saved == saved
    if isinstance(current, (tuple, list)):
        return (isinstance(saved, (tuple, list)) and len(saved) == len(current)
                and all(_same_kind(a, b) for a, b in zip(saved, current)))
    return type(saved) is type(current)
