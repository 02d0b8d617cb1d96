"""SGD with momentum, Nesterov momentum and weight decay (fused C++ kernel)."""
import pcp
from pcp import _core

from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr=1e-2, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: invalid hyperparameters lr={lr}, momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov))

    def step(self):
        self.step_count += 1
        with pcp.no_grad():
            for group in self.param_groups:
                ps, gs = self._params_with_grad(group)
                if not ps:
                    continue
                bufs, first = [], False
                if group["momentum"] != 0:
                    for p in ps:
                        s = self.state.get(id(p))
                        if s is None:
                            s = self.state[id(p)] = {"momentum_buffer": pcp.zeros_like(p)}
                            first = True
                        bufs.append(s["momentum_buffer"])
                _core.sgd_step(ps, gs, bufs, first, group["lr"], group["momentum"], group["dampening"],
                               group["weight_decay"], group["nesterov"])
