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
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPConnection

import chain
from chain import FabricChain
from fbtest import Broker, assert_no_sanitizer_report, main, wait_for
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
    return wait_for(lambda: fabric_map(broker), pred, timeout, f"/fabric/map never showed {what}",
                    show=lambda m: json.dumps(m, indent=1))


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


def filtered_map(broker, expr):
    """(status, body) of GET /fabric/map?nodes=<expr>, percent-encoded."""
    return http(broker, "GET", "/fabric/map?nodes=" + urllib.parse.quote(expr, safe=","))


def check_filtered_down(br, full):
    """?nodes=node003 right after the unlink: only node003, down, and leaf1
    only, each exactly as the whole map has it."""
    status, m = filtered_map(br, NODE)
    assert status == 200, (status, m)
    p = ib_port(m, NODE)
    assert list(m["Nodes"]) == [NODE] and p["LinkState"] == "down", json.dumps(m)[:2000]
    assert list(m["Switches"]) == [p["SwitchGUID"]], list(m["Switches"])
    assert m["Switches"][p["SwitchGUID"]]["Name"] == "leaf1", m["Switches"]
    assert m["Missing"] == [] and m["MissingCount"] == 0, m
    assert m["Fabric"] == full["Fabric"], (m["Fabric"], full["Fabric"])
    status, m2 = filtered_map(br, "node[003-004],ghost[1-2]")
    assert status == 200 and sorted(m2["Nodes"]) == [NODE, "node004"], (status, m2)
    assert m2["Missing"] == ["ghost1", "ghost2"] and m2["MissingCount"] == 2, m2
    print(f"  ?nodes={NODE}: {len(json.dumps(m))} bytes, whole map {len(json.dumps(full))}",
          flush=True)


def check_filter_refusals(br):
    for expr, why in (("n[3-1]", "reversed range"), ("n[1-2", "never closed"),
                      ("a,,b", "empty name"), ("n[1-70000]", "more than 65536")):
        status, doc = filtered_map(br, expr)
        assert status == 400 and doc["parameter"] == "nodes" and why in doc["detail"], \
            f"?nodes={expr}: want 400 naming nodes ({why}), got {status} {doc}"
        print(f"  ?nodes={expr}: {status} {doc['detail']}", flush=True)
    status, doc = http(br, "GET", "/fabric/map?node=node003")
    assert status == 400 and doc["parameter"] == "node", (status, doc)


# Each expanded by the broker (names absent from the map come back sorted
# and unique under "Missing") and by Slurm's own hostlist code.
HOSTLISTS = ["zz[001-003,007],gpu[1-2],login1", "r[1-2]n[01-02]", "a[9-11]", "a[09-11]",
             "b1,a1,b1", "n[1-2]-[3-4]", "n[001-2]", "n[7]", "node1-[2-3]", "n[0-3]x[1-2]",
             "n[1,2-3,5]", "n[00-01]", "n[98-100]", "[1-2]"]


def check_hostlists_against_scontrol(br):
    scontrol = shutil.which("scontrol")
    assert scontrol, "scontrol not found (slurm-client)"
    with tempfile.TemporaryDirectory(prefix="fb-hl-") as d:
        conf = os.path.join(d, "slurm.conf")
        with open(conf, "w") as f:  # enough for `show hostnames`, no controller asked
            f.write("ClusterName=x\nSlurmctldHost=localhost\nNodeName=n1\n"
                    "PartitionName=p Nodes=n1\n")
        env = dict(os.environ, SLURM_CONF=conf)
        for expr in HOSTLISTS:
            want = subprocess.run([scontrol, "show", "hostnames", expr], env=env, check=True,
                                  capture_output=True, text=True).stdout.split()
            status, m = filtered_map(br, expr)
            assert status == 200, (expr, status, m)
            assert m["Missing"] == sorted(set(want)) and m["Nodes"] == {}, \
                f"{expr}: broker {m['Missing']}, scontrol {want}"
    print(f"  {len(HOSTLISTS)} hostlists expand as scontrol show hostnames does", flush=True)


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
        full = wait_map(br, link_state_is(NODE, "down"), f"{NODE} LinkState down")
        check_filtered_down(br, full)
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
        check_filter_refusals(br)
        check_hostlists_against_scontrol(br)
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
    assert_no_sanitizer_report(out, "fabricbusd")


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


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(x.split()[1]) // 1024 for x in f if x.startswith("VmRSS:"))


def read_response(sock, pause_after=None, pause_s=0.0):
    """(headers, body) of one HTTP/1.1 response with a Content-Length, read
    whole from sock (optionally pausing once pause_after body bytes are in)."""
    data, paused = b"", False
    while b"\r\n\r\n" not in data:
        d = sock.recv(65536)
        assert d, f"closed inside the header: {data[:200]!r}"
        data += d
    head, _, body = data.partition(b"\r\n\r\n")
    clen = int(next(x.split(b":", 1)[1] for x in head.split(b"\r\n")
                    if x.lower().startswith(b"content-length:")))
    while len(body) < clen:
        if pause_after is not None and not paused and len(body) >= pause_after:
            paused = True
            time.sleep(pause_s)
        d = sock.recv(1 << 20)
        assert d, f"the broker closed after {len(body)} of {clen} body bytes"
        body += d
    return head, body


def fabric_map_streams_to_slow_and_stalled_readers():
    """A big map (two 65536-node registrations, ~10 MB) goes whole to a reader
    that pauses for longer than lws's keep-alive timeout (it used to be cut
    off after ~5 s), to two requests on one keep-alive connection, and 40
    readers that take nothing cost the broker a chunk each, not a copy of
    the map each (they used to cost ~40 x 10 MB)."""
    br = Broker(JobNodesMax=65536).start()
    ok = False
    socks = []
    try:
        for j in (1, 2):
            nodes = [f"n{j}-" + "x" * 40 + f"-{i:06d}" for i in range(65536)]
            req = urllib.request.Request(
                f"http://{br.http_addr}/fabric/jobs", method="POST",
                data=json.dumps({"JobId": str(j), "User": "u", "Nodes": nodes}).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                assert r.status == 201, r.status
        size = 0
        deadline = time.monotonic() + 30
        while size < 10_000_000:  # the refresh after both registrations
            assert time.monotonic() < deadline, f"map still {size} bytes"
            time.sleep(0.2)
            with urllib.request.urlopen(f"http://{br.http_addr}/fabric/map", timeout=60) as r:
                size = len(r.read())

        with socket.create_connection(("127.0.0.1", br.http_port)) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            s.sendall(b"GET /fabric/map HTTP/1.1\r\nHost: x\r\n\r\n")
            t0 = time.monotonic()
            _, body = read_response(s, pause_after=1 << 20, pause_s=8.0)
            m = json.loads(body)
            assert len(m["Nodes"]) == 2 * 65536, len(m["Nodes"])
            print(f"  {len(body) / 1e6:.1f} MB map to a reader pausing 8 s: whole, "
                  f"{time.monotonic() - t0:.1f} s", flush=True)

        c = HTTPConnection("127.0.0.1", br.http_port, timeout=60)
        for _ in range(2):
            c.request("GET", "/fabric/map")
            r = c.getresponse()
            assert r.status == 200 and len(r.read()) == len(body)
        c.close()

        before = rss_mb(br.proc.pid)
        for _ in range(40):
            s = socket.create_connection(("127.0.0.1", br.http_port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b"GET /fabric/map HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
        time.sleep(3)
        grown = rss_mb(br.proc.pid) - before
        print(f"  40 readers taking nothing: broker RSS +{grown} MB", flush=True)
        assert grown < 64, f"40 stalled readers cost {grown} MB (a copy of the map each?)"
        for s in socks:
            s.close()
        socks = []
        assert len(fabric_map(br)["Nodes"]) == 2 * 65536
        ok = True
    finally:
        for s in socks:
            s.close()
        rc = br.stop()
    assert rc == 0, br.log()[-3000:]
    out = br.log()
    assert_no_sanitizer_report(out, "fabricbusd")
    assert ok


ALL = [fabric_map_follows_links_and_jobs, fabric_map_topology_survives_broker_restart,
       fabric_map_streams_to_slow_and_stalled_readers]

if __name__ == "__main__":
    main(ALL)
