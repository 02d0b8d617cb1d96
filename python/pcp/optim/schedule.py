"""Learning-rate schedules."""
import math


def warmup_cosine(lr, min_lr, warmup_iters, decay_iters):
    """nanoGPT's schedule: linear warmup to lr, cosine decay to min_lr at decay_iters, then min_lr.

    Returns a function of the iteration number.
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
