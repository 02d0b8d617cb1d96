"""Adam and AdamW: one fused C++ kernel pass over all parameters of a group."""
import pcp
from pcp import _core

from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba); weight_decay is added to the gradient, as torch.optim.Adam."""

    _decoupled = False
    _state_keys = ("exp_avg", "exp_avg_sq", "step")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        if lr < 0 or eps < 0 or weight_decay < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"{type(self).__name__}: invalid hyperparameters lr={lr}, betas={betas}, eps={eps}, "
                             f"weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

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
            _core.adam_step([i[0] for i in items], [i[1] for i in items], [i[2]["exp_avg"] for i in items],
                            [i[2]["exp_avg_sq"] for i in items], step, group["lr"], b1, b2, group["eps"],
                            group["weight_decay"], self._decoupled)


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter): decoupled weight decay, p -= lr * wd * p."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
