"""An agent's acks while GET /fabric/map is rendered over and over (issue 14),
shared by tests/integration/test_map_render.py (liveness and the map's bytes)
and tests/bench/bench_map_stall.py (the worst ack gap, thread against loop).

One fabricbusd gets JOBS jobs of PER_JOB nodes (262144 (job, node) pairs:
JobMembersMax's default; 47-byte node names, as docs/fabric-map.md's figures).
Then, while a client registers job 0 again and again (each registration makes
the map change, so it is rendered again) and GETs /fabric/map, an agent sends
one event at a time and waits for its ack; the longest wait is the ack gap.
At the end every broker is brought to the same state (TOTAL events, one more
job) so that the maps of two runs can be compared byte for byte."""
import json
import struct
import threading
import time
import urllib.request

import fbtest
from agentproto import ACK, Conn, event_body, events

JOBS, PER_JOB = 16, 16384
TOTAL = 20000  # events every run ends with (the map's LastEventId)
# Broker options: room for the one-node job that marks the final state.
OPTS = {"JobTtl": "0", "JobMembersMax": str(JOBS * PER_JOB + 1)}


def names(job):
    return [f"j{job:02d}-{'x' * 33}-n{i:05d}" for i in range(PER_JOB)]  # 47 bytes


def body(job, nodes):
    return json.dumps({"JobId": str(job + 1), "User": "alice", "Nodes": nodes}).encode()


def request(b, method, path, data=None, timeout=120):
    req = urllib.request.Request(f"http://{b.http_addr}{path}", data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def fabric_map(b):
    return b.status()["broker"]["fabric_map"]


def register_all(b):
    for job in range(JOBS):
        status, _ = request(b, "POST", "/fabric/jobs", body(job, names(job)))
        assert status in (200, 201), (job, status)
    # /status is refreshed every 100 ms
    b.wait_status(lambda s: s["broker"]["fabric_map"]["job_members"] == JOBS * PER_JOB, 60)


class Churn(threading.Thread):
    """Registers job 0 again (same nodes: the map's bytes do not change, but
    it is dirty and rendered again) and GETs /fabric/map, until stopped."""

    def __init__(self, b):
        super().__init__(daemon=True)
        self.b, self.stop, self.regs, self.gets, self.error = b, False, 0, 0, None
        self.data = body(0, names(0))

    def run(self):
        try:
            while not self.stop:
                status, _ = request(self.b, "POST", "/fabric/jobs", self.data)
                assert status == 200, status
                self.regs += 1
                status, m = request(self.b, "GET", "/fabric/map")
                assert status == 200 and m.startswith(b'{"Fabric":'), (status, m[:100])
                self.gets += 1
        except Exception as e:  # reported by the main thread
            self.error = e


def ping_pong(conn, seq):
    t = time.monotonic()
    conn.send(events([event_body(seq)]))
    while True:
        (acked,) = struct.unpack(">Q", conn.expect(ACK, timeout=300)[:8])
        if acked >= seq:
            return time.monotonic() - t


def run(b, churn=True, renders=3, min_s=5.0, max_s=300.0):
    """Registers, then ping-pongs events while the map is rendered `renders`
    more times (and at least min_s). Returns a dict: worst and median ack gap
    (s), events acked meanwhile, renders, the loop's part of a render (take_ms)
    and the render's duration (render_ms), and the final map's bytes."""
    register_all(b)
    conn = Conn(b.agent_addr, timeout=300)
    assert conn.hello("maprender@bench") == ("ack", 0)
    c = Churn(b) if churn else None
    r0 = fabric_map(b)["renders"]
    if c:
        c.start()
    t0, seq, gaps, st = time.monotonic(), 0, [], {}
    while seq < TOTAL - 1:
        seq += 1
        gaps.append(ping_pong(conn, seq))
        if seq % 200 == 0 or time.monotonic() - t0 > max_s:
            st = fabric_map(b)
            elapsed = time.monotonic() - t0
            if elapsed >= min_s and st["renders"] - r0 >= renders:
                break
            assert elapsed < max_s, f"the map was rendered {st['renders'] - r0} times in {max_s} s"
            assert c is None or c.error is None, c.error
    if c:
        c.stop = True
        c.join(300)
        assert c.error is None, c.error
    pinged = seq
    while seq < TOTAL:  # the same LastEventId for every run
        n = min(500, TOTAL - seq)
        conn.send(events([event_body(seq + i + 1) for i in range(n)]))
        seq += n
        while struct.unpack(">Q", conn.expect(ACK, timeout=300)[:8])[0] < seq:
            pass
    conn.close()
    # One more job, after the last event: the map that shows it shows the
    # final state (nothing changes after it).
    status, _ = request(b, "POST", "/fabric/jobs", body(99, ["final-node"]))
    assert status == 201, status
    final = fbtest.wait_for(lambda: request(b, "GET", "/fabric/map")[1],
                            lambda m: b'"final-node"' in m, 300, "the last job never showed",
                            interval=0.5, show=lambda m: m[:200])
    gaps.sort()
    return {"worst": gaps[-1], "median": gaps[len(gaps) // 2], "acked": pinged,
            "renders": st.get("renders", 0) - r0, "take_ms": st.get("take_ms"),
            "render_ms": st.get("render_ms"), "map": final,
            "regs": c.regs if c else 0, "gets": c.gets if c else 0}
