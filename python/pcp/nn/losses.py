"""Loss functions."""
import pcp


def cross_entropy(logits, targets, ignore_index=-100, reduction="mean"):
    """Cross-entropy of logits against integer class targets, classes on the last axis: the fused,
    stable pcp.cross_entropy (PyTorch's F.cross_entropy for (N, C) logits).

    Args:
        logits: (..., C) floating scores.
        targets: (...) integers in [0, C), or ignore_index.
        ignore_index: targets equal to it add nothing and are not counted (default -100).
        reduction: 'mean' (default), 'sum' or 'none'.

    Returns:
        A 0-d tensor ('mean', 'sum'), or the per-target losses of targets' shape ('none').

    Raises:
        ValueError: targets' shape is not logits' without the class axis, or an unknown reduction.
        IndexError: a target outside [0, C) that is not ignore_index.

    Example:
        >>> from pcp import nn
        >>> round(nn.cross_entropy(pcp.zeros((2, 4)), pcp.tensor([0, 3])).item(), 4)
        1.3863
    """
    return pcp.cross_entropy(logits, targets, ignore_index=ignore_index, reduction=reduction)


def mse_loss(input, target, reduction="mean"):
    """The squared error (input - target) ** 2, averaged ('mean'), summed ('sum') or elementwise
    ('none'), as PyTorch's F.mse_loss.

    Args:
        input: a tensor (or anything pcp.asarray takes).
        target: a tensor whose shape broadcasts to input's.
        reduction: 'mean' (default), 'sum' or 'none'.

    Returns:
        A 0-d tensor ('mean', 'sum') or a tensor of the broadcast shape ('none').

    Raises:
        ValueError: an unknown reduction, or target's shape does not broadcast to input's.
        TypeError: an argument that is not a tensor, an array, a list or a number.

    Example:
        >>> from pcp import nn
        >>> nn.mse_loss(pcp.tensor([1.0, 3.0]), pcp.zeros(2)).item()
        5.0
    """
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
