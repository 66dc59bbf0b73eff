"""fabricbusd as an agent of a real OFMF core (issue 11, "OFMF registration").

Real parts: the OpenFabrics Sunfish reference core (tests/lib/ofmf.py, from
FB_OFMF_CORE or ../shared/ofmf), ibsim fattree46 brought up by opensm -o,
fabricbusd with OfmfCore set, four node agents and the IB agent
(tests/lib/chain.py), and a subscriber of the core: an HTTP receiver on
127.0.0.1 that the core forwards events to.

What it proves, one test each, in order on one rig:
- registers_and_core_crawls_the_fabric: fabricbusd registers (one
  AggregationSource on the core with our base URL as HostName and our
  ConnectionMethod), the core's crawl lists our fabric, switches, ports and
  endpoints in ResourcesAccessed and serves each of them, and the Context the
  core gave is in JournalDir/ofmf.state.
- unlink_reaches_the_core_subscriber_with_our_context: ibsim `Unlink` of
  leaf1[3]: the link event on that switch port reaches the core's subscriber,
  forwarded by the core, with our Context.
- new_switch_after_registration_reaches_the_core: an event from a switch
  no agent had reported before (published by a test agent after the
  registration and crawl) reaches the core's subscriber with our Context,
  and the core then holds its port (fabricbusd announced it).
- refused_event_does_not_block_the_next: an event about a node our tree
  does not have (published by a test agent), which the core refuses by
  closing the connection (it cannot crawl a 404), is announced, then dropped
  as undeliverable (counted in /status, logged); the Unlink of leaf1[5]
  committed after it still reaches the core's subscriber (with
  RetryForever it used to hold every later event).
- survives_a_broker_restart: fabricbusd stopped and started (same journal):
  it resumes with the saved Context (no second discovery, which the core
  would answer 409), the core still lists one source of ours, and the next
  Unlink arrives with the same Context.
- survives_a_core_restart: the core restarted (it forgets every agent and
  subscriber): fabricbusd notices within its check interval, registers
  again, the core crawls the fabric again, and an Unlink reaches the
  re-subscribed subscriber with the new Context.
- lost_state_file_adopts_after_409: fabricbusd restarted without
  JournalDir/ofmf.state: its discovery gets 409, it adopts its own
  AggregationSource from the core (same Context, no second source).
- second_broker_with_our_id_is_a_conflict: a second broker with our
  OfmfConnectionMethodId gets 409 and reports a conflict naming the id and
  our URL; ours stays registered.
- core_patch_refused_with_accounts: with RedfishAccounts and
  RedfishAnonymousReads=yes the core's (credential-less) PATCH of our Context
  gets 401; fabricbusd adopts its AggregationSource from the core instead.

Skips (exit 77) with the reason when the core, ibsim, or what the broker
needs for it (its Redfish tree, its push client) is not there.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_ofmf.py [test_name ...]
"""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import fbtest
import ibsim
import ofmf
from chain import FABRIC, FabricChain
from fbtest import FABRICBUSD

CHECK_S = 1.0   # OfmfCheckInterval: how soon a restarted core is noticed
CRAWL_S = 60.0  # registration + the core's crawl (it GETs one path at a time)
SOURCES = "/redfish/v1/AggregationService/AggregationSources"
FABRIC_PATH = f"/redfish/v1/Fabrics/{FABRIC}"
EVENT_PREFIXES = ["Fabric", "NetworkDevice", "ResourceEvent"]


def skip(why):
    print(f"SKIP: {why}", flush=True)
    sys.exit(77)


def http_get(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError as e:
        return None, str(e).encode()


def accessed(src):
    """The paths in an AggregationSource's ResourcesAccessed (the reference
    core lists bare strings; Redfish says {"@odata.id": ...})."""
    return [x if isinstance(x, str) else x["@odata.id"]
            for x in src["Links"].get("ResourcesAccessed", [])]


def prerequisites():
    """Skip, saying what is missing, unless every part is here."""
    why = ofmf.available()
    if why:
        skip(why)
    why = ibsim.available()
    if why:
        skip(f"ibsim not installed ({why}): run deploy/install-deps.sh")
    keys = subprocess.run([FABRICBUSD, "--help-config"], capture_output=True, text=True).stdout
    if "OfmfCore" not in keys:
        skip("fabricbusd has no OfmfCore key (broker/ofmf not built in)")
    # The core calls back into our Redfish service (ConnectionMethod, the
    # SunfishServer subscription, the crawl): a broker without it cannot
    # register, whatever the registration logic does.
    b = fbtest.Broker().start()
    try:
        root, _ = http_get(f"http://{b.http_addr}/redfish/v1/")
        subs, _ = http_get(f"http://{b.http_addr}/redfish/v1/EventService/Subscriptions")
    finally:
        b.stop()
    if root != 200:
        skip(f"fabricbusd serves no Redfish tree yet (GET /redfish/v1/ -> {root}): "
             "needs branch rf-tree merged")
    if subs != 200:
        skip(f"fabricbusd has no EventService subscriptions yet (-> {subs}): "
             "needs branch rf-push (subscription store, fb_hc) merged")


class Rig:
    def __init__(self):
        self.core = ofmf.Core()
        self.sub = ofmf.Subscriber()
        self.chain = None
        self.base = None

    def start(self):
        self.core.start()
        self.sub.start()
        self.sub.subscribe(self.core, RegistryPrefixes=EVENT_PREFIXES)
        # A new port's event may reach the core before its ResourceCreated
        # crawl; the push engine retries it after this.
        self.chain = FabricChain(hosts=4, OfmfCore=self.core.url,
                                 OfmfCheckInterval=f"{int(CHECK_S * 1000)}ms",
                                 RedfishDeliveryRetryInterval="1s")
        self.chain.start()
        self.base = f"http://{self.chain.broker.http_addr}"
        return self

    def state_file(self):
        text = fbtest.read_text(os.path.join(self.chain.broker.workdir, "journal", "ofmf.state"))
        return dict(line.split("=", 1) for line in text.splitlines()
                    if "=" in line and not line.startswith("#"))

    def ours(self):
        """The core's AggregationSources whose HostName is our base URL."""
        return {i: s for i, s in self.core.sources().items() if s.get("HostName") == self.base}

    def wait_registered(self, not_context=None, timeout=CRAWL_S):
        """Until the core holds exactly one source of ours (with a Context
        other than not_context) and its crawl reached switches, ports and
        endpoints; returns that source."""
        def crawled(ours):
            if len(ours) != 1:
                return False
            (sid, src), = ours.items()
            got = accessed(src)
            return (sid != not_context and FABRIC_PATH in got
                    and any("/Switches/" in p and "/Ports/" not in p for p in got)
                    and any("/Ports/" in p for p in got)
                    and any("/Endpoints/" in p for p in got))
        ours = fbtest.wait_for(self.ours, crawled, timeout, "our AggregationSource, crawled",
                               interval=0.5, show=json.dumps)
        return next(iter(ours.values()))

    def unlink_reaches_subscriber(self, port, context, timeout=30):
        """Unlink leaf1[port]; the core's subscriber gets the event on that
        switch port with our Context."""
        mark = self.sub.mark()
        self.chain.sim.unlink("leaf1", port)

        def on_port(doc):
            ev = (doc.get("Events") or [{}])[0]
            o = ev.get("OriginOfCondition", {}).get("@odata.id", "")
            return (o.startswith(FABRIC_PATH + "/Switches/") and o.endswith(f"/Ports/{port}")
                    and ev.get("MessageId", "").split(".")[0] in ("Fabric", "NetworkDevice"))
        doc = self.sub.wait_for(on_port, timeout, f"the Unlink of leaf1[{port}] at the core's "
                                "subscriber", start=mark)
        assert doc.get("Context") == context, \
            f"forwarded with Context {doc.get('Context')!r}, expected {context!r}: {doc}"
        return doc

    def stop(self):
        if self.chain is not None:
            self.chain.stop()
        self.core.stop()
        self.sub.stop()


RIG = None
STATE = {}


def rig():
    global RIG
    if RIG is None:
        RIG = Rig().start()
    return RIG


def registers_and_core_crawls_the_fabric():
    r = rig()
    src = r.wait_registered()
    cm = src["Links"]["ConnectionMethod"]["@odata.id"]
    assert cm.startswith("/redfish/v1/AggregationService/ConnectionMethods/fabricbus-"), cm
    for p in accessed(src):
        if "#" in p:
            continue
        st, doc = r.core.get(p)
        assert st == 200, f"the core lists {p} but does not serve it: {st} {doc}"
    state = r.state_file()
    assert state.get("context") == src["Id"], f"ofmf.state {state}, the core's source {src['Id']}"
    assert state.get("connection_method") == cm, state
    STATE["context"] = src["Id"]
    print(f"  registered as {src['Id']}, {len(accessed(src))} resources crawled", flush=True)


def unlink_reaches_the_core_subscriber_with_our_context():
    r = rig()
    r.unlink_reaches_subscriber(3, STATE["context"])


NEW_GUID = "0x00deadbeef000001"  # no such switch in fattree46
GHOST_NODE = "ghostnode"          # nor such a node


def on_origin(pred):
    def match(doc):
        ev = (doc.get("Events") or [{}])[0]
        return pred(ev.get("OriginOfCondition", {}).get("@odata.id", ""))
    return match


def new_switch_after_registration_reaches_the_core():
    r = rig()
    b = r.chain.broker
    mark = r.sub.mark()
    ev = {"kind": "link_down", "link_class": "isl", "tech": "infiniband", "switch": "newsw",
          "switch_guid": NEW_GUID, "port": 7}
    p = fbtest.publish(b.agent_addr, "ib-new", events=[ev], timeout=30)
    assert p.returncode == 0, f"fabricbus publish: {p.stderr}"
    doc = r.sub.wait_for(on_origin(lambda o: o == f"{FABRIC_PATH}/Switches/newsw/Ports/7"), 90,
                         "the event of a switch that appeared after the registration at the "
                         "core's subscriber", start=mark)
    assert doc.get("Context") == STATE["context"], doc
    origin = doc["Events"][0]["OriginOfCondition"]["@odata.id"]
    code, _ = r.core.get(origin)
    assert code == 200, f"the core forwarded {origin} but does not hold it: {code}"
    print(f"  {origin} reached the core's subscriber", flush=True)


def refused_event_does_not_block_the_next():
    r = rig()
    b = r.chain.broker
    ghost = {"kind": "link_down", "link_class": "host", "tech": "infiniband",
             "node": GHOST_NODE}
    p = fbtest.publish(b.agent_addr, "node-ghost", events=[ghost], timeout=30)
    assert p.returncode == 0, f"fabricbus publish: {p.stderr}"
    mark = r.sub.mark()
    r.chain.sim.unlink("leaf1", 5)

    on_port5 = on_origin(lambda o: o.startswith(FABRIC_PATH + "/Switches/")
                         and o.endswith("/Ports/5"))
    doc = r.sub.wait_for(on_port5, 90, "the Unlink of leaf1[5], committed after the refused "
                         "event, at the core's subscriber", start=mark)
    assert doc.get("Context") == STATE["context"], doc
    st = b.wait_status(lambda st: st["broker"]["ofmf"]["undeliverable"] >= 1, timeout=30)
    st = st["broker"]["ofmf"]
    assert st["state"] == "registered" and st["context"] == STATE["context"], st
    log = b.log()
    line = [x for x in log.splitlines() if "dropped as undeliverable" in x and
            f"/Systems/{GHOST_NODE})" in x]
    assert line, log[-3000:]
    for d in r.sub.events:
        assert GHOST_NODE not in json.dumps(d), f"the core forwarded the refused event? {d}"
    # Our tree does not serve its origin: the core can neither crawl it nor
    # take the event.
    origin = line[0].split("OriginOfCondition ", 1)[1].split(")", 1)[0]
    code, _ = http_get(r.base + origin)
    assert code == 404, f"{origin}: our tree answers {code}; the test needs an origin it lacks"
    print(f"  {origin} refused by the core and dropped; undeliverable={st['undeliverable']}",
          flush=True)


def survives_a_broker_restart():
    r = rig()
    b = r.chain.broker
    assert b.stop() == 0, b.log()[-3000:]
    b.start()
    fbtest.wait_for(b.log, lambda t: "the core still knew us" in t, 30,
                    "fabricbusd resuming its saved Context", show=lambda t: t[-2000:])
    ours = r.ours()
    assert list(ours) == [STATE["context"]], f"after a broker restart the core holds {ours}"
    st = b.wait_status(lambda st: st["broker"]["ofmf"]["state"] == "registered")
    st = st["broker"]["ofmf"]
    assert st["resumed"] == 1 and st["registrations"] == 0 and st["conflicts"] == 0, st
    assert st["context"] == STATE["context"], st
    # The agents reconnect by themselves; the next Unlink uses the same Context.
    r.unlink_reaches_subscriber(4, STATE["context"], timeout=60)


def survives_a_core_restart():
    r = rig()
    old = STATE["context"]
    r.core.restart()
    assert r.ours() == {}, "a restarted core should know nothing"
    r.sub.subscribe(r.core, RegistryPrefixes=EVENT_PREFIXES)  # it forgot its subscribers too
    src = r.wait_registered(not_context=old)
    new = src["Id"]
    fbtest.wait_for(r.state_file, lambda s: s.get("context") == new, 10, "ofmf.state updated")
    r.unlink_reaches_subscriber(2, new, timeout=60)
    st = r.chain.broker.wait_status(lambda st: st["broker"]["ofmf"]["context"] == new)
    st = st["broker"]["ofmf"]
    assert st["core_forgot_us"] >= 1 and st["registrations"] == 1, st


def lost_state_file_adopts_after_409():
    """Without its state file, a restarted broker's discovery gets 409 (the
    core still holds our ConnectionMethod): it finds its AggregationSource on
    the core and takes that Context back, instead of failing or adding one."""
    r = rig()
    b = r.chain.broker
    ctx = r.state_file()["context"]
    assert b.stop() == 0, b.log()[-3000:]
    os.unlink(os.path.join(b.workdir, "journal", "ofmf.state"))
    b.start()
    st = b.wait_status(lambda st: st["broker"]["ofmf"]["state"] == "registered", timeout=30)
    st = st["broker"]["ofmf"]
    assert st["adoptions"] == 1 and st["registrations"] == 0 and st["context"] == ctx, st
    assert list(r.ours()) == [ctx], r.ours()
    fbtest.wait_for(r.state_file, lambda s: s.get("context") == ctx, 10, "ofmf.state rewritten")
    r.unlink_reaches_subscriber(1, ctx, timeout=60)


def second_broker_with_our_id_is_a_conflict():
    """Another broker given our ConnectionMethod id cannot register (409 and
    no source of its own): it says so, naming the id and who holds it, and
    our registration is untouched."""
    r = rig()
    cm_id = r.state_file()["connection_method"].rsplit("/", 1)[1]
    twin = fbtest.Broker(OfmfCore=r.core.url, OfmfConnectionMethodId=cm_id).start()
    try:
        st = twin.wait_status(lambda st: st["broker"]["ofmf"]["state"] == "conflict", timeout=30)
        err = st["broker"]["ofmf"]["last_error"]
        assert "OfmfConnectionMethodId" in err and r.base in err, err
    finally:
        assert twin.stop() == 0, twin.log()[-3000:]
    assert len(r.ours()) == 1 and r.core.sources(), r.core.sources()


def core_patch_refused_with_accounts():
    """With Redfish accounts (and RedfishAnonymousReads=yes so that the core,
    which sends no credentials, can read our tree), the core's PATCH of the
    SunfishServer Context gets 401; fabricbusd then finds its AggregationSource
    on the core and takes its Context from there. A fresh core and broker."""
    probe = subprocess.run([fbtest.FABRICBUS, "passwd", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        print("  NOTE: no `fabricbus passwd` in this build (rf-auth not merged): not run")
        return
    core = ofmf.Core().start()
    b = fbtest.Broker(OfmfCore=core.url, RedfishAnonymousReads="yes", HttpAnonymousReads="yes")
    accounts = os.path.join(b.workdir, "redfish-accounts")
    out = subprocess.run([fbtest.FABRICBUS, "passwd", "-f", accounts, "admin", "Administrator"],
                         input="ofmf-test-pw\n", capture_output=True, text=True)
    assert out.returncode == 0, f"fabricbus passwd: {out.stderr}"
    os.chmod(accounts, 0o600)
    b.overrides["RedfishAccounts"] = accounts
    b.start()
    try:
        st = b.wait_status(lambda st: st["broker"]["ofmf"]["state"] == "registered", timeout=30)
        st = st["broker"]["ofmf"]
        ours = {i: s for i, s in core.sources().items()
                if s.get("HostName") == f"http://{b.http_addr}"}
        assert st["adoptions"] == 1 and st["registrations"] == 0, st
        assert list(ours) == [st["context"]], (ours, st)
    finally:
        assert b.stop() == 0, b.log()[-3000:]
        core.stop()


def stop_rig():
    if RIG is not None:
        RIG.stop()


if __name__ == "__main__":
    prerequisites()
    fbtest.main([registers_and_core_crawls_the_fabric,
                 unlink_reaches_the_core_subscriber_with_our_context,
                 new_switch_after_registration_reaches_the_core,
                 refused_event_does_not_block_the_next,
                 survives_a_broker_restart, survives_a_core_restart,
                 lost_state_file_adopts_after_409, second_broker_with_our_id_is_a_conflict,
                 core_patch_refused_with_accounts],
                always=[stop_rig])
