"""Progress display: a live bar on a terminal, plain log lines otherwise."""
import sys
import time


class Progress:
    def __init__(self, total, start=0, stream=None, log_interval=10):
        self.total, self.start_iter = total, start
        self.stream = stream or sys.stdout
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.log_interval = log_interval
        self.t0 = time.perf_counter()

    def eta(self, it):
        done = it - self.start_iter
        if done <= 0:
            return "?"
        left = (time.perf_counter() - self.t0) / done * (self.total - it)
        return f"{int(left // 60)}m{int(left % 60):02d}s"

    def update(self, it, loss, lr, tokens_per_s):
        text = f"iter {it}/{self.total} loss {loss:.4f} lr {lr:.2e} {tokens_per_s:,.0f} tok/s eta {self.eta(it)}"
        if self.tty:
            width = 24
            filled = int(width * it / max(self.total, 1))
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {text}\033[K")
            self.stream.flush()
        elif it % self.log_interval == 0:
            print(text, file=self.stream, flush=True)

    def message(self, text):
        if self.tty:
            self.stream.write("\r\033[K")
        print(text, file=self.stream, flush=True)
