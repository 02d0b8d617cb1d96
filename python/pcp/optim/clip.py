"""Gradient clipping by global norm."""
import math

import pcp


def clip_grad_norm(parameters, max_norm, eps=1e-6):
    """Scales every gradient by max_norm / total_norm when the global L2 norm exceeds max_norm.

    Returns the total norm before clipping (a float), as torch.nn.utils.clip_grad_norm_.
    """
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return 0.0
    with pcp.no_grad():
        total = math.sqrt(sum(pcp.sum(pcp.square(p.grad.astype(pcp.float32))).item() for p in params))
        scale = max_norm / (total + eps)
        if scale < 1.0:
            for p in params:
                p.grad = p.grad * scale
    return total
