"""fabricbus-agent-node and the broker's port inventory (ibsim, fattree46:
tests/lib/topologies/fattree46.net: h1..h40 on leaf1..leaf4 ports 1..10).

Eight node agents attach at h1..h8 (--node-name node001..node008, --no-eth:
all of them run on this one machine, so its Ethernet interfaces are not
theirs to claim). The broker's /status "inventory" must map each host's port
GUID (as `ibstat` under SIM_HOST=hN reports it) to its node. Then
fabricbus-agent-ib (client 9 of ibsim's 10: opensm -o has exited) watches the
switches; unlinking leaf1[3] (h3's cable) must give a DownstreamLinkDropped
whose Oem.Fabricbus.Node is node003: the switch agent only knows the peer's
node GUID, and the broker fills in the node from the inventory.

Ethernet: a veth pair in this namespace (no dummy module here), one end taken
down and up with `ip link`, must give link_down/link_up with link class node (needs root; the
interface is removed by name at exit).

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_node.py [test_name ...]
"""
import atexit
import json
import os
import re
import subprocess
import sys
import threading
import time

import fbtest
from fbtest import BUILD, FABRICBUS, Broker, check_redfish_event, run, track
import ibsim
from ibsim import IbSim, TOPOLOGIES

NODE_AGENT = os.path.join(BUILD, "agents", "node", "fabricbus-agent-node")
IB_AGENT = os.path.join(BUILD, "agents", "ib", "fabricbus-agent-ib")
TOPO = os.path.join(TOPOLOGIES, "fattree46.net")
FABRIC = "ibsim"
HOSTS = [(f"h{i}", f"node{i:03d}") for i in range(1, 9)]
DS_DOWN = "Fabric.1.0.DownstreamLinkDropped"
DUMMY = "fbtveth0"  # a veth pair in this namespace; the peer is fbtveth1
DUMMY_PEER = "fbtveth1"


def rec(doc):
    return doc["Events"][0]


def oem(doc):
    return rec(doc).get("Oem", {}).get("Fabricbus", {})


def origin(doc):
    return rec(doc).get("OriginOfCondition", {}).get("@odata.id", "")


class Tail:
    """`fabricbus tail --since 0 --reconnect`, lines collected by a thread."""

    def __init__(self, http_addr, err_path):
        args = [FABRICBUS, "tail", "--http", http_addr, "--since", "0", "--reconnect",
                "--events-only", "--quiet"]
        with open(err_path, "ab") as err:
            self.proc = track(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err))
        self.events = []
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            if line.strip():
                with self.cv:
                    self.events.append(json.loads(line))
                    self.cv.notify_all()

    def wait_for(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for d in self.events:
                    if pred(d):
                        return d
                left = deadline - time.monotonic()
                if left <= 0:
                    got = "\n  ".join(f"{rec(d).get('MessageId')} {origin(d)} {json.dumps(oem(d))}"
                                      for d in self.events[-20:])
                    raise AssertionError(f"no {what} within {timeout}s; last events:\n  {got}")
                self.cv.wait(min(left, 0.1))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def ib_port_guid(sim, host):
    """The port GUID of host's CA, from ibstat run at that host."""
    rc, out = sim.run(["ibstat"], host=host)
    assert rc == 0, f"ibstat at {host} failed: {out}"
    m = re.search(r"Port GUID:\s*(0x[0-9a-fA-F]+)", out)
    assert m, f"no Port GUID in ibstat at {host}:\n{out}"
    return int(m.group(1), 16)


def inventory_guids(st):
    inv = st["broker"].get("inventory", {})
    return {int(p["guid"], 16): p for p in inv.get("ports", []) if "guid" in p}


def check_map(st, want):
    got = inventory_guids(st)
    for guid, node in want.items():
        p = got.get(guid)
        if p is None or p["node"] != node or p["device"] != "ibsim0" or p["port"] != 1:
            return False
    return True


class Rig:
    """ibsim (opensm -o) + fabricbusd + 8 node agents at h1..h8."""

    def __init__(self):
        self.sim = self.broker = None
        self.agents = []

    def start(self):
        missing = ibsim.available()
        assert missing is None, f"ibsim not installed ({missing}): run deploy/install-deps.sh"
        for exe in (NODE_AGENT, IB_AGENT):
            assert os.access(exe, os.X_OK), f"{exe} not built"
        self.sim = IbSim(TOPO).start()
        self.sim.run_sm_once()
        # The real GUIDs first: each ibstat is a client that exits.
        self.want = {ib_port_guid(self.sim, h): n for h, n in HOSTS}
        self.broker = Broker(FabricName=FABRIC).start()
        for h, n in HOSTS:
            self.start_node_agent(h, n)
        st = self.broker.wait_status(lambda st: check_map(st, self.want), timeout=30)
        return st

    def start_node_agent(self, host, node):
        log = open(os.path.join(self.sim.workdir, f"node-{node}.log"), "ab")
        p = self.sim.spawn([NODE_AGENT, "--broker", self.broker.agent_addr, "--agent-id",
                            f"node-{node}", "--node-name", node, "--no-eth", "--interval", "200"],
                           host, env_extra=self.sim.sanitizer_env(), stdout=log,
                           stderr=subprocess.STDOUT)
        log.close()
        self.agents.append((node, p))

    def node_log(self, node):
        with open(os.path.join(self.sim.workdir, f"node-{node}.log"), errors="replace") as f:
            return f.read()

    def stop_node_agents(self):
        for node, p in self.agents:
            rc = ibsim._stop_proc(p, timeout=10)
            out = self.node_log(node)
            assert rc == 0, f"node agent {node} exited with {rc}:\n{out[-3000:]}"
            for bad in ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"):
                assert bad not in out, f"sanitizer report from node agent {node}:\n{out[-3000:]}"
        self.agents = []

    def stop(self, check=True):
        try:
            if check:
                self.stop_node_agents()
        finally:
            if self.sim is not None:
                self.sim.stop()
            rc = self.broker.stop() if self.broker is not None else 0
        if check:
            assert rc == 0, f"fabricbusd exited with {rc}:\n{self.broker.log()[-3000:]}"


# ---------------------------------------------------------------------------


def node_inventory_names_switch_events():
    r = Rig()
    tail = ib = None
    ok = False
    try:
        st = r.start()
        inv = st["broker"]["inventory"]
        print(f"  inventory: nodes={inv['nodes']} ib_ports={inv['ib_ports']} "
              f"truncated={inv['truncated']}", flush=True)
        assert inv["nodes"] == 8 and inv["ib_ports"] == 8, json.dumps(inv)[:2000]
        assert inv["truncated"] is False, json.dumps(inv)[:500]
        for g, n in r.want.items():
            print(f"  0x{g:016x} -> {n}", flush=True)

        tail = Tail(r.broker.http_addr, os.path.join(r.broker.workdir, "tail.err"))
        # Inventory events are Redfish ResourceCreated for the node's interface.
        d = tail.wait_for(lambda d: oem(d).get("Kind") == "inventory" and
                          oem(d).get("Node") == "node003", timeout=10, what="node003 inventory")
        check_redfish_event(d)
        assert rec(d)["MessageId"].endswith("ResourceCreated"), rec(d)
        assert origin(d) == "/redfish/v1/Systems/node003/NetworkInterfaces/ibsim0", origin(d)

        ib_log = os.path.join(r.sim.workdir, "agent-ib.log")
        with open(ib_log, "ab") as log:
            ib = r.sim.spawn([IB_AGENT, "--broker", r.broker.agent_addr, "--agent-id", "ib-sw",
                              "--fabric", FABRIC, "--interval", "200"], "h40",
                             env_extra=r.sim.sanitizer_env(), stdout=log, stderr=subprocess.STDOUT)
        tail.wait_for(lambda d: oem(d).get("AgentId") == "ib-sw" and oem(d).get("Kind") == "topology",
                      timeout=30, what="the switch agent's topology")
        time.sleep(1.5)  # its first poll rounds over
        path = f"/redfish/v1/Fabrics/{FABRIC}/Switches/leaf1/Ports/3"
        r.sim.unlink("leaf1", 3)
        d = tail.wait_for(lambda d: rec(d).get("MessageId") == DS_DOWN and origin(d) == path,
                          timeout=10, what=f"{DS_DOWN} {path}")
        check_redfish_event(d)
        print(f"  {DS_DOWN} {path}: Node={oem(d).get('Node')} PeerName={oem(d).get('PeerName')}",
              flush=True)
        assert oem(d).get("Node") == "node003", f"not enriched: {json.dumps(oem(d))}"
        assert oem(d).get("AgentId") == "ib-sw", json.dumps(oem(d))
        # Switch events for other ports name their own nodes, never node003.
        topo = [x for x in tail.events if oem(x).get("Kind") == "topology" and
                origin(x).startswith(f"/redfish/v1/Fabrics/{FABRIC}/Switches/leaf1/Ports/")]
        for x in topo:
            port = int(origin(x).rsplit("/", 1)[1])
            want = f"node{port:03d}" if port <= 8 else None
            assert oem(x).get("Node") == want, f"leaf1[{port}]: {json.dumps(oem(x))}"
        rc = ibsim._stop_proc(ib, timeout=10)
        assert rc == 0, f"switch agent exited with {rc}"
        ok = True
    finally:
        if tail:
            tail.stop()
        r.stop(check=ok)


def node_inventory_survives_broker_restart():
    r = Rig()
    ok = False
    try:
        r.start()
        r.stop_node_agents()  # nobody can re-report after the restart
        assert r.broker.stop() == 0, r.broker.log()[-3000:]
        r.broker.start()
        st = r.broker.status()  # the first status, before any agent connects
        assert not any(a["connected"] for a in st["broker"]["agents"]), st["broker"]["agents"]
        assert check_map(st, r.want), f"map not rebuilt from the journal: {json.dumps(st['broker']['inventory'])[:2000]}"
        assert st["broker"]["inventory"]["nodes"] == 8, json.dumps(st["broker"]["inventory"])[:2000]
        print(f"  after restart: {st['broker']['inventory']['ib_ports']} IB ports of "
              f"{st['broker']['inventory']['nodes']} nodes from the journal", flush=True)
        ok = True
    finally:
        r.stop(check=ok)


def _ip(*args, check=True):
    return subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=check)


def _remove_dummy():
    _ip("link", "del", DUMMY, check=False)


def node_eth_link_down_up_events():
    if os.geteuid() != 0:
        raise AssertionError("needs root to create a veth pair")
    _remove_dummy()
    atexit.register(_remove_dummy)
    _ip("link", "add", DUMMY, "type", "veth", "peer", "name", DUMMY_PEER)
    _ip("link", "set", "dev", DUMMY_PEER, "up")
    _ip("link", "set", "dev", DUMMY, "up")
    broker = Broker(FabricName=FABRIC).start()
    tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
    log_path = os.path.join(broker.workdir, "node-eth.log")
    with open(log_path, "ab") as log:
        agent = track(subprocess.Popen([NODE_AGENT, "--broker", broker.agent_addr, "--agent-id",
                                        "node-eth", "--node-name", "ethnode", "--no-ib"],
                                       stdout=log, stderr=subprocess.STDOUT))
    ok = False
    try:
        mine = lambda kind: (lambda d: oem(d).get("Kind") == kind and oem(d).get("Node") == "ethnode"
                             and origin(d).endswith("/NetworkInterfaces/" + DUMMY))
        d = tail.wait_for(mine("inventory"), timeout=15, what=f"{DUMMY} inventory")
        mac = oem(d).get("Address") or ""
        st = broker.wait_status(lambda st: any(p.get("device") == DUMMY and p.get("node") == "ethnode"
                                               for p in st["broker"]["inventory"]["ports"]), timeout=10)
        print(f"  {DUMMY} inventory ok (oem address {mac!r})", flush=True)
        t0 = time.monotonic()
        _ip("link", "set", "dev", DUMMY, "down")
        d = tail.wait_for(mine("link_down"), timeout=10, what=f"{DUMMY} link_down")
        print(f"  link_down after {(time.monotonic() - t0) * 1000:.0f} ms: {rec(d)['MessageId']}",
              flush=True)
        check_redfish_event(d)
        assert oem(d).get("LinkClass") == "node", json.dumps(oem(d))
        assert rec(d)["MessageId"] == "NetworkDevice.1.1.ConnectionDropped", rec(d)["MessageId"]
        _ip("link", "set", "dev", DUMMY, "up")
        d = tail.wait_for(mine("link_up"), timeout=10, what=f"{DUMMY} link_up")
        assert oem(d).get("LinkClass") == "node", json.dumps(oem(d))
        agent.terminate()
        rc = agent.wait(timeout=10)
        with open(log_path, errors="replace") as f:
            out = f.read()
        assert rc == 0, f"node agent exited with {rc}:\n{out[-3000:]}"
        assert "runtime error:" not in out and "Sanitizer" not in out, out[-3000:]
        ok = True
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        tail.stop()
        rc = broker.stop()
        _remove_dummy()
        if ok:
            assert rc == 0, broker.log()[-3000:]


ALL = [node_inventory_names_switch_events, node_inventory_survives_broker_restart,
       node_eth_link_down_up_events]

if __name__ == "__main__":
    names = sys.argv[1:]
    tests = [t for t in ALL if not names or t.__name__ in names]
    run(*tests)
