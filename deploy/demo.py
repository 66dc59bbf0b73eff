"""fabricbus demo: the real chain on a simulated fabric.

ibsim runs the fattree46 fabric (2 spines, 4 leaves, 40 hosts) brought up by
`opensm -o`; fabricbus-agent-ib polls its switches and eight
fabricbus-agent-node's (h1..h8) map their ports to node001..node008;
fabricbusd journals, normalizes and serves the events on its default ports;
a real Slurm cluster (munged, slurmctld, 8 slurmd on loopback) has those eight
nodes, and fabricbus-slurm drains and undrains them. Then a cable of one of
h1..h8 is pulled every PERIOD seconds and put back half a period later, and
every event is printed as one line. Ctrl-C stops everything.

Started by deploy/demo.sh (which installs and builds first); FB_BUILD points
at the release build. Run as root (Slurm runs as root here).
"""
import os
import random
import signal
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
os.environ.setdefault("FB_BUILD", os.path.join(SRC, "build-release"))

from fbtest import FABRICBUS, Tail, oem, origin, rec  # noqa: E402
import chain  # noqa: E402
from chain import FabricChain  # noqa: E402
from slurm import SlurmCluster  # noqa: E402
from slurm_adapter import SlurmAdapter  # noqa: E402

PERIOD = float(os.environ.get("DEMO_PERIOD", "20"))
DEMO = os.path.join(os.getcwd(), "demo")
# fabricbus-slurm's Prometheus listener (fabricbusd's is on its HTTP port).
ADAPTER_METRICS = "127.0.0.1:7419"


def line(d):
    r, o = rec(d), oem(d)
    who = o.get("Node") or o.get("SwitchName") or ""
    text = o.get("Text", "")
    jobs = ",".join(o.get("Jobs", []))
    return (f"{r.get('EventId', '-'):>6} {r.get('MessageSeverity', ''):8} "
            f"{r.get('MessageId', '')} {origin(d)} {who}"
            + (f" jobs={jobs}" if jobs else "") + (f"  {text}" if text else ""))


def printer(tail, start):
    """Print the events the tail has collected since index start."""
    n = start
    while n < len(tail.events):
        print(line(tail.events[n]), flush=True)
        n += 1
    return n


def main():
    os.makedirs(DEMO, exist_ok=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ch = FabricChain(interval_ms=200, broker_args=dict(
        workdir=os.path.join(DEMO, "broker"), agent_port=7411, http_port=7412, keep=True))
    os.makedirs(os.path.join(DEMO, "broker"), exist_ok=True)
    cl = ad = tail = None
    try:
        print("starting ibsim (fattree46), fabricbusd, 8 node agents, the IB agent ...", flush=True)
        ch.start()
        print("starting munged, slurmctld and 8 slurmd (node001..node008) ...", flush=True)
        cl = SlurmCluster(nodes=8).start()
        ad = SlurmAdapter(ch.broker, cl, workdir=DEMO, HoldDown="1s", StableFor="8s",
                          MaxDrainNodes="4", MaxDrainPercent="50", LogLevel="info",
                          StateFile=os.path.join(DEMO, "slurm-adapter.json"))
        ad.extra_args = ["--metrics", ADAPTER_METRICS]
        ad.start()
        tail = Tail(ch.broker.http_addr, os.path.join(DEMO, "tail.err"))
        http = ch.broker.http_addr
        print(f"""
fabricbus demo is running (journal and logs in {DEMO}):
  live page           http://{http}/
  events (WebSocket)  ws://{http}/ws/events
  broker metrics      curl -s http://{http}/metrics | grep ^fabricbus_events
  adapter metrics     curl -s http://{ADAPTER_METRICS}/metrics | grep ^fabricbus_slurm_drains
  status              {FABRICBUS} status --http {http}
  fabric map          curl -s http://{http}/fabric/map
  follow events       {FABRICBUS} tail --http {http} --severity Warning,Critical
  Slurm               SLURM_CONF={cl.conf} sinfo -R
  adapter log         {ad.log_path}
A host cable (h1..h8 on leaf1) is pulled every {PERIOD:.0f} s and put back {PERIOD / 2:.0f} s later;
fabricbus-slurm drains its node after 1 s and undrains it after 8 s of stable link.
""", flush=True)
        seen = printer(tail, 0)
        while not stop:
            node = f"node{random.randint(1, 8):03d}"
            sw, port = chain.host_port(node)
            print(f"--- pulling the cable of {node} ({sw} port {port})", flush=True)
            ch.sim.unlink(sw, port)
            seen = wait_and_print(tail, seen, PERIOD / 2, stop)
            print(f"--- {node}: {cl.node(node)}", flush=True)
            print(f"--- plugging {node} back in", flush=True)
            ch.sim.relink(sw, port)
            seen = wait_and_print(tail, seen, PERIOD / 2, stop)
            print(f"--- {node}: {cl.node(node)}", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        print("\nstopping ...", flush=True)
        if tail:
            tail.stop()
        if ad:
            ad.stop(check=False)
        if cl:
            cl.stop()
        ch.stop(check=False)
        print(f"demo stopped (journal kept in {DEMO}/broker)")


def wait_and_print(tail, seen, seconds, stop):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop:
        seen = printer(tail, seen)
        time.sleep(0.2)
    return printer(tail, seen)


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("deploy/demo.py: run as root (the demo's Slurm cluster runs as root)")
    main()
