"""Redfish Server-Sent Events at /redfish/v1/EventService/SSE against a real
fabricbusd, with events from `fabricbus publish`.

- 1,000 streams at once, each with its own $filter: each gets exactly the
  events an oracle evaluated here, in Python, selects (in EventId order, no
  duplicates), half of them live and half replaying from Last-Event-ID; the
  SSE data of an event is byte-for-byte the WebSocket message of it;
- a reconnect with Last-Event-ID (header, and the query parameter) misses
  nothing and repeats nothing while events keep coming;
- bad $filters and Last-Event-IDs get 400 with a Redfish error naming the
  token; an idle stream gets heartbeat comments;
- every open stream is listed (with its $filter) and a closed one is not.
"""
import asyncio
import json
import random
import resource
import socket
import time
import urllib.parse

from fbtest import Broker, main, publish

SSE = "/redfish/v1/EventService/SSE"
STREAMS = 1000

# ---- events ---------------------------------------------------------------


def event_set():
    """A mix that yields many MessageIds, EventTypes and origins."""
    evs = []
    for sw in ("leaf1", "leaf2", "spine1"):
        for port in (1, 2, 17):
            for kind, cls in (("link_down", "host"), ("link_up", "isl"), ("link_degraded", "uplink"),
                              ("flap", "isl"), ("congestion", "host"), ("link_down", "unknown")):
                e = {"kind": kind, "link_class": cls, "tech": "infiniband", "switch": sw, "port": port}
                if kind == "flap":
                    e["counters"] = {"flap_count": 5, "flap_window_s": 60}
                if kind == "congestion":
                    e["counters"] = {"congestion_ppm": 900000, "threshold": 100000}
                evs.append(e)
        evs.append({"kind": "switch_unreachable", "switch": sw})
        evs.append({"kind": "switch_reachable", "switch": sw})
    for node in ("node001", "node002"):
        evs.append({"kind": "link_down", "link_class": "node", "tech": "infiniband", "node": node,
                    "device": "mlx5_0", "port": 1})
        evs.append({"kind": "link_up", "link_class": "node", "tech": "infiniband", "node": node,
                    "device": "mlx5_0", "port": 1})
    evs.append({"kind": "test", "text": "hello"})
    return evs


# ---- an SSE client on asyncio streams --------------------------------------


class Stream:
    def __init__(self):
        self.events = []       # (id, data string)
        self.comments = 0
        self.status = None
        self.headers = {}
        self.body = b""
        self.closed = False

    async def open(self, port, query="", headers=()):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers)
        self.w.write(f"GET {SSE}{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode())
        await self.w.drain()
        line = await self.r.readline()
        self.status = int(line.split()[1])
        while True:
            h = await self.r.readline()
            if h in (b"\r\n", b""):
                break
            k, _, v = h.decode().partition(":")
            self.headers[k.strip().lower()] = v.strip()
        if self.status != 200:
            n = int(self.headers.get("content-length", "0"))
            self.body = await self.r.readexactly(n)
        return self

    async def pump(self):
        """Read events until the connection ends."""
        eid, data = None, None
        try:
            while True:
                line = await self.r.readline()
                if not line:
                    break
                line = line.rstrip(b"\n").decode()
                if line.startswith(":"):
                    self.comments += 1
                elif line.startswith("id: "):
                    eid = int(line[4:])
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "":
                    if data is not None:
                        self.events.append((eid, data))
                    eid, data = None, None
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        self.closed = True

    def close(self):
        self.w.close()


def q(filter_text=None, **params):
    parts = []
    if filter_text is not None:
        parts.append("$filter=" + urllib.parse.quote(filter_text, safe=""))
    parts += [f"{k}={v}" for k, v in params.items()]
    return "?" + "&".join(parts) if parts else ""


# ---- the oracle -------------------------------------------------------------

TYPES = {"Fabrics": "Fabric", "Switches": "Switch", "Ports": "Port", "Systems": "ComputerSystem",
         "NetworkInterfaces": "NetworkInterface", "Endpoints": "Endpoint"}


def attrs(data):
    rec = json.loads(data)["Events"][0]
    origin = rec.get("OriginOfCondition", {}).get("@odata.id", "")
    segs = origin.rstrip("/").split("/")
    rtype = TYPES.get(segs[-2], "") if len(segs) >= 2 else ""
    return {"MessageId": rec["MessageId"], "EventType": rec["EventType"], "Origin": origin,
            "ResourceType": rtype}


def atom_match(atom, a, subordinate):
    prop, op, v = atom
    if prop == "RegistryPrefix":
        m = a["MessageId"].split(".")[0] == v
    elif prop == "MessageId":
        p = v.split(".")
        e = a["MessageId"].split(".")
        m = v == a["MessageId"] if len(p) == 4 else (p[0] == e[0] and p[1] == e[3])
    elif prop == "EventType":
        m = a["EventType"] == v
    elif prop == "EventFormatType":
        m = v == "Event"
    elif prop == "ResourceType":
        m = a["ResourceType"] == v
    elif prop == "OriginResource":
        o = a["Origin"]
        m = o == v or (subordinate and o.startswith(v + "/"))
    else:  # SubordinateResources
        return True
    return m if op == "eq" else not m


def evaluate(tree, a, sub):
    t = tree[0]
    if t == "atom":
        return atom_match(tree[1], a, sub)
    if t == "not":
        return not evaluate(tree[1], a, sub)
    if t == "and":
        return evaluate(tree[1], a, sub) and evaluate(tree[2], a, sub)
    return evaluate(tree[1], a, sub) or evaluate(tree[2], a, sub)


def render(tree, rnd):
    t = tree[0]
    if t == "atom":
        prop, op, v = tree[1]
        lit = f"'{v}'" if rnd.random() < 0.3 else v
        return f"{prop} {op} {lit}"
    if t == "not":
        return f"not ({render(tree[1], rnd)})"
    return f"({render(tree[1], rnd)}) {t} ({render(tree[2], rnd)})"


def make_filters(vocab, n, seed=11):
    rnd = random.Random(seed)
    mids = sorted(vocab["MessageId"])
    origins = sorted(vocab["Origin"])
    parents = sorted({o.rsplit("/", 2)[0] for o in origins if o.count("/") > 4})

    def atom():
        k = rnd.randrange(7)
        op = "ne" if rnd.random() < 0.2 else "eq"
        if k == 0:
            return ("RegistryPrefix", op, rnd.choice(["Fabric", "ResourceEvent", "NetworkDevice", "Nope"]))
        if k == 1:
            m = rnd.choice(mids)
            p = m.split(".")
            return ("MessageId", op, m if rnd.random() < 0.7 else f"{p[0]}.{p[3]}")
        if k == 2:
            return ("EventType", op, rnd.choice(sorted(vocab["EventType"]) + ["ResourceAdded"]))
        if k == 3:
            return ("ResourceType", op, rnd.choice(["Port", "Switch", "ComputerSystem",
                                                    "NetworkInterface", "Fabric"]))
        if k == 4:
            return ("EventFormatType", op, "Event")
        return ("OriginResource", op, rnd.choice(origins + parents))

    def tree(depth):
        r = rnd.random()
        if depth == 0 or r < 0.35:
            return ("atom", atom())
        if r < 0.45:
            return ("not", tree(depth - 1))
        return ("and" if r < 0.7 else "or", tree(depth - 1), tree(depth - 1))

    out, seen = [], set()
    while len(out) < n:
        t = tree(rnd.randrange(4))
        sub = rnd.random() < 0.15
        text = render(t, rnd)
        if sub:
            text = f"({text}) and SubordinateResources eq true"
        if text in seen:
            continue
        seen.add(text)
        out.append((text, t, sub))
    return out


# ---- tests --------------------------------------------------------------------


def on_broker(run, **overrides):
    """asyncio.run(run(broker)) against a fresh broker, which must then stop
    cleanly (exit 0, no sanitizer report)."""
    b = Broker(**overrides).start()
    try:
        asyncio.run(run(b))
        assert b.stop() == 0, b.log()[-3000:]
    finally:
        b.stop()


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 8192)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= STREAMS + 100


def publish_ok(b, evs, agent="sse-test"):
    r = publish(b.agent_addr, agent, evs)
    assert r.returncode == 0, r.stderr


def head_id(b):
    return b.status()["broker"]["events"]["committed_id"]  # /status lags up to 100 ms


def sse_subs(b):
    return [s for s in b.status()["websocket"]["subscribers"] if s.get("kind") == "sse"]


def wait_streams_idle(b, n, head, timeout=120):
    """Until n SSE streams are open and every one has looked at every event."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        subs = sse_subs(b)
        if len(subs) == n and all(s["next_id"] > head for s in subs):
            return
        time.sleep(0.3)
    raise AssertionError(f"streams not caught up to {head}: "
                         f"{[(s['peer'], s['next_id']) for s in sse_subs(b) if s['next_id'] <= head][:5]}")


def test_thousand_filtered_streams():
    raise_nofile()
    on_broker(thousand_streams)


async def thousand_streams(b):
    import websockets
    evs = event_set()
    port = b.http_port
    # Round A teaches the vocabulary (MessageIds, origins) to build filters from.
    everything = Stream()
    await everything.open(port)
    pump_all = asyncio.ensure_future(everything.pump())
    publish_ok(b, evs)
    head_a = len(evs)  # a fresh broker: EventIds 1..len(evs)
    await wait_until(lambda: len(everything.events) == head_a, 30, "round A on the open stream")
    vocab = {"MessageId": set(), "EventType": set(), "Origin": set()}
    for _, data in everything.events:
        a = attrs(data)
        vocab["MessageId"].add(a["MessageId"])
        vocab["EventType"].add(a["EventType"])
        vocab["Origin"].add(a["Origin"])
    assert len(vocab["MessageId"]) >= 8, vocab["MessageId"]

    filters = make_filters(vocab, STREAMS)
    # Half live from the head, half from a Last-Event-ID inside round A
    # (replayed from the ring), as the header or the query parameter.
    streams = []
    for i, (text, _, _) in enumerate(filters):
        s = Stream()
        if i % 2 == 0:
            await s.open(port, q(text))
            s.after = head_a
        else:
            after = (i * 7) % head_a
            if i % 4 == 1:
                await s.open(port, q(text), headers=[("Last-Event-ID", str(after))])
            else:
                await s.open(port, q(text, **{"Last-Event-ID": after}))
            s.after = after
        assert s.status == 200, (text, s.status, s.body)
        assert s.headers["content-type"] == "text/event-stream", s.headers
        streams.append(s)
    pumps = [asyncio.ensure_future(s.pump()) for s in streams]
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws/events?since={head_a}", max_size=1 << 22)
    await asyncio.sleep(0.5)
    assert len(sse_subs(b)) == STREAMS + 1

    # Round B, live to all of them.
    await asyncio.get_running_loop().run_in_executor(None, publish_ok, b, evs)
    head_b = 2 * head_a
    await wait_until(lambda: len(everything.events) == head_b, 60, "round B on the open stream")
    await asyncio.get_running_loop().run_in_executor(None, wait_streams_idle, b, STREAMS + 1, head_b)
    await asyncio.sleep(0.5)

    ids = [e for e, _ in everything.events]
    assert ids == list(range(1, head_b + 1)), "the unfiltered stream misses or repeats events"
    by_id = dict(everything.events)
    # The SSE data is the WebSocket message of the same event, byte for byte.
    for _ in range(head_b - head_a):
        msg = await asyncio.wait_for(ws.recv(), 10)
        eid = int(json.loads(msg)["Id"])
        assert by_id[eid] == msg, f"EventId {eid}: SSE and WebSocket differ"
    await ws.close()

    all_attrs = {eid: attrs(d) for eid, d in everything.events}
    checked = nonempty = 0
    for s, (text, tree, sub) in zip(streams, filters):
        want = [eid for eid in range(s.after + 1, head_b + 1) if evaluate(tree, all_attrs[eid], sub)]
        got = [eid for eid, _ in s.events]
        assert got == want, (f"$filter={text} after {s.after}: got {len(got)} events, oracle {len(want)}; "
                             f"extra {sorted(set(got) - set(want))[:5]} missing {sorted(set(want) - set(got))[:5]}")
        for eid, data in s.events:
            assert data == by_id[eid]
        checked += 1
        nonempty += bool(want)
    assert checked == STREAMS
    # the filters really differ: most select something, and not all the same
    assert nonempty > STREAMS // 4, nonempty
    assert len({tuple(e for e, _ in s.events) for s in streams}) > 100
    for s in streams + [everything]:
        s.close()
    await asyncio.gather(*pumps, pump_all)
    await asyncio.get_running_loop().run_in_executor(
        None, lambda: wait_streams_idle_closed(b))


def wait_streams_idle_closed(b, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and sse_subs(b):
        time.sleep(0.2)
    assert not sse_subs(b), "closed streams are still listed"


async def wait_until(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"no {what} within {timeout}s"
        await asyncio.sleep(0.05)


def test_reconnect_with_last_event_id():
    """A client that drops its stream now and then and comes back with the
    id of the last event it got: the union is every matching event once."""
    on_broker(reconnects)


async def reconnects(b):
    flt = "RegistryPrefix eq Fabric and not (EventType eq StatusChange)"
    evs = event_set()
    loop = asyncio.get_running_loop()
    def publisher():
        for _ in range(30):
            publish_ok(b, evs, "sse-re")
            time.sleep(0.1)
    pub = loop.run_in_executor(None, publisher)
    got, last, rounds = [], None, 0
    while True:
        done = pub.done()  # before this round: nothing new can come after it
        s = Stream()
        if last is None:
            await s.open(b.http_port, q(flt, **{"Last-Event-ID": 0}))
        elif rounds % 2:
            await s.open(b.http_port, q(flt), headers=[("Last-Event-ID", str(last))])
        else:
            await s.open(b.http_port, q(flt, lastEventId=last))
        assert s.status == 200, s.body
        pump = asyncio.ensure_future(s.pump())
        await asyncio.sleep(0.6 if done else 0.15)
        s.close()
        await pump
        got += s.events
        if s.events:
            last = s.events[-1][0]
        rounds += 1
        if done and not s.events:
            break
        assert rounds < 5000
    await pub
    ids = [e for e, _ in got]
    assert len(ids) == len(set(ids)), "a reconnect repeated events"
    assert ids == sorted(ids)
    # oracle: one unfiltered stream from the start
    full = Stream()
    await full.open(b.http_port, q(None, **{"Last-Event-ID": 0}))
    pump = asyncio.ensure_future(full.pump())
    await wait_until(lambda: len(full.events) == head_id(b), 60, "the full replay")
    full.close()
    await pump
    want = [e for e, d in full.events
            if attrs(d)["MessageId"].startswith("Fabric.") and attrs(d)["EventType"] != "StatusChange"]
    assert ids == want, f"missing {sorted(set(want) - set(ids))[:10]}, extra {sorted(set(ids) - set(want))[:10]}"
    assert rounds > 5, rounds


def test_bad_requests_get_redfish_errors():
    on_broker(bad_requests)


async def bad_requests(b):
    cases = [
        ("RegistryPrefix gt Fabric", "QueryParameterValueFormatError", "gt"),
        ("Severity eq Critical", "QueryParameterValueFormatError", "Severity"),
        ("(RegistryPrefix eq Fabric", "QueryParameterValueFormatError", "("),
        ("MessageId eq PortFailed", "QueryParameterValueFormatError", "PortFailed"),
        ("SubordinateResources eq maybe", "QueryParameterValueTypeError", "maybe"),
        ("", "QueryParameterValueFormatError", "$filter"),
    ]
    for text, msg, token in cases:
        s = await Stream().open(b.http_port, q(text))
        assert s.status == 400, (text, s.status)
        err = json.loads(s.body)["error"]
        assert err["code"].endswith("." + msg), (text, err)
        info = err["@Message.ExtendedInfo"][0]
        assert info["MessageId"].startswith("Base.") and info["MessageId"].endswith(msg), info
        assert info["MessageArgs"][0] == token, (text, info)
        assert f"'{token}'" in info["Message"], info
        assert "$filter" in err["message"], err
        s.close()
    # '+' and %20 both decode to spaces; a valid filter opens a stream
    for raw in ("RegistryPrefix+eq+Fabric", "RegistryPrefix%20eq%20Fabric"):
        s = Stream()
        await s.open(b.http_port, "?$filter=" + raw)
        assert s.status == 200, (raw, s.body)
        s.close()
    # decoded once: a literal %20 in an origin (a percent-encoded node name)
    # travels as %2520 and is compared as %20
    lit = "OriginResource eq '/redfish/v1/Systems/n%20x'"
    s = await Stream().open(b.http_port, q(lit))
    assert s.status == 200, s.body
    loop = asyncio.get_running_loop()
    subs = await loop.run_in_executor(None, sse_subs, b)
    assert lit in [x["filter"] for x in subs], subs  # not "n x": decoded once
    s.close()
    for bad in ("abc", "-1", "18446744073709551616"):
        s = await Stream().open(b.http_port, "", headers=[("Last-Event-ID", bad)])
        assert s.status == 400, bad
        info = json.loads(s.body)["error"]["@Message.ExtendedInfo"][0]
        assert info["MessageArgs"] == [bad, "Last-Event-ID"], info
        s.close()


def redfish(b, method, path):
    """(status, JSON body or None) of a Redfish request."""
    import urllib.request
    import urllib.error
    req = urllib.request.Request(f"http://127.0.0.1:{b.http_port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return r.status, json.loads(body) if body else None
    except urllib.error.HTTPError as e:
        body = e.read()
        return e.code, json.loads(body) if body else None


def test_heartbeat_and_listing():
    """An idle stream gets comment lines; each open stream is an
    EventDestination in Subscriptions (SSE, redfish-sse://, a Context made
    by the service, its $filter), a DELETE of it closes the stream, and a
    stream that ends is no longer listed."""
    on_broker(heartbeat_and_listing, SseHeartbeatInterval="1s")


async def heartbeat_and_listing(b):
    loop = asyncio.get_running_loop()
    st, es = await loop.run_in_executor(None, redfish, b, "GET", "/redfish/v1/EventService")
    assert st == 200 and es["ServerSentEventUri"] == SSE, es
    flt = "MessageId eq Fabric.1.0.SwitchFailed"
    s = await Stream().open(b.http_port, q(flt))
    s2 = await Stream().open(b.http_port)
    pumps = [asyncio.ensure_future(s.pump()), asyncio.ensure_future(s2.pump())]
    await wait_until(lambda: s.comments >= 2, 10, "two heartbeat comments on an idle stream")
    assert not s.events
    assert sorted(x["filter"] for x in sse_subs(b)) == ["", flt]

    st, coll = await loop.run_in_executor(None, redfish, b, "GET", "/redfish/v1/EventService/Subscriptions")
    assert st == 200, coll
    members = []
    for m in coll["Members"]:
        st, d = await loop.run_in_executor(None, redfish, b, "GET", m["@odata.id"])
        assert st == 200, d
        if d.get("SubscriptionType") == "SSE":
            members.append(d)
    assert len(members) == 2, members
    ports = {int(x["peer"].rsplit(":", 1)[1]): x for x in sse_subs(b)}
    mine = s.w.get_extra_info("sockname")[1]
    d = next(m for m in members if m["Destination"] == f"redfish-sse://127.0.0.1:{mine}")
    assert d["Oem"]["Fabricbus"]["Filter"] == flt and d["Context"], d
    assert ports[mine]["id"] == d["Id"], (ports, d)
    assert len({m["Context"] for m in members}) == 2

    st, _ = await loop.run_in_executor(None, redfish, b, "DELETE", d["@odata.id"])
    assert st in (200, 204), st
    await asyncio.wait_for(pumps[0], 10)  # the server closed it
    assert s.closed
    st, _ = await loop.run_in_executor(None, redfish, b, "GET", d["@odata.id"])
    assert st == 404
    assert [x["filter"] for x in sse_subs(b)] == [""]
    assert not s2.closed

    s2.close()  # the client goes: its destination goes too
    await pumps[1]
    await loop.run_in_executor(None, wait_streams_idle_closed, b)
    st, coll = await loop.run_in_executor(None, redfish, b, "GET", "/redfish/v1/EventService/Subscriptions")
    assert not [m for m in coll["Members"] if "SSE-" in m["@odata.id"]], coll


class RawSse:
    """An SSE client on a blocking socket with a small receive buffer, so the
    test decides when (and whether) it reads."""

    def __init__(self, port, headers=()):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.s.connect(("127.0.0.1", port))
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers)
        self.s.sendall(f"GET {SSE} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.s.recv(4096)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200"), head

    def read_all(self, timeout):
        """Events until the server closes or nothing comes for timeout s."""
        self.s.settimeout(timeout)
        while True:
            try:
                chunk = self.s.recv(1 << 16)
            except socket.timeout:
                break
            if not chunk:
                break
            self.buf += chunk
        evs = []
        for block in self.buf.split(b"\n\n"):
            lines = [ln for ln in block.decode().split("\n") if ln and not ln.startswith(":")]
            if not lines:
                continue
            eid = int(lines[0][4:])
            evs.append((eid, json.loads(lines[1][6:])))
        self.s.close()
        return evs


def test_stalled_stream_is_cut_and_resumes():
    """A stream whose client stops reading holds nobody: the others get
    everything meanwhile; it is cut with the "missed" notice, whose id is
    where a Last-Event-ID reconnect resumes, and that gets the rest, once."""
    on_broker(stalled_run, WsQueueEvents="1024", WsRingEvents="4096")


async def stalled_run(b, n=30000):
    stalled = RawSse(b.http_port)
    live = await Stream().open(b.http_port)
    pump = asyncio.ensure_future(live.pump())
    loop = asyncio.get_running_loop()
    # The stall cut is decided while events flow: half, a pause past the
    # 2 s bound with its socket full, then the other half.
    for _ in range(2):
        r = await loop.run_in_executor(None, lambda: publish(b.agent_addr, "sse-flood", generate=n // 2))
        assert r.returncode == 0, r.stderr
        await asyncio.sleep(3)
    await wait_until(lambda: len(live.events) == n, 120, "every event on the reading stream")
    first = await loop.run_in_executor(None, stalled.read_all, 5)
    notices = [i for i, (_, d) in enumerate(first)
               if d["Events"][0]["MessageId"] == "Fabricbus.1.0.SubscriberEventsMissed"]
    assert notices == [len(first) - 1], (notices, [e for e, _ in first[-3:]])
    notices = [first[-1]]
    resume = notices[0][0]
    assert resume == notices[0][1]["Events"][0]["Oem"]["Fabricbus"]["ResumeSince"]
    got = [eid for eid, _ in first[:-1]]
    assert got == list(range(1, len(got) + 1)) and resume == len(got), (len(got), resume)
    again = RawSse(b.http_port, headers=[("Last-Event-ID", str(resume))])
    rest = await loop.run_in_executor(None, again.read_all, 3)
    got += [eid for eid, _ in rest]
    assert got == list(range(1, n + 1)), f"{len(got)} events after the reconnect"
    assert [e for e, _ in live.events] == list(range(1, n + 1))
    live.close()
    await pump
    assert "stopped reading" in b.log()


if __name__ == "__main__":
    main([test_bad_requests_get_redfish_errors, test_heartbeat_and_listing,
          test_reconnect_with_last_event_id, test_stalled_stream_is_cut_and_resumes,
          test_thousand_filtered_streams])
