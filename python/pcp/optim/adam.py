"""Adam and AdamW: one fused C++ kernel pass over all parameters of a group."""
import pcp
from pcp import _core

from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba); weight_decay is added to the gradient, as torch.optim.Adam."""

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        if lr < 0 or eps < 0 or weight_decay < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"{type(self).__name__}: invalid hyperparameters lr={lr}, betas={betas}, eps={eps}, "
                             f"weight_decay={weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def step(self):
        self.step_count += 1
        with pcp.no_grad():
            for group in self.param_groups:
                ps, gs = self._params_with_grad(group)
                if not ps:
                    continue
                ms, vs = [], []
                for p in ps:
                    s = self.state.get(id(p))
                    if s is None:
                        s = self.state[id(p)] = {"exp_avg": pcp.zeros_like(p), "exp_avg_sq": pcp.zeros_like(p)}
                    ms.append(s["exp_avg"])
                    vs.append(s["exp_avg_sq"])
                b1, b2 = group["betas"]
                _core.adam_step(ps, gs, ms, vs, self.step_count, group["lr"], b1, b2, group["eps"],
                                group["weight_decay"], self._decoupled)


class AdamW(Adam):
    """AdamW (Loshchilov & Hutter): decoupled weight decay, p -= lr * wd * p."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
