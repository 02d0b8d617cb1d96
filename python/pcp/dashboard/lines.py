"""Plain log lines for training events: what `--no-dashboard` and a non-terminal stdout print."""
import sys


def megabytes(n):
    return f"{n / 1e6:.2f} MB"


def duration(seconds):
    seconds = max(int(seconds), 0)
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class LogLines:
    """One line per event; step lines every log interval (the loop decides), DiLoCo's progress
    events (several a second) are dropped."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.rounds = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.stream.flush()

    def __call__(self, e):
        line = getattr(self, "_" + e["kind"], lambda e: None)(e)
        if line:
            print(line, file=self.stream, flush=True)

    def _start(self, e):
        if e["mode"] == "train":
            since = f" from iteration {e['iter']}" if e["iter"] else ""
            dtype = f" in {e['dtype']}" if e.get("dtype", "float32") != "float32" else ""
            return (f"training GPT ({e['parameters'] / 1e6:.2f}M parameters) on {e['device']}{dtype} for {e['iters']} "
                    f"iterations{since}; output in {e['out']}")
        self.rounds = e["rounds"]
        return (f"diloco: {e['workers']} workers on {e['nodes']} Ray node{'s' * (e['nodes'] != 1)}, "
                f"{e['parameters'] / 1e6:.2f}M parameters, {e['inner_steps']} inner steps a round"
                f"{', ' + str(e['fragments']) + ' fragments in turn' if e.get('fragments', 1) > 1 else ''}, "
                f"rounds {e['round'] + 1} to {e['rounds']}")

    def _step(self, e):
        return (f"iter {e['iter']}/{e['iters']} loss {e['loss']:.4f} lr {e['lr']:.2e} {e['tokens_per_s']:,.0f} tok/s "
                f"eta {duration(e['eta_s'])}")

    def _eval(self, e):
        return f"eval iter {e['iter']}: train {e['train_loss']:.4f}, val {e['val_loss']:.4f}"

    def _message(self, e):
        return e["text"]

    def _round(self, e):
        lost = f" lost {e['workers_lost']}" if e["workers_lost"] else ""
        val = "—" if e["val_loss"] is None else f"{e['val_loss']:.4f}"
        return (f"round {e['round']}/{self.rounds}: val {val} | workers in {e['workers_in']}{lost} | sent "
                f"{megabytes(e['bytes_sent'])}, received {megabytes(e['bytes_received'])}{states(e)} (total "
                f"{megabytes(e['total_bytes'])}, peak round {megabytes(e.get('peak_round_bytes', 0))}) | "
                f"{e['tokens'] / max(e['seconds'], 1e-9):,.0f} tok/s | "
                f"{e['seconds']:.1f} s{round_split(e)}")

    def _worker_lost(self, e):
        return f"worker {e['rank']} lost in round {e['round']}: {e['error'].splitlines()[0][:200]}"

    def _worker_refused(self, e):
        return f"worker {e['rank']} refused its plan in round {e['round']} and was stopped: {e['error'][:300]}"

    def _worker_nonfinite(self, e):
        return (f"worker {e['rank']}'s inner loss is not finite (step {e['step']} of round {e['round'] + 1}): "
                f"{'left out and restarted' if e['count'] <= e['allowed'] else 'the run stops'} "
                f"({e['count']} of --skip-nonfinite {e['allowed']})")

    def _worker_joined(self, e):
        return f"worker {e['rank']} joined (from round {e['round']})"


def states(e):
    """' and workers' states 25.6 MB' on rounds the workers sent their inner states (for the
    checkpoint: not in DiLoCo's count of exchanged bytes), else ''."""
    return f" and workers' states {megabytes(e['state_bytes'])}" if e.get("state_bytes") else ""


def round_split(e):
    """Where a round's seconds went: the workers' steps (the slowest), the exchange (collecting
    past the steps), the outer step, the evaluation and the checkpoint; '' without timings."""
    workers, shepherd = e.get("worker_timings") or {}, e.get("shepherd_timings") or {}
    if not workers or not shepherd:
        return ""
    steps = max(t.get("steps", 0.0) for t in workers.values())
    parts = [("steps", steps), ("exchange", max(shepherd.get("collect", 0.0) - steps, 0.0)),
             ("outer step", shepherd.get("step", 0.0)), ("eval", shepherd.get("evaluate", 0.0)),
             ("checkpoint", shepherd.get("save", 0.0))]
    return " (" + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in parts) + ")"
