"""Grad-mode context managers and the function transforms grad / value_and_grad."""
import functools

from . import _core
from ._core import Tensor


class no_grad:
    """Context manager and decorator: operations inside record no graph (for evaluation and
    optimizer updates; pcp.enable_grad turns recording back on inside).

    Returns:
        A context manager; used as a decorator, the function runs inside it.

    Raises:
        Nothing of its own; the previous state is restored even when the body raises.

    Example:
        >>> x = pcp.tensor([1.0], requires_grad=True)
        >>> with pcp.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _enabled = False

    def __enter__(self):
        self._prev = _core.is_grad_enabled()
        _core.set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _core.set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class enable_grad(no_grad):
    """Context manager and decorator: turns graph recording back on (inside pcp.no_grad).

    Returns:
        A context manager; used as a decorator, the function runs inside it.

    Raises:
        Nothing of its own; the previous state is restored even when the body raises.

    Example:
        >>> with pcp.no_grad(), pcp.enable_grad():
        ...     pcp.is_grad_enabled()
        True
    """

    _enabled = True


def _flatten(tree):
    """Tensors of a pytree (tensor, or tuple/list/dict nesting of them) and a rebuild function."""
    if isinstance(tree, Tensor):
        return [tree], lambda leaves: leaves[0]
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        sizes = [len(p[0]) for p in parts]

        def rebuild(leaves):
            out, i = [], 0
            for (_, rb), n in zip(parts, sizes):
                out.append(rb(leaves[i:i + n]))
                i += n
            return type(tree)(out)
        return [l for p in parts for l in p[0]], rebuild
    if isinstance(tree, dict):
        keys = list(tree.keys())
        leaves, rebuild_vals = _flatten([tree[k] for k in keys])
        return leaves, lambda ls: dict(zip(keys, rebuild_vals(ls)))
    raise TypeError(f"grad: arguments must be Tensors or tuples/lists/dicts of Tensors, got {type(tree).__name__}")


def value_and_grad(fn, argnums=0):
    """Returns a function computing ``(fn(*args), d fn / d args[argnums])``.

    fn must return a one-element Tensor. argnums is an int or a tuple of ints; each selected
    argument may be a Tensor or a tuple/list/dict of Tensors, and its gradient has the same structure.

    Args:
        fn: the function to differentiate.
        argnums: which positional argument(s) to differentiate with respect to (default 0).

    Returns:
        A function of fn's arguments returning (value, gradient); a tuple of gradients when
        argnums is a tuple.

    Raises:
        TypeError: argnums is not an int or a tuple of ints.
        ValueError: argnums out of range for the call's arguments, or fn's value has more than
            one element.

    Example:
        >>> f = pcp.value_and_grad(lambda x: (x * x).sum())
        >>> value, g = f(pcp.tensor([1.0, 2.0]))
        >>> value.item(), g.tolist()
        (5.0, [2.0, 4.0])
    """
    single = isinstance(argnums, int)
    if not single and not (isinstance(argnums, (tuple, list)) and all(isinstance(n, int) for n in argnums)):
        raise TypeError(f"grad: argnums must be an int or a tuple of ints, got {argnums!r}")
    nums = (argnums,) if single else tuple(argnums)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for n in nums:
            if not -len(args) <= n < len(args):
                raise ValueError(f"grad: argnums {n} is out of range for {len(args)} positional arguments")
        args = list(args)
        structures = []
        wrt = []
        selected = [_flatten(args[n]) for n in nums]
        # Inside another grad (grad(grad(f))), or with arguments an outer graph tracks, the
        # inputs stay connected and the gradient is itself recorded, so it can be differentiated.
        nested = _core.is_grad_enabled() and any(leaf.requires_grad for leaves, _ in selected for leaf in leaves)
        for n, (leaves, rebuild) in zip(nums, selected):
            fresh = []
            for leaf in leaves:
                if not leaf.dtype.is_floating_point:
                    raise TypeError(f"grad: can only differentiate with respect to floating-point tensors, got {leaf.dtype}")
                if nested and leaf.requires_grad:
                    t = _core.copy(leaf)  # a new node of the outer graph, so the inner gradient is its own
                else:
                    t = leaf.detach()
                    t.requires_grad = True
                fresh.append(t)
            args[n] = rebuild(fresh)
            structures.append((rebuild, len(fresh)))
            wrt.extend(fresh)
        with enable_grad():
            out = fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"grad: the function must return a Tensor, got {type(out).__name__}")
        if out.size != 1:
            raise ValueError(f"grad: the function must return a one-element tensor (a scalar loss), got shape {out.shape}")
        if out.requires_grad:
            grads = _core.autograd_grad(out, wrt, create_graph=nested)
        else:
            grads = [_core.zeros_like(w) for w in wrt]
        result, i = [], 0
        for rebuild, n in structures:
            result.append(rebuild(grads[i:i + n]))
            i += n
        g = result[0] if single else tuple(result)
        return (out if nested else out.detach()), g

    return wrapper


def grad(fn, argnums=0):
    """Returns a function computing the gradient of fn with respect to args[argnums].

    Args:
        fn: a function returning a one-element Tensor.
        argnums: an int or a tuple of ints (default 0), as in value_and_grad.

    Returns:
        A function of fn's arguments returning the gradient(s) alone.

    Raises:
        TypeError, ValueError: as value_and_grad.

    Example:
        >>> pcp.grad(lambda x: (x ** 3).sum())(pcp.tensor([2.0])).tolist()
        [12.0]
    """
    vg = value_and_grad(fn, argnums)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return vg(*args, **kwargs)[1]

    return wrapper
