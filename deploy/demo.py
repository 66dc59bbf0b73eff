"""fabricbus demo: the real chain on a simulated fabric.

ibsim runs the fattree46 fabric (2 spines, 4 leaves, 40 hosts) brought up by
`opensm -o`, then watched by a resident opensm at h39 with the fabricbus
event plugin (agents/osm); fabricbus-agent-ib polls its switches and eight
fabricbus-agent-node's (h1..h8) map their ports to node001..node008;
fabricbusd journals, normalizes and serves the events on its default ports;
a real Slurm cluster (munged, slurmctld, 8 slurmd on loopback) has those eight
nodes, and fabricbus-slurm drains and undrains them. Then a cable of one of
h1..h8 is pulled every PERIOD seconds and put back half a period later, and
every event is printed as one line. Ctrl-C stops everything.

--smoke runs it headless: bring everything up, pull one cable, check that
the link-down event is on the stream, that its node is drained and, once the
cable is back, undrained; that the opensm plugin reported the link down too;
that a pulled Ethernet cable (swp1) is a link_down from the SNMP agent; stop
everything in order and exit 0 (or 1) after a one-line verdict.

`demo.py unlink NODE` and `demo.py relink NODE` (node001..node008) pull and
put back that node's cable in the running demo's ibsim (from the same
directory, or --dir DEMO_DIR), through the console FIFO the demo keeps open.
The demo's own pulls use node001..node004, so node005..node008 are yours.

An Ethernet switch (deploy/demo_snmp.py): snmpd in a network namespace the
demo creates (fbdemo-sw1, ports swp1..swp4 on veth links), watched by
fabricbus-agent-snmp in a second one (fbdemo-mgmt); the host's own network is
not touched. `demo.py eth-down PORT` and `demo.py eth-up PORT` pull and put
back a port's cable (its veth's far end): snmpd's linkDown trap becomes a
link_down event on the stream. Both namespaces are deleted on every exit.
Where namespaces cannot be made (no CAP_SYS_ADMIN, no snmpd) the demo says
so in one line and runs without it.

Every process the demo starts runs in its own process group, so a
terminal's Ctrl-C reaches only demo.py, which stops them in order: the page's
tail, fabricbus-slurm, Slurm, the SNMP agent and switch, the IB and node
agents, opensm (SIGTERM: the plugin's delete() runs), ibsim, fabricbusd,
Kafka.

--kafka also starts a real single-node Kafka (tests/kafka/kafka.sh, on
127.0.0.1:9092, data in demo/kafka) and fabricbusd's Kafka sink, and prints a
`fabricbus consume` command; with --smoke it checks that the pulled cable's
link-down event is in Kafka, read by that very command.

Started by deploy/demo.sh (which installs and builds first); FB_BUILD points
at the release build. Run as root (Slurm runs as root here).
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
os.environ.setdefault("FB_BUILD", os.path.join(SRC, "build-release"))

import fbtest  # noqa: E402
import demo_snmp  # noqa: E402
from fbtest import FABRICBUS, Tail, oem, origin, rec  # noqa: E402
import chain  # noqa: E402
import ibsim  # noqa: E402
import kafka  # noqa: E402
from chain import FabricChain  # noqa: E402
from slurm import SlurmCluster  # noqa: E402
from slurm_adapter import SlurmAdapter  # noqa: E402
from slurm_rig import is_ours, last_event_id, not_drained  # noqa: E402

PERIOD = float(os.environ.get("DEMO_PERIOD", "20"))
DEMO = os.path.join(os.getcwd(), "demo")
# fabricbus-slurm's Prometheus listener (fabricbusd's is on its HTTP port).
ADAPTER_METRICS = "127.0.0.1:7419"
# The demo pulls these hosts' cables; the "try this" commands use TRY_NODE.
AUTO_NODES = 4
TRY_NODE = "node008"
# The file in DEMO naming the running ibsim's directory (ctl FIFO, sim.out).
SIM_DIR_FILE = "ibsim-dir"
KAFKA_PORT = 9092
# fabricbusd's default ports (agents, HTTP/WebSocket).
AGENT_PORT = 7411
HTTP_PORT = 7412
# The resident opensm with the fabricbus event plugin (agents/osm), at a host
# no agent uses. No PerfMgr: the demo's load is the IB agent's polling.
OSM_HOST = "h39"
OSM_AGENT_ID = "osm@sim-h39"
OSM_PLUGIN_DIR = os.path.join(chain.BUILD, "agents", "osm")
# Its own log: `opensm -o` (in FabricChain.start) wrote osm.log already.
OSM_LOG = "opensm-plugin.log"
# The Ethernet port the "try this" commands use; --smoke pulls swp1.
TRY_ETH = "swp2"
SMOKE_ETH = "swp1"
# --smoke's waits: liveness deadlines for a loaded machine, not targets.
SMOKE_WAIT_S = 60


def line(d):
    r, o = rec(d), oem(d)
    who = o.get("Node") or o.get("SwitchName") or ""
    text = o.get("Text", "")
    jobs = ",".join(o.get("Jobs", []))
    quiet = o.get("Quiet")  # hidden from default subscriptions (docs/topology.md)
    group = r.get("EventGroupId")
    return (f"{r.get('EventId', '-'):>6} {r.get('MessageSeverity', ''):8} "
            f"{r.get('MessageId', '')} {origin(d)} {who}"
            + (f" jobs={jobs}" if jobs else "") + (f"  {text}" if text else "")
            + (f"  [quiet: {quiet}" + (f" of EventId {group}" if group else "") + "]"
               if quiet else ""))


def printer(tail, start):
    """Print the events the tail has collected since index start."""
    n = start
    while n < len(tail.events):
        print(line(tail.events[n]), flush=True)
        n += 1
    return n


def own_process_groups():
    """Start every child of this process in a process group of its own. A
    terminal's Ctrl-C signals its whole foreground group: without this,
    ibsim, opensm, the agents and Slurm would all get SIGINT at once and die
    in any order (a client whose ibsim died first hangs in its atexit
    handler, opensm never runs the plugin's delete()). With it, only demo.py
    gets it and stops them in order."""
    base = subprocess.Popen

    class OwnGroupPopen(base):
        def __init__(self, *a, **kw):
            kw.setdefault("process_group", 0)
            super().__init__(*a, **kw)
    subprocess.Popen = OwnGroupPopen


def main(args):
    os.makedirs(DEMO, exist_ok=True)
    own_process_groups()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ch = cl = ad = tail = kf = osm = eth = None
    eth_skipped = None
    verdict = None
    sink = {}
    try:
        if args.kafka:
            missing = kafka.jars_missing()
            if missing:
                print(f"fetching Kafka ({missing}) ...", flush=True)
                kafka.fetch()
            print(f"starting Kafka on 127.0.0.1:{KAFKA_PORT} ...", flush=True)
            kf = kafka.Kafka(workdir=os.path.join(DEMO, "kafka"), port=KAFKA_PORT).start()
            sink = dict(KafkaBrokers=kf.bootstrap)
        ch = FabricChain(interval_ms=200, broker_args=dict(
            workdir=os.path.join(DEMO, "broker"), agent_port=AGENT_PORT, http_port=HTTP_PORT,
            keep=True), **sink)
        os.makedirs(os.path.join(DEMO, "broker"), exist_ok=True)
        print("starting ibsim (fattree46), fabricbusd, 8 node agents, the IB agent ...", flush=True)
        ch.start()
        with open(os.path.join(DEMO, SIM_DIR_FILE), "w") as f:
            f.write(ch.sim.workdir + "\n")
        # --all: the smoke checks that every source reported the cable (the
        # IB agent and opensm's plugin); the broker delivers the second report
        # of one cable as a quiet duplicate, which default subscribers skip.
        tail = Tail(ch.broker.http_addr, os.path.join(DEMO, "tail.err"), extra=("--all",))
        print("starting opensm (resident, at h39) with the fabricbus event plugin ...", flush=True)
        osm = start_opensm(ch)
        print("starting the Ethernet switch (snmpd on veth links) and fabricbus-agent-snmp ...",
              flush=True)
        eth = demo_snmp.EthSwitch(DEMO, AGENT_PORT, HTTP_PORT)
        eth_skipped = eth.start()
        if eth_skipped:
            print(f"SNMP switch: SKIPPED: {eth_skipped}; the demo runs without it", flush=True)
            eth = None
        print("starting munged, slurmctld and 8 slurmd (node001..node008) ...", flush=True)
        cl = SlurmCluster(nodes=8).start()
        ad = SlurmAdapter(ch.broker, cl, workdir=DEMO, HoldDown="1s", StableFor="8s",
                          MaxDrainNodes="4", MaxDrainPercent="50", LogLevel="info",
                          StateFile=os.path.join(DEMO, "slurm-adapter.json"))
        ad.extra_args = ["--metrics", ADAPTER_METRICS]
        ad.start()
        # Up (or exited, say so now rather than as a missing drain later).
        ad.wait_log("serving Prometheus metrics", timeout=SMOKE_WAIT_S)
        http = ch.broker.http_addr
        me = f"{sys.executable} {os.path.abspath(__file__)} --dir {DEMO}"
        slurm_env = f"SLURM_CONF={cl.conf}"
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
  opensm log          {ch.sim.workdir}/{OSM_LOG} (its plugin's events: AgentId {OSM_AGENT_ID})
""" + (f"""  Ethernet switch     {eth.describe()}
  SNMP agent log      {eth.agent.log_path}
""" if eth else f"""  Ethernet switch     skipped: {eth_skipped}
""") + f"""try this (in another shell, as root):
  fail a link         {me} unlink {TRY_NODE}
  watch the drain     {slurm_env} sinfo -h -n {TRY_NODE} -o '%N %T %E'
  put it back         {me} relink {TRY_NODE}
  watch the undrain   the same sinfo, after 8 s of stable link
""" + (f"""  fail an Ethernet link  {me} eth-down {TRY_ETH}
  watch its events    {FABRICBUS} tail --http {http} --since 0 --idle-exit 3 \
--origin {eth.switch_path()}
  put it back up      {me} eth-up {TRY_ETH}
""" if eth else "") + (f"""  read Kafka          {consume_cmd(kf)}
""" if kf else "") + f"""A host cable (h1..h{AUTO_NODES} on leaf1) is pulled every {PERIOD:.0f} s and put back {PERIOD / 2:.0f} s later;
fabricbus-slurm drains its node after 1 s and undrains it after 8 s of stable link.
""", flush=True)
        if args.smoke:
            verdict = smoke(ch, cl, tail, kf, osm, eth, eth_skipped)
            return verdict
        seen = printer(tail, 0)
        while not stop:
            node = f"node{random.randint(1, AUTO_NODES):03d}"
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
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: keep stopping in order
        print("\nstopping ...", flush=True)
        stop_all(tail, ad, cl, eth, ch, osm, kf)
        print(f"demo stopped (journal kept in {DEMO}/broker)", flush=True)
        try:
            os.unlink(os.path.join(DEMO, SIM_DIR_FILE))
        except FileNotFoundError:
            pass


def stop_all(tail, ad, cl, eth, ch, osm, kf):
    """Stop in order, each step even when an earlier one failed: consumers
    first, then the agents, then opensm (after its clients: the IB and node
    agents), ibsim, fabricbusd, Kafka."""
    steps = [("the event tail", tail and tail.stop),
             ("fabricbus-slurm", ad and (lambda: ad.stop(check=False))),
             ("Slurm", cl and cl.stop),
             ("the SNMP agent and switch namespaces", eth and eth.stop),
             ("the IB and node agents", ch and (lambda: stop_ib_agents(ch))),
             ("opensm", osm and (lambda: stop_opensm(ch, osm))),
             ("ibsim and fabricbusd", ch and (lambda: ch.stop(check=False))),
             ("Kafka", kf and kf.stop)]
    for name, fn in steps:
        if not fn:
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - keep stopping the rest
            print(f"stopping {name}: {type(e).__name__}: {e}", flush=True)
    if eth is None:
        demo_snmp.remove_namespaces()  # start() failed half-way: nothing left behind


def stop_ib_agents(ch):
    if ch.ib is not None:
        ibsim._stop_proc(ch.ib, timeout=10)
        ch.ib = None
    ch.stop_node_agents(check=False)


def stop_opensm(ch, osm):
    """SIGTERM: the plugin's delete() runs. Under ibsim opensm can hang in its
    own shutdown (tests/integration/test_osm.py): killed after 15 s, said so."""
    rc = ibsim._stop_proc(osm, timeout=15)
    log = fbtest.read_text(os.path.join(ch.sim.workdir, OSM_LOG))
    if "fabricbus_osm: stopped" in log:
        print(f"opensm stopped (exit {rc}); its plugin said: "
              + [x for x in log.splitlines() if "fabricbus_osm: stopped" in x][-1].strip(),
              flush=True)
    else:
        print(f"opensm stopped (exit {rc}) without running the plugin's delete() "
              "(a known opensm shutdown hang under ibsim: it was killed)", flush=True)



def link_command(demo_dir, what, node):
    """unlink|relink NODE in the running demo's ibsim: one console line into
    its FIFO, then wait for ibsim's next prompt in its output. Returns the
    exit status."""
    try:
        with open(os.path.join(demo_dir, SIM_DIR_FILE)) as f:
            sim_dir = f.read().strip()
    except FileNotFoundError:
        print(f"deploy/demo.py {what}: no running demo in {demo_dir} (start deploy/demo.sh there, "
              "or pass --dir)", file=sys.stderr)
        return 1
    try:
        sw, port = chain.host_port(node)
    except (AssertionError, ValueError):
        print(f"deploy/demo.py {what}: {node!r} is not node001..node010", file=sys.stderr)
        return 2
    out_path = os.path.join(sim_dir, "sim.out")
    before = fbtest.read_text(out_path).count("sim> ")
    cmd = {"unlink": "Unlink", "relink": "ReLink"}[what]
    # O_NONBLOCK: fail at once, not hang, if ibsim is gone (no reader).
    try:
        fd = os.open(os.path.join(sim_dir, "ctl"), os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        print(f"deploy/demo.py {what}: ibsim's console {sim_dir}/ctl: {e.strerror} "
              "(is the demo still running?)", file=sys.stderr)
        return 1
    try:
        os.write(fd, f'{cmd} "{sw}"[{port}]\n'.encode())
    finally:
        os.close(fd)
    deadline = time.monotonic() + 10
    while fbtest.read_text(out_path).count("sim> ") <= before:
        if time.monotonic() > deadline:
            print(f"deploy/demo.py {what}: ibsim did not answer within 10 s", file=sys.stderr)
            return 1
        time.sleep(0.05)
    print(f"{what} {node}: {sw} port {port} " + ("down" if what == "unlink" else "back up"))
    return 0


def eth_command(what, port):
    """eth-down|eth-up PORT: pull or plug the cable of the demo's Ethernet
    switch port (ip link set swpNh down|up in its namespace)."""
    err = demo_snmp.link(port, up=(what == "eth-up"))
    if err:
        print(f"deploy/demo.py {what}: {err}", file=sys.stderr)
        return 1
    print(f"{what} {port}: {demo_snmp.SWITCH} port {port} cable "
          + ("pulled (snmpd sends linkDown)" if what == "eth-down" else "back (linkUp)"))
    return 0


def start_opensm(ch):
    """A resident opensm at OSM_HOST loading libfabricbus_osm.so, which
    reports the SM's traps (link down/up, port state) to the broker. Up when
    fabricbusd has an event from the plugin's session (its "test" event, sent
    at the first SUBNET UP): that proves opensm -> plugin -> fabricbusd.
    (/status counts this run's sessions; the kept journal may hold events
    of an earlier demo's plugin.)"""
    wd = ch.sim.workdir
    cfg = os.path.join(wd, "opensm.conf")
    log = os.path.join(wd, OSM_LOG)
    with open(cfg, "w") as f:
        f.write("event_plugin_name fabricbus_osm\n"
                f"event_plugin_options broker={ch.broker.agent_addr},agent_id={OSM_AGENT_ID},"
                f"fabric={chain.FABRIC}\n"
                "force_log_flush TRUE\n"
                f"dump_files_dir {wd}\n")
    lib = os.path.join(OSM_PLUGIN_DIR, "libfabricbus_osm.so")
    if not os.path.exists(lib):
        raise RuntimeError(f"{lib} not built (libopensm-dev missing at meson setup?)")
    env = {"LD_LIBRARY_PATH": OSM_PLUGIN_DIR + ":" + os.environ.get("LD_LIBRARY_PATH", "")}
    with open(os.path.join(wd, "opensm.out"), "ab") as out:
        p = ch.sim.spawn([ibsim.OPENSM, "-F", cfg, "-f", log], OSM_HOST,
                         env_extra=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + SMOKE_WAIT_S
    while True:
        text = fbtest.read_text(log)
        if "cannot load plugin" in text:
            raise RuntimeError(f"opensm could not load libfabricbus_osm.so from {OSM_PLUGIN_DIR} "
                               f"(see {log})")
        if p.poll() is not None:
            raise RuntimeError(f"opensm exited with {p.returncode}; see {log}")
        if any(a["id"] == OSM_AGENT_ID and a["connected"] and a["events"] > 0
               for a in ch.broker.status()["broker"]["agents"]):
            return p
        if time.monotonic() > deadline:
            raise RuntimeError(f"no event from opensm's plugin within {SMOKE_WAIT_S}s "
                               f"(SUBNET UP {'seen' if 'SUBNET UP' in text else 'not seen'}); "
                               f"see {log}")
        time.sleep(0.1)


def consume_cmd(kf):
    """The printed Kafka command: the fabric events from the beginning (the
    group's offsets after the first run), exiting after 10 s without one."""
    return (f"{FABRICBUS} consume --kafka {kf.bootstrap} --group demo --topics fabric.events "
            "--from-beginning --idle-exit 10")


def smoke_kafka(kf, event):
    """Run the printed consume command until event's EventId is in its output."""
    want = str(rec(event).get("EventId"))
    deadline = time.monotonic() + SMOKE_WAIT_S
    while True:
        r = subprocess.run(consume_cmd(kf), shell=True, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError(f"{consume_cmd(kf)!r} exited {r.returncode}: {r.stderr.strip()[-300:]}")
        if any(str(rec(json.loads(x)).get("EventId")) == want for x in r.stdout.splitlines()
               if x.strip()):
            print(f"--- smoke: EventId {rec(event).get('EventId')} is in Kafka (fabric.events)",
                  flush=True)
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"EventId {rec(event).get('EventId')} not in Kafka's fabric.events "
                                 f"within {SMOKE_WAIT_S}s")


def settled(cl, node, wait_s=10):
    """The node's state once slurmctld counts it as responding again. Right
    after an undrain it shows IDLE+NOT_RESPONDING until its slurmd answers
    slurmctld's next ping (here 0.6 s later: "Node node003 now responding" in
    slurmctld.log), which read like a failure in the smoke's line. Past
    wait_s, the state as it is: the smoke checks the undrain, not Slurm's ping."""
    try:
        return cl.wait_node(node, lambda i: "NOT_RESPONDING" not in i["state"], wait_s,
                            "answer to slurmctld's ping")
    except AssertionError:
        return cl.node(node)


def smoke(ch, cl, tail, kf, osm, eth, eth_skipped, node="node003"):
    """Pull node's cable and put it back, then the Ethernet switch's
    SMOKE_ETH; return "PASS: ..." or "FAIL: ..."."""
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
        if kf:
            smoke_kafka(kf, down)
        print(line(tail.wait_for(lambda d: newer(d) and oem(d).get("AgentId") == OSM_AGENT_ID
                                 and oem(d).get("Kind") == "link_down", SMOKE_WAIT_S,
                                 "opensm plugin's link_down (trap 65)")), flush=True)
        print(f"--- smoke: opensm's plugin (AgentId {OSM_AGENT_ID}) reported the link down too",
              flush=True)
        info = cl.wait_node(node, is_ours, SMOKE_WAIT_S, "fabricbus drain")
        print(f"--- smoke: {node} {info['state']}: {info['reason']}", flush=True)
        print(line(tail.wait_for(action("drain: "), SMOKE_WAIT_S, f"drain event for {node}")),
              flush=True)
        print(f"--- smoke: plugging {node} back in", flush=True)
        ch.sim.relink(sw, port)
        cl.wait_node(node, not_drained, SMOKE_WAIT_S, "undrain")
        print(f"--- smoke: {node} {settled(cl, node)['state']}", flush=True)
        print(line(tail.wait_for(action("undrain: "), SMOKE_WAIT_S, f"undrain event for {node}")),
              flush=True)
        if eth:
            smoke_eth(eth, tail, newer)
    except AssertionError as e:
        return "FAIL: " + str(e).splitlines()[0]
    if osm.poll() is not None:
        return f"FAIL: opensm exited with {osm.returncode} during the smoke"
    return (f"PASS: {sw}[{port}] down -> link_down event (IB agent and opensm plugin)"
            + (" (in Kafka too)" if kf else "")
            + f", {node} drained; cable back -> {node} undrained"
            + (f"; {demo_snmp.SWITCH} {SMOKE_ETH} down -> link_down event (SNMP agent)" if eth
               else f"; SNMP switch SKIPPED ({eth_skipped})"))


def smoke_eth(eth, tail, newer):
    """Pull SMOKE_ETH's cable: snmpd's linkDown is a link_down from the SNMP
    agent on that port; plugged back, a link_up."""
    path = eth.port_path(SMOKE_ETH)

    def port_event(kind):
        return lambda d: (newer(d) and oem(d).get("AgentId") == demo_snmp.AGENT_ID
                          and oem(d).get("Kind") == kind and origin(d) == path)
    print(f"--- smoke: pulling the cable of Ethernet port {demo_snmp.SWITCH} {SMOKE_ETH}",
          flush=True)
    err = demo_snmp.link(SMOKE_ETH, up=False)
    assert err is None, f"eth-down {SMOKE_ETH}: {err}"
    print(line(tail.wait_for(port_event("link_down"), SMOKE_WAIT_S,
                             f"SNMP agent's link_down for {SMOKE_ETH}")), flush=True)
    err = demo_snmp.link(SMOKE_ETH, up=True)
    assert err is None, f"eth-up {SMOKE_ETH}: {err}"
    print(line(tail.wait_for(port_event("link_up"), SMOKE_WAIT_S,
                             f"SNMP agent's link_up for {SMOKE_ETH}")), flush=True)
    print(f"--- smoke: the SNMP agent (AgentId {demo_snmp.AGENT_ID}) reported "
          f"{SMOKE_ETH} down and up", flush=True)


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
    ap.add_argument("--kafka", action="store_true",
                    help="also run Kafka (127.0.0.1:9092) and fabricbusd's Kafka sink")
    ap.add_argument("--dir", default=DEMO, help="the demo's directory (default: ./demo)")
    ap.add_argument("action", nargs="?", choices=("unlink", "relink", "eth-down", "eth-up"),
                    help="pull or put back NODE's cable (unlink, relink) or an Ethernet "
                    "switch PORT's (eth-down, eth-up) in the running demo")
    ap.add_argument("node", nargs="?", metavar="NODE|PORT",
                    help="node001..node008, or swp1..swp4")
    args = ap.parse_args()
    if args.action in ("eth-down", "eth-up"):
        if not args.node:
            ap.error(f"{args.action} needs a PORT ({', '.join(demo_snmp.PORTS)})")
        sys.exit(eth_command(args.action, args.node))
    if args.action:
        if not args.node:
            ap.error(f"{args.action} needs a NODE (node001..node008)")
        sys.exit(link_command(args.dir, args.action, args.node))
    DEMO = os.path.abspath(args.dir)
    verdict = main(args)
    if args.smoke:
        ok = bool(verdict) and verdict.startswith("PASS")
        print(f"demo smoke: {verdict or 'FAIL: interrupted'}", flush=True)
        sys.exit(0 if ok else 1)
