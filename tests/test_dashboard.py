"""The training dashboard: sparklines, the choice between dashboard and log lines, what a frame
shows for a run's events, and `pcp train --dashboard / --no-dashboard`."""
import io
import re
import time

import numpy as np
import pytest

pytest.importorskip("rich", reason="rich is not installed")

from pcp.dashboard import Dashboard, LogLines, reporter, sparkline  # noqa: E402
from pcp.dashboard.live import BARS  # noqa: E402


def frame(dash, width=100):
    """The dashboard's current frame as plain text."""
    from rich.console import Console
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(dash.render())
    return console.file.getvalue()


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_sparkline_scales_between_min_and_max():
    values = [3.0, 1.0, 2.0, float("nan"), 5.0, 4.0, None, 1.5]
    finite = np.array([v for v in values if v is not None and not np.isnan(v)])
    expect = "".join(" " if v is None or np.isnan(v) else BARS[int(np.rint((v - finite.min()) / np.ptp(finite) * 7))]
                     for v in values)
    assert sparkline(values) == expect
    assert sparkline(values)[1] == "▁" and sparkline(values)[4] == "█"
    assert sparkline(range(100), width=10) == sparkline(range(90, 100))  # the last `width` values
    assert sparkline([2.0, 2.0]) == "▁▁" and sparkline([]) == "" and sparkline([float("inf")]) == ""


def test_reporter_is_a_dashboard_on_a_terminal_only():
    assert isinstance(reporter(stream=io.StringIO()), LogLines)
    assert isinstance(reporter(stream=Terminal()), Dashboard)
    assert isinstance(reporter(False, stream=Terminal()), LogLines)
    assert isinstance(reporter(True, stream=io.StringIO()), Dashboard)


TRAIN = [{"kind": "start", "mode": "train", "parameters": 812_000, "device": "cpu", "iter": 0, "iters": 200, "out": "o"},
         *({"kind": "step", "iter": i, "iters": 200, "loss": 4.0 - i / 100, "lr": 1e-3 * i / 100, "tokens_per_s": 9876.5,
            "eta_s": 200 - i} for i in (10, 20, 30)),
         {"kind": "eval", "iter": 30, "train_loss": 3.5, "val_loss": 3.625}]


def test_train_frame_and_log_lines_show_the_events():
    out = io.StringIO()
    dash = Dashboard(out)
    for e in TRAIN:
        dash(e)
    text = frame(dash)
    for want in ("PCP train · running", "30/200", "eta 2m50s", "3.7000", "▁", "█", "val 3.6250", "3.00e-04",
                 "9,876", "0.81M parameters on cpu"):
        assert want in text, want
    dash({"kind": "message", "text": "a sample line"})
    dash({"kind": "end"})
    dash.close()
    assert "a sample line" in out.getvalue() and "PCP train · finished" in out.getvalue()

    lines = io.StringIO()
    log = LogLines(lines)
    for e in TRAIN:
        log(e)
    assert lines.getvalue().splitlines() == [
        "training GPT (0.81M parameters) on cpu for 200 iterations; output in o",
        "iter 10/200 loss 3.9000 lr 1.00e-04 9,876 tok/s eta 3m10s",
        "iter 20/200 loss 3.8000 lr 2.00e-04 9,876 tok/s eta 3m00s",
        "iter 30/200 loss 3.7000 lr 3.00e-04 9,876 tok/s eta 2m50s",
        "eval iter 30: train 3.5000, val 3.6250"]


def test_diloco_frame_shows_workers_and_bytes(monkeypatch):
    dash = Dashboard(io.StringIO())
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)  # the frame's clock stands still: "12 s ago" exactly
    dash({"kind": "start", "mode": "diloco", "round": 0, "rounds": 4, "workers": 2, "inner_steps": 50, "parameters": 10**6,
          "nodes": 3})
    dash({"kind": "progress", "round": 0, "tokens_per_s": 1500.0, "workers": {
        0: {"alive": True, "steps_done": 57, "live_step": 7, "last_loss": 2.25, "lr": 5e-4, "last_seen": now - 12,
            "device": "vulkan:0 (NVIDIA H200)"},
        1: {"alive": True, "steps_done": 55, "live_step": 5, "last_loss": 2.75, "lr": 5e-4, "last_seen": now,
            "device": "cpu"}}})
    dash({"kind": "worker_lost", "rank": 1, "round": 1, "error": "ActorDiedError: the actor died\ntraceback"})
    dash({"kind": "round", "round": 2, "val_loss": 2.125, "workers_in": [0], "workers_lost": [1], "worker_val": {},
          "worker_train": {}, "bytes_sent": 8_000_000, "bytes_received": 4_000_000, "total_bytes": 24_000_000,
          "peak_round_bytes": 12_500_000,
          "seconds": 4.0, "tokens": 6000})
    text = frame(dash)
    for want in ("PCP DiLoCo · running", "2/4", "2 on 3 Ray nodes, 50 inner steps per round", "2.1250", "total 24.00 MB", "sent 8.00 MB",
                 "received 4.00 MB", "peak round 12.50 MB", "1,500", "5.00e-04", "worker 1 lost in round 1: ActorDiedError"):
        assert want in text, want
    assert re.search(r"^\W*0\s+● alive\s+vulkan:0 \(NVIDIA H200\)\s+7/50\s+57\s+2\.2500\s+5\.00e-04\s+12 s ago",
                     text, re.M), text
    assert re.search(r"^\W*1\s+✗ lost\s+cpu\s+5/50\s+55\s+2\.7500", text, re.M), text
    dash.close()


def test_cli_train_with_and_without_dashboard(text_file, tmp_path, capsys):
    from pcp.cli import main
    flags = ["--data", text_file, "--out", str(tmp_path), "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
             "--block-size", "16", "--batch-size", "4", "--max-iters", "4", "--eval-interval", "2", "--eval-iters", "1",
             "--log-interval", "2", "--sample-tokens", "0"]
    assert main(["train", "--no-dashboard", *flags]) == 0
    out = capsys.readouterr().out
    assert "iter 4/4 loss" in out and "eval iter 4:" in out and "PCP train" not in out
    assert main(["train", "--dashboard", "--overwrite", *flags]) == 0  # a second run in the same --out
    out = capsys.readouterr().out
    assert "PCP train · finished" in out and "4/4" in out and "iter 4/4 loss" not in out
