"""Gradient clipping by global norm."""
import math

import pcp
from pcp import _core


def clip_grad_norm(parameters, max_norm, eps=1e-6):
    """Scales every gradient by max_norm / total_norm when the global L2 norm exceeds max_norm.

    Returns the total norm before clipping, as ``torch.nn.utils.clip_grad_norm_``: a float for CPU
    gradients, a 0-d float32 tensor for GPU ones (the scale is applied on the GPU without waiting).
    """
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)):
        raise TypeError(f"clip_grad_norm: max_norm must be a number, got {type(max_norm).__name__}")
    if not max_norm > 0:
        raise ValueError(f"clip_grad_norm: max_norm must be positive, got {max_norm}")
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return 0.0
    grads = [p.grad for p in params]
    if all(g.dtype == pcp.float32 and g.is_contiguous() for g in grads):
        norm = _core.clip_grad_norm(grads, float(max_norm), float(eps))  # one fused pass, in place
        return norm if norm.device != "cpu" else norm.item()
    with pcp.no_grad():
        total = math.sqrt(sum(pcp.sum(pcp.square(p.grad.astype(pcp.float32))).item() for p in params))
        scale = max_norm / (total + eps)
        if scale < 1.0:
            for p in params:
                p.grad = p.grad * scale
    return total
