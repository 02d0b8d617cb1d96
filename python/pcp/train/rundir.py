"""A run's --out folder: one run at a time (a lock), nothing of an earlier run replaced unless asked,
the leftovers of a killed run cleaned, and metrics.jsonl kept in step with the checkpoint.

Starting a run in a folder that holds one (a checkpoint or metrics) needs resume (continue it) or
overwrite (start anew: the old run's files move to OUT/replaced-<time>/, so nothing is lost).
"""
import contextlib
import json
import os
import time

from pcp.serialization import remove_stale_temps


class RunDirError(ValueError):
    """An --out folder that cannot be used as asked (holds a run, is in use, contradicting flags)."""


@contextlib.contextmanager
def locked(out):
    """Holds OUT/.lock for the run: a second run into the same folder is refused, not interleaved."""
    os.makedirs(out, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here
        yield
        return
    f = open(os.path.join(out, ".lock"), "a")
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunDirError(f"{out} is in use by another run (it holds {os.path.join(out, '.lock')})") from None
        yield
    finally:
        f.close()  # closing releases the lock


def prepare(out, markers, others, resume, overwrite, describe=None):
    """Applies the resume/overwrite policy to OUT (locked by the caller) and removes stale temporary
    files. markers: the files whose presence means OUT holds a run; others: the rest of a run's files.
    Returns messages for the user about what was done."""
    if resume and overwrite:
        raise RunDirError("resume and overwrite contradict each other: pick one")
    present = [n for n in markers if os.path.exists(os.path.join(out, n)) and os.path.getsize(os.path.join(out, n))]
    messages = []
    removed = remove_stale_temps(out)
    if removed:
        messages.append(f"removed {len(removed)} temporary file(s) left by an interrupted write: {', '.join(removed)}")
    if present and not resume:
        what = describe() if describe else ", ".join(present)
        if not overwrite:
            raise RunDirError(f"{out} already holds a run ({what}); pass --resume to continue it, or --overwrite to "
                              f"start a new one (the old run's files then move to {out}/replaced-<time>/)")
        dest = os.path.join(out, time.strftime("replaced-%Y%m%d-%H%M%S"))
        n = 1
        while os.path.exists(dest + (f"-{n}" if n > 1 else "")):
            n += 1
        dest += f"-{n}" if n > 1 else ""
        os.makedirs(dest)
        moved = [name for name in (*markers, *others) if os.path.exists(os.path.join(out, name))]
        for name in moved:
            os.replace(os.path.join(out, name), os.path.join(dest, name))
        messages.append(f"--overwrite: moved the previous run ({what}) to {dest}")
    return messages


def read_metrics(path, last_iter):
    """The records of metrics.jsonl up to last_iter (the checkpoint's step), one per iteration (the
    last written wins), and the file rewritten to hold just those: a run killed after it logged an
    evaluation but before its checkpoint would otherwise log that iteration twice. A line cut short
    by a kill is dropped."""
    by_iter = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and isinstance(rec.get("iter"), int) and rec["iter"] <= last_iter:
                    by_iter[rec["iter"]] = rec
    records = [by_iter[i] for i in sorted(by_iter)]
    with open(path + ".tmp", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    os.replace(path + ".tmp", path)
    return records
