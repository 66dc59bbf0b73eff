"""Rate limits and quiet events against a real fabricbusd (broker/ratectl.c,
broker/fabric/ratelimit.c, broker/quiet.c), events published with the stock
`fabricbus publish`, read with the stock `fabricbus tail` and a real Kafka.

What it proves (no timing asserts: the counts are checked against each
other, whatever the windows turn out to be):
- a flood of 150 events on one switch port with RateLimitSubject=20 gives a
  default subscriber exactly 20 per window of suppression and none of the
  quiet ones, plus one Fabricbus.1.0.EventsSuppressed per window whose count
  and EventId range are exactly the quiet events', and a last one with
  LimitLifted whose count is all of them; events on another port pass;
- a `tail --all` (quiet=1) subscriber gets every event, the quiet ones with
  Oem.Fabricbus.Quiet "rate_limited" and counter quiet=3, and the default
  stream is exactly it without them;
- after a broker restart (empty ring), a since=0 replay from the journal
  gives the quiet flag back on the same EventIds, and a default replay
  skips them; the same on /redfish/v1/EventService/SSE with and without
  quiet=1;
- an agent's own `quiet` counter is removed at ingest (the event is loud);
- RateLimitAgent: 30 events of one agent give exactly 10 loud per window of
  suppression and summaries naming "agent <id>" that add up;
- Kafka gets every event, quiet ones included, with Quiet in the JSON.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_ratelimit.py [test_name ...]
"""
import contextlib
import http.client
import json
import os
import subprocess
import time

import kafka
from fbtest import (FABRICBUS, Broker, Tail, assert_no_sanitizer_report, check_redfish_event, main, oem,
                    origin, publish, rec, wait_for)

GUID = "0x0008f10400411a08"
PORT_PATH = "/Switches/leaf3/Ports/17"
LIMIT = 20


@contextlib.contextmanager
def checked(b):
    """Runs the body with broker b, then stops it. Only when the body passed
    are a clean exit and a log free of sanitizer reports asserted: a failing
    body's own error is the one to show."""
    try:
        yield b
    except BaseException:
        b.stop()
        raise
    rc = b.stop()
    assert rc == 0, b.log()[-3000:]
    assert_no_sanitizer_report(b.log(), "fabricbusd")


def threshold(port, i):
    return {"kind": "counter_threshold", "link_class": "host", "tech": "infiniband", "switch": "leaf3",
            "switch_guid": GUID, "port": port, "counters": {"symbol_error": 10 + i, "threshold": 5}}


def agent_events(docs, agent):
    return [d for d in docs if oem(d)["AgentId"] == agent]


def summaries_of(docs, path):
    return [d for d in docs if rec(d)["MessageId"] == "Fabricbus.1.0.EventsSuppressed" and
            origin(d).endswith(path)]


def ids(docs):
    return [int(rec(d)["EventId"]) for d in docs]


def tail_n(b, n, *extra, timeout=60):
    r = subprocess.run([FABRICBUS, "tail", "--http", b.http_addr, "--count", str(n), "--timeout",
                        str(timeout), "--events-only", "--quiet", *extra],
                       capture_output=True, text=True, timeout=timeout + 30)
    assert r.returncode == 0, f"tail exit {r.returncode}: {r.stderr}"
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def sse_ids(b, query, n, timeout=60):
    """The first n EventIds of /redfish/v1/EventService/SSE?<query> (read
    until n arrive, within a generous deadline)."""
    c = http.client.HTTPConnection("127.0.0.1", b.http_port, timeout=timeout)
    try:
        c.request("GET", "/redfish/v1/EventService/SSE?" + query)
        r = c.getresponse()
        assert r.status == 200, (r.status, r.read(2000))
        got, deadline = [], time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            line = r.fp.readline()
            if line.startswith(b"id: "):
                got.append(int(line[4:]))
        assert len(got) == n, f"SSE ?{query}: {len(got)} of {n} events in {timeout}s"
        return got
    finally:
        c.close()


def check_flood(default, every, agent, n_flood, n_other):
    """The flood's events in both streams and the summaries; returns the
    quiet EventIds."""
    mine = agent_events(every, agent)
    assert len(mine) == n_flood + n_other, len(mine)
    on_port = [d for d in mine if origin(d).endswith(PORT_PATH)]
    quiet = [d for d in on_port if "Quiet" in oem(d)]
    loud = [d for d in on_port if "Quiet" not in oem(d)]
    assert all(oem(d)["Quiet"] == "rate_limited" and oem(d)["Counters"]["quiet"] == 3 for d in quiet), \
        [oem(d) for d in quiet[:3]]
    others = [d for d in mine if not origin(d).endswith(PORT_PATH)]
    assert len(others) == n_other and not any("Quiet" in oem(d) for d in others), [oem(d) for d in others]
    # The default stream is the --all stream without the quiet events.
    assert ids(agent_events(default, agent)) == [i for i in ids(mine) if i not in set(ids(quiet))]
    assert not any("Quiet" in oem(d) for d in default)
    sums = summaries_of(default, PORT_PATH)
    windows = [d for d in sums if not oem(d).get("LimitLifted")]
    lifted = [d for d in sums if oem(d).get("LimitLifted")]
    print(f"  {n_flood} on one port: {len(loud)} loud, {len(quiet)} quiet; summaries "
          f"{[oem(d)['Counters']['suppressed'] for d in windows]}, lifted "
          f"{[oem(d)['Counters']['suppressed'] for d in lifted]}", flush=True)
    assert windows and len(lifted) == 1, [rec(d) for d in sums]
    # Exactly LIMIT loud per window with suppression (the flood stops inside the last one).
    assert len(loud) == LIMIT * len(windows), (len(loud), len(windows))
    assert len(quiet) == n_flood - len(loud)
    qids = ids(quiet)
    for d in windows:
        c = oem(d)["Counters"]
        inside = [i for i in qids if c["first_suppressed_id"] <= i <= c["last_suppressed_id"]]
        assert c["suppressed"] == len(inside) and inside[0] == c["first_suppressed_id"] and \
            inside[-1] == c["last_suppressed_id"], (c, inside)
        assert c["rate_limit"] == LIMIT
    assert sum(oem(d)["Counters"]["suppressed"] for d in windows) == len(quiet)
    c = oem(lifted[0])["Counters"]
    assert c["suppressed"] == len(quiet) and c["first_suppressed_id"] == min(qids) and \
        c["last_suppressed_id"] == max(qids) and c["limit_lifted"] == 1, c
    d = windows[0]
    check_redfish_event(d)
    args = rec(d)["MessageArgs"]
    assert oem(d)["AgentId"] == "fabricbusd" and rec(d)["MessageSeverity"] == "Warning", rec(d)
    assert args[0] == str(oem(d)["Counters"]["suppressed"]) and "leaf3" in args[1] and \
        args[3] == str(oem(d)["Counters"]["first_suppressed_id"]), args
    return qids


def a_flood_on_one_subject():
    """150 events on leaf3 port 17 and 5 on port 18, RateLimitSubject=20 per
    8 s window: default vs tail --all, summaries, lift, journal replay."""
    with checked(Broker(RateLimitSubject=str(LIMIT), RateLimitWindow="8s").start()) as b:
        tail = Tail(b.http_addr, os.path.join(b.workdir, "tail.err"))
        every = Tail(b.http_addr, os.path.join(b.workdir, "tail-all.err"), ["--all"])
        flood = [threshold(17, i) for i in range(150)] + [threshold(18, i) for i in range(5)]
        p = publish(b.agent_addr, "ib-flood", flood)
        assert p.returncode == 0, p.stderr
        # An agent's own quiet counter is not its to set.
        sneaky = dict(threshold(18, 99), counters={"symbol_error": 1, "quiet": 3})
        p = publish(b.agent_addr, "ib-sneaky", [sneaky])
        assert p.returncode == 0, p.stderr
        tail.wait_for(lambda d: oem(d).get("LimitLifted"), 60, "the LimitLifted summary")
        every.wait_for(lambda d: oem(d).get("LimitLifted"), 15, "the LimitLifted summary (--all)")
        with tail.cv, every.cv:
            default, alls = list(tail.events), list(every.events)
        qids = check_flood(default, alls, "ib-flood", 150, 5)
        s = agent_events(default, "ib-sneaky")
        assert len(s) == 1 and "Quiet" not in oem(s[0]) and "quiet" not in oem(s[0])["Counters"], s
        st = b.wait_status(lambda s: s["broker"]["ratelimit"]["lifted"] == 1)["broker"]
        print(f"  /status quiet {st['quiet']} ratelimit {st['ratelimit']}", flush=True)
        assert st["quiet"]["rate_limited"] == len(qids) and st["quiet"]["agent_set"] == 1, st["quiet"]
        assert st["ratelimit"]["quiet"] == len(qids) and st["ratelimit"]["limited"] == 0, st["ratelimit"]
        total = len(alls)
        tail.stop()
        every.stop()

        # The journal keeps the flag: restart (the ring is empty), replay.
        assert b.stop() == 0, b.log()[-3000:]
        b.start()
        replay = tail_n(b, total, "--since", "0", "--all")
        assert ids(replay) == ids(alls), "replay --all differs from what --all got live"
        assert [i for i in ids(replay) if "Quiet" in oem(replay[ids(replay).index(i)])] == qids
        assert all(oem(d)["Quiet"] == "rate_limited" for d in replay if int(rec(d)["EventId"]) in set(qids))
        loud = tail_n(b, total - len(qids), "--since", "0")
        assert ids(loud) == [i for i in ids(alls) if i not in set(qids)]
        # SSE: the same rule, from the journal too.
        assert sse_ids(b, "Last-Event-ID=0&quiet=1", total) == ids(alls)
        assert sse_ids(b, "Last-Event-ID=0", total - len(qids)) == ids(loud)


def an_agent_over_its_limit():
    """RateLimitAgent=10 per 2 s: 30 generated events of one agent (no subject
    limit) give a default subscriber exactly 10 per window of suppression, and
    summaries naming the agent whose counts add up to the quiet ones."""
    with checked(Broker(RateLimitAgent="10", RateLimitWindow="2s").start()) as b:
        every = Tail(b.http_addr, os.path.join(b.workdir, "tail-all.err"), ["--all"])
        p = publish(b.agent_addr, "ib-chatty", generate=30)
        assert p.returncode == 0, p.stderr
        every.wait_for(lambda d: oem(d).get("LimitLifted"), 60, "the LimitLifted summary")
        with every.cv:
            alls = list(every.events)
        mine = agent_events(alls, "ib-chatty")
        quiet = [d for d in mine if oem(d).get("Quiet") == "rate_limited"]
        sums = [d for d in alls if rec(d)["MessageId"] == "Fabricbus.1.0.EventsSuppressed"]
        windows = [d for d in sums if not oem(d).get("LimitLifted")]
        lifted = [d for d in sums if oem(d).get("LimitLifted")]
        print(f"  30 of one agent: {len(mine) - len(quiet)} loud, {len(quiet)} quiet; summaries "
              f"{[rec(d)['MessageArgs'] for d in sums]}", flush=True)
        assert len(mine) == 30 and windows and len(lifted) == 1
        assert len(mine) - len(quiet) == 10 * len(windows)
        assert sum(oem(d)["Counters"]["suppressed"] for d in windows) == len(quiet)
        assert oem(lifted[0])["Counters"]["suppressed"] == len(quiet)
        assert all(rec(d)["MessageArgs"][1] == "agent ib-chatty" and oem(d)["Text"] == "agent ib-chatty"
                   for d in sums), [rec(d) for d in sums]
        check_redfish_event(windows[0])
        every.stop()


def kafka_gets_quiet_events():
    """Kafka is not a default subscription: it gets every event, the quiet
    ones with Oem.Fabricbus.Quiet."""
    k = kafka.Kafka().start()
    try:
        b = Broker(KafkaBrokers=k.bootstrap, RateLimitSubject="10", RateLimitWindow="60s").start()
        with checked(b):
            p = publish(b.agent_addr, "ib-kafka", [threshold(17, i) for i in range(40)])
            assert p.returncode == 0, p.stderr
            ks = wait_for(lambda: b.status()["broker"]["kafka"], lambda s: s["committed"] >= 40 and
                          s["backlog"] == 0, 120, "Kafka delivery", interval=0.2)
            msgs = [m for m in k.consume_all(["fabric.resource"]) if '"ib-kafka"' in m.value]
            docs = [json.loads(m.value) for m in msgs]
            quiet = [d for d in docs if oem(d).get("Quiet") == "rate_limited"]
            print(f"  Kafka: {len(docs)} of the agent's events, {len(quiet)} quiet; {ks}", flush=True)
            assert len(docs) == 40 and len(quiet) == 30, (len(docs), len(quiet))
    finally:
        k.stop()


ALL = [a_flood_on_one_subject, an_agent_over_its_limit, kafka_gets_quiet_events]

if __name__ == "__main__":
    main(ALL)
