"""fabricbus demo: the real chain on a simulated fabric.

ibsim runs the fattree46 fabric (2 spines, 4 leaves, 40 hosts) brought up by
`opensm -o`; fabricbus-agent-ib polls its switches and eight
fabricbus-agent-node's (h1..h8) map their ports to node001..node008;
fabricbusd journals, normalizes and serves the events on its default ports;
a real Slurm cluster (munged, slurmctld, 8 slurmd on loopback) has those eight
nodes, and fabricbus-slurm drains and undrains them. Then a cable of one of
h1..h8 is pulled every PERIOD seconds and put back half a period later, and
every event is printed as one line. Ctrl-C stops everything.

--smoke runs it headless: bring everything up, pull one cable, check that
the link-down event is on the stream, that its node is drained and, once the
cable is back, undrained; stop everything in order and exit 0 (or 1) after a
one-line verdict.

Started by deploy/demo.sh (which installs and builds first); FB_BUILD points
at the release build. Run as root (Slurm runs as root here).
"""
import argparse
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
from slurm_rig import is_ours, last_event_id, not_drained  # noqa: E402

PERIOD = float(os.environ.get("DEMO_PERIOD", "20"))
DEMO = os.path.join(os.getcwd(), "demo")
# fabricbus-slurm's Prometheus listener (fabricbusd's is on its HTTP port).
ADAPTER_METRICS = "127.0.0.1:7419"
# --smoke's waits: liveness deadlines for a loaded machine, not targets.
SMOKE_WAIT_S = 60


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


def main(args):
    os.makedirs(DEMO, exist_ok=True)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ch = FabricChain(interval_ms=200, broker_args=dict(
        workdir=os.path.join(DEMO, "broker"), agent_port=7411, http_port=7412, keep=True))
    os.makedirs(os.path.join(DEMO, "broker"), exist_ok=True)
    cl = ad = tail = None
    verdict = None
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
        if args.smoke:
            verdict = smoke(ch, cl, tail)
            return verdict
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
    except Exception as e:  # a part that did not come up: say which, exit 1
        if not args.smoke:
            raise
        verdict = f"FAIL: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return verdict
    finally:
        print("\nstopping ...", flush=True)
        if tail:
            tail.stop()
        if ad:
            ad.stop(check=False)
        if cl:
            cl.stop()
        ch.stop(check=False)
        print(f"demo stopped (journal kept in {DEMO}/broker)", flush=True)


def smoke(ch, cl, tail, node="node003"):
    """Pull node's cable and put it back; return "PASS: ..." or "FAIL: ..."."""
    sw, port = chain.host_port(node)
    host = f"h{int(node[4:])}"
    after = last_event_id(tail)

    def newer(d):
        return int(rec(d).get("EventId", 0)) > after

    def action(text):
        return lambda d: (newer(d) and oem(d).get("Kind") == "action"
                          and oem(d).get("Node") == node and oem(d).get("Text", "").startswith(text))
    try:
        print(f"--- smoke: pulling the cable of {node} ({sw} port {port})", flush=True)
        ch.sim.unlink(sw, port)
        down = tail.wait_for(lambda d: newer(d) and oem(d).get("Kind") == "link_down"
                             and oem(d).get("PeerName") == host, SMOKE_WAIT_S,
                             f"link_down event for {sw}[{port}] ({host})")
        print(line(down), flush=True)
        info = cl.wait_node(node, is_ours, SMOKE_WAIT_S, "fabricbus drain")
        print(f"--- smoke: {node} {info['state']}: {info['reason']}", flush=True)
        print(line(tail.wait_for(action("drain: "), SMOKE_WAIT_S, f"drain event for {node}")),
              flush=True)
        print(f"--- smoke: plugging {node} back in", flush=True)
        ch.sim.relink(sw, port)
        info = cl.wait_node(node, not_drained, SMOKE_WAIT_S, "undrain")
        print(f"--- smoke: {node} {info['state']}", flush=True)
        print(line(tail.wait_for(action("undrain: "), SMOKE_WAIT_S, f"undrain event for {node}")),
              flush=True)
    except AssertionError as e:
        return "FAIL: " + str(e).splitlines()[0]
    return (f"PASS: {sw}[{port}] down -> link_down event, {node} drained; "
            f"cable back -> {node} undrained")


def wait_and_print(tail, seen, seconds, stop):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop:
        seen = printer(tail, seen)
        time.sleep(0.2)
    return printer(tail, seen)


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("deploy/demo.py: run as root (the demo's Slurm cluster runs as root)")
    ap = argparse.ArgumentParser(description="fabricbus demo: the real chain on a simulated fabric")
    ap.add_argument("--smoke", action="store_true",
                    help="headless: pull one cable, check drain, undrain and the event; exit 0/1")
    args = ap.parse_args()
    verdict = main(args)
    if args.smoke:
        ok = bool(verdict) and verdict.startswith("PASS")
        print(f"demo smoke: {verdict or 'FAIL: interrupted'}", flush=True)
        sys.exit(0 if ok else 1)
