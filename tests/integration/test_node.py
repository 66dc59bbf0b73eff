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
interface is removed by name at exit). Taken down while the agent is killed, and up while it
is killed again, each restart must report the change, marked Resync (the agent's diff against
/fabric/map's NodeLinkState).

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_node.py [test_name ...]
"""
import atexit
import contextlib
import json
import os
import subprocess
import time
import urllib.request

from fbtest import Broker, Tail, check_redfish_event, main, oem, origin, rec, track
import ibsim
from chain import FABRIC, NODE_AGENT, FabricChain, inventory_complete
from test_http_auth import request as http_request
from test_http_auth import sec as http_secrets
DS_DOWN = "Fabric.1.0.DownstreamLinkDropped"
DUMMY = "fbtveth0"  # a veth pair in this namespace; the peer is fbtveth1
DUMMY_PEER = "fbtveth1"


# ---------------------------------------------------------------------------


def node_inventory_names_switch_events():
    r = FabricChain(ib_agent=False)
    tail = ib = None
    ok = False
    try:
        st = r.start().broker.status()
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

        r.interval_ms = 200
        r.start_ib_agent()  # returns after its first poll rounds
        ib, r.ib = r.ib, None
        tail.wait_for(lambda d: oem(d).get("AgentId") == "ib-sw" and oem(d).get("Kind") == "topology",
                      timeout=30, what="the switch agent's topology")
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
    r = FabricChain(ib_agent=False)
    ok = False
    try:
        r.start()
        r.stop_node_agents()  # nobody can re-report after the restart
        assert r.broker.stop() == 0, r.broker.log()[-3000:]
        r.broker.start()
        st = r.broker.status()  # the first status, before any agent connects
        assert not any(a["connected"] for a in st["broker"]["agents"]), st["broker"]["agents"]
        assert inventory_complete(st, r.want), f"map not rebuilt from the journal: {json.dumps(st['broker']['inventory'])[:2000]}"
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


def _eth_agent(broker, log_path, extra=()):
    with open(log_path, "ab") as log:
        return track(subprocess.Popen([NODE_AGENT, "--broker", broker.agent_addr, "--map",
                                       broker.http_addr, "--agent-id", "node-eth", "--node-name",
                                       "ethnode", "--no-ib", *extra], stdout=log,
                                      stderr=subprocess.STDOUT))


def _mine(kind, after=0):
    return lambda d: (oem(d).get("Kind") == kind and oem(d).get("Node") == "ethnode" and
                      origin(d).endswith("/NetworkInterfaces/" + DUMMY) and
                      int(rec(d).get("EventId", 0)) > after)


def _last_id(tail):
    return max([int(rec(d).get("EventId", 0)) for d in list(tail.events)] or [0])


def _check_stopped(agent, log_path):
    agent.terminate()
    rc = agent.wait(timeout=10)
    with open(log_path, errors="replace") as f:
        out = f.read()
    assert rc == 0, f"node agent exited with {rc}:\n{out[-3000:]}"
    assert "runtime error:" not in out and "Sanitizer" not in out, out[-3000:]


@contextlib.contextmanager
def _veth_broker(secrets=None):
    """A veth pair (both ends up), a broker and a tail; everything removed
    after, and the broker must exit 0 when the body did not fail. With
    secrets (test_http_auth.Secrets): logins on and HTTPS only, the tail
    with the viewer's token."""
    if os.geteuid() != 0:
        raise AssertionError("needs root to create a veth pair")
    _remove_dummy()
    atexit.register(_remove_dummy)
    _ip("link", "add", DUMMY, "type", "veth", "peer", "name", DUMMY_PEER)
    _ip("link", "set", "dev", DUMMY_PEER, "up")
    _ip("link", "set", "dev", DUMMY, "up")
    if secrets:
        broker = secrets.broker(tls="required", FabricName=FABRIC).start()
        extra = ["--token-file", secrets.path("viewer.token"), "--tls-ca", secrets.path("ca.pem")]
    else:
        broker, extra = Broker(FabricName=FABRIC).start(), []
    tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"), extra)
    ok = False
    try:
        yield broker, tail
        ok = True
    finally:
        tail.stop()
        rc = broker.stop()
        _remove_dummy()
        if ok:
            assert rc == 0, broker.log()[-3000:]


def node_eth_link_down_up_events():
    with _veth_broker() as (broker, tail):
        log_path = os.path.join(broker.workdir, "node-eth.log")
        agent = _eth_agent(broker, log_path)
        try:
            d = tail.wait_for(_mine("inventory"), timeout=15, what=f"{DUMMY} inventory")
            mac = oem(d).get("Address") or ""
            broker.wait_status(lambda st: any(p.get("device") == DUMMY and p.get("node") == "ethnode"
                                              for p in st["broker"]["inventory"]["ports"]),
                               timeout=10)
            print(f"  {DUMMY} inventory ok (oem address {mac!r})", flush=True)
            t0 = time.monotonic()
            _ip("link", "set", "dev", DUMMY, "down")
            d = tail.wait_for(_mine("link_down"), timeout=10, what=f"{DUMMY} link_down")
            print(f"  link_down after {(time.monotonic() - t0) * 1000:.0f} ms: "
                  f"{rec(d)['MessageId']}", flush=True)
            check_redfish_event(d)
            assert oem(d).get("LinkClass") == "node", json.dumps(oem(d))
            assert rec(d)["MessageId"] == "NetworkDevice.1.1.ConnectionDropped", rec(d)["MessageId"]
            assert "Resync" not in oem(d), json.dumps(oem(d))
            _ip("link", "set", "dev", DUMMY, "up")
            d = tail.wait_for(_mine("link_up"), timeout=10, what=f"{DUMMY} link_up")
            assert oem(d).get("LinkClass") == "node", json.dumps(oem(d))
            _check_stopped(agent, log_path)
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()


def _node_link_state(broker, secrets=None):
    if secrets:
        st, _, body = http_request(broker, "GET", "/fabric/map?nodes=ethnode",
                                   token=secrets.tokens["viewer"], ctx=secrets.ctx())
        assert st == 200, (st, body)
        m = json.loads(body)
    else:
        with urllib.request.urlopen(f"http://{broker.http_addr}/fabric/map?nodes=ethnode",
                                    timeout=10) as f:
            m = json.load(f)
    ports = [p for p in m["Nodes"].get("ethnode", {}).get("Ports", []) if p["Device"] == DUMMY]
    return ports[0].get("NodeLinkState") if ports else None


def _wait_node_link_state(broker, want, secrets=None):
    deadline = time.monotonic() + 10
    while _node_link_state(broker, secrets) != want:
        assert time.monotonic() < deadline, \
            f"NodeLinkState of {DUMMY} is {_node_link_state(broker, secrets)!r}, want {want!r}"
        time.sleep(0.05)


def node_eth_resync_after_restart():
    """The interface goes down while the node agent is killed, and up while it
    is killed again: each restart reports the change (Resync), and
    /fabric/map's NodeLinkState follows."""
    with _veth_broker() as (broker, tail):
        log_path = os.path.join(broker.workdir, "node-eth.log")
        agent = _eth_agent(broker, log_path)
        try:
            tail.wait_for(_mine("inventory"), timeout=15, what=f"{DUMMY} inventory")
            _wait_node_link_state(broker, "up")
            for change, kind, state in (("down", "link_down", "down"), ("up", "link_up", "up")):
                agent.kill()
                agent.wait()
                _ip("link", "set", "dev", DUMMY, change)
                after = _last_id(tail)
                agent = _eth_agent(broker, log_path)
                d = tail.wait_for(_mine(kind, after), timeout=15, what=f"{DUMMY} {kind} at resync")
                check_redfish_event(d)
                assert oem(d).get("Resync") is True, json.dumps(oem(d))
                assert oem(d).get("LinkClass") == "node", json.dumps(oem(d))
                _wait_node_link_state(broker, state)
                print(f"  {change} while the agent was down: {rec(d)['MessageId']} "
                      f"(Resync), NodeLinkState {state}", flush=True)
            time.sleep(1.5)  # the agent's second pass (a second after its start) repeats nothing
            # One per change (its veth peer follows it down and up: its own two).
            n = [d for d in list(tail.events) if oem(d).get("Resync") and _mine(oem(d)["Kind"])(d)]
            assert len(n) == 2, [json.dumps(oem(d)) for d in n]
            _check_stopped(agent, log_path)
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()

def node_eth_resync_with_broker_token():
    """A broker with logins on (HttpTokens) and HTTPS only: without
    --broker-token-file the agent's GET /fabric/map gets 401 and its log says
    to give the option; with it and --broker-tls-ca, a change made while the
    agent was killed is reported at its restart (Resync)."""
    s = http_secrets()
    with _veth_broker(s) as (broker, tail):
        log_path = os.path.join(broker.workdir, "node-eth.log")
        ca = ["--broker-tls-ca", s.path("ca.pem")]
        agent = _eth_agent(broker, log_path, ca)
        try:
            tail.wait_for(_mine("inventory"), timeout=15, what=f"{DUMMY} inventory")
            want = "HTTP 401 (the broker wants a login: give --broker-token-file)"
            deadline = time.monotonic() + 30
            while want not in open(log_path, errors="replace").read():
                assert time.monotonic() < deadline, open(log_path, errors="replace").read()[-3000:]
                time.sleep(0.05)
            _check_stopped(agent, log_path)
            mark = len(open(log_path, errors="replace").read())
            auth = ca + ["--broker-token-file", s.path("viewer.token")]
            agent = _eth_agent(broker, log_path, auth)
            _wait_node_link_state(broker, "up", s)
            agent.kill()
            agent.wait()
            _ip("link", "set", "dev", DUMMY, "down")
            after = _last_id(tail)
            agent = _eth_agent(broker, log_path, auth)
            d = tail.wait_for(_mine("link_down", after), timeout=15,
                              what=f"{DUMMY} link_down at resync")
            assert oem(d).get("Resync") is True, json.dumps(oem(d))
            _wait_node_link_state(broker, "down", s)
            _check_stopped(agent, log_path)
            with open(log_path, errors="replace") as f:
                out = f.read()[mark:]
            assert "HTTP 401" not in out and "resync: GET" not in out, out[-3000:]
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()


ALL = [node_inventory_names_switch_events, node_inventory_survives_broker_restart,
       node_eth_link_down_up_events, node_eth_resync_after_restart,
       node_eth_resync_with_broker_token]

if __name__ == "__main__":
    main(ALL)
