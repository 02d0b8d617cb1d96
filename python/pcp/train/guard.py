"""Stopping a run whose loss goes NaN or infinite, instead of training on through it.

The step's losses are kept (0-d tensors) and read together at each log point and before each
evaluation, so no step waits for a GPU; the run then stops naming the first bad iteration, before
anything of it is checkpointed. With skip_nonfinite = N, each step is checked as it runs (it then
waits for the device) and up to N bad steps are skipped, as GradScaler skips float16 overflows.
"""
import math

import pcp


class NonFiniteLoss(RuntimeError):
    """A training run stopped because its loss or gradient norm is not finite; .iteration is the
    first bad iteration. Making one raises nothing.

    Args:
        message: what happened and what to do.
        iteration: the iteration at which it happened.

    Example:
        >>> from pcp.train.guard import NonFiniteLoss
        >>> NonFiniteLoss("loss nan", 7).iteration
        7
    """

    def __init__(self, message, iteration):
        super().__init__(message)
        self.iteration = iteration


def _finite(value):
    if value is None:
        return True
    return math.isfinite(value.item() if isinstance(value, pcp.Tensor) else float(value))


class Guard:
    """Watches a run's steps for a non-finite loss or gradient norm (see the module).

    Args:
        out: the run's folder (named in the message).
        skip: how many bad steps may be skipped before the run stops (0: none).
    """

    def __init__(self, out, skip=0):
        self.out, self.skip = out, skip
        self.pending = []  # (iteration, loss tensor, gradient norm or None), not read yet
        self.skipped = []  # the iterations whose step was skipped

    def _stop(self, it, what):
        raise NonFiniteLoss(f"train: the {what} at iteration {it}: stopped before anything of it was saved; "
                            f"{self.out} keeps the last good checkpoint. Lower the learning rate (or raise warmup), "
                            f"resume with --resume, or skip such steps with --skip-nonfinite N", it)

    def bad(self, loss, norm):
        """What is not finite in a step's loss and gradient norm ('' when both are)."""
        if not _finite(loss):
            return f"loss is {loss.item()}"
        return "" if _finite(norm) else f"gradient norm is {float(norm.item() if isinstance(norm, pcp.Tensor) else norm)}"

    def record(self, it, loss, norm=None):
        """A step taken: checked later, at check()."""
        self.pending.append((it, loss, norm))

    def check(self):
        """Reads the steps recorded since the last check; raises NonFiniteLoss at the first bad one."""
        pending, self.pending = self.pending, []
        for it, loss, norm in pending:
            what = self.bad(loss, norm)
            if what:
                self._stop(it, what)

    def check_eval(self, it, losses):
        """An evaluation's losses ({split: float}): non-finite ones stop the run before its checkpoint."""
        for split, value in losses.items():
            if not math.isfinite(value):
                self._stop(it, f"{split} loss of the evaluation is {value}")

    def skip_step(self, it, what):
        """A step found bad as it ran (skip > 0) and not applied: stops the run past `skip` of them."""
        self.skipped.append(it)
        if len(self.skipped) > self.skip:
            self._stop(it, f"{what} (the {len(self.skipped)}th such step, past --skip-nonfinite {self.skip})")
