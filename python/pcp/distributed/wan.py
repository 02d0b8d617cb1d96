"""Simulated hosts on one Linux machine, joined by slow, lossy links: a rehearsal of DiLoCo across
machines before a real deployment.

Each host is a network namespace with its own address (10.<net>.0.<i+1>) on a TUN device, whose
packets a switch process (pcp.distributed.netswitch) forwards to the host they are for through
both hosts' links, shaped as netem would (rate, one-way delay, jitter, loss) each way: between
two hosts a packet takes both links' delays. Host 0 is the shepherd's: it runs
the Ray head (no CPUs of its own, so no worker lands there) and the driver; every other host runs
a Ray node with one CPU, for one DiLoCo worker. Needs root (CAP_NET_ADMIN), /dev/net/tun and
iproute2 (`ip`). Everything is named pcp-<tag>-*: close() removes it, and so does a watcher
process when the process that made it dies, however it dies.

    with Hosts(3, Link(rate_mbit=100, delay_ms=40, loss_pct=0.1)) as hosts:
        address = hosts.start_ray()
        hosts.run(0, ["pcp", "diloco", "--address", address, "--workers", "2"]).wait()
"""
import dataclasses
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid


@dataclasses.dataclass
class Link:
    """A host's link to the others, each way: rate in Mbit/s (0: unshaped), one-way delay and
    jitter in milliseconds, loss in percent."""

    rate_mbit: float = 100.0
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0

    def values(self):
        return [self.rate_mbit, self.delay_ms, self.jitter_ms, self.loss_pct]


def available():
    """'' when simulated hosts can be made here, else why not (for a test's skip)."""
    if os.name != "posix" or sys.platform != "linux":
        return "network namespaces are Linux's"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    if not shutil.which("ip"):
        return "iproute2 (ip) is not installed"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    probe = f"pcp-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"  # threads of one process may probe at once
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode:
        return f"ip netns add failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ""


def _ip(*args, check=True):
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode:
        raise RuntimeError(f"wan: ip {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def teardown(tag):
    """Kills every process in the namespaces pcp-<tag>-* and deletes them (their links go with
    them). Returns the namespaces removed."""
    names = [n.split()[0] for n in _ip("netns", "list", check=False).splitlines() if n.startswith(f"pcp-{tag}-")]
    for name in names:
        for _ in range(3):  # a process may fork while we kill
            pids = [int(p) for p in _ip("netns", "pids", name, check=False).split()]
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not pids:
                break
            time.sleep(0.2)
        _ip("netns", "del", name, check=False)
        shutil.rmtree(f"/etc/netns/{name}", ignore_errors=True)
    return names


_QUIET = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}


class Hosts:
    """n simulated hosts (see the module). links: one Link for all, or one per host (host 0's
    included). tag: the names' middle part (default: a random one)."""

    def __init__(self, n, links=Link(), tag=None):
        reason = available()
        if reason:
            raise RuntimeError(f"wan: cannot simulate hosts here: {reason}")
        self.tag = tag or uuid.uuid4().hex[:6]
        self.net = 16 + int(self.tag, 16) % 200 if all(c in "0123456789abcdef" for c in self.tag) else 77
        self.links = list(links) if isinstance(links, (list, tuple)) else [links] * n
        if len(self.links) != n:
            raise ValueError(f"wan: {len(self.links)} links for {n} hosts")
        self.procs, self.removed = [], set()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        # What every process of the hosts gets: PCP's path, a token for the Ray cluster (a Ray head
        # on a non-loopback address asks for one), and multi-node clusters on (a local run in this
        # process, pcp.distributed.init_ray, turns them off for its own cluster).
        self.env = {"PYTHONPATH": env["PYTHONPATH"], "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": uuid.uuid4().hex,
                    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
        # The watcher: when this process's end of its pipe closes (exit, crash, SIGKILL), it tears down.
        self._watcher = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdin.read(); from pcp.distributed.wan import teardown; "
                                   f"teardown({self.tag!r})"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
        self._switch = subprocess.Popen([sys.executable, "-m", "pcp.distributed.netswitch", str(self.net), str(n)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                        start_new_session=True)
        try:
            devices = json.loads(self._switch.stdout.readline())["ready"]
            self.n = 0
            for device in devices:
                self._join(device)
            self._tell({"links": [link.values() for link in self.links]})
        except BaseException:
            self.close()
            raise

    def ns(self, i):
        return f"pcp-{self.tag}-h{i}"

    def address(self, i):
        return f"10.{self.net}.0.{i + 1}"

    def _tell(self, command):
        self._switch.stdin.write(json.dumps(command) + "\n")
        self._switch.stdin.flush()
        return json.loads(self._switch.stdout.readline())

    def _join(self, device):
        """Host self.n: a namespace, the switch's TUN device moved into it as eth0, its address."""
        i, ns = self.n, self.ns(self.n)
        _ip("netns", "add", ns)
        # Name resolution inside the host (`ip netns exec` mounts /etc/netns/NS/* over /etc/*): no
        # name server, which it could not reach (Ray would wait on it), and its name at its address.
        os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
        with open(f"/etc/netns/{ns}/resolv.conf", "w") as f:
            f.write("# pcp.distributed.wan: no name server\n")
        with open(f"/etc/netns/{ns}/hosts", "w") as f:
            f.write(f"127.0.0.1 localhost\n{self.address(i)} {socket.gethostname()}\n")
        _ip("link", "set", device, "netns", ns)
        _ip("-n", ns, "link", "set", device, "name", "eth0")
        _ip("-n", ns, "addr", "add", f"{self.address(i)}/16", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        self.n += 1
        return i

    def add_host(self, link=None):
        """A new host, joined to the others (for a host added mid-run); returns its index."""
        self.links.append(link or self.links[-1])
        self._tell({"add": self.links[-1].values()})
        return self._join(f"pcpsw{self.net}h{self.n}")

    def shape(self, i, link):
        """Sets host i's link, both ways."""
        self.links[i] = link
        self._tell({"links": [link.values() for link in self.links]})

    def cut(self, i, down=True):
        """Cuts host i's link (down=False restores it): its packets go nowhere meanwhile."""
        self._tell({"cut": i, "down": down})

    def remove_host(self, i):
        """Host i vanishes: its link cut, its processes killed, its namespace deleted."""
        self.cut(i)
        self._kill(i)
        self.removed.add(i)
        _ip("netns", "del", self.ns(i), check=False)
        shutil.rmtree(f"/etc/netns/{self.ns(i)}", ignore_errors=True)

    def _kill(self, i):
        for pid in [int(p) for p in _ip("netns", "pids", self.ns(i), check=False).split()]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop_ray(self):
        """Kills every process on every host (Ray's nodes and whatever runs on them): for a
        cluster started anew around another head, as after the loss of the head's host."""
        for i in range(self.n):
            if i not in self.removed:
                self._kill(i)

    def counters(self):
        """[(bytes sent, bytes received)] on each host's link so far (IP packets, headers included)."""
        return [tuple(c) for c in self._tell({"counters": True})]

    def run(self, i, argv, env=None, **popen):
        """Starts argv inside host i (a Popen; close() kills it with the rest), with this
        cluster's Ray token and the host's address in its environment (env: more variables)."""
        # All hosts' Ray nodes run on one machine, where a driver joins the head's node unless
        # told its own (pcp.distributed.init_ray reads PCP_RAY_NODE_IP): on the head's node, a
        # driver on another host had its objects go nowhere.
        env = dict(os.environ, **self.env, PCP_RAY_NODE_IP=self.address(i), **(env or {}))
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(i), *argv], env=env, **popen)
        self.procs.append(proc)
        return proc

    def start_ray(self, port=6379, timeout=120, object_store_mb=512, node_timeout_s=None, head=0):
        """A Ray head on host `head` (default 0; no CPUs: workers go to the other hosts) and a
        node of one CPU on each other host; returns the head's HOST:PORT once every node has
        joined. node_timeout_s: the seconds of silence after which the head declares a node dead
        and restarts its actors elsewhere (None: Ray's own health check, which outlasts a cut of
        half a minute)."""
        ray = shutil.which("ray")
        if ray is None:
            raise RuntimeError("wan: the `ray` command is not installed (pip install 'pcp[distributed]')")
        self.head, self.head_host = f"{self.address(head)}:{port}", head
        self._store = ["--object-store-memory", str(object_store_mb * 2**20)]  # each node's; Ray's default: 30% of RAM
        self.run(head, [ray, "start", "--head", "--block", "--node-ip-address", self.address(head), "--port", str(port),
                     "--num-cpus", "0", "--include-dashboard=false", "--disable-usage-stats", *self._store],
                 env=None if node_timeout_s is None else {"RAY_health_check_period_ms": "1000",
                                                         "RAY_health_check_timeout_ms": "1000",
                                                         "RAY_health_check_failure_threshold": str(int(node_timeout_s))},
                 **_QUIET)
        self._wait_port(head, port, timeout)
        self.join_ray([i for i in range(self.n) if i != head and i not in self.removed], timeout)
        return self.head

    def join_ray(self, hosts, timeout=120):
        """Starts a Ray node of one CPU on each of hosts (indices; e.g. one added mid-run) and
        waits until all have joined the cluster of start_ray."""
        # A driver that reports the live nodes: once it is connected the head takes nodes (one
        # started before that may give up, and is started again).
        code = ("import ray, sys, time; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False)\n"
                "while True:\n"
                "    print('alive', len([n for n in ray.nodes() if n['Alive']]), flush=True); time.sleep(0.5)")
        watch = self.run(self.head_host, [sys.executable, "-c", code, self.head], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
        node = [shutil.which("ray"), "start", "--block", "--address", self.head, "--num-cpus", "1",
                "--disable-usage-stats", *self._store]
        deadline, alive, first = time.time() + timeout, None, None
        try:
            # One node at a time: nodes registering together on one machine can time out (a GCS
            # deadline); one whose `ray start` gave up is started again.
            for k, i in enumerate(hosts):
                proc = None
                while alive is None or alive < first + k + 1:
                    if time.time() > deadline or watch.poll() is not None:
                        raise RuntimeError(f"wan: host {i}'s Ray node did not join {self.head} within {timeout} s")
                    if alive is not None and (proc is None or proc.poll() is not None):
                        proc = self.run(i, node + ["--node-ip-address", self.address(i)], **_QUIET)
                    if select.select([watch.stdout], [], [], 1.0)[0]:
                        line = watch.stdout.readline().split()
                        alive = int(line[1]) if line[:1] == ["alive"] else alive
                        first = alive if first is None else first
        finally:
            watch.kill()

    def _wait_port(self, i, port, timeout):
        code = ("import socket, sys, time; t = time.time()\n"
                "while time.time() - t < float(sys.argv[3]):\n"
                "    try:\n"
                "        socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close(); sys.exit(0)\n"
                "    except OSError:\n"
                "        time.sleep(0.2)\n"
                "sys.exit(1)")
        if self.run(i, [sys.executable, "-c", code, self.address(i), str(port), str(timeout)]).wait(timeout + 5):
            raise RuntimeError(f"wan: nothing listens on {self.address(i)}:{port} after {timeout} s")

    def close(self):
        """Stops every process of every host and removes the namespaces."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        teardown(self.tag)
        if self._switch.poll() is None:
            self._switch.stdin.close()  # EOF: the switch ends, and its devices with it
            self._switch.wait(10)
        for proc in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self._watcher.poll() is None:
            self._watcher.stdin.close()
            self._watcher.wait(30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
