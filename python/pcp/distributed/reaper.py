"""Stops a local Ray cluster's processes when the driver that started it dies, however it dies.

A driver that exits normally or on SIGINT/SIGTERM shuts Ray down itself (Shepherd.shutdown), but
one killed with SIGKILL cannot, and Ray's dashboard and runtime-env agents then outlive it (GCS and
raylet follow the driver; the agents do not). So the driver starts this small process: it holds
a pipe from the driver, follows the Ray processes (the given roots and their descendants, listed
again every second while the driver lives), and when the pipe closes it stops those still running.

    python reaper.py ROOT_PID...   (stdin: the pipe; psutil is needed)
"""
import os
import select
import signal
import subprocess
import sys


def start(root_pids):
    """Starts a reaper for root_pids (the processes ray.init started); returns its Popen. Closing its
    stdin (or this process dying) makes it stop them. None where it cannot run (no psutil, Windows)."""
    try:
        import psutil
    except ImportError:
        return None
    if os.name != "posix" or not root_pids:
        return None
    # psutil may come from Ray's bundled copy (ray/thirdparty_files), which the child would not find.
    # Run as a file, not as pcp.distributed.reaper: it needs nothing of PCP's.
    path = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(psutil.__file__)),
                                        os.environ.get("PYTHONPATH")) if p)
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), *map(str, root_pids)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, PYTHONPATH=path), start_new_session=True)


def stop(proc, timeout=15):
    """Tells the reaper the driver is done (after ray.shutdown) and waits for it to finish."""
    if proc is None:
        return
    try:
        proc.stdin.close()
        proc.wait(timeout)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _follow(roots, known):
    for p in list(roots):
        try:
            for c in p.children(recursive=True):
                known.setdefault(c.pid, c)
        except Exception:  # gone, or not ours to read
            pass


def main(argv):
    import psutil
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is the driver's to handle
    roots = []
    for pid in argv:
        try:
            roots.append(psutil.Process(int(pid)))
        except psutil.Error:
            pass
    known = {p.pid: p for p in roots}
    fd = sys.stdin.fileno()
    while True:
        _follow(roots, known)
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready and not os.read(fd, 4096):
            break  # the driver closed the pipe or died
    _follow(roots, known)
    # Ray's own shutdown may be under way: give it a moment, then SIGTERM, then SIGKILL.
    alive = [p for p in known.values() if p.is_running()]
    _, alive = psutil.wait_procs(alive, timeout=1)
    for p in alive:
        try:
            p.terminate()  # psutil refuses a pid reused by another process
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(alive, timeout=3)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
