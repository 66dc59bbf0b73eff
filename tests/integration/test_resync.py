"""Nothing lost across an agent restart (issue 10): the IB agent's resync
against the broker's /fabric/map, the Slurm adapter converging after it, and
a drain cap that counts only Slurm nodes.

Real parts: ibsim fattree46 (opensm -o), fabricbusd, eight node agents
(h1..h8 -> node001..node008, tests/lib/chain.py), fabricbus-agent-ib at h40,
fabricbus-slurm, and a real Slurm cluster of FOUR nodes (node001..node004,
tests/lib/slurm.py): node005..node008 are inventoried hosts behind leaf1 that
slurmctld does not know (storage, login nodes).

What it proves, one test each:
- agent_restart_reports_what_changed_meanwhile: the issue's reproduction.
  Unlink leaf1[3] (node003 drains), kill -9 the IB agent, ReLink leaf1[3],
  Unlink leaf1[4], opensm -o, restart the agent: node004 drains, node003
  undrains, the link events carry Oem.Fabricbus.Resync, and /fabric/map
  agrees with ibsim (iblinkinfo) on every switch port.
- switch_failed_or_recovered_while_agent_down: leaf1 stops answering while
  the agent is down (switch_unreachable at resync, the Slurm nodes behind it
  drain); it recovers with the agent up (the agent, which never discovered
  it, finds it again: they undrain); it fails live, then recovers while the
  agent is down again (switch_reachable at resync, they undrain).
- both_killed_cable_restored: kill -9 of fabricbus-slurm and of the IB agent
  at once, the cable restored while both are down: after both restart the
  node is undrained.
- resync_undoes_a_drain_an_old_agent_left: an agent restarted without
  resync leaves node003 drained after its cable came back; the next resync
  (another cable cut while the agent was down) makes fabricbus-slurm compare
  its drains with /fabric/map, and node003 is undrained.
- cap_counts_only_slurm_nodes: leaf1 unreachable with 8 hosts behind it, 4
  of them Slurm nodes, MaxDrainNodes=6: no cap event, the 4 are drained; with
  MaxDrainNodes=2 the cap event names only the 2 Slurm nodes it refused.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_resync.py [test_name ...]
"""
import json
import re
import signal
import time
import urllib.request

from fbtest import oem, rec
from slurm_rig import FileRig, SlurmRig, is_ours, not_drained
import slurm_rig

SLURM_NODES = [f"node{i:03d}" for i in range(1, 5)]
STABLE_S = 2.0
BASE = {"HoldDown": "0ms", "StableFor": "2s", "MaxDrainNodes": "0", "MaxDrainPercent": "0",
        "RetryInterval": "500ms"}


class Rig(SlurmRig):
    def __init__(self):
        super().__init__(slurm_nodes=len(SLURM_NODES), base=BASE)

    def kill9_ib_agent(self):
        """SIGKILL, then free its ibsim client slot (ibsim never notices a
        dead client by itself, and takes only 10)."""
        p = self.chain.ib
        pid = p.pid
        p.send_signal(signal.SIGKILL)
        p.wait()
        self.chain.ib = None
        m = re.search(rf"Client (\d+): pid {pid} ", self.chain.sim.attached())
        if m:
            self.chain.sim.console(f"X {m.group(1)}")


RIGS = FileRig(Rig)


def rig():
    return RIGS.get()


def last_event_id(r):
    return slurm_rig.last_event_id(r.tail)


def fabric_map(r):
    with urllib.request.urlopen(f"http://{r.chain.broker.http_addr}/fabric/map", timeout=10) as f:
        return json.load(f)


def resync_events(r, after, kind, switch, port=None):
    out = []
    for d in list(r.tail.events):
        o = oem(d)
        if (int(rec(d).get("EventId", 0)) > after and o.get("Kind") == kind and
                o.get("SwitchName") == switch and (port is None or o.get("Port") == port)):
            out.append(d)
    return out


def wait_event(r, after, kind, switch, port=None, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        got = resync_events(r, after, kind, switch, port)
        if got:
            return got[0]
        assert time.monotonic() < deadline, \
            f"no {kind} for {switch}[{port}] after EventId {after}"
        time.sleep(0.05)




def ibsim_port_states(r):
    """{switch GUID: {port: "up"|"down"}} as iblinkinfo sees it now."""
    rc, out = r.chain.sim.run(["iblinkinfo", "--switches-only", "-l"], host="h39")
    assert rc == 0, out
    states = {}
    for line in out.splitlines():
        m = re.match(r"^(0x[0-9a-f]+)\s+\"\s*([^\"]*)\"\s+(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(.*?)\)==>", line)
        if not m:
            continue
        guid, port, what = int(m.group(1), 16), int(m.group(4)), m.group(5)
        states.setdefault(guid, {})[port] = "up" if "LinkUp" in what else "down"
    assert states, f"nothing parsed from iblinkinfo:\n{out[:2000]}"
    return states


def map_matches_ibsim(r, timeout=10):
    """Every switch port the map lists has ibsim's state, and so has every
    node port's LinkState."""
    deadline = time.monotonic() + timeout
    while True:
        truth = ibsim_port_states(r)
        m = fabric_map(r)
        bad = []
        n = 0
        for guid, sw in m["Switches"].items():
            t = truth.get(int(guid, 16), {})
            for p in sw.get("Ports", []):
                if p["Port"] in t:
                    n += 1
                    if p["LinkState"] != t[p["Port"]]:
                        bad.append(f"{sw['Name']}[{p['Port']}] map {p['LinkState']} ibsim {t[p['Port']]}")
        for node, nd in m["Nodes"].items():
            for p in nd.get("Ports", []):
                t = truth.get(int(p.get("SwitchGUID", "0x0"), 16), {}).get(p.get("SwitchPort"))
                if t and p.get("LinkState") != t:
                    bad.append(f"{node} map {p.get('LinkState')} ibsim {t}")
        if not bad and n:
            return n
        assert time.monotonic() < deadline, "map differs from ibsim:\n  " + "\n  ".join(bad)
        time.sleep(0.2)


# ---------------------------------------------------------------------------


def agent_restart_reports_what_changed_meanwhile():
    r = rig()
    with r.running_adapter():
        r.chain.sim.unlink("leaf1", 3)
        r.cluster.wait_node("node003", is_ours, 10, "drain of node003")
        r.kill9_ib_agent()
        r.chain.sim.relink("leaf1", 3)
        r.chain.sim.unlink("leaf1", 4)
        r.chain.sim.run_sm_once()
        after = last_event_id(r)
        t0 = time.monotonic()
        r.chain.start_ib_agent()
        down = wait_event(r, after, "link_down", "leaf1", 4)
        up = wait_event(r, after, "link_up", "leaf1", 3)
        for d in (down, up):
            assert oem(d).get("Resync") is True, json.dumps(oem(d))
        assert oem(down).get("Node") == "node004", json.dumps(oem(down))
        info = r.cluster.wait_node("node004", is_ours, 10, "drain of node004 after the restart")
        print(f"  node004 {info['state']} {time.monotonic() - t0:.1f} s after the agent restart: "
              f"{info['reason']!r}", flush=True)
        r.cluster.wait_node("node003", not_drained, STABLE_S + 10, "undrain of node003")
        print(f"  node003 undrained {time.monotonic() - t0:.1f} s after the agent restart",
              flush=True)
        n = map_matches_ibsim(r)
        print(f"  /fabric/map agrees with iblinkinfo on {n} switch ports", flush=True)
        # Exactly one resync event per changed port, none for the others.
        others = [d for d in r.tail.events if int(rec(d).get("EventId", 0)) > after and
                  oem(d).get("Resync") and (oem(d).get("SwitchName"), oem(d).get("Port")) not in
                  (("leaf1", 3), ("leaf1", 4))]
        assert not others, [json.dumps(oem(d)) for d in others]
        assert len(resync_events(r, after, "link_down", "leaf1", 4)) == 1
        r.chain.sim.relink("leaf1", 4)
        r.cluster.wait_node("node004", not_drained, STABLE_S + 10, "undrain of node004")


def switch_failed_or_recovered_while_agent_down():
    r = rig()
    with r.running_adapter():
        r.kill9_ib_agent()
        r.chain.sim.error("leaf1", 100)
        after = last_event_id(r)
        r.chain.start_ib_agent()
        d = wait_event(r, after, "switch_unreachable", "leaf1")
        assert oem(d).get("Resync") is True, json.dumps(oem(d))
        for n in SLURM_NODES:
            r.cluster.wait_node(n, is_ours, 10, f"drain of {n} behind the failed leaf1")
        print(f"  failed while down: {r.cluster.drained()} drained", flush=True)

        # It recovers with the agent up: the agent, which never discovered it,
        # looks for it again and reports it (then it fails again, live).
        after = last_event_id(r)
        t0 = time.monotonic()
        r.chain.sim.error("leaf1", 0)
        wait_event(r, after, "switch_reachable", "leaf1")
        for n in SLURM_NODES:
            r.cluster.wait_node(n, not_drained, STABLE_S + 10, f"undrain of {n}")
        print(f"  recovered with the agent up: undrained {time.monotonic() - t0:.1f} s later",
              flush=True)
        r.chain.sim.error("leaf1", 100)
        for n in SLURM_NODES:
            r.cluster.wait_node(n, is_ours, 10, f"drain of {n} (live)")

        r.kill9_ib_agent()
        r.chain.sim.error("leaf1", 0)
        after = last_event_id(r)
        t0 = time.monotonic()
        r.chain.start_ib_agent()
        d = wait_event(r, after, "switch_reachable", "leaf1")
        assert oem(d).get("Resync") is True, json.dumps(oem(d))
        for n in SLURM_NODES:
            r.cluster.wait_node(n, not_drained, STABLE_S + 10, f"undrain of {n}")
        print(f"  recovered while down: undrained {time.monotonic() - t0:.1f} s after the restart",
              flush=True)
        map_matches_ibsim(r)


def both_killed_cable_restored():
    r = rig()
    with r.running_adapter() as a:
        r.chain.sim.unlink("leaf1", 2)
        r.cluster.wait_node("node002", is_ours, 10, "drain of node002")
        a.kill9()
        r.kill9_ib_agent()
        r.chain.sim.relink("leaf1", 2)
        r.chain.sim.run_sm_once()
        time.sleep(0.5)
        assert is_ours(r.cluster.node("node002")), r.cluster.node("node002")
        t0 = time.monotonic()
        a.start()
        r.wait_ready(a)
        r.chain.start_ib_agent()
        info = r.cluster.wait_node("node002", not_drained, STABLE_S + 10, "undrain of node002")
        print(f"  node002 undrained {time.monotonic() - t0:.1f} s after both restarted: {info}",
              flush=True)


def resync_undoes_a_drain_an_old_agent_left():
    """An agent that does not resync (--no-resync: what every agent did
    before issue 10) is restarted after a cable came back: its topology
    events move the map to "up" without a link_up, so node003 stays drained.
    The next resync by any agent makes fabricbus-slurm compare its drains
    with the map, and node003 is undrained."""
    r = rig()
    with r.running_adapter() as a:
        r.chain.sim.unlink("leaf1", 3)
        r.cluster.wait_node("node003", is_ours, 10, "drain of node003")
        r.kill9_ib_agent()
        r.chain.sim.relink("leaf1", 3)
        r.chain.sim.run_sm_once()
        r.chain.start_ib_agent(extra_args=["--no-resync"])
        time.sleep(STABLE_S + 1.0)
        assert is_ours(r.cluster.node("node003")), \
            f"node003 undrained without a resync? {r.cluster.node('node003')}"
        r.kill9_ib_agent()
        r.chain.sim.unlink("leaf1", 4)  # something for the resync to find
        after = last_event_id(r)
        t0 = time.monotonic()
        r.chain.start_ib_agent()
        wait_event(r, after, "link_down", "leaf1", 4)
        assert not resync_events(r, after, "link_up", "leaf1", 3), "the map already said up"
        r.cluster.wait_node("node003", not_drained, STABLE_S + 10, "undrain of node003")
        print(f"  node003 undrained {time.monotonic() - t0:.1f} s after the resync", flush=True)
        a.wait_log("after an agent's resync", timeout=5)
        r.chain.sim.relink("leaf1", 4)
        r.cluster.wait_node("node004", not_drained, STABLE_S + 10, "undrain of node004")


def cap_counts_only_slurm_nodes():
    r = rig()
    with r.running_adapter(MaxDrainNodes="6"):
        after = last_event_id(r)
        r.chain.sim.error("leaf1", 100)
        for n in SLURM_NODES:
            r.cluster.wait_node(n, is_ours, 15, f"drain of {n}")
        time.sleep(1.0)  # a cap event would follow the drains at once
        caps = [oem(d).get("Text") for d in list(r.tail.events)
                if int(rec(d).get("EventId", 0)) > after and oem(d).get("Kind") == "action" and
                oem(d).get("Text", "").startswith("cap: ")]
        assert not caps, caps
        assert r.cluster.drained() == SLURM_NODES, r.cluster.drained()
        print(f"  leaf1 unreachable, 8 hosts behind it: drained {r.cluster.drained()}, no cap event",
              flush=True)
        r.chain.sim.error("leaf1", 0)
        for n in SLURM_NODES:
            r.cluster.wait_node(n, not_drained, STABLE_S + 15, f"undrain of {n}")
    # A cap that real nodes do exceed names only them.
    with r.running_adapter(MaxDrainNodes="2"):
        after = last_event_id(r)
        r.chain.sim.error("leaf1", 100)
        deadline = time.monotonic() + 15
        while True:
            caps = [d for d in list(r.tail.events)
                    if int(rec(d).get("EventId", 0)) > after and oem(d).get("Kind") == "action" and
                    oem(d).get("Text", "").startswith("cap: ")]
            if caps:
                break
            assert time.monotonic() < deadline, "no cap event with MaxDrainNodes=2"
            time.sleep(0.05)
        o = oem(caps[0])
        print(f"  MaxDrainNodes=2: {o['Text']}", flush=True)
        assert o["Text"] == "cap: 2 nodes drained by fabricbus, limit 2; not draining node[003-004]", o
        assert o["Counters"]["node_count"] == 2, o
        time.sleep(0.5)
        assert r.cluster.drained() == SLURM_NODES[:2], r.cluster.drained()
        r.chain.sim.error("leaf1", 0)
        for n in SLURM_NODES[:2]:
            r.cluster.wait_node(n, not_drained, STABLE_S + 15, f"undrain of {n}")


def rig_stops_clean():
    """Last: fabricbusd and every agent exit 0 with no sanitizer report."""
    RIGS.stop_clean()


ALL = [agent_restart_reports_what_changed_meanwhile, switch_failed_or_recovered_while_agent_down,
       both_killed_cable_restored, resync_undoes_a_drain_an_old_agent_left,
       cap_counts_only_slurm_nodes, rig_stops_clean]


if __name__ == "__main__":
    RIGS.main(ALL, rig_stops_clean)
