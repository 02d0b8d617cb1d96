"""The Ray cluster DiLoCo runs on: joining one, or starting a local one bound to 127.0.0.1 (and
stopping it however the driver ends), and the mailbox actor a pipelined shepherd posts to."""
import os
import signal
import socket
import threading

from . import reaper

_reaper = None  # the process that stops the local cluster should this driver be killed (see reaper.py)

def check_reachable(address, timeout=5):
    """A clear error now for a cluster address nothing listens on (ray.init retries for minutes)."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except (OSError, ValueError) as e:
        raise ConnectionError(f"diloco: cannot reach the Ray cluster at {address}: {e}") from e


def _children():
    try:
        import psutil  # Ray bundles it
        return {p.pid for p in psutil.Process().children()}
    except Exception:
        return set()


def init_ray(address="", min_cpus=2, num_gpus=None):
    """Joins the Ray cluster at HOST:PORT, or starts a local one bound to 127.0.0.1 with at least
    min_cpus logical CPUs (one per worker actor, even on a smaller machine) and num_gpus GPUs
    (None: Ray's own count, which sees NVIDIA GPUs only). Returns True when it started a local
    cluster: the caller then stops it with shutdown_ray(), and a reaper process stops it should
    this process be killed first."""
    global _reaper
    import ray
    if address:
        check_reachable(address)
    if ray.is_initialized():
        return False
    if address:
        try:
            # PCP_RAY_NODE_IP: this process's node where one machine runs several Ray nodes (Ray
            # otherwise joins the driver to the head's node, whence its objects may not travel).
            ray.init(address=address, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                     _node_ip_address=os.environ.get("PCP_RAY_NODE_IP") or None)
        except Exception as e:  # Ray raises ConnectionError, RuntimeError or its own types here
            raise ConnectionError(f"diloco: cannot reach the Ray cluster at {address}: {e}") from e
        return False
    # On Linux a local cluster takes the machine's interface address unless clusters are off:
    # Ray reads this variable at import (and its processes inherit it), so set the constant too
    # for a Ray imported before us.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False
    # "local": a new cluster even when a `ray start` one runs on this machine (address=None would join it).
    before = _children()
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        ray.init(address="local", include_dashboard=False, logging_level="ERROR", log_to_driver=False,
                 num_cpus=max(os.cpu_count() or 1, min_cpus), num_gpus=num_gpus)
    finally:  # the processes ray.init started (GCS, raylet, ...), even where it failed midway
        _reaper = reaper.start(sorted(_children() - before))
        # ray.init replaces the SIGTERM handler with sys.exit (no message, status 15): keep the caller's.
        if sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, sigterm)
    return True


def shutdown_ray():
    """Stops the local cluster init_ray started, and its reaper."""
    global _reaper
    import ray
    try:
        ray.shutdown()
    finally:
        reaper.stop(_reaper)
        _reaper = None


class Mailbox:
    """Where a pipelined streaming shepherd posts, for each round k, the model the round starts
    from ("start": [a reference] to it, for a worker that has to begin anew) and the round's
    encoded outer step ("step"): get(k, kind) answers once it is posted, so a worker that reaches
    its merge first waits there. A Ray actor with async methods (many gets wait at once)."""

    def __init__(self):
        self.posts, self.posted = {}, {}

    def _event(self, key):
        import asyncio
        return self.posted.setdefault(key, asyncio.Event())

    async def put(self, k, value, kind="step"):
        self.posts[kind, k] = value
        self._event((kind, k)).set()
        for old in [key for key in self.posts if key[0] == kind and key[1] < k - 2]:  # no worker is that far behind
            del self.posts[old], self.posted[old]

    async def get(self, k, kind="step"):
        await self._event((kind, k)).wait()
        return self.posts[kind, k]
