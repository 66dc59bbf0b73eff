"""Redfish EventService push delivery against real HTTP receivers.

The receiver is a Python HTTP server on 127.0.0.1 (a real one; it can fail
its first N deliveries with 503, or be stopped and started again on the
same port). Events come from `fabricbus publish`. What each test proves is
in its docstring. Delivery is at least once: across a kill -9 the events
after the last persisted cursor are sent again (same EventId), and never an
event is missing; across a clean stop it is exactly once.
"""
import http.server
import json
import os
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import re

from fbtest import FABRICBUS, SRC, Broker, free_port, main, publish, read_text, wait_for

VALIDATE = os.path.join(SRC, "..", "shared", "tools", "redfish-validate")

SUBS = "/redfish/v1/EventService/Subscriptions"
FAST = {"RedfishDeliveryRetryAttempts": "2", "RedfishDeliveryRetryInterval": "300ms",
        "RedfishPushCursorSync": "50ms", "RedfishPushTimeout": "2s"}


class Receiver:
    """An HTTP event listener: records every POSTed Event with its headers."""

    def __init__(self, port=None, fail_first=0, certfile=None, keyfile=None, delay=0.0):
        self.port = port or free_port()
        self.delay = delay
        self.fail_first = fail_first
        self.failed = 0
        self.fail_times = []
        self.docs = []
        self.headers = []
        self.lock = threading.Lock()
        self.server = None
        self.tls = (certfile, keyfile) if certfile else None

    @property
    def url(self):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/events"

    def start(self):
        rcv = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                if rcv.delay:
                    time.sleep(rcv.delay)
                with rcv.lock:
                    fail = rcv.failed < rcv.fail_first
                    if fail:
                        rcv.failed += 1
                        rcv.fail_times.append(time.monotonic())
                    else:
                        rcv.docs.append(json.loads(body))
                        rcv.headers.append(dict(self.headers))
                self.send_response(503 if fail else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a broker killed mid-request resets its connection: expected here

        self.server = Server(("127.0.0.1", self.port), H)
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*self.tls)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def ids(self, kind=None):
        """EventIds of the journal events received, in arrival order."""
        with self.lock:
            return [int(d["Events"][0]["EventId"]) for d in self.docs
                    if d["Events"][0]["EventId"].isdigit()]

    def wait_ids(self, want, timeout=30):
        return wait_for(lambda: set(self.ids()), lambda s: set(want) <= s, timeout,
                        f"receiver {self.port} got all of {len(want)} events",
                        show=lambda s: f"{len(s)} ids, missing {sorted(set(want) - s)[:20]}")


def rf(b, method, path, body=None, headers=None):
    """One Redfish request; returns (status, headers, parsed body or None)."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    req = urllib.request.Request(f"http://{b.http_addr}{path}", data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, dict(r.headers), json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, dict(e.headers), json.loads(raw) if raw else None


def error_key(doc):
    return doc["error"]["@Message.ExtendedInfo"][0]["MessageId"].split(".")[-1]


def subscribe(b, dest, **props):
    body = {"Destination": dest, "Protocol": "Redfish", "Context": props.pop("Context", "ctx")}
    body.update(props)
    st, hdr, doc = rf(b, "POST", SUBS, body)
    assert st == 201, (st, doc)
    assert hdr["Location"] == doc["@odata.id"], hdr
    return doc["Id"]


def events(n, switch="sw", start=0):
    """n events cycling through kinds with different MessageIds, severities
    and origins."""
    out = []
    for i in range(start, start + n):
        k = i % 4
        if k == 0:
            out.append({"kind": "link_down", "link_class": "isl", "switch": f"{switch}{i % 3}",
                        "port": 1 + i % 5, "severity": "Critical"})
        elif k == 1:
            out.append({"kind": "link_up", "link_class": "isl", "switch": f"{switch}{i % 3}",
                        "port": 1 + i % 5})
        elif k == 2:
            out.append({"kind": "switch_unreachable", "switch": f"{switch}{i % 3}"})
        else:
            out.append({"kind": "congestion", "link_class": "isl", "switch": f"{switch}{i % 3}",
                        "port": 1 + i % 5,
                        "counters": {"congestion_ppm": 250000, "threshold": 100000,
                                     "xmit_wait": 1}})
    return out


def pub(b, agent, evs):
    r = publish(b.agent_addr, agent, evs)
    assert r.returncode == 0, r.stderr


def bad_bodies_get_redfish_errors():
    """Wrong JSON, unknown, read-only, wrong-type, bad-URI and bad-enum
    properties each get 400 with the right Base message; the created member
    reads back with HttpHeaders empty; PATCH of a create-only property is
    refused; DELETE removes it."""
    b = Broker().start()
    cases = [
        (b"{not json", "MalformedJSON"),
        ({"Destination": "http://127.0.0.1:9/x", "Bogus": 1}, "PropertyUnknown"),
        ({"Destination": "http://127.0.0.1:9/x", "Id": "7"}, "PropertyNotWritable"),
        ({"Destination": 12}, "PropertyValueTypeError"),
        ({"Destination": "ftp://127.0.0.1/x"}, "PropertyValueFormatError"),
        ({"Destination": "http://127.0.0.1:9/x", "DeliveryRetryPolicy": "Sometimes"},
         "PropertyValueNotInList"),
        ({"Destination": "http://127.0.0.1:9/x", "MessageIds": "Fabric.1.0.PortOK"},
         "PropertyValueTypeError"),
        ({"Context": "no destination"}, "PropertyMissing"),
    ]
    for body, key in cases:
        st, _, doc = rf(b, "POST", SUBS, body)
        assert st == 400 and error_key(doc) == key, (body, st, doc)
    sid = subscribe(b, "http://127.0.0.1:9/x", HttpHeaders=[{"X-Token": "secret"}])
    st, _, doc = rf(b, "GET", f"{SUBS}/{sid}")
    assert st == 200 and doc["HttpHeaders"] == [] and "secret" not in json.dumps(doc), doc
    assert doc["Status"]["State"] == "Enabled", doc
    st, _, doc = rf(b, "PATCH", f"{SUBS}/{sid}", {"Destination": "http://127.0.0.1:10/y"})
    assert st == 400 and error_key(doc) == "PropertyNotWritable", doc
    st, _, doc = rf(b, "PATCH", f"{SUBS}/{sid}", {"Context": 5})
    assert st == 400 and error_key(doc) == "PropertyValueTypeError", doc
    st, _, doc = rf(b, "PATCH", f"{SUBS}/{sid}", {"Context": "new"},
                    headers={"If-Match": 'W/"0000000000000000"'})
    assert st == 412, (st, doc)
    st, _, doc = rf(b, "PATCH", f"{SUBS}/{sid}", {"Context": "new"})
    assert st == 200 and doc["Context"] == "new", doc
    st, _, coll = rf(b, "GET", SUBS)
    assert {"@odata.id": f"{SUBS}/{sid}"} in coll["Members"], coll
    st, _, _ = rf(b, "DELETE", f"{SUBS}/{sid}")
    assert st == 204
    st, _, doc = rf(b, "GET", f"{SUBS}/{sid}")
    assert st == 404, doc
    st, _, doc = rf(b, "GET", "/redfish/v1/EventService")
    assert doc["ServerSentEventUri"] == "/redfish/v1/EventService/SSE", doc
    assert doc["Subscriptions"]["@odata.id"] == SUBS
    st, _, doc = rf(b, "PATCH", "/redfish/v1/EventService",
                    {"DeliveryRetryAttempts": 5, "DeliveryRetryIntervalSeconds": 7})
    assert st == 200 and doc["DeliveryRetryAttempts"] == 5 and \
        doc["DeliveryRetryIntervalSeconds"] == 7, doc
    st, _, doc = rf(b, "PATCH", "/redfish/v1/EventService", {"DeliveryRetryAttempts": "5"})
    assert st == 400 and error_key(doc) == "PropertyValueTypeError", doc
    st, _, doc = rf(b, "PATCH", "/redfish/v1/EventService", {"Bogus": 1})
    assert st == 400 and error_key(doc) == "PropertyUnknown", doc
    assert b.stop() == 0


def flaky_receiver_gets_everything():
    """A receiver that answers 503 to its first 7 deliveries gets every
    event, in EventId order, with the subscription's Context and its
    HttpHeaders."""
    b = Broker(**FAST).start()
    r = Receiver(fail_first=7).start()
    subscribe(b, r.url, Context="flaky", HttpHeaders=[{"X-Token": "t0k"}])
    pub(b, "flaky", events(200))
    r.wait_ids(range(1, 201))
    assert r.failed == 7
    ids = r.ids()
    assert ids == sorted(ids), "not in EventId order"
    assert len(ids) == 200, f"{len(ids)} deliveries for 200 events (duplicates without a crash)"
    assert all(d["Context"] == "flaky" for d in r.docs)
    assert all(h.get("X-Token") == "t0k" for h in r.headers)
    r.stop()
    assert b.stop() == 0


def receiver_down_then_back_gets_everything():
    """A receiver that is down while 300 events are committed, then comes
    back on the same port, gets all of them (RetryForever, the default)."""
    b = Broker(**FAST).start()
    r = Receiver()
    subscribe(b, r.url)
    pub(b, "down", events(300))
    time.sleep(2.0)  # several failed tries
    r.start()
    r.wait_ids(range(1, 301))
    assert sorted(set(r.ids())) == list(range(1, 301))
    r.stop()
    assert b.stop() == 0


def slow_receiver_does_not_hold_others():
    """A receiver that takes 100 ms per event does not slow a fast one on
    the same broker: the fast one has all 150 events while the slow one has
    fewer than half, and the slow one still gets all of them, in order."""
    b = Broker(**FAST).start()
    slow, fast = Receiver(delay=0.1).start(), Receiver().start()
    subscribe(b, slow.url)
    subscribe(b, fast.url)
    pub(b, "slow", events(150))
    fast.wait_ids(range(1, 151), timeout=10)
    n_slow = len(slow.ids())
    assert n_slow < 75, f"the slow receiver had {n_slow} of 150 when the fast one was done"
    slow.wait_ids(range(1, 151), timeout=60)
    assert slow.ids() == list(range(1, 151))
    slow.stop()
    fast.stop()
    assert b.stop() == 0


def retry_policies_behave():
    """TerminateAfterRetries deletes the subscription after 1 + 2 failed
    tries; SuspendRetries shows Status.State Disabled and, re-enabled with a
    PATCH once the receiver is back, delivers from where it stopped
    (including events committed while suspended); RetryForever keeps going
    past the attempts and delivers when the receiver is back."""
    b = Broker(**FAST).start()
    term, susp, forever = Receiver(), Receiver(), Receiver()
    t = subscribe(b, term.url, DeliveryRetryPolicy="TerminateAfterRetries")
    s = subscribe(b, susp.url, DeliveryRetryPolicy="SuspendRetries")
    f = subscribe(b, forever.url, DeliveryRetryPolicy="RetryForever")
    pub(b, "pol", events(10))
    wait_for(lambda: rf(b, "GET", f"{SUBS}/{t}")[0], lambda st: st == 404, 15,
             "TerminateAfterRetries deleted the subscription")
    doc = wait_for(lambda: rf(b, "GET", f"{SUBS}/{s}")[2],
                   lambda d: d["Status"]["State"] == "Disabled", 15, "SuspendRetries disabled it")
    assert "suspended after 2 failed retries" in b.log()
    pub(b, "pol", events(5, start=10))  # committed while suspended
    time.sleep(1.5)
    assert rf(b, "GET", f"{SUBS}/{f}")[2]["Status"]["State"] == "Enabled"
    susp.start()
    forever.start()
    forever.wait_ids(range(1, 16))
    time.sleep(0.5)
    assert susp.ids() == [], "a suspended subscription must not deliver"
    st, _, doc = rf(b, "PATCH", f"{SUBS}/{s}", {"Status": {"State": "Enabled"}})
    assert st == 200 and doc["Status"]["State"] == "Enabled", doc
    susp.wait_ids(range(1, 16))
    assert sorted(set(susp.ids())) == list(range(1, 16))
    # RetryForeverWithBackoff: the waits between tries double (0.3, 0.6,
    # 1.2 s) and the event still arrives.
    back = Receiver(fail_first=4).start()
    subscribe(b, back.url, DeliveryRetryPolicy="RetryForeverWithBackoff")
    pub(b, "pol", events(1, start=15))
    back.wait_ids([16], timeout=20)
    ft = back.fail_times
    gaps = [ft[i + 1] - ft[i] for i in range(len(ft) - 1)]
    assert len(gaps) == 3 and 0.25 < gaps[0] < 0.55 and 0.55 < gaps[1] < 0.95 and \
        1.1 < gaps[2] < 1.6, gaps
    back.stop()
    # the action resumes too (no-op on an enabled one)
    st, _, _ = rf(b, "POST", f"{SUBS}/{s}/Actions/EventDestination.ResumeSubscription", {})
    assert st == 204
    for x in (term, susp, forever):
        x.stop()
    assert b.stop() == 0


def nothing_lost_across_kill9():
    """kill -9 while 3000 events are being pushed: after the restart every
    EventId 1..3000 arrives at least once; the only repeats are a run right
    after the last persisted cursor (the ids go back once, then on). A clean
    stop and start afterwards adds no repeat at all."""
    b = Broker(RedfishPushCursorSync="50ms").start()
    r = Receiver().start()
    subscribe(b, r.url)
    pub(b, "crash", events(3000))
    wait_for(lambda: len(r.ids()), lambda n: n >= 300, 60, "deliveries started")
    b.kill9()
    n_before = len(r.ids())
    assert n_before < 3000, "all delivered before the kill; raise the count"
    b.start()
    r.wait_ids(range(1, 3001), timeout=120)
    ids = r.ids()
    backs = [i for i in range(1, len(ids)) if ids[i] < ids[i - 1]]
    assert len(backs) <= 1, f"ids went back {len(backs)} times"
    dups = len(ids) - len(set(ids))
    print(f"  kill -9 after {n_before} deliveries: {dups} delivered twice", flush=True)
    assert dups <= 1000, dups
    # clean restart: exactly once from here on
    assert b.stop() == 0
    b.start()
    pub(b, "crash", events(50, start=3000))
    r.wait_ids(range(1, 3051))
    tail = r.ids()[len(ids):]
    assert tail == list(range(3001, 3051)), tail[:20]
    r.stop()
    assert b.stop() == 0


def rf_match(sub, rec):
    """The oracle: the EventDestination filter semantics, in Python."""
    mid = rec["MessageId"]
    prefix = mid.split(".")[0]
    origin = rec.get("OriginOfCondition", {}).get("@odata.id", "")
    if "RegistryPrefixes" in sub and prefix not in sub["RegistryPrefixes"]:
        return False
    if "MessageIds" in sub and mid not in sub["MessageIds"]:
        return False
    if "Severities" in sub and rec["MessageSeverity"] not in sub["Severities"]:
        return False
    if "OriginResources" in sub:
        ok = False
        for o in sub["OriginResources"]:
            o = o["@odata.id"]
            ok = ok or origin == o or bool(sub.get("SubordinateResources") and origin.startswith(o + "/"))
        if not ok:
            return False
    return True


def filters_deliver_the_oracles_set():
    """Subscriptions filtered by RegistryPrefixes, MessageIds, OriginResources
    with and without SubordinateResources, and Severities each get exactly
    the events the oracle (the same events read back from the WebSocket
    fan-out, filtered in Python) selects."""
    b = Broker(**FAST).start()
    subs = [
        {"RegistryPrefixes": ["ResourceEvent"]},
        {"MessageIds": ["Fabric.1.0.InterswitchLinkDropped", "Fabric.1.0.SwitchFailed"]},
        {"OriginResources": [{"@odata.id": "/redfish/v1/Fabrics/IB/Switches/sw1"}],
         "SubordinateResources": True},
        {"OriginResources": [{"@odata.id": "/redfish/v1/Fabrics/IB/Switches/sw1"}]},
        {"Severities": ["Critical"]},
        {"RegistryPrefixes": ["Fabric"], "Severities": ["OK"]},
    ]
    rcvs = []
    for s in subs:
        r = Receiver().start()
        subscribe(b, r.url, **s)
        rcvs.append(r)
    pub(b, "filt", events(120))
    out = subprocess.run([FABRICBUS, "tail", "--http", b.http_addr, "--since", "0", "--count",
                          "120", "--timeout", "60"], capture_output=True, text=True, timeout=90)
    assert out.returncode == 0, out.stderr
    docs = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    assert len(docs) == 120
    for s, r in zip(subs, rcvs):
        want = {int(d["Events"][0]["EventId"]) for d in docs if rf_match(s, d["Events"][0])}
        assert want, f"the oracle selects nothing for {s}: a useless case"
        r.wait_ids(want)
        time.sleep(0.3)
        got = set(r.ids())
        assert got == want, (s, sorted(got - want)[:10], sorted(want - got)[:10])
        for d in r.docs:
            assert rf_match(s, d["Events"][0]), d
    for r in rcvs:
        r.stop()
    assert b.stop() == 0


def submit_test_event_arrives():
    """SubmitTestEvent reaches the subscriptions whose filters take it, with
    their Context; bad parameters are refused with ActionParameter*."""
    b = Broker(**FAST).start()
    a, z = Receiver().start(), Receiver().start()
    subscribe(b, a.url, Context="A", RegistryPrefixes=["Fabric"])
    subscribe(b, z.url, Context="Z", RegistryPrefixes=["ResourceEvent"])
    action = "/redfish/v1/EventService/Actions/EventService.SubmitTestEvent"
    st, _, _ = rf(b, "POST", action, {"MessageId": "Fabric.1.0.PortFailed", "MessageSeverity":
                                      "Critical", "OriginOfCondition":
                                      "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/1",
                                      "Message": "test", "MessageArgs": ["sw1", "1"]})
    assert st == 204
    wait_for(lambda: len(a.docs), lambda n: n == 1, 10, "the test event arrived")
    d = a.docs[0]
    assert d["Context"] == "A" and d["Events"][0]["MessageId"] == "Fabric.1.0.PortFailed", d
    assert d["Events"][0]["OriginOfCondition"]["@odata.id"].endswith("/Ports/1"), d
    time.sleep(0.5)
    assert z.docs == [], "a subscription whose filter rejects it got the test event"
    st, _, doc = rf(b, "POST", action, {"MessageId": "Fabric.1.0.PortFailed", "Bogus": 1})
    assert st == 400 and error_key(doc) == "ActionParameterUnknown", doc
    st, _, doc = rf(b, "POST", action, {"Message": "no id"})
    assert st == 400 and error_key(doc) == "ActionParameterMissing", doc
    a.stop()
    z.stop()
    assert b.stop() == 0


def include_origin_of_condition():
    """IncludeOriginOfCondition=true: each event carries the whole resource
    its OriginOfCondition names (as GET shows it); a subscription without it
    gets the bare link; an origin the tree lacks stays a bare link."""
    b = Broker(**FAST).start()
    full, bare = Receiver().start(), Receiver().start()
    sid = subscribe(b, full.url, Context="full", IncludeOriginOfCondition=True)
    subscribe(b, bare.url, Context="bare")
    st, _, doc = rf(b, "GET", f"{SUBS}/{sid}")
    assert st == 200 and doc["IncludeOriginOfCondition"] is True, doc
    st, _, es = rf(b, "GET", "/redfish/v1/EventService")
    assert es["IncludeOriginOfConditionSupported"] is True, es
    swx = {"kind": "switch_unreachable", "switch": "swx", "switch_guid": "0x00000000000000aa"}
    pub(b, "sw-a", [swx])
    # The switch is in the tree once the event is (rebuilt every 100 ms).
    wait_for(lambda: rf(b, "GET", "/redfish/v1/Fabrics/IB/Switches/swx")[0], lambda c: c == 200,
             10, "the switch in the tree")
    pub(b, "sw-a", [swx, {"kind": "link_down", "link_class": "host", "node": "nonode"}])
    full.wait_ids([1, 2, 3])
    bare.wait_ids([1, 2, 3])
    by_id = {d["Events"][0]["EventId"]: d["Events"][0] for d in full.docs}
    o = by_id["2"]["OriginOfCondition"]
    _, _, sw = rf(b, "GET", "/redfish/v1/Fabrics/IB/Switches/swx")
    assert o["@odata.id"] == "/redfish/v1/Fabrics/IB/Switches/swx", o
    assert o["@odata.type"] == sw["@odata.type"] and o["Id"] == sw["Id"] == "swx", o
    assert "Status" in o and "Ports" in o, o
    assert by_id["3"]["OriginOfCondition"] == {"@odata.id": "/redfish/v1/Systems/nonode"}, by_id["3"]
    for d in bare.docs:
        assert list(d["Events"][0]["OriginOfCondition"]) == ["@odata.id"], d
    full.stop()
    bare.stop()
    assert b.stop() == 0


def subscriptions_survive_a_restart():
    """Subscriptions (with their write-only HttpHeaders) are in the store
    file after a restart; a corrupt store is set aside, not fatal."""
    b = Broker(**FAST).start()
    r = Receiver().start()
    sid = subscribe(b, r.url, Context="keep", HttpHeaders=[{"X-Token": "kept"}])
    assert b.stop() == 0
    b.start()
    st, _, doc = rf(b, "GET", f"{SUBS}/{sid}")
    assert st == 200 and doc["Context"] == "keep", doc
    pub(b, "restart", events(3))
    r.wait_ids(range(1, 4))
    assert r.headers[0].get("X-Token") == "kept"
    assert b.stop() == 0
    store = os.path.join(b.workdir, "journal", "redfish-subscriptions")
    assert oct(os.stat(store).st_mode & 0o777) == "0o600"
    with open(store, "r+b") as f:
        f.seek(60)
        f.write(b"#")
    b.start()
    assert "cannot load the subscriptions" in b.log()
    st, _, coll = rf(b, "GET", SUBS)
    assert coll["Members"] == [], coll
    assert os.path.exists(store + ".bad")
    r.stop()
    assert b.stop() == 0


def https_with_ca_verification():
    """An HTTPS receiver whose certificate the RedfishPushCAFile CA signed
    gets its events; one with a certificate from another CA gets none (the
    failure is logged), unless its subscription says VerifyCertificate false."""
    d = tempfile.mkdtemp(prefix="fb-push-tls-")

    def ca(name):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", f"/CN={name}", "-keyout", f"{d}/{name}.key", "-out",
                        f"{d}/{name}.pem"], check=True, capture_output=True)

    def leaf(name, signer):
        ext = f"{d}/{name}.ext"
        with open(ext, "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n")
        subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                        "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr"], check=True,
                       capture_output=True)
        subprocess.run(["openssl", "x509", "-req", "-in", f"{d}/{name}.csr", "-CA",
                        f"{d}/{signer}.pem", "-CAkey", f"{d}/{signer}.key", "-CAcreateserial",
                        "-days", "2", "-extfile", ext, "-out", f"{d}/{name}.pem"], check=True,
                       capture_output=True)
    ca("goodca")
    ca("otherca")
    leaf("good", "goodca")
    leaf("bad", "otherca")
    b = Broker(RedfishPushCAFile=f"{d}/goodca.pem", **FAST).start()
    good = Receiver(certfile=f"{d}/good.pem", keyfile=f"{d}/good.key").start()
    bad = Receiver(certfile=f"{d}/bad.pem", keyfile=f"{d}/bad.key").start()
    lax = Receiver(certfile=f"{d}/bad.pem", keyfile=f"{d}/bad.key").start()
    subscribe(b, good.url)
    subscribe(b, bad.url)
    subscribe(b, lax.url, VerifyCertificate=False)
    pub(b, "tls", events(5))
    good.wait_ids(range(1, 6))
    lax.wait_ids(range(1, 6))
    time.sleep(1.0)
    assert bad.ids() == []
    assert "certificate" in b.log() or "SSL" in b.log(), b.log()[-2000:]
    for x in (good, bad, lax):
        x.stop()
    assert b.stop() == 0


def kafka_protocol_subscriptions():
    """A POSTed Protocol=Kafka subscription (topic in Context) gets exactly
    the events its filters take, produced by the Kafka sink (a new topic
    re-creates the producer; nothing is produced twice); the old
    KafkaSubscription key still works beside it. Needs the Kafka jars
    (tests/kafka/kafka.sh fetch); says so and passes without them."""
    import kafka
    if kafka.jars_missing():
        print("  skipped: Kafka jars missing (tests/kafka/kafka.sh fetch)", flush=True)
        return
    k = kafka.Kafka().start()
    b = Broker(KafkaBrokers=k.bootstrap, KafkaSubscription="rf.legacy?severity=Critical",
               **FAST).start()
    st, _, doc = rf(b, "POST", SUBS, {"Destination": f"kafka://{k.bootstrap}", "Protocol": "Kafka",
                                      "Context": "rf.kafka.sub",
                                      "RegistryPrefixes": ["ResourceEvent"]})
    assert st == 201 and doc["Protocol"] == "Kafka" and doc["Context"] == "rf.kafka.sub", doc
    st, _, doc = rf(b, "POST", SUBS, {"Destination": "kafka://x", "Protocol": "Kafka"})
    assert st == 400 and error_key(doc) == "PropertyValueFormatError", doc  # no topic
    pub(b, "kproto", events(40))
    main_topics = ["fabric.events", "fabric.netdev", "fabric.resource", "fabric.other"]
    # The cursor passes an event only once every topic it goes to has it.
    wait_for(lambda: b.status()["broker"]["kafka"], lambda s: s["cursor"] >= 40, 120,
             "the Kafka cursor reached 40", interval=0.2)
    msgs = [m for t in main_topics if k.partitions(t) for m in k.kcat_consume(t)]
    recs = {int(m.headers["fabricbus-event-id"]): json.loads(m.value)["Events"][0] for m in msgs}
    want = {i for i, r in recs.items() if r["MessageId"].startswith("ResourceEvent.")}
    crit = {i for i, r in recs.items() if r["MessageSeverity"] == "Critical"}
    assert want and crit
    k.wait_count(["rf.kafka.sub"], len(want), timeout=120, stable=2)
    got = [int(m.headers["fabricbus-event-id"]) for m in k.kcat_consume("rf.kafka.sub")]
    assert len(got) == len(set(got)) and set(got) == want, (sorted(got), sorted(want))
    k.wait_count(["rf.legacy"], len(crit), timeout=120, stable=1)
    got = [int(m.headers["fabricbus-event-id"]) for m in k.kcat_consume("rf.legacy")]
    assert set(got) == crit and len(got) == len(crit), (sorted(got), sorted(crit))
    # The config line is listed as a read-only EventDestination.
    st, _, coll = rf(b, "GET", SUBS)
    assert {"@odata.id": f"{SUBS}/KafkaSubscription1"} in coll["Members"], coll
    st, _, doc = rf(b, "GET", f"{SUBS}/KafkaSubscription1")
    assert st == 200 and doc["Protocol"] == "Kafka" and doc["Context"] == "rf.legacy", doc
    assert doc["Severities"] == ["Critical"], doc
    st, _, doc = rf(b, "DELETE", f"{SUBS}/KafkaSubscription1")
    assert st == 405, (st, doc)
    assert b.stop() == 0
    k.stop()


def heartbeats_arrive():
    """SendHeartbeat: HeartbeatEvent.1.1.RedfishServiceFunctional every
    HeartbeatIntervalMinutes (one "minute" is 300 ms here), with the
    subscription's Context, between the journal's events; a subscription
    without it gets none."""
    b = Broker(RedfishHeartbeatUnit="300ms", **FAST).start()
    hb, quiet = Receiver().start(), Receiver().start()
    subscribe(b, hb.url, Context="hb", SendHeartbeat=True, HeartbeatIntervalMinutes=1)
    subscribe(b, quiet.url)
    pub(b, "hb", events(3))
    hb.wait_ids(range(1, 4))
    time.sleep(1.6)

    def beats(r):
        return [d for d in r.docs
                if d["Events"][0]["MessageId"] == "HeartbeatEvent.1.1.RedfishServiceFunctional"]
    got = beats(hb)
    assert 3 <= len(got) <= 8, f"{len(got)} heartbeats in ~1.8 s at one per 300 ms"
    assert all(d["Context"] == "hb" and d["Events"][0]["MessageSeverity"] == "OK" for d in got)
    assert beats(quiet) == [] and len(quiet.ids()) == 3
    hb.stop()
    quiet.stop()
    assert b.stop() == 0


def service_validator_on_event_service():
    """The DMTF Redfish-Service-Validator over /redfish/v1/EventService with
    a push subscription (filters, HttpHeaders, heartbeat, SuspendRetries),
    a Kafka one and a KafkaSubscription config line: 0 failures."""
    if not os.access(VALIDATE, os.X_OK):
        print(f"  SKIP: {VALIDATE} not found (the DMTF validators live in ../shared/tools)")
        return
    b = Broker(KafkaSubscription="rf.legacy?severity=Critical&origin=/redfish/v1/Fabrics/IB").start()
    subscribe(b, "http://127.0.0.1:9/ev", HttpHeaders=[{"X-Token": "t"}],
              RegistryPrefixes=["Fabric"], OriginResources=[{"@odata.id": "/redfish/v1/Fabrics/IB"}],
              SubordinateResources=True, Severities=["Critical"], SendHeartbeat=True,
              HeartbeatIntervalMinutes=5, DeliveryRetryPolicy="SuspendRetries")
    subscribe(b, "kafka://127.0.0.1:9", Protocol="Kafka", Context="rf.topic")
    env = dict(os.environ, RF_USER="admin", RF_PASS="admin",
               RF_WORK=os.environ.get("RF_WORK", "/tmp/fb-redfish-validate"))
    out = subprocess.run([VALIDATE, "svc", f"http://{b.http_addr}", "/redfish/v1/EventService"],
                         capture_output=True, text=True, timeout=900, env=env)
    text = out.stdout + out.stderr
    table = re.search(r"\|\s*PASS.*?\n.*?\n\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|", text, re.S)
    assert table, f"no summary from the validator:\n{text[-3000:]}"
    passed, warned, failed = (int(x) for x in table.groups())
    m = re.search(r"Debug Log:\s*(\S+)", text)
    errors = [line for line in read_text(m.group(1)).splitlines()
              if re.search(r"\bERROR\b", line)] if m else []
    walked = re.findall(r"Validating (/redfish/v1/EventService\S*)", read_text(m.group(1))) if m else []
    assert failed == 0 and not errors, "\n".join(errors[:20])
    assert f"{SUBS}/1" in " ".join(walked) and f"{SUBS}/KafkaSubscription1" in " ".join(walked), walked
    print(f"  validator: {len(walked)} resources, {passed} pass, {warned} warn, 0 failures")
    assert b.stop() == 0


TESTS = [bad_bodies_get_redfish_errors, flaky_receiver_gets_everything,
         receiver_down_then_back_gets_everything, slow_receiver_does_not_hold_others,
         retry_policies_behave,
         filters_deliver_the_oracles_set, submit_test_event_arrives, include_origin_of_condition,
         subscriptions_survive_a_restart, https_with_ca_verification, kafka_protocol_subscriptions,
         heartbeats_arrive, service_validator_on_event_service,
         nothing_lost_across_kill9]

if __name__ == "__main__":
    main(TESTS)
