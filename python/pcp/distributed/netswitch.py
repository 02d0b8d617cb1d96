"""The switch between simulated hosts (pcp.distributed.wan): one process holding a TUN device per
host, which forwards each IPv4 packet to the host its address names through that host's link
shaped both ways, as netem and tbf would: its rate (a serialising queue, tail-dropped past the
queue limit), its one-way delay and jitter (order kept), and its loss. In userspace because
netem is not in every kernel (this project's machines have tbf but not netem).

    python -m pcp.distributed.netswitch NET N   (stdin: JSON commands, one per line; stdout: replies)

Commands: {"links": [[rate_mbit, delay_ms, jitter_ms, loss_pct], ...]} sets every host's link;
{"cut": i, "down": true} cuts host i off (false restores it); {"add": [link]} adds a host;
{"counters": true} replies [[sent, received], ...] bytes per host. The TUN devices are named
pcpsw<NET>h<i> in this process's namespace; the caller moves each into its host's namespace. EOF
on stdin (the caller gone) ends the switch, and its devices with it.
"""
import fcntl
import heapq
import json
import os
import random
import select
import struct
import sys
import time

TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000
MTU = 1500


class Port:
    """A host's end of the switch: its TUN fd, its link and the two queues through it."""

    def __init__(self, name):
        self.fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(self.fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
        self.link = (0.0, 0.0, 0.0, 0.0)
        self.up_free = self.down_free = 0.0  # when the link's way out of / into the host is free
        self.up_last = self.down_last = 0.0  # the last departure each way (jitter keeps the order)
        self.down = False
        self.sent = self.received = 0

    def through(self, t, size, way):
        """When a packet entering the link (out of the host: way 'up', into it: 'down') at time t
        leaves it, or None when it is dropped (loss, a cut, a full queue)."""
        rate, delay, jitter, loss = self.link
        if self.down or (loss and random.random() * 100 < loss):
            return None
        free = getattr(self, way + "_free")
        if rate:
            limit = max(0.1, 2 * delay / 1e3 + 0.05)  # seconds of queue: a bandwidth-delay product and more
            if free - t > limit:
                return None  # tail drop
            free = max(free, t) + size * 8 / (rate * 1e6)
            setattr(self, way + "_free", free)
        else:
            free = t
        out = free + (delay + (random.uniform(-jitter, jitter) if jitter else 0.0)) / 1e3
        out = max(out, getattr(self, way + "_last"))
        setattr(self, way + "_last", out)
        return out


def main(net, n):
    ports = [Port(f"pcpsw{net}h{i}") for i in range(n)]
    heap, seq = [], 0
    stdin = sys.stdin.fileno()
    os.set_blocking(stdin, False)
    pending = b""
    print(json.dumps({"ready": [f"pcpsw{net}h{i}" for i in range(n)]}), flush=True)
    while True:
        now = time.monotonic()
        while heap and heap[0][0] <= now:
            _, _, port, packet = heapq.heappop(heap)
            try:
                os.write(port.fd, packet)
                port.received += len(packet)
            except OSError:
                pass  # the host is gone
        wait = max(0.0, heap[0][0] - now) if heap else 1.0
        ready, _, _ = select.select([stdin] + [p.fd for p in ports], [], [], min(wait, 1.0))
        now = time.monotonic()
        for fd in ready:
            if fd == stdin:
                chunk = os.read(stdin, 65536)
                if not chunk:
                    return  # the caller is gone
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    cmd = json.loads(line)
                    if "links" in cmd:
                        for port, link in zip(ports, cmd["links"]):
                            port.link = tuple(link)
                    if "cut" in cmd:
                        ports[cmd["cut"]].down = cmd.get("down", True)
                    if "add" in cmd:
                        ports.append(Port(f"pcpsw{net}h{len(ports)}"))
                        ports[-1].link = tuple(cmd["add"])
                    reply = [[p.sent, p.received] for p in ports] if "counters" in cmd else "ok"
                    print(json.dumps(reply), flush=True)
                continue
            port = next(p for p in ports if p.fd == fd)
            for _ in range(64):  # what is queued, a bounded batch
                try:
                    packet = os.read(fd, 65536)
                except (BlockingIOError, OSError):
                    break
                if len(packet) < 20 or packet[0] >> 4 != 4:
                    continue  # IPv4 only
                port.sent += len(packet)
                dest = packet[19] - 1
                if packet[16] != 10 or packet[17] != net or not 0 <= dest < len(ports):
                    continue
                out = port.through(now, len(packet), "up")
                if out is not None:
                    out = ports[dest].through(out, len(packet), "down")
                if out is not None:
                    seq += 1
                    heapq.heappush(heap, (out, seq, ports[dest], packet))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
