"""An Ethernet host link fails: fabricbus-agent-snmp, fabricbusd and
fabricbus-slurm drain the node behind the switch port, and undrain it when
the link comes back (tests/lib/snmp.py, tests/lib/slurm.py).

The script re-runs itself inside its own network namespace (fbtsnmp-main:
broker, Slurm cluster, adapter, SNMP agent). snmpd in fbtsnmp-sw1 is the
switch; hosts fbtsnmp-h1 (node001) and fbtsnmp-h2 (node002) are cabled to
its routed ports swp1 and swp2 through a patch namespace, and each runs a
fabricbus-agent-node reporting its eth0's MAC. snmpd serves no BRIDGE-MIB
and no LLDP-MIB (Debian 12's net-snmp 5.9.3 has neither), so the switch
ties a host's MAC to its port in ipNetToPhysicalTable, from the neighbour
entry the host's first datagram made.

- snmp_trap_host_link_drains_node: the SNMP agent walks the switch's MAC
  tables once at start; /fabric/map then shows sw1 with hosts node001 and
  node002 and each node's port cabled to its swp. The cable of swp1 pulled
  at the switch's end (the host's eth0 stays up, so no node-side event can
  be the cause): snmpd's linkDown trap becomes DownstreamLinkDropped on
  Switches/sw1/Ports/<swp1> naming node001 (Oem Node, PeerName = its MAC);
  fabricbus-slurm drains node001 with "fabric: link down sw1/<ifIndex>";
  plugged back, node001 is undrained after StableFor. node002 stays idle.
  Then a trap receiver that never reads the switch's tables (no Poll=)
  replaces the agent: its linkDown carries no peer, the broker fills it in
  from the port's topology and names node001, which is drained and
  undrained again.
- snmp_poll_host_link_drains_node: the same with traps off: the poller sees
  the change. Then the agent restarts: its resync finds the peers in the
  broker's map (PeerMAC) and sends no topology event for them again.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_snmp_slurm.py [test_name ...]
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

import snmp

snmp.enter_own_netns(__name__)

import slurm  # noqa: E402
from chain import NODE_AGENT  # noqa: E402
from fbtest import Broker, Tail, assert_no_sanitizer_report, check_redfish_event, free_port, \
    oem, origin, rec, run, stop_gracefully, track  # noqa: E402
from slurm_adapter import SlurmAdapter  # noqa: E402
from slurm_rig import is_ours, not_drained  # noqa: E402

FABRIC = "ETH"
NODES = {1: "node001", 2: "node002"}


def fabric_map(broker):
    with urllib.request.urlopen(f"http://{broker.http_addr}/fabric/map", timeout=5) as r:
        return json.loads(r.read())


def wait_map(broker, pred, what, timeout=20):
    deadline = time.monotonic() + timeout
    m = None
    while time.monotonic() < deadline:
        m = fabric_map(broker)
        if pred(m):
            return m
        time.sleep(0.2)
    raise AssertionError(f"/fabric/map never had {what}: {json.dumps(m)[:3000]}")


def switch_entry(m, name="sw1"):
    for sw in m.get("Switches", {}).values():
        if sw.get("Name") == name:
            return sw
    return None


def mount_cgroups():
    """`ip netns exec` gave this process a fresh /sys without the cgroup
    mounts, and slurmd refuses to start without them: mount what the host
    has (its mount list as PID 1 sees it) in our own mount namespace."""
    if os.path.ismount("/sys/fs/cgroup"):
        return
    with open("/proc/1/mounts") as f:
        mounts = [ln.split() for ln in f]
    for dev, mnt, fstype, opts, *_ in mounts:
        if not mnt.startswith("/sys/fs/cgroup"):
            continue
        os.makedirs(mnt, exist_ok=True)
        subprocess.run(["mount", "-t", fstype, "-o", opts, dev, mnt], check=True)


class Parts:
    """Everything a test starts, stopped in reverse order whatever happens."""

    def __init__(self):
        self.broker = self.tail = self.cluster = self.adapter = self.agent = self.sw = None
        self.nodes = []  # (name, proc, log path)
        self.hosts = {}

    def start(self, traps):
        # on every address: the node agents reach it over their management links
        ap, hp = free_port(), free_port()
        self.broker = Broker(agent_port=ap, http_port=hp, FabricName=FABRIC,
                             AgentListen=f"0.0.0.0:{ap}", HttpListen=f"0.0.0.0:{hp}",
                             HttpAllowPlain="yes").start()
        self.tail = Tail(self.broker.http_addr, os.path.join(self.broker.workdir, "tail.err"))
        self.trap_port = free_port()
        self.sw = snmp.SnmpSwitch("sw1", 1, ports=(),
                                  trap_port=self.trap_port if traps else None).start()
        for n, node in NODES.items():
            self.hosts[n] = snmp.HostPort(self.sw, n, f"h{n}").start()
        # snmpd again, so that its 1 s link monitors sample the new ports from the
        # start, once the kernel says they are up (linkwatch takes up to a second)
        time.sleep(1.5)
        self.sw.restart_snmpd()
        self.wait_ports_up()
        for n, node in NODES.items():
            self.start_node_agent(self.hosts[n], node)
        for h in self.hosts.values():
            h.announce()
        mount_cgroups()
        self.cluster = slurm.SlurmCluster(nodes=len(NODES)).start()
        self.adapter = SlurmAdapter(self.broker, self.cluster, HoldDown="500ms",
                                    StableFor="2s").start()
        def ready(st):  # a live subscriber next to our tail, and connected for its actions
            subs = [x for x in st["websocket"]["subscribers"] if x["state"] == "live"]
            agents = [x for x in st["broker"]["agents"] if x["id"].startswith("slurm@")]
            return len(subs) >= 2 and any(x["connected"] for x in agents)

        self.broker.wait_status(ready, timeout=30)
        return self

    def wait_ports_up(self, timeout=20):
        """Until snmpd says ifOperStatus up(1) for every host port: its IF-MIB
        cache may hold what it read at start for a few seconds."""
        want = [self.sw.ifindex(h.port) for h in self.hosts.values()]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = subprocess.run(["snmpget", "-v2c", "-c", "public", "-On", "-Oqv", self.sw.addr] +
                               [f"1.3.6.1.2.1.2.2.1.8.{i}" for i in want],
                               capture_output=True, text=True, env=dict(os.environ, MIBS=""))
            if r.returncode == 0 and r.stdout.split() == ["1"] * len(want):
                time.sleep(1.5)  # the link monitors' next samples see it too
                return
            time.sleep(0.3)
        raise AssertionError(f"snmpd never saw swp1/swp2 up: {r.stdout} {r.stderr}")

    def start_node_agent(self, host, node):
        log_path = os.path.join(self.broker.workdir, f"node-{node}.log")
        port, http = self.broker.agent_port, self.broker.http_port
        with open(log_path, "ab") as log:
            p = track(subprocess.Popen(
                ["ip", "netns", "exec", host.ns, NODE_AGENT, "--broker",
                 f"{host.mgmt_main}:{port}", "--map", f"{host.mgmt_main}:{http}", "--agent-id",
                 f"node-{node}", "--node-name", node, "--no-ib"],
                stdout=log, stderr=subprocess.STDOUT))
        self.nodes.append((node, p, log_path))

    def start_agent(self, traps, poll=True, extra=()):
        """poll=False: a trap receiver only, which never reads the switch's
        MAC tables."""
        sw = self.sw
        conf = [f"Switch={sw.addr} sw1 host"] + ([f"Poll={sw.addr} public"] if poll else [])
        args = ["--fabric", FABRIC, "--map", self.broker.http_addr, "--mac-interval", "1000"]
        if traps:
            conf.append("Community=public")
            args += ["--listen", f"udp:{sw.agent_side}:{self.trap_port}",
                     "--poll-interval", "600000"]
        else:
            args += ["--no-traps", "--poll-interval", "300"]
        self.agent = snmp.Agent(self.broker.agent_addr, conf, args + list(extra)).start()
        return self.agent

    def wait_hosts(self):
        """Until the map ties each node's eth0 to its switch port."""
        ifx = {n: self.sw.ifindex(h.port) for n, h in self.hosts.items()}

        def tied(m):
            sw = switch_entry(m)
            if not sw or sw.get("Hosts") != sorted(NODES.values()):
                return False
            for n, node in NODES.items():
                ports = m["Nodes"].get(node, {}).get("Ports", [])
                eth0 = [p for p in ports if p.get("MAC") == self.hosts[n].mac()]
                if not eth0 or eth0[0].get("Switch") != "sw1" or \
                        eth0[0].get("SwitchPort") != ifx[n]:
                    return False
            return True

        m = wait_map(self.broker, tied, "sw1 with node001 and node002 on swp1 and swp2")
        sw = switch_entry(m)
        peers = {p["Port"]: p.get("PeerMAC") for p in sw["Ports"]}
        assert peers[ifx[1]] == self.hosts[1].mac() and peers[ifx[2]] == self.hosts[2].mac(), sw
        print(f"  /fabric/map: sw1 Hosts {sw['Hosts']}, PeerMAC {peers}", flush=True)
        return ifx

    def stop(self):
        rc = 0
        for what in ("adapter", "agent"):
            p = getattr(self, what)
            if p and p.proc:
                if what == "adapter":
                    p.stop()
                else:
                    rc = p.stop() or rc
                    assert_no_sanitizer_report(p.log(), "fabricbus-agent-snmp")
        for node, p, log_path in self.nodes:
            rc = stop_gracefully(p, f"fabricbus-agent-node {node}") or rc
            with open(log_path, errors="replace") as f:
                assert_no_sanitizer_report(f.read(), "fabricbus-agent-node")
        if self.tail:
            self.tail.stop()
        if self.cluster:
            self.cluster.stop()
        for h in self.hosts.values():
            h.stop()
        if self.sw:
            self.sw.stop()
        if self.broker:
            rc = self.broker.stop() or rc
        return rc


def _port_event(kind, sw, ifindex):
    path = f"/redfish/v1/Fabrics/{FABRIC}/Switches/{sw.name}/Ports/{ifindex}"
    return lambda d: oem(d).get("Kind") == kind and origin(d) == path


def _drain_and_undrain(parts, ifx, live):
    """Pull swp1's cable: node001 drained through the switch's event; plug it
    back: undrained. node002 untouched; node001's own agent saw nothing."""
    sw, tail, cluster = parts.sw, parts.tail, parts.cluster
    n = len(tail.events)
    t0 = time.monotonic()
    parts.hosts[1].cable(up=False)
    d = tail.wait_for(lambda d: _port_event("link_down", sw, ifx[1])(d) and
                      tail.events.index(d) >= n, timeout=20, what="swp1 link_down")
    check_redfish_event(d)
    print(f"  {rec(d)['MessageId']} {origin(d)} after {(time.monotonic() - t0) * 1000:.0f} ms: "
          f"{json.dumps(oem(d))}", flush=True)
    assert rec(d)["MessageId"] == "Fabric.1.0.DownstreamLinkDropped", rec(d)
    assert rec(d)["MessageArgs"] == ["sw1", str(ifx[1])], rec(d)
    assert oem(d).get("Node") == "node001", json.dumps(oem(d))
    assert oem(d).get("PeerName") == parts.hosts[1].mac(), json.dumps(oem(d))
    assert live(oem(d)), json.dumps(oem(d))
    info = cluster.wait_node("node001", is_ours, 20, "drain of node001")
    print(f"  node001 drained after {(time.monotonic() - t0) * 1000:.0f} ms: "
          f"{info['reason']!r}", flush=True)
    assert info["reason"].startswith(f"fabric: link down sw1/{ifx[1]} (EventId "), info
    t1 = time.monotonic()
    parts.hosts[1].cable(up=True)
    d = tail.wait_for(lambda d: _port_event("link_up", sw, ifx[1])(d) and
                      tail.events.index(d) >= n, timeout=20, what="swp1 link_up")
    assert oem(d).get("Node") == "node001", json.dumps(oem(d))
    cluster.wait_node("node001", not_drained, 20, "undrain of node001")
    print(f"  node001 undrained {(time.monotonic() - t1) * 1000:.0f} ms after the cable came "
          f"back (StableFor 2s)", flush=True)
    assert not_drained(cluster.node("node002")), cluster.node("node002")
    node_side = [oem(x) for x in tail.events[n:] if oem(x).get("LinkClass") == "node" and
                 oem(x).get("Kind") in ("link_down", "link_up")]
    assert not node_side, f"the host saw its own link change: {node_side}"
    assert "undrain" in parts.adapter.log() and "node002" not in \
        [ln.split("drain ", 1)[1].split()[0] for ln in parts.adapter.log().splitlines()
         if "decided: drain " in ln], parts.adapter.log()[-3000:]


def snmp_trap_host_link_drains_node():
    parts = Parts()
    rc = 0
    try:
        parts.start(traps=True)
        parts.start_agent(traps=True)
        ifx = parts.wait_hosts()
        _drain_and_undrain(parts, ifx, lambda o: "poll:" not in o.get("Text", ""))
        st = parts.agent.stats()
        assert st["packets"] >= 2 and st["malformed"] == 0 and st["dropped"] == 0, st
        # A trap receiver that never walked the switch: its events carry no
        # peer, and the broker fills it in from the port's topology (the
        # first agent's MAC walk), then the node.
        assert parts.agent.stop() == 0
        parts.start_agent(traps=True, poll=False)
        _drain_and_undrain(parts, ifx, lambda o: "poll:" not in o.get("Text", ""))
        assert "mac:" not in parts.agent.log(), parts.agent.log()[-2000:]
    finally:
        rc = parts.stop()
    assert rc == 0, f"a program exited {rc}"


def snmp_poll_host_link_drains_node():
    parts = Parts()
    rc = 0
    try:
        parts.start(traps=False)
        agent = parts.start_agent(traps=False)
        ifx = parts.wait_hosts()
        _drain_and_undrain(parts, ifx, lambda o: "poll:" in o.get("Text", ""))
        # A restart: the resync finds both peers in the map and sends no
        # topology event about them again.
        assert agent.stop() == 0
        n = len(parts.tail.events)
        agent.start()
        agent_log = agent.log()
        deadline = time.monotonic() + 15
        while agent_log.count("resync: switch 'sw1'") < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            agent_log = agent.log()
        assert agent_log.count("resync: switch 'sw1'") >= 2, agent_log[-3000:]
        time.sleep(1.0)
        again = [oem(x) for x in parts.tail.events[n:] if "mac:" in oem(x).get("Text", "")]
        assert not again, f"peers sent again although the map had them: {again}"
    finally:
        rc = parts.stop()
    assert rc == 0, f"a program exited {rc}"


if __name__ == "__main__":
    names = sys.argv[1:]
    tests = [snmp_trap_host_link_drains_node, snmp_poll_host_link_drains_node]
    if names:
        tests = [t for t in tests if t.__name__ in names]
    run(*tests)
