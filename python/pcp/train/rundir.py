"""A run's --out folder: one run at a time (a lock), nothing of an earlier run replaced unless asked,
the leftovers of a killed run cleaned, and metrics.jsonl kept in step with the checkpoint.

Starting a run in a folder that holds one (a checkpoint) needs resume (continue it) or overwrite
(start anew: the old run's files move to OUT/replaced-<time>/, so nothing is lost). A folder whose
run stopped before its first checkpoint holds nothing to continue: a new run starts there (its
files set aside the same way), with or without resume.
"""
import contextlib
import json
import os
import shutil
import time

from pcp.serialization import remove_stale_temps


class RunDirError(ValueError):
    """An --out folder that cannot be used as asked (holds a run, is in use, contradicting flags)."""


@contextlib.contextmanager
def locked(out):
    """Holds OUT/.lock for the run: a second run into the same folder is refused, not interleaved.
    A folder this run made, whose run failed before writing anything of its own (bad data, a bad
    flag), is removed again: a refused run leaves nothing behind."""
    made = not os.path.isdir(out)
    os.makedirs(out, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here
        fcntl = None
    f = open(os.path.join(out, ".lock"), "a")
    try:
        if fcntl is not None:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                made = False  # another run's folder
                raise RunDirError(f"{out} is in use by another run (it holds {os.path.join(out, '.lock')})") from None
        yield
    except BaseException:
        f.close()
        if made and set(os.listdir(out)) <= {".lock", "cache"}:  # the token cache only: made again in a second
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        f.close()  # closing releases the lock


def _set_aside(out, names):
    """Moves OUT's files `names` to a new OUT/replaced-<time>/ and returns that folder."""
    dest = os.path.join(out, time.strftime("replaced-%Y%m%d-%H%M%S"))
    n = 1
    while os.path.exists(dest + (f"-{n}" if n > 1 else "")):
        n += 1
    dest += f"-{n}" if n > 1 else ""
    os.makedirs(dest)
    for name in names:
        os.replace(os.path.join(out, name), os.path.join(dest, name))
    return dest


def prepare(out, markers, others, resume, overwrite, describe=None):
    """Applies the resume/overwrite policy to OUT (locked by the caller) and removes stale temporary
    files. markers: the checkpoints whose presence means OUT holds a run; others: the rest of a
    run's files. Returns messages for the user about what was done."""
    if resume and overwrite:
        raise RunDirError("resume and overwrite contradict each other: pick one")
    present = [n for n in markers if os.path.exists(os.path.join(out, n)) and os.path.getsize(os.path.join(out, n))]
    messages = []
    removed = remove_stale_temps(out)
    if removed:
        messages.append(f"removed {len(removed)} temporary file(s) left by an interrupted write: {', '.join(removed)}")
    leftovers = [n for n in (*markers, *others) if os.path.exists(os.path.join(out, n))]
    if not present and leftovers and not isinstance(resume, (str, os.PathLike)):
        # A run stopped before its first checkpoint: nothing to continue or to refuse for.
        dest = _set_aside(out, leftovers)
        messages.append(f"{out} holds no checkpoint, only files of a run stopped before its first one: starting "
                        f"anew (they moved to {dest})")
    elif present and not resume:
        what = describe() if describe else ", ".join(present)
        if not overwrite:
            raise RunDirError(f"{out} already holds a run ({what}); pass --resume to continue it, or --overwrite to "
                              f"start a new one (the old run's files then move to {out}/replaced-<time>/)")
        dest = _set_aside(out, leftovers)
        messages.append(f"--overwrite: moved the previous run ({what}) to {dest}")
    return messages


def resume_source(out, name, resume):
    """The checkpoint a run asked to resume loads, and messages: resume itself when it is a
    path; else OUT/name, or its previous (kept by save_checkpoint) when a kill fell between
    the two; None when OUT holds no checkpoint (the run starts anew)."""
    from pcp.train.checkpoint import previous_path
    if isinstance(resume, (str, os.PathLike)):
        if not os.path.isfile(resume):
            raise RunDirError(f"--resume {resume}: no such checkpoint file")
        return str(resume), []
    latest = os.path.join(out, name)
    if os.path.exists(latest):
        return latest, []
    if os.path.exists(previous_path(latest)):
        return previous_path(latest), [f"{latest} is missing: resuming from the previous checkpoint, "
                                       f"{previous_path(latest)}"]
    return None, [f"--resume: {out} holds no checkpoint yet: starting a new run"]


def offer_previous(error, path, latest, config):
    """A SafetensorsError of the checkpoint at `path`, re-raised: when path is the newest one
    (latest) and its previous is intact and of this run's model (config, a dict), the message
    says how to resume from that instead."""
    from pcp.serialization import load_safetensors, read_metadata
    from pcp.train.checkpoint import parse_metadata, previous_path
    from pcp.train.config import resume_changes
    prev = previous_path(latest)
    if os.path.abspath(path) == os.path.abspath(latest) and os.path.exists(prev):
        try:
            load_safetensors(prev)  # every tensor's CRC32C
            meta = parse_metadata(prev, read_metadata(prev))
            resume_changes(prev, meta["config"], config)
            step = meta["step"]
        except (ValueError, OSError):
            raise error from None
        error.args = (f"{error}. The previous checkpoint, {prev} (step {step}), is intact: continue from it with "
                      f"--resume {prev}",)
    raise error


def set_aside_newest(out, path, latest, messages):
    """A run resumed from a checkpoint other than OUT's newest moves the newest (damaged, or
    not wanted) out of the way, into OUT/replaced-<time>/, before it writes its own."""
    if os.path.abspath(path) != os.path.abspath(latest) and os.path.exists(latest):
        names = [n for n in (os.path.basename(latest), os.path.splitext(os.path.basename(latest))[0] + ".json")
                 if os.path.exists(os.path.join(out, n))]
        messages.append(f"resuming from {path}: {latest} moved to {_set_aside(out, names)}")


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


RUNS = "runs"  # where `pcp train` and `pcp diloco` put a run given no --out: ./runs/<name>-<time>/
CHECKPOINTS = ("best.safetensors", "ckpt.safetensors", "diloco.safetensors")  # what a run folder offers, in order


def new_run_folder(name):
    """A fresh folder name for a run given no --out: runs/<name>-<date>-<time>, with -2, -3...
    when a run of this second already has it (not created here)."""
    base = os.path.join(RUNS, f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")
    path, n = base, 1
    while os.path.exists(path):
        n += 1
        path = f"{base}-{n}"
    return path


def latest_run():
    """The run folder under ./runs whose newest checkpoint is the most recent; RunDirError when
    there is none."""
    found = []
    if os.path.isdir(RUNS):
        for name in os.listdir(RUNS):
            folder = os.path.join(RUNS, name)
            times = [os.path.getmtime(os.path.join(folder, c)) for c in CHECKPOINTS
                     if os.path.isfile(os.path.join(folder, c))]
            if times:
                found.append((max(times), folder))
    if not found:
        raise RunDirError(f"no run with a checkpoint under ./{RUNS}: pass a checkpoint file or a run's folder "
                          "(pcp train's --out)")
    return max(found)[1]


def checkpoint_in(path):
    """The checkpoint file `path` names: the file itself, or in a run folder (pcp train's or pcp
    diloco's) its best checkpoint, else its last. FileNotFoundError naming what was looked for."""
    if not os.path.isdir(path):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no checkpoint at {path}")
        return path
    for name in CHECKPOINTS:
        if os.path.isfile(os.path.join(path, name)):
            return os.path.join(path, name)
    raise FileNotFoundError(f"{path} holds no checkpoint ({', '.join(CHECKPOINTS)})")
