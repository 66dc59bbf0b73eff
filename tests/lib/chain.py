"""The fabric half of an end-to-end rig, shared by the integration tests and
benchmarks that need real fabric events: ibsim (fattree46) brought up by
`opensm -o`, fabricbusd, one fabricbus-agent-node per host h1..h<n> naming
itself node001..node<n> (so the broker's inventory maps each host's port GUID
to its Slurm node name), and fabricbus-agent-ib watching the switches.

    ch = FabricChain().start()             # inventory complete, IB agent polling
    ch.sim.unlink("leaf1", 3)              # h3's cable: node003
    ch.broker.http_addr                    # /ws/events, /fabric/map, /status
    ch.stop()

fattree46: h1..h10 on leaf1 ports 1..10 (h<k> on leaf1[k]), leaf1's uplinks
are ports 33..36 (spine1[1], spine1[2], spine2[1], spine2[2]). The IB agent
attaches at h40 (leaf4), so unlinking leaf1's uplinks leaves leaf1, and the
hosts behind it, unreachable from the agent. ibsim takes 10 clients: opensm
(exits), 8 node agents and the IB agent.
"""
import os
import re
import subprocess
import time

import fbtest
import ibsim
from fbtest import BUILD, Broker, assert_no_sanitizer_report
from ibsim import IbSim, TOPOLOGIES

NODE_AGENT = os.path.join(BUILD, "agents", "node", "fabricbus-agent-node")
IB_AGENT = os.path.join(BUILD, "agents", "ib", "fabricbus-agent-ib")
TOPO = os.path.join(TOPOLOGIES, "fattree46.net")
FABRIC = "ibsim"
LEAF1_UPLINKS = (33, 34, 35, 36)


def host_port(node):
    """(switch, port) of node<k>'s cable in fattree46 (k <= 10)."""
    k = int(node[4:])
    assert 1 <= k <= 10, node
    return "leaf1", k


def ib_port_guid(sim, host):
    """The port GUID of host's CA, from ibstat run at that host."""
    rc, out = sim.run(["ibstat"], host=host)
    assert rc == 0, f"ibstat at {host} failed: {out}"
    m = re.search(r"Port GUID:\s*(0x[0-9a-fA-F]+)", out)
    assert m, f"no Port GUID in ibstat at {host}:\n{out}"
    return int(m.group(1), 16)


def _inventory_guids(st):
    inv = st["broker"].get("inventory", {})
    return {int(p["guid"], 16): p for p in inv.get("ports", []) if "guid" in p}


def inventory_complete(st, want):
    got = _inventory_guids(st)
    for guid, node in want.items():
        p = got.get(guid)
        if p is None or p["node"] != node or p["device"] != "ibsim0" or p["port"] != 1:
            return False
    return True


class FabricChain:
    def __init__(self, hosts=8, interval_ms=100, ib_host="h40", ib_agent=True, broker_args=None,
                 ib_args=(), **broker_overrides):
        """broker_args: keyword arguments for fbtest.Broker (workdir, ports);
        ib_args: more options for the IB agent (e.g. --metrics)."""
        self.ib_args = list(ib_args)
        self.broker_args = dict(broker_args or {})
        self.hosts = [(f"h{i}", f"node{i:03d}") for i in range(1, hosts + 1)]
        self.interval_ms = interval_ms
        self.ib_host = ib_host
        self.with_ib_agent = ib_agent
        self.broker_overrides = dict(FabricName=FABRIC)
        self.broker_overrides.update(broker_overrides)
        self.sim = self.broker = self.ib = None
        self.agents = []
        self.want = {}

    # ---- start -------------------------------------------------------------

    def start(self):
        missing = ibsim.available()
        assert missing is None, f"ibsim not installed ({missing}): run deploy/install-deps.sh"
        for exe in (NODE_AGENT, IB_AGENT):
            assert os.access(exe, os.X_OK), f"{exe} not built"
        self.sim = IbSim(TOPO).start()
        self.sim.run_sm_once()
        self.want = {ib_port_guid(self.sim, h): n for h, n in self.hosts}
        self.broker = Broker(**self.broker_args, **self.broker_overrides).start()
        for h, n in self.hosts:
            self.start_node_agent(h, n)
        self.broker.wait_status(lambda st: inventory_complete(st, self.want), timeout=30)
        if self.with_ib_agent:
            self.start_ib_agent(extra_args=self.ib_args)
        return self

    def _log(self, name):
        return os.path.join(self.sim.workdir, name)

    def start_node_agent(self, host, node):
        with open(self._log(f"node-{node}.log"), "ab") as log:
            p = self.sim.spawn([NODE_AGENT, "--broker", self.broker.agent_addr, "--map",
                                self.broker.http_addr, "--agent-id",
                                f"node-{node}", "--node-name", node, "--no-eth", "--interval",
                                "200"], host, env_extra=self.sim.sanitizer_env(), stdout=log,
                               stderr=subprocess.STDOUT)
        self.agents.append((node, p))

    def start_ib_agent(self, timeout=30.0, extra_args=()):
        """Start the switch agent and wait until its discovery (topology
        events) is in the broker and a few poll rounds have passed."""
        with open(self._log("agent-ib.log"), "ab") as log:
            self.ib = self.sim.spawn([IB_AGENT, "--broker", self.broker.agent_addr, "--agent-id",
                                      "ib-sw", "--fabric", FABRIC, "--map", self.broker.http_addr,
                                      "--interval", str(self.interval_ms)] + list(extra_args),
                                     self.ib_host,
                                     env_extra=self.sim.sanitizer_env(), stdout=log,
                                     stderr=subprocess.STDOUT)

        def settled(st):
            a = [x for x in st["broker"]["agents"] if x["id"] == "ib-sw"]
            return bool(a) and a[0]["connected"] and a[0]["events"] > 0

        self.broker.wait_status(settled, timeout=timeout)
        time.sleep(max(0.5, 5 * self.interval_ms / 1000.0))

    # ---- logs and stop -----------------------------------------------------

    def read_log(self, name):
        return fbtest.read_text(self._log(name))

    def _stop_client(self, p, name, check):
        rc = ibsim._stop_proc(p, timeout=10)
        out = self.read_log(name)
        if check:
            assert rc == 0, f"{name}: exited with {rc}:\n{out[-3000:]}"
            assert_no_sanitizer_report(out, name)

    def stop_node_agents(self, check=True):
        for node, p in self.agents:
            self._stop_client(p, f"node-{node}.log", check)
        self.agents = []

    def stop(self, check=True):
        try:
            if self.ib is not None:
                self._stop_client(self.ib, "agent-ib.log", check)
                self.ib = None
            self.stop_node_agents(check)
        finally:
            if self.sim is not None:
                self.sim.stop()
            rc = self.broker.stop() if self.broker is not None else 0
        if check:
            assert rc == 0, f"fabricbusd exited with {rc}:\n{self.broker.log()[-3000:]}"
