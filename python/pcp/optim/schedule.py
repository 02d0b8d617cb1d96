"""Learning-rate schedules."""
import math


def warmup_cosine(lr, min_lr, warmup_iters, decay_iters):
    """nanoGPT's learning-rate schedule: a linear warmup to lr over warmup_iters iterations, a
    cosine decay to min_lr at decay_iters, then min_lr.

    Args:
        lr: the peak learning rate.
        min_lr: the final learning rate.
        warmup_iters: iterations of warmup (0 for none).
        decay_iters: the iteration where the decay reaches min_lr (>= warmup_iters).

    Returns:
        A function of the iteration number (an int from 0) returning the learning rate, a float;
        assign it to each group's 'lr' before the step.

    Raises:
        ValueError: a negative warmup_iters, or decay_iters < warmup_iters.

    Example:
        >>> at = pcp.optim.warmup_cosine(1.0, 0.1, warmup_iters=10, decay_iters=110)
        >>> [round(at(i), 3) for i in (0, 9, 10, 60, 110, 500)]
        [0.091, 0.909, 1.0, 0.55, 0.1, 0.1]
    """
    if warmup_iters < 0 or decay_iters < warmup_iters:
        raise ValueError(f"warmup_cosine: need 0 <= warmup_iters <= decay_iters, got {warmup_iters}, {decay_iters}")

    def at(it):
        if it < warmup_iters:
            return lr * (it + 1) / (warmup_iters + 1)
        if it > decay_iters:
            return min_lr
        ratio = (it - warmup_iters) / max(1, decay_iters - warmup_iters)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)

    return at
