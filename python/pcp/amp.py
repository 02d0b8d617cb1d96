"""Automatic mixed precision: ``autocast`` and ``GradScaler``, with PyTorch's policy and API.

Inside ``with pcp.autocast(dtype=pcp.bfloat16):`` every op casts its floating inputs by its
policy before it runs (the casts are ops, so gradients flow back through them):

- products compute in the 16-bit type with float32 accumulation: ``matmul`` (and so
  ``nn.Linear`` and the products of composed attention: ``qkv_attention`` casts its packed
  projection once);
- touchy ops compute in float32: ``softmax``, ``log_softmax``, ``layer_norm``,
  ``cross_entropy``, ``sum`` (and so ``var`` and ``logsumexp``), ``exp``, ``log``, ``rsqrt``;
- everything else (elementwise arithmetic, views, indexing, casts) runs in the type of its
  inputs, promoted as usual: a float32 residual plus a bfloat16 product gives float32
  (``nn.Linear`` adds its bias in the product's type, as PyTorch's ``linear`` does).

Parameters and their gradients stay float32 (master weights) and the optimizer updates them in
float32; the 16-bit copies a product reads are what it saves for backward. Backward passes run
with autocast off, their products in the dtypes the forward pass saved. float64 and integer
tensors are never cast. The fused float32 attention kernel of the CPU keeps float32.

float16's range is small: gradients of a float16 step can underflow to zero. ``GradScaler``
multiplies the loss by a large factor before backward and divides the gradients by it before
the optimizer step, skipping steps whose gradients hold inf or NaN (and halving the factor),
growing it again after ``growth_interval`` clean steps. bfloat16 has float32's range and
needs no scaler.
"""
import functools
import math

from . import _core
from ._autograd import no_grad
from ._core import DType, Tensor


class autocast:
    """Context manager and decorator: ops inside compute by the mixed-precision policy above.

    dtype: ``pcp.bfloat16`` (default) or ``pcp.float16`` (or their names). enabled=False makes
    the scope a no-op, so ``with pcp.autocast(enabled=use_amp):`` reads naturally. Scopes nest;
    leaving one restores the enclosing state. The state is per thread.

    Args:
        dtype: the low type of matmuls, linear layers and attention (default bfloat16).
        enabled: whether the scope casts at all (default True).

    Returns:
        A context manager; used as a decorator, the function runs inside it.

    Raises:
        ValueError: a dtype other than float16 or bfloat16 in an enabled scope.

    Example:
        >>> with pcp.autocast(dtype=pcp.bfloat16):
        ...     y = pcp.ones((2, 2)) @ pcp.ones((2, 2))
        >>> y.dtype
        pcp.bfloat16
    """

    def __init__(self, dtype=DType.bfloat16, enabled=True):
        self.enabled = bool(enabled)
        if not self.enabled:  # a disabled scope takes any dtype, as torch.autocast(enabled=False)
            self.dtype = dtype
            return
        try:
            if not isinstance(dtype, (DType, str)):
                raise TypeError
            dtype = DType(dtype)
        except (TypeError, ValueError):
            raise ValueError(f"autocast: dtype must be bfloat16 or float16, got {dtype!r}") from None
        if dtype not in (DType.bfloat16, DType.float16):
            raise ValueError(f"autocast: dtype must be bfloat16 or float16, got {dtype}")
        self.dtype = dtype

    def __enter__(self):
        self._prev = _core.autocast_dtype()
        _core.set_autocast_dtype(self.dtype if self.enabled else None)
        return self

    def __exit__(self, *exc):
        _core.set_autocast_dtype(self._prev)
        return False

    def __call__(self, fn):
        """Used as a decorator: fn runs inside this scope each time it is called. It raises
        nothing of its own.

        Args:
            fn: a function.

        Returns:
            The wrapped function.

        Example:
            >>> @pcp.autocast(dtype=pcp.float16)
            ... def product(a, b):
            ...     return a @ b
            >>> product(pcp.ones((2, 2)), pcp.ones((2, 2))).dtype
            pcp.float16
        """
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.dtype, self.enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_enabled():
    """Whether the current thread is inside an enabled autocast scope. It raises nothing.

    Returns:
        A bool.

    Example:
        >>> with pcp.autocast():
        ...     pcp.amp.is_autocast_enabled()
        True
        >>> pcp.amp.is_autocast_enabled()
        False
    """
    return _core.autocast_dtype() is not None


def get_autocast_dtype():
    """The compute type of the enclosing enabled autocast scope, or None outside one. It raises
    nothing.

    Returns:
        pcp.bfloat16, pcp.float16 or None.

    Example:
        >>> with pcp.autocast(dtype=pcp.float16):
        ...     pcp.amp.get_autocast_dtype()
        pcp.float16
    """
    return _core.autocast_dtype()


class GradScaler:
    """Dynamic loss scaling for float16 training, as ``torch.amp.GradScaler``::

        scaler = pcp.amp.GradScaler()
        with pcp.autocast(dtype=pcp.float16):
            _, loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)                 # optional: before clipping the true gradients
        pcp.optim.clip_grad_norm(model.parameters(), 1.0)
        scaler.step(opt)                     # skipped when a gradient holds inf or NaN
        scaler.update()                      # halves the scale after a skip, grows it after
                                             # growth_interval clean steps

    ``enabled=False`` makes every method a pass-through, so one loop serves every dtype.

    Args:
        init_scale: the first scale (default 2**16).
        growth_factor: multiplies the scale after growth_interval clean steps (default 2, > 1).
        backoff_factor: multiplies the scale after a skipped step (default 0.5, < 1).
        growth_interval: clean steps before the scale grows (default 2000).
        enabled: scale at all (default True).

    Raises:
        ValueError: a scale or factor that is not a positive finite number, growth_factor <= 1,
            backoff_factor >= 1, or growth_interval not a positive int.

    Example:
        >>> w = pcp.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = pcp.optim.SGD([w], lr=0.1)
        >>> scaler = pcp.amp.GradScaler(init_scale=1024.0)
        >>> scaler.scale((w * w).sum()).backward()
        >>> w.grad.tolist()  # scaled
        [2048.0, 4096.0]
        >>> scaler.step(opt)  # unscaled first: the true gradient 2w is applied
        >>> scaler.update()
        >>> [round(v, 4) for v in w.tolist()]
        [0.8, 1.6]
    """

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _check_settings("GradScaler: ", ("init_scale", init_scale), growth_factor, backoff_factor, growth_interval)
        self._scale = float(init_scale)
        self.growth_factor, self.backoff_factor = float(growth_factor), float(backoff_factor)
        self.growth_interval = growth_interval
        self._enabled = bool(enabled)
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"unscaled": bool, "found_inf": bool, "stepped": bool}

    def is_enabled(self):
        """Whether this scaler scales (enabled=True when made). It raises nothing.

        Returns:
            A bool.

        Example:
            >>> pcp.amp.GradScaler(enabled=False).is_enabled()
            False
        """
        return self._enabled

    def get_scale(self):
        """The current scale (1.0 when disabled). It raises nothing.

        Returns:
            A float.

        Example:
            >>> pcp.amp.GradScaler(init_scale=256.0).get_scale()
            256.0
        """
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """The outputs (losses) multiplied by the scale, to call backward on.

        Args:
            outputs: a tensor, or a list or tuple of them (nested).

        Returns:
            The same structure of scaled tensors (outputs itself when disabled).

        Raises:
            TypeError: something else than tensors, lists and tuples.

        Example:
            >>> pcp.amp.GradScaler(init_scale=8.0).scale(pcp.tensor(0.5)).item()
            4.0
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise TypeError(f"GradScaler.scale: expected a Tensor or a list/tuple of them, got {type(outputs).__name__}")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "found_inf": False, "stepped": False})

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (replacing each .grad) and records whether
        any holds inf or NaN. Call it before clipping or reading the true gradients; step() calls
        it when it was not. At most once per optimizer between update() calls.

        Args:
            optimizer: the Optimizer whose parameters' gradients to unscale.

        Returns:
            None.

        Raises:
            RuntimeError: already called since the last update(), or called after step().

        Example:
            >>> w = pcp.tensor([1.0], requires_grad=True)
            >>> opt = pcp.optim.SGD([w])
            >>> scaler = pcp.amp.GradScaler(init_scale=4.0)
            >>> scaler.scale(w * 3).backward()
            >>> scaler.unscale_(opt)
            >>> w.grad.tolist()
            [3.0]
        """
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError("GradScaler.unscale_: already called on this optimizer since the last update()")
        if state["stepped"]:
            raise RuntimeError("GradScaler.unscale_: called after step(); call update() first")
        inv = 1.0 / self._scale
        flags = {}  # device -> 0-d tensor: 0 when every gradient there is finite, NaN otherwise
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad * inv
                    # g * 0 is 0 for finite values and NaN for inf and NaN: one sum tells.
                    f = _core.sum(g * 0.0).astype(DType.float32)
                    key = str(g.device)
                    flags[key] = flags[key] + f if key in flags else f
                    p.grad = g
        total = sum(f.item() for f in flags.values())  # one host read per device, after all the work
        state["unscaled"], state["found_inf"] = True, not math.isfinite(total)

    def step(self, optimizer, *args, **kwargs):
        """Unscales (if ``unscale_`` was not called) and runs optimizer.step() unless a gradient
        holds inf or NaN. Once per optimizer between update() calls.

        Args:
            optimizer: the Optimizer to step.
            *args: passed to optimizer.step.
            **kwargs: passed to optimizer.step.

        Returns:
            What optimizer.step() returned, or None when the step was skipped.

        Raises:
            RuntimeError: already called on this optimizer since the last update().

        Example:
            >>> w = pcp.tensor([1.0], requires_grad=True)
            >>> opt = pcp.optim.SGD([w], lr=0.1)
            >>> scaler = pcp.amp.GradScaler()
            >>> w.grad = pcp.tensor([float("inf")])  # an overflowed gradient
            >>> scaler.step(opt)
            >>> w.tolist(), scaler.found_inf(opt)
            ([1.0], True)
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._state(optimizer)
        if state["stepped"]:
            raise RuntimeError("GradScaler.step: already called on this optimizer since the last update()")
        if not state["unscaled"]:
            self.unscale_(optimizer)
        state["stepped"] = True
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def found_inf(self, optimizer):
        """Whether the last ``unscale_`` of ``optimizer`` since update() found inf or NaN (so its
        step was skipped); False before one. It raises nothing.

        Args:
            optimizer: an Optimizer.

        Returns:
            A bool.

        Example:
            >>> w = pcp.tensor([1.0], requires_grad=True)
            >>> pcp.amp.GradScaler().found_inf(pcp.optim.SGD([w]))
            False
        """
        return self._state(optimizer)["found_inf"]

    def update(self, new_scale=None):
        """Adjusts the scale after the steps of this iteration: halved (backoff_factor) if any
        optimizer found inf or NaN, multiplied by growth_factor after growth_interval clean
        iterations in a row. new_scale sets it directly instead. Call it once per iteration, after
        the steps.

        Args:
            new_scale: the scale to set, or None (default) for the rule above.

        Returns:
            None.

        Raises:
            ValueError: new_scale is not positive and finite.

        Example:
            >>> w = pcp.tensor([1.0], requires_grad=True)
            >>> opt = pcp.optim.SGD([w])
            >>> scaler = pcp.amp.GradScaler(init_scale=8.0)
            >>> w.grad = pcp.tensor([float("nan")])
            >>> scaler.step(opt)
            >>> scaler.update()
            >>> scaler.get_scale()
            4.0
        """
        if not self._enabled:
            return
        if new_scale is not None:
            new_scale = float(new_scale)
            if not (math.isfinite(new_scale) and new_scale > 0):
                raise ValueError(f"GradScaler.update: new_scale must be positive and finite, got {new_scale}")
            self._scale = new_scale
        elif any(s["found_inf"] for s in self._per_optimizer.values()):
            self._scale *= self.backoff_factor
            self._growth_tracker = 0
        elif self._per_optimizer:
            self._growth_tracker += 1
            if self._growth_tracker == self.growth_interval:
                self._scale *= self.growth_factor
                self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self):
        """The scale and its settings, for checkpoints; {} when disabled. It raises nothing.

        Returns:
            A dict: scale, growth_factor, backoff_factor, growth_interval, _growth_tracker.

        Example:
            >>> pcp.amp.GradScaler(init_scale=8.0).state_dict()["scale"]
            8.0
        """
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self.growth_factor, "backoff_factor": self.backoff_factor,
                "growth_interval": self.growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state):
        """Restores what state_dict returned (nothing happens when this scaler is disabled).

        Args:
            state: a dict as state_dict returns.

        Returns:
            None.

        Raises:
            RuntimeError: an empty state (saved from a disabled scaler).
            KeyError: a state without one of state_dict's keys.
            ValueError: a value the constructor would refuse (a scale that is not positive and
                finite, a growth_factor <= 1...), or a _growth_tracker outside [0,
                growth_interval); the message names the key, and nothing changes.

        Example:
            >>> scaler = pcp.amp.GradScaler()
            >>> scaler.load_state_dict(pcp.amp.GradScaler(init_scale=8.0).state_dict())
            >>> scaler.get_scale()
            8.0
        """
        if not self._enabled:
            return
        if not state:
            raise RuntimeError("GradScaler.load_state_dict: the state is empty (saved from a disabled scaler)")
        _check_settings("GradScaler.load_state_dict: ", ("scale", state["scale"]), state["growth_factor"],
                        state["backoff_factor"], state["growth_interval"])
        tracker = state["_growth_tracker"]
        if isinstance(tracker, bool) or not isinstance(tracker, int) or not 0 <= tracker < state["growth_interval"]:
            raise ValueError(f"GradScaler.load_state_dict: '_growth_tracker' is {tracker!r}, expected a whole number "
                             f"in [0, growth_interval = {state['growth_interval']})")
        self._scale = float(state["scale"])
        self.growth_factor = float(state["growth_factor"])
        self.backoff_factor = float(state["backoff_factor"])
        self.growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])


def _check_settings(where, scale, growth_factor, backoff_factor, growth_interval):
    """GradScaler's settings as its constructor and load_state_dict check them; scale is
    (its name, its value)."""
    for name, value in (scale, ("growth_factor", growth_factor), ("backoff_factor", backoff_factor)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{where}{name} must be a positive finite number, got {value!r}")
    if growth_factor <= 1.0:
        raise ValueError(f"{where}growth_factor must be > 1, got {growth_factor}")
    if backoff_factor >= 1.0:
        raise ValueError(f"{where}backoff_factor must be < 1, got {backoff_factor}")
    if isinstance(growth_interval, bool) or not isinstance(growth_interval, int) or growth_interval <= 0:
        raise ValueError(f"{where}growth_interval must be a positive int, got {growth_interval!r}")
