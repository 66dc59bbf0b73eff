"""The load and fault suite (issue 14), driven by tests/load/run.sh.

Everything here is real: fabricbusd and the CLI from a release build, raw
agent-protocol connections (tests/lib/agentproto.py, flood.py), bench_ws_sink
subscribers (C, check every EventId in order), a real Kafka (kafka.py), ibsim
with the IB and node agents (chain.py), a real Slurm cluster with
fabricbus-slurm (slurm_rig.py). Each scenario prints one row; the sinks are
counted by (AgentId, Sequence):

  delivered  distinct events of the scenario's agents that reached the sink
  dup        copies beyond the first
  lost       events the agents sent (and the broker acked) that never came

The journal (a replay with ?since=0), a resuming WebSocket subscriber
(`fabricbus tail --since 0 --reconnect`) and Kafka promise durability: any
loss there makes the suite exit 1. The attack table runs the tests of
tests/integration/test_attacks.py and test_fairness.py against this build.

    run.sh [--quick] [--only NAME[,NAME..]]
"""
import argparse
import json
import os
import re
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import fbtest  # noqa: E402
from agentproto import ACK, Conn, event_body, events  # noqa: E402
from fbtest import BUILD, Broker, Tail  # noqa: E402
import flood  # noqa: E402

FABRICBUS = fbtest.FABRICBUS
WS_SINK = os.path.join(BUILD, "tests", "bench", "bench_ws_sink")
DURABLE = ("journal", "ws", "kafka")

ROWS = []       # (scenario, sent, {sink: (delivered, dup, lost)}, note)
SCALE = []      # (what, figure)
ATTACKS = []    # (attack, result, detail)
FAILED = []     # why the suite exits 1


# ---- counting --------------------------------------------------------------

def key(doc):
    o = doc["Events"][0]["Oem"]["Fabricbus"]
    return o["AgentId"], int(o["Sequence"])


def tally(keys, expected):
    """(delivered, dup, lost) of the keys (AgentId, seq) against the expected set."""
    mine = [k for k in keys if k in expected]
    got = set(mine)
    return len(got), len(mine) - len(got), len(expected - got)


def journal_keys(b, timeout=300):
    """Every journaled event, replayed over WebSocket from EventId 0."""
    r = subprocess.run([FABRICBUS, "tail", "--http", b.http_addr, "--since", "0", "--idle-exit",
                        "3", "--timeout", str(timeout), "--events-only", "--quiet"],
                       capture_output=True, text=True, timeout=timeout + 30)
    return [key(json.loads(line)) for line in r.stdout.splitlines() if line.strip()]


def expected(agents):
    """{(agent, seq)} for {agent: n events}."""
    return {(a, s) for a, n in agents.items() for s in range(1, n + 1)}


def row(name, sent, sinks, note=""):
    ROWS.append((name, sent, sinks, note))
    for sink, (_, _, lost) in sinks.items():
        if sink in DURABLE and lost:
            FAILED.append(f"{name}: {lost} events lost at the {sink} sink")
    print(f"  row: {name}: sent {sent} {sinks} {note}", flush=True)


def publish_all(b, agents, timeout=600):
    return {a: fbtest.publish_async(b.agent_addr, a, n, timeout=timeout) for a, n in agents.items()}


def wait_publishers(pubs, timeout=900):
    errs = {}
    for a, p in pubs.items():
        _, err = p.communicate(timeout=timeout)
        if p.returncode != 0:
            errs[a] = err.strip()[-300:]
    return errs


def rss_mib(pid, field="VmHWM"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return 0


def wait_until(pred, timeout, what):
    return fbtest.wait_for(lambda: None, lambda _: pred(), timeout, what, interval=0.2)


# ---- scale: many agents and subscribers at once ------------------------------

def ws_sinks(b, n, count):
    return [fbtest.track(subprocess.Popen([WS_SINK, "127.0.0.1", str(b.http_port), "/ws/events",
                                           str(count), "1"], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)) for _ in range(n)]


def scenario_scale(q):
    n_agents = 2000 if q.quick else 10000
    n_subs = 100 if q.quick else 1000
    per_agent = 5
    total = n_agents * per_agent
    b = Broker(HeartbeatInterval="60s", LogLevel="warn", MaxAgentsPerAddress="100000",
               WsMaxSubscribers=str(n_subs + 10)).start()
    rss0 = rss_mib(b.proc.pid, "VmRSS")
    sinks = ws_sinks(b, n_subs, total)
    b.wait_status(lambda s: len(s["websocket"]["subscribers"]) == n_subs, timeout=120)
    conns = []
    t0 = time.time()
    for i in range(n_agents):
        c = Conn(b.agent_addr, timeout=120)
        c.send(flood_hello(f"scale{i}"))
        conns.append(c)
    for c in conns:
        c.expect(2, timeout=120)  # HELLO_ACK
    t_conn = time.time() - t0
    rss_conn = rss_mib(b.proc.pid, "VmRSS")
    t1 = time.time()
    for c in conns:
        c.send(flood.frames(per_agent, per_agent))
    for c in conns:
        while struct.unpack(">Q", c.expect(ACK, timeout=300))[0] < per_agent:
            pass
    t_acked = time.time() - t1
    bad = 0
    for s in sinks:
        s.communicate(timeout=600)
        bad += s.returncode != 0
    t_all = time.time() - t1
    hwm = rss_mib(b.proc.pid)
    keys = journal_keys(b)
    want = expected({f"scale{i}": per_agent for i in range(n_agents)})
    SCALE.extend([
        ("agents connected at once", f"{n_agents} (HELLO to all acked {t_conn:.1f} s)"),
        ("WebSocket subscribers at once", str(n_subs)),
        ("broker RSS idle / with agents / peak", f"{rss0} / {rss_conn} / {hwm} MiB"),
        ("events in (acked to all agents)", f"{total} in {t_acked:.2f} s = {total / t_acked:.0f} events/s"),
        ("messages out (every subscriber got every event in order)",
         f"{total * n_subs} in {t_all:.2f} s = {total * n_subs / t_all:.0f} messages/s; "
         f"{n_subs - bad}/{n_subs} subscribers complete"),
    ])
    row(f"{n_agents} agents + {n_subs} subscribers", total,
        {"journal": tally(keys, want), f"ws x{n_subs}": (total if not bad else 0, 0, 0 if not bad else total)},
        f"{total / t_acked:.0f} ev/s in, peak RSS {hwm} MiB")
    if bad:
        FAILED.append(f"scale: {bad} WebSocket subscribers did not get every event in order")
    for c in conns:
        c.close()
    b.stop()


def flood_hello(agent_id):
    from agentproto import hello
    return hello(agent_id)


# ---- overload: 10x the sustainable rate ------------------------------------

class PacedAgent:
    """An agent, in a process of its own, that offers `rate` events/s for
    `seconds` (frames of 512 built as they fall due), keeping what the
    broker does not take yet in its own queue as fb_agent's buffer does: the
    queue's peak is the backpressure it felt."""

    PER = 512

    def __init__(self, agent_id, rate, seconds):
        self.agent_id, self.rate, self.seconds = agent_id, rate, seconds
        self.n = int(rate * seconds) // self.PER * self.PER

    def run(self, addr, go, result):
        try:
            conn = Conn(addr, timeout=300)
            assert conn.hello(self.agent_id) == ("ack", 0)
            result.put((self.agent_id, "ready"))
            go.wait()
            result.put((self.agent_id, self._send(conn)))
        except Exception as e:
            result.put((self.agent_id, repr(e)))

    def _send(self, conn):
        conn.s.setblocking(False)
        t0 = time.time()
        chunks = self.n // self.PER
        due = sent = 0        # chunks fallen due / written out
        cur, off = None, 0    # the chunk being written
        acked, peak, buf = 0, 0, b""
        while acked < self.n:
            due = max(due, min(chunks, int((time.time() - t0) * self.rate / self.PER) + 1))
            peak = max(peak, (due - sent) * self.PER)
            busy = False
            if cur is None and sent < due:
                cur, off, busy = flood.frames(self.PER, self.PER, sent * self.PER + 1), 0, True
            if cur is not None:
                try:
                    off += conn.s.send(memoryview(cur)[off:])
                    busy = True
                    if off == len(cur):
                        cur, sent = None, sent + 1
                except BlockingIOError:
                    pass
            try:
                data = conn.s.recv(65536)
                if not data:
                    return f"closed by the broker after ack {acked}"
                buf += data
                busy = True
            except BlockingIOError:
                pass
            if not busy:
                # Held by the broker (socket full) or nothing due yet: sleep
                # in select rather than spin. Four spinning agents took 1.3
                # of the 2 cores of the full-scale run, and the broker the rest.
                select.select([conn.s], [conn.s] if cur is not None else [], [],
                              0.05 if cur is not None else 0.002)
            while len(buf) >= 8:
                ln = struct.unpack(">I", buf[4:8])[0]
                if len(buf) < 8 + ln:
                    break
                if buf[3] == ACK:
                    acked = struct.unpack(">Q", buf[8:16])[0]
                buf = buf[8 + ln:]
        conn.close()
        return ("done", peak, time.time() - t0)


def agent_counts(b, agents):
    """(stored, duplicates dropped, lost) from /status for {agent: n}, once
    a snapshot shows them all (or after 10 s)."""
    def table():
        return {a["id"]: a for a in b.status()["broker"]["agents"]}
    try:
        st = fbtest.wait_for(table, lambda t: all(t.get(a, {}).get("last_seq") == n
                                                  for a, n in agents.items()), 10, "agents")
    except AssertionError:
        st = table()
    stored = sum(st.get(a, {}).get("events", 0) for a in agents)
    dups = sum(st.get(a, {}).get("duplicates", 0) for a in agents)
    lost = sum(max(0, n - st.get(a, {}).get("last_seq", 0)) for a, n in agents.items())
    return stored, dups, lost


def scenario_overload(q):
    seconds = 5 if q.quick else 60
    n_subs = 100
    b = Broker(HeartbeatInterval="1s", LogLevel="info").start()
    # The sustainable rate: what n_subs subscribers take, end to end, when
    # agents wait for their acks (fabricbus publish, 4 of them).
    cal = 50_000 if q.quick else 200_000
    sinks = ws_sinks(b, n_subs, cal)
    b.wait_status(lambda s: len(s["websocket"]["subscribers"]) == n_subs, timeout=60)
    t0 = time.time()
    errs = wait_publishers(publish_all(b, {f"cal{i}": cal // 4 for i in range(4)}))
    for s in sinks:
        s.communicate(timeout=600)
    rate = cal / (time.time() - t0)
    assert not errs, errs
    # 10x that, offered by 4 paced agents, to the same number of subscribers.
    base = b.status()["broker"]["events"]["last_event_id"]
    agents = [PacedAgent(f"over{i}", 10 * rate / 4, seconds) for i in range(4)]
    total = sum(a.n for a in agents)
    sinks = [fbtest.track(subprocess.Popen([WS_SINK, "127.0.0.1", str(b.http_port),
                                            f"/ws/events?since={base}", str(total), str(base + 1)],
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True)) for _ in range(n_subs)]
    b.wait_status(lambda s: len(s["websocket"]["subscribers"]) == n_subs, timeout=60)
    go, result, procs = flood.start_ready(b.agent_addr, agents, timeout=120)
    held0 = b.status()["websocket"]["agents_held"]
    t0 = time.time()
    go.set()
    time.sleep(seconds)
    offered_end = time.time()
    peaks = []
    for _ in agents:
        who, what = progress_get(b, result, base, total, 1800)
        if not isinstance(what, tuple):
            FAILED.append(f"overload: agent {who}: {what}")
        else:
            peaks.append(what[1])
    for p in procs:
        p.join(60)
    acked_at = time.time()
    bad = 0
    for s in sinks:
        s.communicate(timeout=900)
        bad += s.returncode != 0
    delivered_at = time.time()
    st = b.status()
    held = st["websocket"]["agents_held"] - held0
    last = st["broker"]["events"]["last_event_id"]
    replay = subprocess.run([WS_SINK, "127.0.0.1", str(b.http_port), "/ws/events?since=0",
                             str(last), "1"], capture_output=True, text=True, timeout=900)
    stored, dups, lost = agent_counts(b, {a.agent_id: a.n for a in agents})
    # Recovery: one event's latency to a live subscriber after the flood.
    lat = probe_latency(b)
    SCALE.extend([
        ("sustainable rate (4 windowed agents, %d subscribers)" % n_subs, f"{rate:.0f} events/s"),
        (f"offered for {seconds} s (10x)", f"{10 * rate:.0f} events/s = {total} events"),
        ("accepted (acked) during the offer", f"{total / (acked_at - t0):.0f} events/s; "
         f"all acked {acked_at - offered_end:.1f} s after the offer ended"),
        ("backpressure", f"agents held {held} times; peak queue in an agent "
         f"{max(peaks or [0])} events"),
        ("recovery", f"all {n_subs} subscribers complete {delivered_at - offered_end:.1f} s after "
         f"the offer; then one event to a live subscriber in {lat * 1000:.1f} ms"),
    ])
    row(f"10x sustainable rate for {seconds} s", total,
        {"journal": (stored, 0, lost), "ws x%d" % n_subs: (total if not bad else 0, 0, 0 if not bad else total)},
        f"held {held}x, caught up {delivered_at - offered_end:.1f} s after; resent copies dropped "
        f"{dups}; journal replay 1..{last} in order: {'yes' if replay.returncode == 0 else 'NO'}")
    if replay.returncode != 0:
        FAILED.append(f"overload: journal replay: {replay.stderr.strip()[-200:]}")
    if bad:
        FAILED.append(f"overload: {bad} subscribers did not get every event in order")
    b.stop()


def progress_get(b, result, base, total, timeout):
    """result.get(), saying every 30 s how far the broker got (a full-scale
    run takes many minutes; a run cut short still shows its rate)."""
    import queue
    t0 = time.time()
    while True:
        try:
            return result.get(timeout=30)
        except queue.Empty:
            if time.time() - t0 > timeout:
                raise
            st = b.status()
            print(f"  .. {time.time() - t0:.0f} s: journaled "
                  f"{st['broker']['events']['last_event_id'] - base} of {total}, agents held "
                  f"{st['websocket']['agents_held']} times", flush=True)


def probe_latency(b):
    r = subprocess.Popen([FABRICBUS, "tail", "--http", b.http_addr, "--count", "1", "--timeout",
                          "30", "--events-only", "--quiet"], stdout=subprocess.PIPE, text=True)
    b.wait_status(lambda s: any(x["state"] == "live" for x in s["websocket"]["subscribers"]))
    t0 = time.time()
    fbtest.publish(b.agent_addr, "probe", generate=1)
    r.stdout.readline()
    dt = time.time() - t0
    r.wait(30)
    return dt


# ---- faults ----------------------------------------------------------------

def with_kafka():
    import kafka
    k = kafka.Kafka().start()
    return k


def kafka_keys(k):
    from test_kafka import DEFAULT_TOPICS
    return [key(json.loads(m.value)) for m in k.consume_all(DEFAULT_TOPICS, expected=None)]


def scenario_broker_kill9(q, k):
    n = 50_000 if q.quick else 300_000
    agents = {"k9a": n, "k9b": n}
    b = Broker(KafkaBrokers=k.bootstrap).start()
    tail = Tail(b.http_addr, os.path.join(b.workdir, "tail.err"))
    pubs = publish_all(b, agents)
    b.wait_status(lambda s: s["broker"]["events"]["total"] >= n // 2, timeout=120)
    b.kill9()
    time.sleep(1)
    b.start()
    errs = wait_publishers(pubs)
    want = expected(agents)
    kafka_wait(b)
    wait_until(lambda: len({key(d) for d in list(tail.events)} & want) == len(want), 120,
               "the tail got everything")
    tail.stop()
    row("broker kill -9 mid-publish, restart", 2 * n,
        {"journal": tally(journal_keys(b), want), "ws": tally([key(d) for d in tail.events], want),
         "kafka": tally(kafka_keys(k), want)},
        "publishers: " + ("all acked" if not errs else str(errs)))
    b.stop()


def kafka_wait(b, timeout=300):
    def done():
        ks = b.status()["broker"].get("kafka", {})
        return ks.get("backlog", 1) == 0 and ks.get("cursor") == ks.get("committed")
    wait_until(done, timeout, "Kafka caught up")


def scenario_kafka_restart(q, k):
    n = 50_000 if q.quick else 200_000
    agents = {"kfa": n, "kfb": n}
    b = Broker(KafkaBrokers=k.bootstrap).start()
    before = set(kafka_keys(k))
    pubs = publish_all(b, agents)
    b.wait_status(lambda s: s["broker"].get("kafka", {}).get("cursor", 0) >= 2000, timeout=120)
    k.kill()
    time.sleep(3)
    k.start()
    errs = wait_publishers(pubs)
    kafka_wait(b)
    want = expected(agents)
    row("Kafka kill -9 and restart mid-delivery", 2 * n,
        {"journal": tally(journal_keys(b), want), "kafka": tally(kafka_keys(k), want)},
        "publishers: " + ("all acked" if not errs else str(errs)) + f"; {len(before)} earlier")
    b.stop()


def scenario_subscribers(q):
    """A subscriber that stalls (never reads) and one that disconnects in the
    middle of a frame; a resuming subscriber and the journal lose nothing."""
    from test_slow_subscriber import RawWsClient
    n = 100_000 if q.quick else 500_000
    agents = {"suba": n, "subb": n}
    b = Broker(WsRingEvents="16384", WsQueueEvents="8192").start()
    tail = Tail(b.http_addr, os.path.join(b.workdir, "tail.err"))
    stalled = RawWsClient(b.http_port, "/ws/events")
    cutter = RawWsClient(b.http_port, "/ws/events")
    pubs = publish_all(b, agents)
    b.wait_status(lambda s: s["broker"]["events"]["total"] >= 1000, timeout=60)
    # Read part of a frame, then reset the connection.
    cutter.s.recv(3)
    cutter.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    cutter.s.close()
    errs = wait_publishers(pubs)
    want = expected(agents)
    try:
        b.wait_status(lambda s: s["websocket"]["dropped_slow"] >= 1, timeout=60)
    except AssertionError:
        pass  # not cut off: it reads everything below
    st = b.status()
    # The stalled one: what it got before its notice, then resume from it.
    got, resume = [], None
    try:
        for op, payload in stalled.frames():
            if op == 1:
                d = json.loads(payload)
                if fbtest.is_missed_notice(d):
                    resume = int(d["Events"][0]["Oem"]["Fabricbus"]["ResumeSince"])
                else:
                    got.append(key(d))
                    if len(got) == len(want):
                        break
            elif op == 8:
                break
    except OSError:
        pass
    if resume is None and got:
        resume = len(got)
    r = subprocess.run([FABRICBUS, "tail", "--http", b.http_addr, "--since", str(resume or 0),
                        "--idle-exit", "3", "--events-only", "--quiet"], capture_output=True,
                       text=True, timeout=600)
    got += [key(json.loads(line)) for line in r.stdout.splitlines() if line.strip()]
    wait_until(lambda: len({key(d) for d in list(tail.events)} & want) == len(want), 120,
               "the tail got everything")
    tail.stop()
    alive = b.proc.poll() is None
    row("stalled subscriber (cut, resumes) + one reset mid-frame", 2 * n,
        {"journal": tally(journal_keys(b), want), "ws": tally([key(d) for d in tail.events], want),
         "ws stalled+resume": tally(got, want)},
        f"cut off: {st['websocket']['dropped_slow']}, broker {'up' if alive else 'DOWN'}; "
        + ("publishers all acked" if not errs else str(errs)))
    b.stop()


def scenario_disk_full(q):
    """JournalDir on a 4 MiB tmpfs: every event the publisher saw acked is
    in the journal, also after a restart; what the broker did and said."""
    work = tempfile.mkdtemp(prefix="fb-load-full-")
    jdir = os.path.join(work, "journal")
    os.makedirs(jdir)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "fb-load-full", jdir], check=True)
    fbtest.at_exit(lambda: subprocess.run(["umount", "-l", jdir], capture_output=True))
    b = Broker(workdir=work, JournalSegmentSize="1M", JournalDir=jdir).start()
    tail = Tail(b.http_addr, os.path.join(work, "tail.err"))
    n = 200_000
    acked, closed = raw_publish(b, "full", n)
    time.sleep(2)
    alive = b.proc.poll() is None
    rc = b.proc.returncode
    log = b.log()
    said = [line for line in log.splitlines() if "No space" in line or "ENOSPC" in line
            or "disk full" in line.lower() or "space" in line.lower()]
    restarted = "no"
    if not alive:
        try:
            b.start()
            restarted = "yes"
        except Exception as e:
            restarted = f"failed ({e})"
    keys = journal_keys(b) if b.proc.poll() is None else []
    tail.stop()
    acked_set = expected({"full": acked})
    in_journal = sum(1 for k in keys if k[0] == "full")
    note = (f"agent: acked {acked} of {n}, then {closed}; journal holds {in_journal}; broker "
            f"{'kept running' if alive else 'exited ' + str(rc)}, restart: {restarted}; log: "
            f"{said[0][25:160] if said else 'nothing about the disk'}")
    row("journal disk full (4 MiB tmpfs)", acked,
        {"journal": tally(keys, acked_set), "ws": tally([key(d) for d in tail.events], acked_set)},
        note)
    if b.proc.poll() is None:
        b.stop()
    subprocess.run(["umount", "-l", jdir], capture_output=True)


def raw_publish(b, agent_id, n, quiet=15):
    """Send n events at once on a raw connection; returns (last ACK seen,
    how it ended) once the broker closes or stays quiet for `quiet` s."""
    c = Conn(b.agent_addr, timeout=30)
    assert c.hello(agent_id) == ("ack", 0)
    data = flood.frames(n, 512)

    def send():
        try:
            c.send(data)
        except OSError:
            pass
    threading.Thread(target=send, daemon=True).start()
    acked, last = 0, time.monotonic()
    while True:
        # Quiet means no ACK: the broker's HEARTBEATs go on while it holds
        # the acks back (a full disk), so they must not count.
        left = quiet - (time.monotonic() - last)
        try:
            if left <= 0:
                raise TimeoutError
            f = c.read_frame(timeout=left)
        except (TimeoutError, OSError):
            return acked, f"no ACK for {quiet} s"
        if f is None:
            return acked, "closed by the broker"
        if f[0] == ACK:
            acked, last = struct.unpack(">Q", f[1])[0], time.monotonic()
            if acked == n:
                return acked, "all acked"


def scenario_ib_agent(q):
    """kill -9 of the IB agent while a cable goes down and up; restart it."""
    import chain
    ch = chain.FabricChain().start()
    try:
        b = ch.broker
        tail = Tail(b.http_addr, os.path.join(b.workdir, "tail.err"))
        ch.sim.unlink("leaf1", 3)
        time.sleep(1.5)
        ch.ib.send_signal(signal.SIGKILL)
        ch.ib.wait()
        ch.sim.relink("leaf1", 3)
        ch.start_ib_agent()
        time.sleep(2)
        st = b.status()
        seq = next(a["last_seq"] for a in st["broker"]["agents"] if a["id"] == "ib-sw")
        want = expected({"ib-sw": seq})
        gaps = next(a.get("gaps", 0) for a in st["broker"]["agents"] if a["id"] == "ib-sw")
        with urllib.request.urlopen(f"http://{b.http_addr}/fabric/map?nodes=node003", timeout=10) as f:
            m = json.load(f)
        state = m["Nodes"]["node003"]["Ports"][0].get("LinkState")
        tail.stop()
        row("IB agent kill -9 (cable down before, up while dead), restart", seq,
            {"journal": tally(journal_keys(b), want), "ws": tally([key(d) for d in tail.events], want)},
            f"seq gaps {gaps}; node003 link after restart: {state}")
        if state != "up":
            FAILED.append(f"IB agent restart: node003 is {state} in /fabric/map, want up")
    finally:
        ch.stop(check=False)


def scenario_slurm(q):
    """kill -9 of fabricbus-slurm with a drained node relinked while it is
    dead; slurmctld down while a cable goes down."""
    import slurm_rig
    base = {"HoldDown": "0ms", "StableFor": "2s", "MaxDrainNodes": "4", "MaxDrainPercent": "0",
            "RetryInterval": "500ms"}
    r = slurm_rig.SlurmRig(slurm_nodes=8, base=base).start()
    try:
        a = r.adapter().start()
        r.wait_ready(a)
        r.chain.sim.unlink("leaf1", 6)
        r.cluster.wait_node("node006", slurm_rig.is_ours, 15, "drain")
        a.kill9()
        r.chain.sim.relink("leaf1", 6)
        time.sleep(0.5)
        a.start()
        r.wait_ready(a)
        ok1 = try_wait(lambda: r.cluster.wait_node("node006", slurm_rig.not_drained, 20, "undrain"))
        row("Slurm adapter kill -9 (relink while dead), restart", 2,
            {"slurm": (1 + ok1, 0, 1 - ok1)}, "drain before the kill, undrain after the restart")
        r.cluster.stop_ctld()
        r.chain.sim.unlink("leaf1", 4)
        time.sleep(2)
        r.cluster.start_ctld()
        ok2 = try_wait(lambda: r.cluster.wait_node("node004", slurm_rig.is_ours, 30, "drain"))
        r.chain.sim.relink("leaf1", 4)
        ok3 = try_wait(lambda: r.cluster.wait_node("node004", slurm_rig.not_drained, 30, "undrain"))
        row("slurmctld down while a cable fails, back after 2 s", 2,
            {"slurm": (ok2 + ok3, 0, 2 - ok2 - ok3)}, "drain once slurmctld is back, then undrain")
        if not (ok1 and ok2 and ok3):
            FAILED.append("Slurm: a drain or undrain never happened")
        a.stop()
    finally:
        r.stop(check=False)


def try_wait(f):
    try:
        f()
        return 1
    except AssertionError as e:
        print(f"  {e}", flush=True)
        return 0


# ---- attacks ---------------------------------------------------------------

def scenario_attacks(q):
    import test_attacks
    import test_fairness
    for t in test_attacks.TESTS + [test_fairness.test_windowed_agent_gets_a_third_beside_two_flooders]:
        doc = " ".join((t.__doc__ or t.__name__).split())
        doc = doc[:150] + ("..." if len(doc) > 150 else "")
        try:
            t()
            ATTACKS.append((t.__name__[5:].replace("_", " "), "refused/held", doc))
        except Exception as e:
            ATTACKS.append((t.__name__[5:].replace("_", " "), "FAILED", repr(e)[:200]))
            FAILED.append(f"attack {t.__name__}: {e!r}"[:300])
    ATTACKS.extend(extra_attacks())


def extra_attacks():
    """The issue's other abuses, tried here: an unauthenticated publish on
    loopback, a job registry flood, the largest ?nodes= query."""
    out = []
    b = Broker().start()
    try:
        p = fbtest.publish(b.agent_addr, "ib@leaf01", events=[
            {"kind": "link_down", "link_class": "host", "switch": "leaf01", "port": 7,
             "node": "node003"}], timeout=10)
        out.append(("unauthenticated publish (plain TCP, loopback)",
                    "accepted" if p.returncode == 0 else "refused",
                    "by design without AgentTls: docs/security.md (test_mtls covers AgentTls=required)"))
        # The issue: 12 registrations of 65,536 nodes stalled the loop 2.2 s.
        names = [f"node{j:05d}" for j in range(1, 65537)]
        codes, worst, t0 = {}, 0.0, time.time()
        for i in range(12):
            body = json.dumps({"JobId": str(100000 + i), "User": "x", "Nodes": names}).encode()
            req = urllib.request.Request(f"http://{b.http_addr}/fabric/jobs", data=body,
                                         headers={"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=60) as f:
                    codes[f.status] = codes.get(f.status, 0) + 1
            except urllib.error.HTTPError as e:
                codes[e.code] = codes.get(e.code, 0) + 1
            worst = max(worst, status_latency(b)[0])
        dt = time.time() - t0
        out.append(("job registry flood (12 POST /fabric/jobs x 65,536 nodes)",
                    " ".join(f"{c}x{n}" for c, n in sorted(codes.items())),
                    f"{dt:.1f} s, RSS {rss_mib(b.proc.pid, 'VmRSS')} MiB, /status worst "
                    f"{worst * 1000:.0f} ms between them"))
        expr = "node[00001-65536]"
        t0 = time.time()
        try:
            with urllib.request.urlopen(f"http://{b.http_addr}/fabric/map?nodes={expr}",
                                        timeout=30) as f:
                code, size = f.status, len(f.read())
        except urllib.error.HTTPError as e:
            code, size = e.code, len(e.read())
        out.append((f"largest ?nodes= query ({expr})", str(code),
                    f"{(time.time() - t0) * 1000:.0f} ms, {size} bytes"))
    finally:
        b.stop()
    return out


def status_latency(b):
    t0 = time.monotonic()
    with urllib.request.urlopen(f"http://{b.http_addr}/status", timeout=10) as r:
        doc = r.read()
    return time.monotonic() - t0, doc


# ---- main ------------------------------------------------------------------

def table(head, rows):
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)) + " |"
    print(line(head))
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for r in rows:
        print(line(r))


def fmt(s):
    return "/".join(str(x) for x in s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    q = ap.parse_args()
    only = set(filter(None, q.only.split(",")))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    k = None
    plan = [("scale", lambda: scenario_scale(q)), ("overload", lambda: scenario_overload(q)),
            ("subscribers", lambda: scenario_subscribers(q)),
            ("diskfull", lambda: scenario_disk_full(q)),
            ("broker", lambda: scenario_broker_kill9(q, kafka_once())),
            ("kafka", lambda: scenario_kafka_restart(q, kafka_once())),
            ("ib", lambda: scenario_ib_agent(q)), ("slurm", lambda: scenario_slurm(q)),
            ("attacks", lambda: scenario_attacks(q))]
    started = {}

    def kafka_once():
        if "k" not in started:
            started["k"] = with_kafka()
        return started["k"]
    for name, f in plan:
        if only and name not in only:
            continue
        t0 = time.time()
        print(f"== {name}", flush=True)
        try:
            f()
        except Exception:
            traceback.print_exc()
            FAILED.append(f"scenario {name} did not finish: {traceback.format_exc().splitlines()[-1]}")
        print(f"== {name}: {time.time() - t0:.0f} s", flush=True)
    if "k" in started:
        started["k"].stop()
    print("\n### Scale and overload")
    table(("what", "figure"), SCALE)
    sinks = ["journal", "ws", "kafka", "slurm"]
    print("\n### Faults (per sink: delivered/dup/lost; extra sinks in the note)")
    rows = []
    for name, sent, s, note in ROWS:
        extra = "; ".join(f"{k} {fmt(v)}" for k, v in s.items() if k not in sinks)
        rows.append((name, sent) + tuple(fmt(s[k]) if k in s else "-" for k in sinks) +
                    ((note + ("; " + extra if extra else "")),))
    table(("scenario", "sent", "journal", "ws", "kafka", "slurm", "note"), rows)
    print("\n### Attacks")
    table(("attack", "result", "detail"), ATTACKS)
    if FAILED:
        print("\nFAILED:\n  " + "\n  ".join(FAILED))
    fbtest._cleanup()
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
