"""fabricbusd at its descriptor limit: it stays responsive, quiet and cheap,
and serves waiting agents as descriptors free up (broker/accept.c,
broker/listener.c).

Agents here are raw sockets speaking the agent protocol's HELLO
(proto/PROTOCOL.md), so that 400 of them cost the test one process.
"""
import os
import select
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request

import fbtest

HELLO, HELLO_ACK, ERROR = 1, 2, 6
CLK_TCK = os.sysconf("SC_CLK_TCK")


def hello(agent_id):
    aid = agent_id.encode()
    body = bytes([1, len(aid)]) + aid + struct.pack(">Q", 0)
    return b"FB" + bytes([1, HELLO]) + struct.pack(">I", len(body)) + body


class Agents:
    """n raw agent connections that each sent HELLO; tracks who got HELLO_ACK."""

    def __init__(self, addr, n, prefix):
        host, port = addr.split(":")
        self.socks = {}
        for i in range(n):
            s = socket.create_connection((host, int(port)), timeout=5)
            s.sendall(hello(f"{prefix}{i}"))
            s.setblocking(False)
            self.socks[s] = b""
        self.acked = set()
        self.errors = {}

    def poll(self, seconds):
        """Read whatever arrives for `seconds`; returns how many are acked."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            live = [s for s in self.socks if s not in self.acked and s not in self.errors]
            if left <= 0 or not live:
                return len(self.acked)
            r, _, _ = select.select(live, [], [], min(left, 0.2))
            for s in r:
                try:
                    data = s.recv(4096)
                except (BlockingIOError, ConnectionResetError):
                    continue
                self.socks[s] += data
                buf = self.socks[s]
                if len(buf) >= 8:
                    ftype = buf[3]
                    if ftype == HELLO_ACK:
                        self.acked.add(s)
                    elif ftype == ERROR:
                        self.errors[s] = buf
                if not data and s not in self.acked:
                    self.errors[s] = b"closed"

    def close(self, socks):
        for s in socks:
            s.close()
            self.socks.pop(s, None)
            self.acked.discard(s)

    def close_all(self):
        self.close(list(self.socks))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def status_latency(b):
    t0 = time.monotonic()
    with urllib.request.urlopen(f"http://{b.http_addr}/status", timeout=5) as r:
        doc = r.read()
    return time.monotonic() - t0, doc


def listeners(b):
    return b.status()["broker"]["listeners"]


def log_lines(b, needle):
    return sum(1 for line in b.log().splitlines() if needle in line)


def test_agent_flood_at_descriptor_limit():
    """ulimit -n 256, 400 agents: the broker takes what its descriptor budget
    allows, keeps /status fast, idles, logs little, and serves the waiting
    agents as others leave."""
    b = fbtest.Broker(wrapper=["prlimit", "--nofile=256:256"], HeartbeatInterval="60s").start()
    try:
        ag = Agents(b.agent_addr, 400, "flood")
        ag.poll(3.0)
        lim = listeners(b)
        budget = lim["agents"]["limit"]
        assert 100 <= budget < 256, lim
        assert len(ag.acked) == budget, (len(ag.acked), lim)
        assert lim["agents"]["paused_by"] == "budget" and lim["agents"]["open"] == budget, lim
        # Saturated: /status within 100 ms, little CPU, at most a line a second.
        log0 = len(b.log().splitlines())
        cpu0, t0 = cpu_seconds(b.proc.pid), time.monotonic()
        worst = 0.0
        for _ in range(20):
            lat, _ = status_latency(b)
            worst = max(worst, lat)
            time.sleep(0.15)
        cpu = (cpu_seconds(b.proc.pid) - cpu0) / (time.monotonic() - t0)
        window = time.monotonic() - t0
        new_lines = len(b.log().splitlines()) - log0
        print(f"  saturated: {budget} agents in, /status worst {worst * 1000:.1f} ms, "
              f"CPU {cpu * 100:.1f}% of a core, {new_lines} log lines in {window:.1f}s")
        assert worst < 0.1, f"/status took {worst * 1000:.0f} ms"
        assert cpu < 0.05, f"broker used {cpu * 100:.1f}% of a core while saturated"
        assert new_lines <= window + 1, b.log()[-3000:]
        # Descriptors free up: the waiting agents are served, oldest first.
        ag.close(list(ag.acked)[:100])
        assert ag.poll(5.0) == budget, (len(ag.acked), listeners(b))
        ag.close(list(ag.acked))
        remaining = 400 - 100 - budget
        assert ag.poll(5.0) == min(remaining, budget)
        ag.close_all()
    finally:
        assert b.stop() == 0
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")


def test_emfile_pauses_listener_and_recovers():
    """Descriptors run out under the broker's feet (its limit lowered while it
    runs): accept fails with EMFILE, the listener pauses instead of spinning,
    logs at most a line a second with a count, and takes the waiting agents
    once descriptors are back."""
    b = fbtest.Broker(wrapper=["prlimit", "--nofile=256:256"], HeartbeatInterval="60s").start()
    pid = str(b.proc.pid)
    try:
        before = listeners(b)["agents"]
        n_open = len(os.listdir(f"/proc/{pid}/fd"))
        subprocess.run(["prlimit", "--pid", pid, f"--nofile={n_open + 5}:256"], check=True)
        ag = Agents(b.agent_addr, 60, "short")
        cpu0, t0 = cpu_seconds(b.proc.pid), time.monotonic()
        got = ag.poll(3.0)
        window = time.monotonic() - t0
        cpu = (cpu_seconds(b.proc.pid) - cpu0) / window
        assert got <= 5, got
        print(f"  shortage: {got} agents in, CPU {cpu * 100:.1f}% of a core over {window:.1f}s")
        assert cpu < 0.05, f"broker used {cpu * 100:.1f}% of a core while out of descriptors"
        subprocess.run(["prlimit", "--pid", pid, "--nofile=256:256"], check=True)
        assert ag.poll(5.0) == 60, (len(ag.acked), len(ag.errors))
        lim = b.wait_status(lambda s: s["broker"]["listeners"]["agents"]["open"] == 60)
        lim = lim["broker"]["listeners"]["agents"]
        print(f"  listener: {lim}")
        assert lim["accepting"] and lim["paused_by"] == "none", lim
        assert lim["accept_errors"] > before["accept_errors"], lim
        assert lim["pauses"] >= 1 and lim["last_error"] == "Too many open files", lim
        # A retry at most every 100 ms, doubling: not hundreds of thousands.
        assert lim["accept_errors"] <= 10 * window + 10, lim
        fails = log_lines(b, "accept failed: Too many open files")
        assert 1 <= fails <= window + 2, b.log()[-3000:]
        assert "pausing accepts" in b.log()
        ag.close_all()
    finally:
        assert b.stop() == 0
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")


def test_limits_refuse_with_an_error():
    """MaxAgents and MaxHttpConnections: one more is refused with an ERROR
    frame (BUSY) or a 503, never left hanging, and the refusals are counted."""
    b = fbtest.Broker(MaxAgents="3", MaxHttpConnections="4", HeartbeatInterval="60s").start()
    try:
        # start() probed the agent port: wait until that connection is gone.
        b.wait_status(lambda s: s["broker"]["listeners"]["agents"]["open"] == 0)
        ag = Agents(b.agent_addr, 5, "cap")
        ag.poll(3.0)
        assert len(ag.acked) == 3, (len(ag.acked), ag.errors)
        busy = [buf for buf in ag.errors.values() if buf[3:4] == bytes([ERROR])]
        assert len(busy) == 2, ag.errors
        code = struct.unpack(">H", busy[0][8:10])[0]
        assert code == 8 and b"MaxAgents=3" in busy[0], busy[0]
        idle = [socket.create_connection(("127.0.0.1", b.http_port)) for _ in range(4)]
        time.sleep(0.3)
        fbtest.assert_http_at_limit(b.http_addr, "a fifth HTTP connection", timeout=5)
        for s in idle:
            s.close()
        st = b.wait_status(lambda s: s["broker"]["listeners"]["http"]["open"] <= 1)
        lim = st["broker"]["listeners"]
        assert lim["agents"]["refused"] == 2 and lim["http"]["refused"] >= 1, lim
        ag.close_all()
    finally:
        assert b.stop() == 0
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")


if __name__ == "__main__":
    fbtest.run(test_agent_flood_at_descriptor_limit, test_emfile_pauses_listener_and_recovers,
               test_limits_refuse_with_an_error)
