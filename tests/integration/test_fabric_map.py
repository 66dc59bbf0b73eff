"""GET /fabric/map and the job registry (POST/DELETE /fabric/jobs) against the
real chain: ibsim fattree46 + opensm once + fabricbusd + node agents at h1..h8
(node001..node008) + fabricbus-agent-ib (tests/lib/chain.py).

fattree46 (tests/lib/topologies/fattree46.net) cables h<k> to leaf1[k] for
k <= 10, so node003 must map to switch "leaf1" port 3. Unlinking leaf1[3]
must show LinkState "down", relinking "up"; a job registered on node003 must
be in the map and stamped on node003's link events as Oem.Fabricbus.Jobs; bad
registrations are refused with 400 naming the parameter; after a broker
restart, before any agent reconnects, the topology part of the map is back
from the journal (the jobs are not: they live in memory only).

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_fabric_map.py [test_name ...]
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

import chain
from chain import FabricChain
from fbtest import run
from test_node import Tail, oem, origin, rec

NODE = "node003"
JOB = "4242"
DS_DOWN = "Fabric.1.0.DownstreamLinkDropped"


def http(broker, method, path, body=None, ctype="application/json"):
    """(status, parsed JSON body or None) of one request to the broker."""
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(f"http://{broker.http_addr}{path}", data=data, method=method)
    if data is not None and ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    return status, (json.loads(raw) if raw.strip() else None)


def fabric_map(broker):
    status, m = http(broker, "GET", "/fabric/map")
    assert status == 200, f"GET /fabric/map: {status} {m}"
    return m


def wait_map(broker, pred, what, timeout=15.0):
    deadline = time.monotonic() + timeout
    m = None
    while time.monotonic() < deadline:
        m = fabric_map(broker)
        if pred(m):
            return m
        time.sleep(0.05)
    raise AssertionError(f"/fabric/map never showed {what} within {timeout}s; last:\n"
                         f"{json.dumps(m, indent=1)[:4000]}")


def ib_port(m, node):
    ports = [p for p in m["Nodes"].get(node, {}).get("Ports", []) if p["Technology"] == "IB"]
    return ports[0] if ports else None


def link_state_is(node, state):
    sw, swport = chain.host_port(node)

    def pred(m):
        p = ib_port(m, node)
        return (p is not None and p.get("Switch") == sw and p.get("SwitchPort") == swport
                and p.get("LinkState") == state)
    return pred


def check_map_shape(m, want_guids):
    """node001..node008 on leaf1[1..8], every key as docs/fabric-map.md says."""
    assert m["Fabric"] == chain.FABRIC, m["Fabric"]
    assert isinstance(m["LastEventId"], int) and m["LastEventId"] > 0, m["LastEventId"]
    leaf_guid = None
    for guid, node in want_guids.items():
        p = ib_port(m, node)
        sw, swport = chain.host_port(node)
        assert p is not None, f"{node} has no IB port in the map: {json.dumps(m['Nodes'].get(node))}"
        assert p["Device"] == "ibsim0" and p["Port"] == 1, p
        assert int(p["PortGUID"], 16) == guid, (p, hex(guid))
        assert p["PortGUID"] == f"0x{guid:016x}", p["PortGUID"]
        assert p["NodeGUID"].startswith("0x") and len(p["NodeGUID"]) == 18, p
        assert isinstance(p["LID"], int) and p["LID"] > 0, p
        assert p["Switch"] == sw and p["SwitchPort"] == swport, f"{node}: {p}"
        assert p["SwitchGUID"].startswith("0x") and len(p["SwitchGUID"]) == 18, p
        leaf_guid = leaf_guid or p["SwitchGUID"]
        assert p["SwitchGUID"] == leaf_guid, p
    leaf = m["Switches"][leaf_guid]
    assert leaf["Name"] == "leaf1" and leaf["Reachable"] is True, leaf
    want_hosts = sorted(want_guids.values())
    assert leaf["Hosts"] == want_hosts, f"leaf1 Hosts {leaf['Hosts']} != {want_hosts}"
    assert all(sw_["Name"] for sw_ in m["Switches"].values()), m["Switches"]
    return leaf_guid


def expect_refused(broker, body, param, status=400, ctype="application/json"):
    got, doc = http(broker, "POST", "/fabric/jobs", body, ctype)
    assert got == status and doc and doc.get("parameter") == param, \
        f"POST {body!r}: want {status} naming {param}, got {got} {doc}"
    print(f"  refused {body[:60]!r}: {got} {doc.get('parameter')}: {doc.get('detail')}", flush=True)


def link_event(node, message_id):
    sw, swport = chain.host_port(node)
    path = f"/redfish/v1/Fabrics/{chain.FABRIC}/Switches/{sw}/Ports/{swport}"
    return lambda d: rec(d).get("MessageId") == message_id and origin(d) == path and \
        oem(d).get("Kind") in ("link_down", "link_up")


# ---------------------------------------------------------------------------


def fabric_map_follows_links_and_jobs():
    ch = FabricChain()
    tail = None
    ok = False
    try:
        ch.start()
        br = ch.broker
        sw, swport = chain.host_port(NODE)
        m = wait_map(br, lambda m: all(ib_port(m, n) and "Switch" in ib_port(m, n)
                                       for n in ch.want.values()) and link_state_is(NODE, "up")(m),
                     "every node on its switch port")
        leaf_guid = check_map_shape(m, ch.want)
        print(f"  {NODE} -> {sw} ({leaf_guid}) port {swport}: {json.dumps(ib_port(m, NODE))}",
              flush=True)
        assert m["Nodes"][NODE]["Jobs"] == [], m["Nodes"][NODE]

        tail = Tail(br.http_addr, os.path.join(br.workdir, "tail.err"))
        reg = json.dumps({"JobId": JOB, "User": "alice", "Nodes": [NODE, "node004"]})
        assert http(br, "POST", "/fabric/jobs", reg) == (201, {"JobId": JOB, "Nodes": 2})
        assert http(br, "POST", "/fabric/jobs", reg) == (200, {"JobId": JOB, "Nodes": 2})
        wait_map(br, lambda m: m["Nodes"][NODE]["Jobs"] == [JOB], f"{NODE} running job {JOB}")

        n0 = len(tail.events)
        ch.sim.unlink(sw, swport)
        wait_map(br, link_state_is(NODE, "down"), f"{NODE} LinkState down")
        d = tail.wait_for(link_event(NODE, DS_DOWN), timeout=10, what=f"{DS_DOWN} for {NODE}")
        print(f"  {DS_DOWN}: Node={oem(d).get('Node')} Jobs={oem(d).get('Jobs')}", flush=True)
        assert oem(d).get("Node") == NODE and oem(d).get("Jobs") == [JOB], json.dumps(oem(d))
        assert tail.events.index(d) >= n0, "the link_down came before the unlink"
        ch.sim.relink(sw, swport)
        wait_map(br, link_state_is(NODE, "up"), f"{NODE} LinkState up again")
        d = tail.wait_for(lambda d: oem(d).get("Kind") == "link_up" and oem(d).get("Node") == NODE,
                          timeout=10, what=f"link_up for {NODE}")
        assert oem(d).get("Jobs") == [JOB], json.dumps(oem(d))

        assert http(br, "DELETE", f"/fabric/jobs/{JOB}") == (204, None)
        assert http(br, "DELETE", f"/fabric/jobs/{JOB}") == (204, None)  # idempotent
        wait_map(br, lambda m: m["Nodes"][NODE]["Jobs"] == [] and "node004" in m["Nodes"] and
                 m["Nodes"]["node004"]["Jobs"] == [], f"job {JOB} gone")
        n0 = len(tail.events)
        ch.sim.unlink(sw, swport)
        d = tail.wait_for(lambda d: link_event(NODE, DS_DOWN)(d) and tail.events.index(d) >= n0,
                          timeout=10, what=f"a second {DS_DOWN} for {NODE}")
        assert "Jobs" not in oem(d), f"job still stamped after DELETE: {json.dumps(oem(d))}"
        ch.sim.relink(sw, swport)
        wait_map(br, link_state_is(NODE, "up"), f"{NODE} LinkState up at the end")

        expect_refused(br, '{"JobId":"12x","User":"alice","Nodes":["node003"]}', "JobId")
        expect_refused(br, '{"JobId":12,"User":"alice","Nodes":["node003"]}', "JobId")
        expect_refused(br, '{"JobId":"12","Nodes":["node003"]}', "User")
        expect_refused(br, '{"JobId":"12","User":"a b","Nodes":["node003"]}', "User")
        expect_refused(br, '{"JobId":"12","User":"alice","Nodes":[]}', "Nodes")
        expect_refused(br, '{"JobId":"12","User":"alice","Nodes":["node003","node003"]}', "Nodes")
        expect_refused(br, '{"JobId":"12","User":"alice","Nodes":["n' + "x" * 63 + '"]}', "Nodes")
        expect_refused(br, '{"JobId":"12","User":"alice","Nodes":["node003"],"Extra":1}', "body")
        expect_refused(br, '{"JobId":"12","JobId":"13","User":"a","Nodes":["n"]}', "body")
        expect_refused(br, 'not json', "body")
        expect_refused(br, '{"JobId":"12","User":"alice","Nodes":["node003"]}', "Content-Type",
                       status=415, ctype="text/plain")
        assert http(br, "DELETE", "/fabric/jobs/12abc")[0] == 400
        assert http(br, "GET", "/fabric/jobs")[0] == 405
        assert http(br, "GET", "/fabric/nothing")[0] == 404
        m = fabric_map(br)
        assert all(n["Jobs"] == [] for n in m["Nodes"].values()), "a refused job got in"
        st = br.status()["broker"]["fabric_map"]
        print(f"  /status fabric_map: {st}", flush=True)
        assert st["nodes"] >= 8 and st["switches"] >= 4 and st["switch_ports"] > 8, st
        assert st["jobs"] == 0, st
        ok = True
    finally:
        if tail:
            tail.stop()
        ch.stop(check=ok)
    check_broker_log(ch)


def check_broker_log(ch):
    """No sanitizer report from fabricbusd (UBSan goes on after one)."""
    out = ch.broker.log()
    for bad in ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"):
        assert bad not in out, f"sanitizer report from fabricbusd:\n{out[-3000:]}"


def stop_agents(ch):
    """Stop every agent but keep the sim and the broker (chain.py's own
    stop() takes everything down)."""
    if ch.ib is not None:
        ch._stop_client(ch.ib, "agent-ib.log", True)
        ch.ib = None
    for node, p in ch.agents:
        ch._stop_client(p, f"node-{node}.log", True)
    ch.agents = []


def fabric_map_topology_survives_broker_restart():
    ch = FabricChain()
    ok = False
    try:
        ch.start()
        br = ch.broker
        wait_map(br, lambda m: all(ib_port(m, n) and "Switch" in ib_port(m, n)
                                   for n in ch.want.values()), "every node on its switch port")
        reg = json.dumps({"JobId": JOB, "User": "alice", "Nodes": [NODE]})
        assert http(br, "POST", "/fabric/jobs", reg)[0] == 201
        before = wait_map(br, lambda m: m["Nodes"][NODE]["Jobs"] == [JOB], "the job")
        stop_agents(ch)  # nobody can re-report after the restart
        assert br.stop() == 0, br.log()[-3000:]
        br.start()
        m = fabric_map(br)  # the first request, before any agent could connect
        st = br.status()
        assert not any(a["connected"] for a in st["broker"]["agents"]), st["broker"]["agents"]
        check_map_shape(m, ch.want)
        assert link_state_is(NODE, "up")(m), json.dumps(ib_port(m, NODE))
        assert m["Switches"] == before["Switches"], "switches differ after the restart"
        for n in ch.want.values():
            a, b = dict(ib_port(before, n)), dict(ib_port(m, n))
            assert a == b, f"{n}: {a} before, {b} after the restart"
        assert m["Nodes"][NODE]["Jobs"] == [], "jobs are in memory only"
        assert m["LastEventId"] >= before["LastEventId"], (m["LastEventId"], before["LastEventId"])
        print(f"  after restart: {len(m['Nodes'])} nodes, {len(m['Switches'])} switches "
              f"from the journal", flush=True)
        ok = True
    finally:
        ch.stop(check=ok)
    check_broker_log(ch)


ALL = [fabric_map_follows_links_and_jobs, fabric_map_topology_survives_broker_restart]

if __name__ == "__main__":
    names = sys.argv[1:]
    tests = [t for t in ALL if not names or t.__name__ in names]
    run(*tests)
