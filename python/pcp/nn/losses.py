"""Loss functions."""
import pcp


def cross_entropy(logits, targets, ignore_index=-100, reduction="mean"):
    """Fused, stable cross-entropy; classes on the last axis of logits."""
    return pcp.cross_entropy(logits, targets, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input, target, reduction="mean"):
    """Mean (or summed, or elementwise) squared error."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got '{reduction}'")
    try:
        input, target = pcp.asarray(input), pcp.asarray(target)
        if tuple(input.shape) != tuple(target.shape):
            pcp.broadcast_to(target, input.shape)  # raises a clear error when they do not broadcast
    except (TypeError, ValueError, OverflowError) as e:
        raise type(e)(f"mse_loss: {str(e).split(': ', 1)[-1]}") from None
    diff = pcp.square(input - target)
    if reduction == "mean":
        return diff.mean()
    if reduction == "sum":
        return diff.sum()
    return diff
