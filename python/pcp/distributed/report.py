"""Plain log lines for a DiLoCo run (the dashboard's fallback), and loss.png at the end."""
import sys


def _mb(n):
    return f"{n / 1e6:.2f} MB"


class LogReport:
    """Shepherd events as one line each (progress events, many per round, are dropped)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.rounds = 0

    def __call__(self, e):
        kind, line = e["kind"], None
        if kind == "start":
            self.rounds = e["rounds"]
            line = (f"diloco: {e['workers']} workers, {e['parameters'] / 1e6:.2f}M parameters, "
                    f"rounds {e['round'] + 1} to {e['rounds']}")
        elif kind == "round":
            lost = f" lost {e['workers_lost']}" if e["workers_lost"] else ""
            line = (f"round {e['round']}/{self.rounds}: val {e['val_loss']:.4f} | workers in {e['workers_in']}{lost} | sent "
                    f"{_mb(e['bytes_sent'])}, received {_mb(e['bytes_received'])} (total {_mb(e['total_bytes'])})"
                    f" | {e['tokens'] / max(e['seconds'], 1e-9):,.0f} tok/s | {e['seconds']:.1f} s")
        elif kind == "worker_lost":
            line = f"worker {e['rank']} lost in round {e['round']}: {e['error'].splitlines()[0][:200]}"
        elif kind == "worker_joined":
            line = f"worker {e['rank']} joined (from round {e['round']})"
        if line:
            print(line, file=self.stream, flush=True)


def plot_rounds(history, path):
    """Global val loss per round next to each worker's (its local model at the round's end)."""
    from pcp.train.loop import save_plot

    def draw(ax):
        ax.plot([r["round"] for r in history], [r["val_loss"] for r in history], "k-o", label="global model", lw=2)
        for rank in sorted({int(k) for r in history for k in r["worker_val"]}):
            pts = [(r["round"], v) for r in history for k, v in r["worker_val"].items() if int(k) == rank]
            ax.plot(*zip(*pts), ".--", alpha=0.7, label=f"worker {rank}")
    return save_plot(path, "round", "val loss", draw)
