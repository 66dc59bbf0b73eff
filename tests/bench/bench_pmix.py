"""Broker -> PMIx handler latency of fabricbus-pmix (not a test: prints
figures, asserts none).

fabricbusd, a real Slurm cluster (1 slurmd) whose slurmstepd loads
spank_fabricbus_pmix.so, fabricbus-pmix for node001, and one
`srun --mpi=pmix -w node001 -n1 fabric_events` step. RUNS times: publish one
link_down for node001 (`fabricbus publish`, durable ack), then note when the
step's handler ran (the example prints CLOCK_REALTIME in its handler) and when
`fabricbus tail` (a WebSocket subscriber) read the same event.

Both are measured from the event's EventTimestamp (the publisher's clock, µs,
written when it sent the event to the broker on loopback), so
ratio = (broker -> handler) / (broker -> WebSocket subscriber) shows what
fabricbus-pmix, the step socket and slurmstepd's PMIx server add on top of
the broker's own fan-out.

Usage (from bench_pmix.sh, which sets FB_BUILD to a release build):
    /usr/bin/python3 bench_pmix.py        Env: RUNS (100)
"""
import calendar
import os
import re
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fbtest import Broker, Tail, publish, rec  # noqa: E402
from pmix import FABRIC_EVENTS, SPANK_PMIX, PmixAdapter, Srun, is_event  # noqa: E402
from slurm import SlurmCluster  # noqa: E402

RUNS = int(os.environ.get("RUNS", "100"))
HANDLER_RE = re.compile(r"at (\d+)\.(\d{9}):.* fabricbus\.event_id=(\d+)")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def event_ts(doc):
    """EventTimestamp ("2026-11-22T09:52:21.123456Z") in seconds."""
    s = rec(doc)["EventTimestamp"]
    base, frac = s.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) + float("0." + frac)


def main():
    step_dir = tempfile.mkdtemp(prefix="fb-bench-pmix-")
    broker = Broker().start()
    cluster = SlurmCluster(nodes=1, plugstack=[f"optional {SPANK_PMIX} dir={step_dir}"])
    os.makedirs(cluster.path("tmp", "node001"), exist_ok=True)
    cluster.extra_conf = f"TmpFS={cluster.path('tmp')}/%n"  # see test_pmix.py's Rig
    cluster.start()
    adapter = PmixAdapter(broker.http_addr, NodeName="node001", StepDir=step_dir,
                          LogLevel="warn").start()
    tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
    off = time.time() - time.monotonic()  # Tail stamps with the monotonic clock
    s = Srun(cluster, ["--mpi=pmix", "-w", "node001", "-n1", FABRIC_EVENTS, "--count",
                       str(RUNS), "--timeout", str(RUNS * 2 + 60)])
    s.wait_ready(1)
    time.sleep(1.0)  # the adapter's scan finds the step
    pm, ws = [], []
    for i in range(RUNS):
        r = publish(broker.agent_addr, "bench-pmix", events=[
            {"kind": "link_down", "link_class": "host", "switch": "leaf1", "port": 1 + i % 30,
             "node": "node001"}])
        assert r.returncode == 0, r.stderr
        s.out.wait_count(is_event, i + 1, 10, f"handler line {i + 1}")
        line = [x for x in s.out.text().splitlines() if is_event(x)][i]
        m = HANDLER_RE.search(line)
        eid = m.group(3)
        handled = int(m.group(1)) + int(m.group(2)) / 1e9
        doc = tail.wait_for(lambda d, e=eid: rec(d).get("EventId") == e, 10, f"EventId {eid}")
        k = tail.events.index(doc)
        t0 = event_ts(doc)
        pm.append((handled - t0) * 1000.0)
        ws.append((tail.stamps[k] + off - t0) * 1000.0)
    rc = s.wait(timeout=60)
    tail.stop()
    adapter.stop()
    cluster.stop()
    broker.stop()
    print(f"runs: {RUNS}")
    print(f"pmix_handler_median: {statistics.median(pm):.3f} ms")
    print(f"pmix_handler_p99: {pct(pm, 99):.3f} ms")
    print(f"ws_subscriber_median: {statistics.median(ws):.3f} ms")
    print(f"ws_subscriber_p99: {pct(ws, 99):.3f} ms")
    added = [a - b for a, b in zip(pm, ws)]  # per event: what the PMIx path adds
    print(f"pmix_added_median: {statistics.median(added):.3f} ms")
    print(f"pmix_added_p99: {pct(added, 99):.3f} ms")
    print(f"srun_exit: {rc}")
    print(f"ratio: {statistics.median(pm) / statistics.median(ws):.2f} "
          f"(median broker->PMIx handler / median broker->WebSocket subscriber)")


if __name__ == "__main__":
    main()
