"""Kafka fan-out against a real Kafka (tests/kafka/kafka.sh: Apache Kafka from
Maven Central, KRaft, one node on 127.0.0.1): every committed event reaches
Kafka exactly once with per-key order, across a Kafka outage and a broker
restart; two brokers share one Kafka and a consumer group survives losing a
member; bad configuration and unreachable Kafka give clear errors.

Consumers are kcat and python confluent_kafka (Debian's, so /usr/bin/python3).
One Kafka per test function: it takes seconds to start.
"""
import json
import os
import re
import signal
import subprocess
import time

import kafka
from fbtest import (FABRICBUS, FABRICBUSD, Broker, check_redfish_event, publish_async,
                    read_jsonl, run, tail_async, track, wait_for)

DEFAULT_MAP = {"Fabric": "fabric.events", "NetworkDevice": "fabric.netdev",
               "ResourceEvent": "fabric.resource"}
CATCH_ALL = "fabric.other"
DEFAULT_TOPICS = ["fabric.events", "fabric.netdev", "fabric.resource", "fabric.other"]
HEADERS = ("fabricbus-event-id", "fabricbus-severity", "fabricbus-agent-id", "fabricbus-broker")


def publish_links(broker_addr, agent_id, n, switch, timeout=600):
    """`fabricbus publish --count n` of link_down on `switch`:
    Fabric.1.0.DownstreamLinkDropped (topic fabric.events, Warning), port
    cycling 1..36, so 36 keys /redfish/v1/Fabrics/IB/Switches/<switch>/Ports/N."""
    tmpl = json.dumps({"kind": "link_down", "link_class": "host", "switch": switch})
    args = [FABRICBUS, "publish", "--broker", broker_addr, "--agent-id", agent_id,
            "--timeout", str(timeout), "--count", str(n), "--template", tmpl]
    return track(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))


def topic_for(message_id, table=DEFAULT_MAP, catch_all=CATCH_ALL):
    return table.get(message_id.split(".", 1)[0], catch_all)


def kafka_stats(b):
    st = b.status()["broker"]
    assert "kafka" in st, f"/status has no broker.kafka object: {sorted(st)}"
    return st["kafka"]


def wait_kafka_stats(b, pred, timeout=120, what="kafka status"):
    return wait_for(lambda: kafka_stats(b), pred, timeout, f"{what} (/status kafka)", interval=0.1)


def wait_publishers(pubs, timeout=900):
    for name, p in pubs:
        _, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, f"publisher {name} exited {p.returncode}: {err}"


def check_message(m):
    """One Kafka message = one Redfish Event; key and headers agree with it.
    Returns (record, EventId)."""
    doc = json.loads(m.value)
    rec = check_redfish_event(doc)
    eid = int(rec["EventId"])
    missing = [h for h in HEADERS if h not in m.headers]
    assert not missing, f"message lacks headers {missing}: {m}"
    assert m.headers["fabricbus-event-id"] == str(eid), m
    assert m.headers["fabricbus-severity"] == rec["MessageSeverity"], m
    assert m.headers["fabricbus-agent-id"] == rec["Oem"]["Fabricbus"]["AgentId"], m
    assert re.fullmatch(r"[0-9a-fA-F]{1,16}", m.headers["fabricbus-broker"]), m
    assert m.key == rec["OriginOfCondition"]["@odata.id"], m
    return rec, eid


def check_per_key_order(msgs):
    """Per key: one partition, and EventIds strictly increasing in offset order
    (messages of one broker). Returns the number of distinct keys."""
    where = {}
    last = {}
    for m in sorted(msgs, key=lambda m: (m.topic, m.partition, m.offset)):
        eid = int(m.headers["fabricbus-event-id"])
        k = (m.topic, m.headers["fabricbus-broker"], m.key)
        assert where.setdefault(k, m.partition) == m.partition, \
            f"key {m.key} in partitions {where[k]} and {m.partition} of {m.topic}"
        assert eid > last.get(k, 0), \
            f"key {m.key}: EventId {eid} at offset {m.offset} after EventId {last[k]}"
        last[k] = eid
    return len(last)


def kafka_100k_exactly_once_per_key_order():
    """4 publishers x 25k events through fabricbusd into Kafka: exactly 100000
    messages (kcat), each EventId once, the right topic, per-key order; a
    KafkaSubscription topic gets exactly the events its filter matches."""
    k = kafka.Kafka().start()
    print(f"  kafka started in {k.start_seconds:.1f}s")
    b = Broker(KafkaBrokers=k.bootstrap,
               KafkaSubscription="fabric.sub.warning?severity=Warning").start()
    per = 25000
    # Two publishers send the default 'test' event (ResourceEvent -> fabric.resource,
    # severity OK), two send link_down on their own switch (Fabric -> fabric.events,
    # Warning): keys vary by port, and keys repeat across the stream.
    pubs = [("k100-test0", publish_async(b.agent_addr, "k100-test0", per)),
            ("k100-test1", publish_async(b.agent_addr, "k100-test1", per))]
    for i in range(2):
        pubs.append((f"k100-link{i}", publish_links(b.agent_addr, f"k100-link{i}", per,
                                                    f"k100sw{i}")))
    wait_publishers(pubs)
    total = 4 * per
    ks = wait_kafka_stats(b, lambda s: s["cursor"] >= total, timeout=600,
                          what=f"cursor reaching {total}")
    assert ks["backlog"] == 0, ks
    assert ks["connected"] is True, ks
    # Wait for the count, then a little longer: duplicates would show up as more.
    n = k.wait_count(DEFAULT_TOPICS, total, timeout=120, stable=3)
    assert n == total, f"Kafka holds {n} messages in {DEFAULT_TOPICS}, want exactly {total}"

    msgs = []
    for t in DEFAULT_TOPICS:
        if k.partitions(t):
            msgs += k.kcat_consume(t)
    assert len(msgs) == total, f"kcat read {len(msgs)} messages, want {total}"
    ids = {}
    seqs = {}
    epochs = set()
    for m in msgs:
        rec, eid = check_message(m)
        assert eid not in ids, f"EventId {eid} twice: offsets {ids[eid]} and {m.topic}[{m.partition}]@{m.offset}"
        ids[eid] = f"{m.topic}[{m.partition}]@{m.offset}"
        assert m.topic == topic_for(rec["MessageId"]), f"{rec['MessageId']} went to {m.topic}"
        oem = rec["Oem"]["Fabricbus"]
        seqs.setdefault(oem["AgentId"], set()).add(int(oem["Sequence"]))
        epochs.add(m.headers["fabricbus-broker"])
    assert set(ids) == set(range(1, total + 1)), "EventIds are not exactly 1..100000"
    assert len(epochs) == 1, f"one broker, several fabricbus-broker headers: {epochs}"
    for a, s in seqs.items():
        assert s == set(range(1, per + 1)), f"agent {a}: {len(s)} distinct sequences of {per}"
    assert len(seqs) == 4, sorted(seqs)
    nkeys = check_per_key_order(msgs)
    assert nkeys == 3 * 36, f"{nkeys} keys, want 108 (loadgen + 2 link switches, 36 ports each)"
    used = {(m.topic, m.partition) for m in msgs}
    assert len({p for t, p in used if t == "fabric.resource"}) > 1, "all keys in one partition"

    # The subscription: exactly the Warning events (the link_downs), in their
    # own topic, each once, with the same per-key order.
    sub = k.kcat_consume("fabric.sub.warning")
    want = {int(m.headers["fabricbus-event-id"]) for m in msgs
            if m.headers["fabricbus-severity"] == "Warning"}
    assert len(want) == 2 * per
    got = [check_message(m)[1] for m in sub]
    assert len(got) == len(set(got)), "duplicates in the KafkaSubscription topic"
    assert set(got) == want, f"subscription topic: {len(got)} events, want {len(want)}"
    check_per_key_order(sub)

    st = b.status()["broker"]
    assert st["events"]["total"] == total, st["events"]
    assert kafka_stats(b)["errors"] == 0, kafka_stats(b)
    assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]
    k.stop()


KAFKA_DOWN_RE = re.compile(r"(?i)kafka.*(unreachable|down|refused|cannot connect|"
                           r"not reachable|connect.*fail|transport)")


def kafka_outage_nothing_lost_nothing_duplicated():
    """SIGKILL Kafka in mid-delivery; publish 20k while it is down (acked from
    the journal); restart fabricbusd while Kafka is still down (clear log
    line, backlog in /status); start Kafka on the same data: every event
    arrives, none twice (confluent_kafka consumer)."""
    k = kafka.Kafka().start()
    b = Broker(KafkaBrokers=k.bootstrap).start()
    first = 30000
    p = publish_async(b.agent_addr, "outage-pre", first)
    # Kill Kafka once deliveries are under way: some of these may be in
    # Kafka without a delivery report, which the resume must not resend.
    wait_kafka_stats(b, lambda s: s["cursor"] >= 2000, timeout=120, what="first deliveries")
    k.kill()
    print(f"  Kafka killed at {kafka_stats(b)}")
    wait_publishers([("outage-pre", p)])

    n = 20000
    t0 = time.time()
    p = publish_async(b.agent_addr, "outage-down", n)
    wait_publishers([("outage-down", p)])  # acked from the journal, Kafka down
    print(f"  published {n} with Kafka down in {time.time() - t0:.1f}s")
    total = first + n
    # /status is a snapshot refreshed every 100 ms: wait for one taken after
    # the last commit, not just for connected=false.
    ks = wait_kafka_stats(b, lambda s: not s["connected"] and s["committed"] == total, timeout=60,
                          what="connected=false with every event committed")
    assert ks["backlog"] >= n, f"backlog {ks['backlog']} with Kafka down, want >= {n}: {ks}"
    assert ks["cursor"] + ks["backlog"] == total, ks
    assert b.stop() == 0, "fabricbusd did not exit cleanly with Kafka down:\n" + b.log()[-3000:]

    log_before = len(b.log())
    b.start()  # same journal; Kafka still down
    ks = wait_kafka_stats(b, lambda s: s["backlog"] >= n and s["cursor"] + s["backlog"] == total,
                          timeout=60, what="backlog after restart")
    assert ks["connected"] is False, ks
    deadline = time.time() + 60
    while not KAFKA_DOWN_RE.search(b.log()[log_before:]) and time.time() < deadline:
        time.sleep(0.2)
    assert KAFKA_DOWN_RE.search(b.log()[log_before:]), \
        "no clear Kafka-unreachable line in the log:\n" + b.log()[log_before:][-3000:]
    assert k.bootstrap in b.log()[log_before:], "the log does not name the Kafka brokers"
    # Everything else keeps working: a WebSocket subscriber replays the journal.
    out = os.path.join(b.workdir, "tail.jsonl")
    tail = tail_async(b.http_addr, out, ["--since", "0", "--count", str(total), "--timeout", "300"])
    assert tail.wait(timeout=400) == 0, tail.stderr.read().decode()
    assert len(read_jsonl(out)) == total

    k.start()  # same data dir
    ks = wait_kafka_stats(b, lambda s: s["cursor"] == total and s["backlog"] == 0, timeout=300,
                          what="all delivered after Kafka came back")
    assert ks["connected"] is True, ks
    print(f"  after the outage: {ks}")
    got = k.wait_count(DEFAULT_TOPICS, total, timeout=60, stable=3)
    assert got == total, f"Kafka holds {got} messages, want exactly {total}"
    msgs = k.consume_all(DEFAULT_TOPICS, expected=None, timeout=300)
    assert len(msgs) == total, f"consumer read {len(msgs)} messages, want {total}"
    eids = [check_message(m)[1] for m in msgs]
    dups = len(eids) - len(set(eids))
    assert dups == 0, f"{dups} duplicated EventIds"
    assert set(eids) == set(range(1, total + 1)), \
        f"missing EventIds: {sorted(set(range(1, total + 1)) - set(eids))[:20]}"
    check_per_key_order(msgs)
    assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]
    k.stop()


def consume_async(k, group, topics, out_path, extra=()):
    """A `fabricbus consume --with-meta` group member writing JSON lines to out_path."""
    args = [FABRICBUS, "consume", "--kafka", k.bootstrap, "--group", group,
            "--topics", ",".join(topics), "--from-beginning", "--with-meta"] + list(extra)
    out = open(out_path, "wb")
    err = open(out_path + ".err", "wb")
    return track(subprocess.Popen(args, stdout=out, stderr=err))


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for line in f if line.endswith(b"\n"))


def read_complete_jsonl(path):
    """JSON lines of a member that may have died mid-line: drop a torn last line."""
    with open(path, "rb") as f:
        data = f.read()
    return [json.loads(line) for line in data.split(b"\n")[:-1] if line.strip()]


def wait_until(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout}s")


def check_meta_line(d):
    """A --with-meta line agrees with the event it carries. Returns
    ((broker epoch, EventId), key)."""
    rec = check_redfish_event(d["event"])
    assert d["event_id"] == int(rec["EventId"]), d
    assert d["key"] == rec["OriginOfCondition"]["@odata.id"], d
    assert d["broker"] and re.fullmatch(r"[0-9a-fA-F]{1,16}", d["broker"]), d
    return (d["broker"], d["event_id"]), d["key"]


def two_brokers_one_kafka_consumer_group_failover():
    """Two fabricbusd (own journals, own publishers) produce to one Kafka; two
    `fabricbus consume` members share a group; kill -9 one in mid-stream; the
    other takes over its partitions; together they print every event of
    both brokers (at-least-once across the kill), per-key order in each."""
    k = kafka.Kafka().start()
    topics = ["fabric.events", "fabric.resource"]
    for t in topics:
        k.create_topic(t, 4)
    b1 = Broker(KafkaBrokers=k.bootstrap).start()
    b2 = Broker(KafkaBrokers=k.bootstrap).start()
    group = "fb-test-failover"
    outs = [os.path.join(b1.workdir, f"member{i}.jsonl") for i in (1, 2)]
    members = [consume_async(k, group, topics, o) for o in outs]

    def assigned(i):
        with open(outs[i] + ".err", "r", errors="replace") as f:
            return "assign" in f.read().lower()

    # Both join before the first events, so each owns partitions.
    wait_until(lambda: assigned(0) and assigned(1), 60, "both members assigned")
    for mb in members:
        assert mb.poll() is None, f"fabricbus consume exited {mb.returncode}"

    half = 10000

    def publish_phase():
        return [("fo-broker-a", publish_links(b1.agent_addr, "fo-broker-a", half, "swA")),
                ("fo-broker-b", publish_links(b2.agent_addr, "fo-broker-b", half, "swB"))]

    wait_publishers(publish_phase())
    wait_until(lambda: count_lines(outs[0]) > 100 and count_lines(outs[1]) > 100, 120,
               "both members printing")
    members[0].send_signal(signal.SIGKILL)
    members[0].wait()
    before_kill = read_complete_jsonl(outs[0])
    # Phase 2: the killed member's keys now belong to the survivor (after the
    # group's session timeout).
    wait_publishers(publish_phase())
    total = 2 * half

    def union():
        seen = set()
        for o in outs:
            for d in read_complete_jsonl(o):
                seen.add((d["broker"], d["event_id"]))
        return seen

    def complete():
        u = union()
        epochs = {e for e, _ in u}
        return len(epochs) == 2 and all(
            {i for e2, i in u if e2 == e} >= set(range(1, total + 1)) for e in epochs)

    try:
        wait_until(complete, 180, "the union of both members covering every event of both brokers")
    except AssertionError:
        # Say where events went missing: per broker, in Kafka, per member.
        u = union()
        for e in sorted({e for e, _ in u}):
            missing = sorted(set(range(1, total + 1)) - {i for e2, i in u if e2 == e})
            print(f"  broker {e}: {len(missing)} missing, first {missing[:10]}")
        for b in (b1, b2):
            print(f"  kafka stats: {kafka_stats(b)}")
        for o in outs:
            with open(o + ".err", errors="replace") as f:
                print(f"  {o}.err (tail):\n" + "".join(f.readlines()[-15:]))
        raise
    time.sleep(2)
    members[1].send_signal(signal.SIGTERM)
    assert members[1].wait(timeout=30) == 0, "fabricbus consume did not exit 0 on SIGTERM"
    u = union()
    assert len(u) == 2 * total, f"{len(u)} distinct (broker, EventId), want {2 * total}: extras?"

    m1 = read_complete_jsonl(outs[0])
    m2 = read_complete_jsonl(outs[1])
    keys1 = {d["key"] for d in before_kill}
    keys2 = {d["key"] for d in m2}
    assert keys1 & keys2, "the survivor never printed a key of the killed member: no takeover"
    assert len(m1) < 2 * total, "the killed member printed everything; the kill proved nothing"
    for name, lines in (("member1", m1), ("member2", m2)):
        last = {}
        for d in lines:
            (epoch, eid), key = check_meta_line(d)
            # After a takeover the survivor restarts from the last committed
            # offset: it may print again what the dead member printed, but
            # within one member's output a key's EventIds only grow.
            assert eid > last.get((epoch, key), 0), \
                f"{name}: key {key} EventId {eid} after {last[(epoch, key)]}"
            last[(epoch, key)] = eid
    dup = len(m1) + len(m2) - 2 * total
    print(f"  member1 {len(m1)} lines (killed), member2 {len(m2)}, printed twice: {dup}")
    for b in (b1, b2):
        ks = wait_kafka_stats(b, lambda s: s["backlog"] == 0 and s["cursor"] == total, timeout=60,
                              what="backlog 0")
        assert ks["cursor"] == total, ks
        assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]
    # Kafka itself holds each event exactly once: two brokers, two epochs.
    msgs = k.consume_all(["fabric.events"], expected=None)
    assert len(msgs) == 2 * total, len(msgs)
    assert len({(m.headers["fabricbus-broker"], m.headers["fabricbus-event-id"])
                for m in msgs}) == 2 * total
    k.stop()


def fabricbusd_config_error(*opts):
    """Run fabricbusd with -o options (and isolated ports/journal); returns
    (exit status, stderr)."""
    b = Broker()
    args = [FABRICBUSD]
    for key, v in b.overrides.items():
        args += ["-o", f"{key}={v}"]
    args += list(opts)
    r = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=b.workdir)
    return r.returncode, r.stdout + r.stderr


def kafka_bad_config_and_unreachable_give_clear_errors():
    """A malformed KafkaTopicMap or kafka.* property stops fabricbusd with exit
    2 naming the key (and file:line); unreachable KafkaBrokers do not stop
    WebSocket service, and the log and /status say Kafka is unreachable."""
    bad_maps = [
        ("Fabric:fabric.events,NetworkDevice:fabric.netdev", r"catch-all"),
        ("Fabric:bad topic!,*:fabric.other", r"topic 'bad topic!'"),
        ("Fabric fabric.events,*:fabric.other", r"'Fabric fabric.events'.*Prefix:topic"),
    ]
    for value, why in bad_maps:
        rc, err = fabricbusd_config_error("-o", f"KafkaTopicMap={value}")
        assert rc == 2, f"KafkaTopicMap={value}: exit {rc}, want 2: {err}"
        assert "KafkaTopicMap" in err, f"error does not name the key: {err}"
        assert re.search(why, err), f"KafkaTopicMap={value}: error does not say why: {err}"
        assert len(err.strip().splitlines()) <= 3, f"not one clear error: {err}"

    # The same from a file names file:line.
    b = Broker()
    conf = os.path.join(b.workdir, "bad.conf")
    with open(conf, "w") as f:
        f.write("# test\nKafkaBrokers=127.0.0.1:9\nKafkaTopicMap=Fabric:fabric.events\n")
    r = subprocess.run([FABRICBUSD, "-f", conf, "--check-config"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, f"exit {r.returncode}: {r.stderr}"
    assert f"{conf}:3" in r.stderr and "KafkaTopicMap" in r.stderr, r.stderr

    rc, err = fabricbusd_config_error("-o", "kafka.no.such.property=1")
    assert rc == 2, f"kafka.no.such.property: exit {rc}: {err}"
    assert "kafka.no.such.property" in err, err
    rc, err = fabricbusd_config_error("-o", "KafkaSubscription=bad topic?severity=Warning")
    assert rc == 2 and "KafkaSubscription" in err, f"exit {rc}: {err}"
    rc, err = fabricbusd_config_error("-o", "KafkaSubscription=fabric.x?severity=Loud")
    assert rc == 2 and "KafkaSubscription" in err, f"exit {rc}: {err}"

    # Unreachable brokers: a port nobody listens on.
    from fbtest import free_port
    dead = f"127.0.0.1:{free_port()}"
    b = Broker(KafkaBrokers=dead).start()
    n = 500
    p = publish_async(b.agent_addr, "unreach", n)
    wait_publishers([("unreach", p)])
    out = os.path.join(b.workdir, "tail.jsonl")
    tail = tail_async(b.http_addr, out, ["--since", "0", "--count", str(n), "--timeout", "120"])
    assert tail.wait(timeout=180) == 0, tail.stderr.read().decode()
    assert len(read_jsonl(out)) == n
    ks = wait_kafka_stats(b, lambda s: s["backlog"] == n, timeout=60, what=f"backlog {n}")
    assert ks["connected"] is False and ks["cursor"] == 0, ks
    wait_until(lambda: KAFKA_DOWN_RE.search(b.log()) and dead in b.log(), 60,
               "a Kafka-unreachable log line naming " + dead)
    assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]


if __name__ == "__main__":
    kafka.fetch()
    run(kafka_100k_exactly_once_per_key_order,
        kafka_outage_nothing_lost_nothing_duplicated,
        two_brokers_one_kafka_consumer_group_failover,
        kafka_bad_config_and_unreachable_give_clear_errors)
