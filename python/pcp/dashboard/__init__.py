"""What a training run shows while it runs: a live terminal dashboard (rich) or plain log lines.

`pcp.train.train` and `pcp.distributed.Shepherd` report events (dicts with a "kind") to a
callable; `reporter()` picks the dashboard on a terminal and log lines elsewhere.

Events of `pcp train`:    start (mode "train", parameters, device, iter, iters, out),
                          step (iter, iters, loss, lr, tokens_per_s, eta_s), eval (iter, train_loss,
                          val_loss), message (text), end.
Events of `pcp diloco`:   start (mode "diloco", round, rounds, workers, inner_steps, parameters,
                          nodes),
                          progress (round, tokens_per_s, workers: {rank: alive, steps_done,
                          live_step, last_loss, lr, last_seen, device, plan_bytes,
                          plan_load_seconds}), round (the round's record), worker_lost (rank,
                          round, error), worker_refused (rank, round, error: a worker that refused
                          the plan it was sent), worker_nonfinite (rank, round, step, count, allowed:
                          a worker whose inner loss went NaN), worker_joined (rank, round), message,
                          end.
"""
import importlib.util
import sys

from .lines import LogLines
from .live import Dashboard, sparkline

__all__ = ["Dashboard", "LogLines", "reporter", "sparkline"]


def reporter(dashboard=None, stream=None):
    """A Dashboard when `dashboard` is True, or when it is None and the stream is a terminal;
    LogLines otherwise. Both are context managers (leaving one stops the live display)."""
    stream = stream or sys.stdout
    has_rich = importlib.util.find_spec("rich") is not None
    if dashboard and not has_rich:
        print("(rich is not installed: plain log lines instead of the dashboard; pip install rich)", file=stream)
    if dashboard is None:
        dashboard = hasattr(stream, "isatty") and stream.isatty()
    return Dashboard(stream) if dashboard and has_rich else LogLines(stream)
