"""Adam and AdamW: one fused C++ kernel pass over all parameters of a group."""
import pcp
from pcp import _core

from .optimizer import Optimizer, _number, traced_scalar


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015), as torch.optim.Adam: bias-corrected running means of the
    gradient and of its square scale each step; weight_decay is added to the gradient (L2).
    One fused kernel pass over a group's parameters; steps are counted per parameter.

    Args:
        params: float32 tensors, or group dicts (see Optimizer).
        lr: the learning rate (default 1e-3).
        betas: the decay rates of the two moments (default (0.9, 0.999)), each in [0, 1).
        eps: added to the denominator (default 1e-8).
        weight_decay: the L2 penalty's factor (default 0).

    Raises:
        ValueError: a negative lr, eps or weight_decay, a beta outside [0, 1), or no parameters.
        TypeError: a parameter that is not a float32 Tensor.

    Example:
        >>> w = pcp.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = pcp.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()  # the first step moves each weight by lr against its gradient's sign
        >>> [round(v, 4) for v in w.tolist()]
        [0.9, -0.9]
    """

    _decoupled = False
    _state_keys = ("exp_avg", "exp_avg_sq", "step")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas) if isinstance(betas, (tuple, list)) else betas, eps=eps,
                                      weight_decay=weight_decay))

    def _rules(self, g):
        betas = g["betas"]
        return [("lr", _number(g["lr"]), "a number >= 0"),
                ("betas", isinstance(betas, tuple) and len(betas) == 2 and all(_number(b, 0.0, 1.0) for b in betas),
                 "two numbers in [0, 1)"),
                ("eps", _number(g["eps"]), "a number >= 0"),
                ("weight_decay", _number(g["weight_decay"]), "a number >= 0")]

    def _update(self, group, ps, gs):
        # Steps are counted per parameter (bias correction), as in PyTorch: a parameter
        # whose first gradient comes late starts its own count. One fused call per count.
        by_step = {}
        for p, g in zip(ps, gs):
            s = self.state.get(id(p))
            if s is None:
                s = self.state[id(p)] = {"exp_avg": pcp.zeros_like(p), "exp_avg_sq": pcp.zeros_like(p),
                                         "step": 0}
            s["step"] += 1
            by_step.setdefault(s["step"], []).append((p, g, s))
        b1, b2 = group["betas"]
        for step, items in by_step.items():
            states = [i[2] for i in items]
            _core.adam_step([i[0] for i in items], [i[1] for i in items], [s["exp_avg"] for s in states],
                            [s["exp_avg_sq"] for s in states], traced_scalar(lambda: _advance(states), step),
                            traced_scalar(lambda: group["lr"]), b1, b2, group["eps"], group["weight_decay"],
                            self._decoupled)


def _advance(states):
    """The step counts of parameters stepped together, one step on (a traced step's replay)."""
    for s in states:
        s["step"] += 1
    return states[0]["step"]


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter, 2019), as torch.optim.AdamW: Adam with decoupled weight decay,
    p -= lr * weight_decay * p before the Adam update (the gradient is left alone). What GPT-2
    training uses, with weight_decay=0 for biases and norms (see Optimizer's groups).

    Args:
        params: float32 tensors, or group dicts (see Optimizer).
        lr: the learning rate (default 1e-3).
        betas: the decay rates of the two moments (default (0.9, 0.999)).
        eps: added to the denominator (default 1e-8).
        weight_decay: the decoupled decay factor (default 0.01).

    Raises:
        ValueError: a negative lr, eps or weight_decay, a beta outside [0, 1), or no parameters.
        TypeError: a parameter that is not a float32 Tensor.

    Example:
        >>> w = pcp.tensor([1.0], requires_grad=True)
        >>> opt = pcp.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = pcp.zeros(1)  # no gradient: only the decay acts
        >>> opt.step()
        >>> round(w.item(), 4)
        0.95
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
