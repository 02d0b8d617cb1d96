"""SGD with momentum, Nesterov momentum and weight decay (fused C++ kernel)."""
import pcp
from pcp import _core

from .optimizer import Optimizer, _number, traced_scalar


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, as
    torch.optim.SGD: g = grad + weight_decay * p; with momentum, buf = momentum * buf +
    (1 - dampening) * g (buf = g at a parameter's first step) and g = buf (or g + momentum * buf
    with Nesterov); then p -= lr * g. One fused kernel pass per group.

    Args:
        params: float32 tensors, or group dicts (see Optimizer).
        lr: the learning rate (default 0.01).
        momentum: the momentum factor (default 0: none).
        dampening: dampens the gradient's share of the momentum (default 0).
        weight_decay: the L2 penalty's factor (default 0).
        nesterov: Nesterov momentum (default False; needs momentum > 0 and dampening 0).

    Raises:
        ValueError: a negative lr, momentum or weight_decay, Nesterov without momentum or with
            dampening, or no parameters.
        TypeError: a parameter that is not a float32 Tensor.

    Example:
        >>> w = pcp.tensor([1.0], requires_grad=True)
        >>> opt = pcp.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> for _ in range(2):
        ...     opt.zero_grad()
        ...     (w * w).sum().backward()
        ...     opt.step()
        >>> round(w.item(), 4)
        0.46
    """

    _state_keys = ("momentum_buffer",)

    def __init__(self, params, lr=1e-2, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov))

    def _rules(self, g):
        nesterov = g["nesterov"]
        return [("lr", _number(g["lr"]), "a number >= 0"),
                ("momentum", _number(g["momentum"]), "a number >= 0"),
                ("dampening", _number(g["dampening"], float("-inf")), "a number"),
                ("weight_decay", _number(g["weight_decay"]), "a number >= 0"),
                ("nesterov", isinstance(nesterov, bool) and (not nesterov or g["momentum"] > 0 and g["dampening"] == 0),
                 "a bool, and True (Nesterov momentum) only with a momentum > 0 and zero dampening")]

    def _update(self, group, ps, gs):
        lr = traced_scalar(lambda: group["lr"])
        hyper = (lr, group["momentum"], group["dampening"], group["weight_decay"], group["nesterov"])
        if group["momentum"] == 0:
            _core.sgd_step(ps, gs, [], False, *hyper)
            return
        # A parameter's first step starts its momentum buffer from the gradient itself.
        batches = {True: ([], [], []), False: ([], [], [])}
        for p, g in zip(ps, gs):
            s = self.state.get(id(p))
            first = s is None
            if first:
                s = self.state[id(p)] = {"momentum_buffer": pcp.zeros_like(p)}
            for lst, item in zip(batches[first], (p, g, s["momentum_buffer"])):
                lst.append(item)
        for first, (bp, bg, bb) in batches.items():
            if bp:  # in a traced step's replays, the buffers made at the traced one are no longer new
                _core.sgd_step(bp, bg, bb, traced_scalar(lambda: False, first), *hyper)
