"""The live terminal dashboard (rich): progress, loss sparklines, speed, and DiLoCo's workers."""
import math
import sys
import time
from collections import deque

from .lines import LogLines, duration, megabytes, states

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values, width=48):
    """The last `width` values as bar characters from ▁ (their minimum) to █ (their maximum);
    a missing or non-finite value is a space."""
    values = list(values)[-width:]
    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return ""
    lo, hi = min(finite), max(finite)
    return "".join(" " if v is None or not math.isfinite(v) else BARS[round((v - lo) / (hi - lo) * 7) if hi > lo else 0]
                   for v in values)


def _num(v, fmt):
    return "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, fmt)


class Dashboard:
    """A rich Live display redrawn a few times a second; messages print above it. Use as a
    context manager or call close() to stop it (the last frame stays on the terminal)."""

    def __init__(self, stream=None, refresh_per_second=4):
        from rich.console import Console
        from rich.live import Live
        self.mode, self.status, self.t0 = None, "starting", time.monotonic()
        self.info = {}            # the start event
        self.step = {}            # train: the last step event
        self.evals = []           # train: eval events
        self.losses = deque(maxlen=240)  # train: step losses; DiLoCo: the workers' mean live loss
        self.rounds = []          # DiLoCo: round records
        self.workers = {}         # DiLoCo: rank -> the progress event's row
        self.tokens_per_s = None
        self.notes = deque(maxlen=4)  # DiLoCo: recent workers lost and joined
        self._text = LogLines()   # the same one-line wording for notes
        self.console = Console(file=stream or sys.stdout)
        self.live = Live(console=self.console, get_renderable=self.render, refresh_per_second=refresh_per_second,
                         redirect_stdout=False, redirect_stderr=False)
        self.started = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.started:
            if self.status != "finished":
                self.status = "stopped"
            self.live.refresh()
            self.live.stop()
            self.started = False

    # -- events --------------------------------------------------------------------------------
    def __call__(self, e):
        kind = e["kind"]
        if not self.started:
            self.live.start()
            self.started = True
        if kind == "start":
            self.mode, self.status, self.info, self.t0 = e["mode"], "running", e, time.monotonic()
        elif kind == "step":
            self.step = e
            self.losses.append(e["loss"])
            self.tokens_per_s = e["tokens_per_s"]
        elif kind == "eval":
            self.evals.append(e)
        elif kind == "progress":
            self.workers = {r: dict(w) for r, w in e["workers"].items()}
            live = [w["last_loss"] for w in self.workers.values() if w.get("alive") and w.get("last_loss") is not None]
            if live:
                self.losses.append(sum(live) / len(live))
            self.tokens_per_s = e.get("tokens_per_s", self.tokens_per_s)
        elif kind == "round":
            self.rounds.append(e)
            self.tokens_per_s = e["tokens"] / max(e["seconds"], 1e-9)
        elif kind in ("worker_lost", "worker_joined", "worker_refused", "worker_nonfinite"):
            self.notes.append(getattr(self._text, "_" + kind)(e))
            if e["rank"] in self.workers:
                self.workers[e["rank"]]["alive"] = kind == "worker_joined"
        elif kind == "message":
            self.console.print(e["text"], highlight=False, markup=False)
        elif kind == "end":
            self.status = "finished"
        if kind != "progress":
            self.live.refresh()

    # -- drawing -------------------------------------------------------------------------------
    def render(self):
        from rich.console import Group
        from rich.panel import Panel
        from rich.text import Text
        if self.mode is None:
            return Text("starting...")
        body = self._render_train() if self.mode == "train" else self._render_diloco()
        colour = {"running": "cyan", "finished": "green"}.get(self.status, "yellow")
        title = f"[bold]PCP {'train' if self.mode == 'train' else 'DiLoCo'}[/] · [{colour}]{self.status}[/]"
        return Panel(Group(*body), title=title, title_align="left",
                     subtitle=f"elapsed {duration(time.monotonic() - self.t0)}", subtitle_align="right")

    def _grid(self):
        from rich.table import Table
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        return grid

    def _bar(self, done, total):
        from rich.progress_bar import ProgressBar
        return ProgressBar(total=max(total, 1), completed=min(done, total), width=24)

    def _row(self, grid, name, *cells):
        from rich.table import Table
        line = Table.grid(padding=(0, 2))
        for _ in cells:
            line.add_column(no_wrap=True)
        line.add_row(*cells)
        grid.add_row(name, line)

    def _render_train(self):
        s, info = self.step, self.info
        it, iters = s.get("iter", info["iter"]), info["iters"]
        grid = self._grid()
        self._row(grid, "iteration", f"{it}/{iters}", self._bar(it, iters),
                  f"eta {duration(s['eta_s'])}" if s else "")
        self._row(grid, "loss", _num(s.get("loss"), ".4f"), sparkline(self.losses))
        if self.evals:
            last = self.evals[-1]
            self._row(grid, "eval", f"train {last['train_loss']:.4f}  val {last['val_loss']:.4f}  (iter {last['iter']})",
                      sparkline([e["val_loss"] for e in self.evals]))
        self._row(grid, "learning rate", _num(s.get("lr"), ".2e"))
        self._row(grid, "tokens/s", _num(self.tokens_per_s, ",.0f"))
        dtype = f" in {info['dtype']}" if info.get("dtype", "float32") != "float32" else ""
        self._row(grid, "model", f"{info['parameters'] / 1e6:.2f}M parameters on {info['device']}{dtype}, "
                                 f"output in {info['out']}")
        return [grid]

    def _render_diloco(self):
        from rich.table import Table
        from rich.text import Text
        info, rec = self.info, (self.rounds[-1] if self.rounds else None)
        done = rec["round"] if rec else info["round"]
        grid = self._grid()
        self._row(grid, "round", f"{done}/{info['rounds']}", self._bar(done, info["rounds"]))
        self._row(grid, "workers", f"{len(self.workers) or info['workers']} on {info['nodes']} Ray node"
                  f"{'s' * (info['nodes'] != 1)}, {info['inner_steps']} inner steps per round"
                  f"{' (one of ' + str(info['fragments']) + ' fragments synchronised each)' if info.get('fragments', 1) > 1 else ''}, "
                  f"{info['parameters'] / 1e6:.2f}M parameters")
        self._row(grid, "global val loss", _num(rec["val_loss"] if rec else None, ".4f"),
                  sparkline([r["val_loss"] for r in self.rounds]))
        self._row(grid, "worker loss", _num(self.losses[-1] if self.losses else None, ".4f"), sparkline(self.losses))
        lrs = [w["lr"] for w in self.workers.values() if w.get("lr") is not None]
        self._row(grid, "tokens/s", _num(self.tokens_per_s, ",.0f"))
        self._row(grid, "inner lr", _num(max(lrs) if lrs else None, ".2e"))
        if rec:
            self._row(grid, "communicated", f"total {megabytes(rec['total_bytes'])}",
                      f"last round: sent {megabytes(rec['bytes_sent'])}, received {megabytes(rec['bytes_received'])}"
                      f"{states(rec)}; "
                      f"peak round {megabytes(rec.get('peak_round_bytes', 0))}")
        table = Table(expand=False, header_style="bold", pad_edge=False, box=None, padding=(0, 1))
        loads = [w["plan_load_seconds"] for w in self.workers.values() if w.get("plan_bytes")]
        if loads:  # the workers' plans: what each was sent and how long loading it took
            size = max(w["plan_bytes"] for w in self.workers.values() if w.get("plan_bytes"))
            self._row(grid, "plan", f"{megabytes(size)} to each worker, loaded in "
                      f"{min(loads) * 1e3:.0f}-{max(loads) * 1e3:.0f} ms")
        for col in ("worker", "status", "device", "step", "steps done", "last loss", "lr", "last seen"):
            table.add_column(col, justify="left" if col in ("worker", "status", "device") else "right", no_wrap=True)
        now = time.time()
        for rank, w in sorted(self.workers.items()):
            alive = w.get("alive")
            table.add_row(str(rank), Text("● alive", "green") if alive else Text("✗ lost", "red"), w.get("device") or "—",
                          f"{w.get('live_step') or 0}/{info['inner_steps']}", str(w.get("steps_done") or 0),
                          _num(w.get("last_loss"), ".4f"), _num(w.get("lr"), ".2e"),
                          f"{now - w['last_seen']:.0f} s ago" if w.get("last_seen") else "—")
        return [grid, Text(""), table, *(Text(n, "dim") for n in self.notes)]
