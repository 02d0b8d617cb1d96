"""Gradient clipping by global norm."""
import math

import pcp
from pcp import _core


def clip_grad_norm(parameters, max_norm, eps=1e-6):
    """Scales every gradient, in place, by max_norm / (total_norm + eps) when the global L2 norm
    of all of them together exceeds max_norm, as ``torch.nn.utils.clip_grad_norm_``. Float32
    contiguous gradients go through one fused pass.

    Args:
        parameters: tensors (e.g. model.parameters()); those without a gradient are skipped.
        max_norm: the largest norm allowed, a positive number.
        eps: added to the norm before dividing (default 1e-6).

    Returns:
        The total norm before clipping: a float for CPU gradients (0.0 when there are none), a
        0-d float32 tensor for GPU ones (the scale is applied on the GPU without waiting), and a
        0-d tensor inside a function pcp.compile traces.

    Raises:
        TypeError: max_norm is not a number.
        ValueError: max_norm is not positive.

    Example:
        >>> w = pcp.zeros(2).requires_grad_()
        >>> w.grad = pcp.tensor([3.0, 4.0])
        >>> pcp.optim.clip_grad_norm([w], 1.0)
        5.0
        >>> [round(g, 4) for g in w.grad.tolist()]
        [0.6, 0.8]
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
        return norm if norm.device != "cpu" or _core.is_tracing() else norm.item()  # a traced step keeps the tensor
    with pcp.no_grad():
        total = math.sqrt(sum(pcp.sum(pcp.square(p.grad.astype(pcp.float32))).item() for p in params))
        scale = max_norm / (total + eps)
        if scale < 1.0:
            for p in params:
                p.grad = p.grad * scale
    return total
