"""DiLoCo across simulated hosts (pcp.distributed.wan): network namespaces joined by shaped links,
a Ray node each. The links carry what they are set to (rate, delay, loss: measured here against
the settings), a CI-sized DiLoCo run trains across them, nothing is left behind, even when the
process that made the hosts is killed, and a run survives a cut link, a lost worker host and a
lost shepherd host, ending near the run without the fault. `pytest -k wan` runs these."""
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

import pytest

from pcp.distributed import wan

REASON = wan.available()
pytestmark = pytest.mark.skipif(bool(REASON), reason=f"simulated hosts: {REASON}")


def namespaces(tag):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"pcp-{tag}-")]


def processes_naming(text):
    """Processes whose command line holds text (e.g. a simulated host's address)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmd and "pytest" not in cmd:
                found.append((int(pid), cmd[:200]))
    return found


def transfer(hosts, src, dst, nbytes, port=9000):
    """Seconds to send nbytes over TCP from host src to host dst, and the connect time (one round trip)."""
    server = hosts.run(dst, [sys.executable, "-c", (
        "import socket, sys\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        f"s.bind(('{hosts.address(dst)}', {port})); s.listen(); print('up', flush=True); c, _ = s.accept(); n = 0\n"
        "while True:\n"
        "    b = c.recv(1 << 20)\n"
        "    if not b: break\n"
        "    n += len(b)\n"
        "print(n)")], stdout=subprocess.PIPE, text=True)
    assert server.stdout.readline().strip() == "up"
    client = hosts.run(src, [sys.executable, "-c", (
        "import json, socket, time\n"
        f"t = time.perf_counter(); s = socket.create_connection(('{hosts.address(dst)}', {port}), 10)\n"
        f"rtt = time.perf_counter() - t; t = time.perf_counter(); s.sendall(b'x' * {nbytes}); s.close()\n"
        "print(json.dumps([rtt, time.perf_counter() - t]))")], stdout=subprocess.PIPE, text=True)
    rtt, _ = json.loads(client.communicate(timeout=120)[0])
    received = int(server.communicate(timeout=120)[0])
    return received, rtt


def test_wan_links_carry_the_rate_delay_and_loss_they_are_set_to():
    with wan.Hosts(2, [wan.Link(rate_mbit=40, delay_ms=15), wan.Link(rate_mbit=40, delay_ms=5)]) as hosts:
        before = hosts.counters()
        t = time.perf_counter()
        received, rtt = transfer(hosts, 0, 1, 4_000_000)
        seconds = time.perf_counter() - t
        assert received == 4_000_000
        assert 0.040 <= rtt < 0.2, rtt  # one round trip: each way through both links, 15 + 5 ms
        sent = hosts.counters()[0][0] - before[0][0]
        assert sent >= 4_000_000 and seconds >= sent * 8 / 40e6 * 0.95, (sent, seconds)  # never above the rate
        assert seconds < sent * 8 / 40e6 * 3 + 1.5, seconds  # nor far below it (TCP's start and the setup)
        hosts.shape(0, wan.Link(rate_mbit=40, loss_pct=2.0))
        received, _ = transfer(hosts, 0, 1, 1_000_000, port=9001)
        assert received == 1_000_000  # TCP resends what the lossy link drops
        hosts.cut(1)
        with pytest.raises(subprocess.TimeoutExpired):
            hosts.run(0, [sys.executable, "-c", f"import socket; socket.create_connection(('{hosts.address(1)}', 9), 30)"]
                      ).wait(3)
        tag = hosts.tag
    assert not namespaces(tag)


def test_wan_hosts_made_at_once_by_threads_of_one_process():
    """Two sets of hosts at once from one process (bench/diloco_wan.py --parallel): their probes
    and namespaces are named apart (the probe was once named by the process alone)."""
    import threading
    made, errors = [], []

    def make():
        try:
            made.append(wan.Hosts(2, [wan.Link(50, 1)] * 2))
        except Exception as e:  # noqa: BLE001 -- reported by the assertion below
            errors.append(e)
    threads = [threading.Thread(target=make) for _ in range(2)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    try:
        assert not errors and len(made) == 2 and made[0].tag != made[1].tag
        for hosts in made:
            assert sorted(namespaces(hosts.tag)) == sorted(hosts.ns(i) for i in range(2))
    finally:
        for hosts in made:
            hosts.close()
    assert not any(namespaces(hosts.tag) for hosts in made)


def test_wan_diloco_across_two_shaped_hosts_trains_and_leaves_nothing_behind(tmp_path, text_file):
    """The CI-sized rehearsal: the shepherd's host and 2 worker hosts at 50 Mbit/s, 2 rounds."""
    pytest.importorskip("ray", reason="Ray is not installed")
    t0 = time.perf_counter()
    with wan.Hosts(3, wan.Link(rate_mbit=50, delay_ms=5)) as hosts:
        address = hosts.start_ray()
        t_ray = time.perf_counter() - t0
        run = hosts.run(0, [sys.executable, "-m", "pcp.cli", "diloco", "--address", address, "--workers", "2",
                            "--inner-steps", "3", "--rounds", "2", "--eval-iters", "2", "--data", text_file,
                            "--out", str(tmp_path / "run"), "--no-dashboard"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = run.communicate(timeout=240)
        assert run.returncode == 0, (out[-2000:], err[-3000:])
        vals = [float(v) for v in re.findall(r"round \d/2: val ([\d.]+)", out)]
        assert len(vals) == 2 and vals[1] < vals[0], out
        counted = re.search(r"total ([\d.]+) MB", out.splitlines()[-2])
        sent, received = hosts.counters()[0]
        assert sent + received >= float(counted.group(1)) * 1e6, (sent, received, out)  # DiLoCo's bytes crossed it
        tag, address_prefix = hosts.tag, f"10.{hosts.net}.0."
    print(f"wan rehearsal: {time.perf_counter() - t0:.1f} s, of which the Ray cluster's start {t_ray:.1f} s")
    assert not namespaces(tag)
    deadline = time.time() + 20
    while processes_naming(address_prefix) and time.time() < deadline:
        time.sleep(0.5)
    assert not processes_naming(address_prefix)


def test_wan_a_shepherd_on_a_worker_host_trains(tmp_path, text_file):
    """`pcp diloco` on a host whose Ray node is not the head's: it joins its own node (hosts'
    processes get PCP_RAY_NODE_IP; on the head's node its objects never reached the workers)."""
    pytest.importorskip("ray", reason="Ray is not installed")
    with wan.Hosts(3, wan.Link(rate_mbit=100, delay_ms=5)) as hosts:
        code, lines = diloco_lines(hosts, 2, ["--address", hosts.start_ray(), "--workers", "2", "--inner-steps", "2",
                                              "--rounds", "2", "--eval-iters", "2", "--data", text_file, "--out",
                                              str(tmp_path / "run"), "--no-dashboard"], timeout=180)
    assert code == 0 and "round 2/2" in "\n".join(lines), "\n".join(lines[-30:])
    assert [r["workers_in"] for r in final_val(tmp_path / "run")[0][1:]] == [[0, 1], [0, 1]]


def test_wan_hosts_are_torn_down_when_their_maker_is_killed(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed")
    maker = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from pcp.distributed.wan import Hosts, Link\n"
        "hosts = Hosts(2, Link(rate_mbit=100))\n"
        "hosts.start_ray()\n"
        "print(hosts.tag, hosts.net, flush=True)\n"
        "time.sleep(600)")], stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)))
    try:
        tag, net = maker.stdout.readline().split()
        assert len(namespaces(tag)) == 2 and processes_naming(f"10.{net}.0.")
    finally:
        maker.send_signal(signal.SIGKILL)
        maker.wait()
    deadline = time.time() + 30
    while (namespaces(tag) or processes_naming(f"10.{net}.0.")) and time.time() < deadline:
        time.sleep(0.5)
    assert not namespaces(tag) and not processes_naming(f"10.{net}.0."), processes_naming(f"10.{net}.0.")


# -- faults: each run is checked against the same run without the fault (on one host, no links) --
FAULT_RUN = ["--workers", "2", "--inner-steps", "5", "--rounds", "6", "--eval-iters", "2", "--round-timeout", "3",
             "--no-dashboard"]


def diloco_lines(hosts, host, args, on_line=lambda line: None, timeout=240):
    """Runs pcp diloco on a simulated host, calling on_line(line) for each line it prints (where a
    test makes its fault); returns its exit code and lines. Killed past timeout."""
    run = hosts.run(host, [sys.executable, "-m", "pcp.cli", "diloco", *args], stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True)
    lines, deadline = [], time.time() + timeout
    while time.time() < deadline:
        if select.select([run.stdout], [], [], 1.0)[0]:
            line = run.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            on_line(line)
        else:
            on_line("")
    if run.poll() is None:
        run.kill()
    return run.wait(), lines


def final_val(folder):
    history = json.load(open(os.path.join(folder, "diloco.json")))["history"]
    return history, history[-1]["val_loss"]


@pytest.fixture(scope="module")
def fault_free(tmp_path_factory, text_file):
    """The fault runs' reference: the same run on one host (a local Ray cluster)."""
    pytest.importorskip("ray", reason="Ray is not installed")
    out = tmp_path_factory.mktemp("fault-free") / "run"
    run = subprocess.run([sys.executable, "-m", "pcp.cli", "diloco", *FAULT_RUN, "--data", text_file, "--out", str(out)],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return final_val(out)[1]


def assert_recovered(code, lines, folder, fault_free, lost):
    """Finished, every round recorded, worker `lost` left out of some round and back in the last,
    and the val loss within 5% of the fault-free run's."""
    assert code == 0, "\n".join(lines[-40:])
    history, val = final_val(folder)
    assert [r["round"] for r in history] == list(range(7)), history
    assert any(lost in r["workers_lost"] for r in history), "\n".join(lines)
    assert history[-1]["workers_in"] == [0, 1], "\n".join(lines)
    assert abs(val - fault_free) <= 0.05 * fault_free, (val, fault_free)


def test_wan_fault_a_link_cut_for_30_s_mid_round(tmp_path, text_file, fault_free):
    """A worker host's link cut for 30 s in round 3: rounds go on without it (each within the
    round timeout and its grace), and it rejoins once the link is back."""
    with wan.Hosts(3, wan.Link(rate_mbit=50, delay_ms=5)) as hosts:
        address = hosts.start_ray()
        cut = {}

        def on_line(line):
            if "round 2/6" in line:
                hosts.cut(2)
                cut["at"] = time.time()
            if cut.get("at") and time.time() - cut["at"] >= 30:
                hosts.cut(2, down=False)
                cut["at"] = None
        code, lines = diloco_lines(hosts, 0, ["--address", address, *FAULT_RUN, "--data", text_file,
                                              "--out", str(tmp_path / "run")], on_line)
        assert "at" in cut and cut["at"] is None, "\n".join(lines)  # cut, and restored before the end
    lost = [r for r in final_val(tmp_path / "run")[0] if r["workers_lost"]][0]["workers_lost"][0]
    assert_recovered(code, lines, tmp_path / "run", fault_free, lost)


def test_wan_fault_a_host_killed_and_a_new_one_added(tmp_path, text_file, fault_free):
    """A worker host vanishes in round 2 (its processes killed, its namespace deleted) and a new
    host joins the cluster: Ray restarts the lost worker there and it rejoins the run."""
    with wan.Hosts(3, wan.Link(rate_mbit=50, delay_ms=5)) as hosts:
        address = hosts.start_ray(node_timeout_s=4)  # Ray's own health check takes a minute or more
        done = []

        def on_line(line):  # early: the restarted worker's start (its plan and data) takes rounds
            if "round 1/6" in line and not done:
                hosts.remove_host(2)
                hosts.join_ray([hosts.add_host()])
                done.append(hosts.n)
        code, lines = diloco_lines(hosts, 0, ["--address", address, *FAULT_RUN, "--data", text_file,
                                              "--out", str(tmp_path / "run")], on_line)
        assert done == [4] and len(namespaces(hosts.tag)) == 3
    lost = [r for r in final_val(tmp_path / "run")[0] if r["workers_lost"]][0]["workers_lost"][0]
    assert_recovered(code, lines, tmp_path / "run", fault_free, lost)


def test_wan_fault_the_shepherd_lost_and_resumed_on_a_new_host(tmp_path, text_file, fault_free):
    """The shepherd's host (with the Ray head) vanishes in round 3, its process SIGKILLed; a new
    host takes its place, the cluster is started anew around it, and `pcp diloco --resume` there
    goes on from the last checkpoint, loses no round and ends as the fault-free run does."""
    with wan.Hosts(3, wan.Link(rate_mbit=50, delay_ms=5)) as hosts:
        args = ["--address", hosts.start_ray(), *FAULT_RUN, "--data", text_file, "--out", str(tmp_path / "run")]

        def on_line(line):
            if "round 3/6" in line:
                hosts.remove_host(0)
        code, lines = diloco_lines(hosts, 0, args, on_line)
        assert code == -signal.SIGKILL, "\n".join(lines)
        new = hosts.add_host()
        hosts.stop_ray()  # the worker hosts' nodes lost their head: they join the new one
        args[1] = hosts.start_ray(head=new)
        code, resumed = diloco_lines(hosts, new, args + ["--resume"])
    assert code == 0, "\n".join(resumed[-40:])
    history, val = final_val(tmp_path / "run")
    assert [r["round"] for r in history] == list(range(7)) and history[-1]["workers_in"] == [0, 1], resumed
    assert all(r["workers_in"] == [0, 1] for r in history[1:]), resumed  # no round without them
    assert abs(val - fault_free) <= 0.05 * fault_free, (val, fault_free)
