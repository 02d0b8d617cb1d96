"""Loss functions."""
import pcp


def cross_entropy(logits, targets, ignore_index=-100, reduction="mean"):
    """Fused, stable cross-entropy; classes on the last axis of logits."""
    return pcp.cross_entropy(logits, targets, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input, target, reduction="mean"):
    """Mean (or summed, or elementwise) squared error."""
    if tuple(input.shape) != tuple(getattr(target, "shape", input.shape)):
        pcp.broadcast_to(target, input.shape)  # raises a clear error when they do not broadcast
    diff = pcp.square(input - target)
    if reduction == "mean":
        return diff.mean()
    if reduction == "sum":
        return diff.sum()
    if reduction == "none":
        return diff
    raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got '{reduction}'")
