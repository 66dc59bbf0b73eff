"""Unlink -> DRAIN latency of the whole chain (not a test: prints figures).

ibsim fattree46 + fabricbus-agent-ib (--interval INTERVAL_MS) + 8 node agents
+ fabricbusd + fabricbus-slurm (HoldDown=0, StableFor=200ms, DrainOn=link_down) + a real
slurmctld with 8 slurmd. Each run unlinks one host cable (h1..h8 in turn),
then polls `sinfo -h -N -n <node> -o %T` until it says drained/draining, and
also notes when the link_down event reached a WebSocket subscriber; then
relinks and waits for the undrain before the next run.

Reference in the same run: Unlink -> the link_down event at a subscriber
(the IB agent's detection through the broker), so
ratio = (Unlink -> DRAIN) / (Unlink -> event) shows what the adapter and
slurmctld add on top of detection.

Usage (from tests/bench/bench_slurm.sh, which sets FB_BUILD to a release
build): /usr/bin/python3 bench_slurm_drain.py
Env: RUNS (50), INTERVAL_MS (100).
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from fbtest import Tail, oem  # noqa: E402
import chain  # noqa: E402
from chain import FabricChain  # noqa: E402
from slurm import SlurmCluster  # noqa: E402
from slurm_adapter import SlurmAdapter  # noqa: E402

RUNS = int(os.environ.get("RUNS", "50"))
INTERVAL_MS = int(os.environ.get("INTERVAL_MS", "100"))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def sinfo_state(cluster, node):
    r = subprocess.run(["sinfo", "-h", "-N", "-n", node, "-o", "%T"], env=cluster.env,
                       capture_output=True, text=True, timeout=30)
    return r.stdout.strip()


def wait_state(cluster, node, pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = sinfo_state(cluster, node)
        if pred(st):
            return time.monotonic()
    raise RuntimeError(f"{node}: state {sinfo_state(cluster, node)!r} after {timeout}s")


def main():
    ch = FabricChain(interval_ms=INTERVAL_MS).start()
    cl = SlurmCluster(nodes=8).start()
    tail = Tail(ch.broker.http_addr, os.path.join(ch.broker.workdir, "tail.err"))
    # DrainOn=link_down only: cycling each cable every second or so is a flap
    # to the IB agent, and a flap condition (rightly) holds the drain until a
    # link up after the flap window.
    ad = SlurmAdapter(ch.broker, cl, HoldDown="0ms", StableFor="200ms", MaxDrainNodes="8",
                      MaxDrainPercent="0", DrainOn="link_down", LogLevel="info").start()
    total, detect = [], []
    try:
        time.sleep(2.0)
        for i in range(RUNS):
            node = f"node{(i % 8) + 1:03d}"
            sw, port = chain.host_port(node)
            n0 = len(tail.events)
            t0 = time.monotonic()
            ch.sim.unlink(sw, port)
            t1 = wait_state(cl, node, lambda s: s.startswith("drain"), 10)
            total.append(t1 - t0)
            detect.append(link_down_seen(tail, n0, node) - t0)
            ch.sim.relink(sw, port)
            wait_state(cl, node, lambda s: not s.startswith("drain"), 15)
    finally:
        ad.stop(check=False)
        tail.stop()
        cl.stop()
        ch.stop(check=False)
    ms = lambda x: x * 1000.0
    print(f"runs: {RUNS}")
    print(f"ib_poll_interval: {INTERVAL_MS} ms")
    print(f"unlink_to_drain_median: {ms(statistics.median(total)):.1f} ms")
    print(f"unlink_to_drain_p99: {ms(pct(total, 99)):.1f} ms")
    print(f"unlink_to_drain_max: {ms(max(total)):.1f} ms")
    print(f"unlink_to_event_median: {ms(statistics.median(detect)):.1f} ms")
    print(f"unlink_to_event_p99: {ms(pct(detect, 99)):.1f} ms")
    print(f"ratio: {statistics.median(total) / statistics.median(detect):.2f} "
          f"(median unlink->DRAIN / median unlink->event)")


def link_down_seen(tail, n0, node, timeout=10):
    """When the subscriber read node's link_down (Tail stamps each event as
    its reader thread reads it), waiting for it if needed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for i in range(n0, len(tail.events)):
            d = tail.events[i]
            if oem(d).get("Kind") == "link_down" and oem(d).get("Node") == node:
                return tail.stamps[i]
        time.sleep(0.01)
    raise RuntimeError(f"no link_down for {node} at the subscriber")


if __name__ == "__main__":
    main()
