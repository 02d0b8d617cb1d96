"""Parent side of crash isolation: a long-lived worker process runs the cases; when it dies by
a signal the case is a CRASH, when it does not answer in time a HANG, and a new worker starts."""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Pool:
    def __init__(self, timeout=10.0, mem_gb=4.0, python=None):
        self.timeout, self.mem_gb = timeout, mem_gb
        self.python = python or sys.executable
        self.proc = None
        self.err = tempfile.TemporaryFile()
        self.restarts = 0

    def _start(self):
        env = dict(os.environ, PCP_FUZZ_MEM_GB=str(self.mem_gb),
                   PYTHONPATH=os.pathsep.join([TESTS_DIR] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
        self.err.seek(0)
        self.err.truncate()
        self.proc = subprocess.Popen([self.python, "-m", "fuzz.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, env=env, bufsize=0)
        self.buf = b""

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc = None
        self.restarts += 1

    def _stderr_tail(self):
        """The line of the dead worker's stderr that says what happened (C++ exception, fatal
        error), else its last lines."""
        self.err.seek(0)
        text = self.err.read()[-20000:].decode("utf-8", "replace")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        for key in ("what():", "terminate called", "Fatal Python error", "Assertion", "error:"):
            hits = [ln for ln in lines if key in ln]
            if hits:
                return hits[-1][:300]
        return " | ".join(lines[-2:])[:300]

    def run(self, case):
        """The worker's answer for one case, or a CRASH / HANG record (no second try: a case
        that takes longer than the timeout on a loaded machine is a bug of the timeout's size)."""
        return self._run_once(case)

    def _run_once(self, case):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write((case.to_json() + "\n").encode())
        except BrokenPipeError:  # died after its last answer (at exit of a previous case)
            self._kill()
            self._start()
            self.proc.stdin.write((case.to_json() + "\n").encode())
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self._kill()
                return {"status": "HANG", "detail": f"no answer within {self.timeout:g} s"}
            chunk = os.read(fd, 65536)
            if not chunk:
                rc = self.proc.wait()
                tail = self._stderr_tail()
                self.proc = None
                self.restarts += 1
                if rc < 0:
                    try:
                        name = signal.Signals(-rc).name
                    except ValueError:
                        name = f"signal {-rc}"
                    return {"status": "CRASH", "detail": f"{name}: {tail}"}
                return {"status": "CRASH", "detail": f"worker exited with status {rc}: {tail}"}
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)
