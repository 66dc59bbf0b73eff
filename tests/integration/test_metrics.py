"""Prometheus GET /metrics of fabricbusd and of every long-running daemon.

Each scrape is parsed with prometheus_client.parser (Debian's
python3-prometheus-client), the reference parser of the text format 0.0.4,
and checked for the conventions docs/operations.md promises: HELP and TYPE
for every family, fabricbus_ names, counters ending in _total, durations in
_seconds and sizes in _bytes, histogram buckets cumulative with +Inf equal
to _count. Then each test makes events flow and asserts that the counters
move by what flowed:

- broker_counters_move_with_events: N events published through one agent
  connection with one WebSocket subscriber: events in, out to the journal
  and out to the WebSocket each grow by exactly N; fsyncs are observed in
  the histogram; the journal grows; agent and HTTP connections are counted.
- broker_kafka_metrics: with a real Kafka, N events move the kafka sink by
  N and the backlog drains to 0 at the newest EventId; Kafka killed, the
  connected gauge drops to 0 and the backlog counts what waits.
- agents_and_slurm_adapter_metrics: the ibsim chain with fabricbus-agent-ib
  and one fabricbus-agent-node on --metrics, and fabricbus-slurm on
  --metrics against a real slurmctld: poll rounds are observed in the
  agents' histograms, an Unlink moves the IB agent's sent events, and the
  adapter's drain and undrain counters of cause link_down become 1.
- snmp_agent_metrics: a linkDown trap from snmpd (network namespace) moves
  fabricbus_snmp_traps_total{result="event"} and the packets counter.
- pmix_adapter_metrics: fabricbus-pmix follows the broker; its position
  gauge reaches the newest EventId published.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_metrics.py [test_name ...]
"""
import os
import subprocess
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

import fbtest
from fbtest import Broker, free_port, main, publish, tail_async, wait_for

CONTENT_TYPE = "text/plain; version=0.0.4"


class Scrape:
    """One parsed /metrics: families by name, samples by (name, labels)."""

    def __init__(self, text):
        self.text = text
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.samples = {}
        for f in self.families.values():
            for s in f.samples:
                self.samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
        check_conventions(self)

    def get(self, name, **labels):
        """The value of one sample; 0 when the series does not exist (yet)."""
        return self.samples.get((name, tuple(sorted(labels.items()))), 0.0)

    def sum(self, name, **match):
        return sum(v for (n, ls), v in self.samples.items()
                   if n == name and all(dict(ls).get(k) == x for k, x in match.items()))

    def labels(self, name):
        return [dict(ls) for (n, ls), v in self.samples.items() if n == name]


def check_conventions(sc):
    lines = sc.text.splitlines()
    helps = {l.split()[2] for l in lines if l.startswith("# HELP ")}
    types = {l.split()[2]: l.split()[3] for l in lines if l.startswith("# TYPE ")}
    assert helps == set(types), f"HELP without TYPE or back: {helps ^ set(types)}"
    for name, typ in types.items():
        assert name.startswith(("fabricbus_", "process_")), name
        assert typ in ("counter", "gauge", "histogram"), (name, typ)
        if typ == "counter":
            assert name.endswith("_total"), f"counter {name} does not end in _total"
        if "duration" in name:
            assert name.endswith("_seconds"), f"{name}: durations are in seconds"
        if "size" in name:
            assert name.endswith("_bytes"), f"{name}: sizes are in bytes"
    for f in sc.families.values():
        if f.type != "histogram":
            continue
        series = {}
        for s in f.samples:
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, {"b": [], "count": None})
            if s.name.endswith("_bucket"):
                series[key]["b"].append((float(s.labels["le"]), s.value))
            elif s.name.endswith("_count"):
                series[key]["count"] = s.value
        for key, h in series.items():
            b = sorted(h["b"])
            assert b and b[-1][0] == float("inf"), f"{f.name}{key}: no +Inf bucket"
            assert all(b[i][1] <= b[i + 1][1] for i in range(len(b) - 1)), \
                f"{f.name}{key}: buckets not cumulative: {b}"
            assert b[-1][1] == h["count"], f"{f.name}{key}: +Inf {b[-1][1]} != count {h['count']}"


def scrape(addr):
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=5) as r:
        assert r.status == 200, r.status
        ct = r.headers.get("Content-Type", "")
        assert ct.startswith(CONTENT_TYPE), f"Content-Type {ct!r}"
        return Scrape(r.read().decode())


def wait_scrape(addr, pred, what, timeout=20.0):
    last = [None]

    def get():
        try:
            last[0] = scrape(addr)
        except urllib.error.URLError:  # not listening yet
            return None
        return last[0]

    try:
        return wait_for(get, lambda s: s is not None and pred(s), timeout, what, interval=0.1,
                        show=lambda s: "")
    except AssertionError:
        raise AssertionError(f"{what} within {timeout}s; last scrape of {addr}:\n"
                             f"{last[0].text if last[0] else '(none)'}") from None


# ---------------------------------------------------------------------------


def broker_counters_move_with_events():
    N = 500
    broker = Broker().start()
    tail = None
    try:
        addr = broker.http_addr
        m0 = scrape(addr)
        for name in ("fabricbus_events_in_total", "fabricbus_journal_size_bytes",
                     "fabricbus_journal_fsync_duration_seconds_count",
                     "fabricbus_agent_connections", "fabricbus_http_connections",
                     "fabricbus_kafka_backlog_events", "fabricbus_ws_subscribers"):
            assert any(n == name for n, _ in m0.samples), f"{name} missing:\n{m0.text}"
        assert m0.get("fabricbus_build_info", daemon="fabricbusd", version="0.1.0") == 1
        # /metrics is outside the other routes: no auth, not a 404.
        try:
            urllib.request.urlopen(f"http://{addr}/metricsx", timeout=5)
            raise AssertionError("/metricsx answered")
        except urllib.error.HTTPError as e:
            assert e.code == 404, e.code

        tail = tail_async(addr, os.path.join(broker.workdir, "tail.jsonl"))
        wait_scrape(addr, lambda s: s.get("fabricbus_ws_subscribers") == 1, "one subscriber")
        r = publish(broker.agent_addr, "metrics-test", generate=N)
        assert r.returncode == 0, r.stderr

        def moved(s):
            return (s.get("fabricbus_events_in_total") - m0.get("fabricbus_events_in_total") == N
                    and s.get("fabricbus_events_out_total", sink="journal") -
                    m0.get("fabricbus_events_out_total", sink="journal") == N
                    and s.get("fabricbus_events_out_total", sink="websocket") -
                    m0.get("fabricbus_events_out_total", sink="websocket") == N)

        m1 = wait_scrape(addr, moved, f"in/out counters +{N}")
        fs = m1.get("fabricbus_journal_fsync_duration_seconds_count")
        print(f"  +{N} events: in={m1.get('fabricbus_events_in_total'):.0f} "
              f"journal={m1.get('fabricbus_events_out_total', sink='journal'):.0f} "
              f"websocket={m1.get('fabricbus_events_out_total', sink='websocket'):.0f} "
              f"fsyncs={fs:.0f} sum={m1.get('fabricbus_journal_fsync_duration_seconds_sum'):.6f}s "
              f"journal={m1.get('fabricbus_journal_size_bytes'):.0f} B", flush=True)
        assert fs > m0.get("fabricbus_journal_fsync_duration_seconds_count"), "no fsync observed"
        assert fs == m1.get("fabricbus_journal_fsyncs_total"), "histogram count != fsyncs"
        assert m1.get("fabricbus_journal_size_bytes") > m0.get("fabricbus_journal_size_bytes")
        assert m1.get("fabricbus_commits_total") > m0.get("fabricbus_commits_total")
        acc = (m0.get("fabricbus_agent_connections_accepted_total"),
               m1.get("fabricbus_agent_connections_accepted_total"))
        # >= 1: Broker.start()'s port probe may be accepted after m0.
        assert acc[1] - acc[0] >= 1, f"agent connections accepted {acc}"
        assert m1.get("fabricbus_http_connections") >= 1, "the tail's connection"
        assert m1.get("fabricbus_last_event_id") == m1.get("fabricbus_committed_event_id") >= N
        assert m1.get("fabricbus_ws_subscriber_queue_events", agg="max") <= N
        assert m1.get("fabricbus_kafka_connected") == 0  # no KafkaBrokers
    finally:
        if tail:
            tail.terminate()
            tail.wait(timeout=10)
        rc = broker.stop()
    assert rc == 0, broker.log()[-3000:]
    fbtest.assert_no_sanitizer_report(broker.log(), "fabricbusd")


def broker_kafka_metrics():
    """With a real Kafka (tests/kafka/kafka.sh): N events give out{sink=kafka}
    +N, the backlog drains to 0 and the cursor reaches the newest EventId;
    with Kafka killed, fabricbus_kafka_connected drops to 0 and the backlog
    grows with what is published meanwhile."""
    import kafka
    missing = kafka.jars_missing()
    assert missing is None, f"{missing}: run tests/kafka/kafka.sh fetch (run-all.sh does)"
    N = 300
    k = kafka.Kafka().start()
    b = None
    try:
        b = Broker(KafkaBrokers=k.bootstrap).start()
        r = publish(b.agent_addr, "metrics-kafka", generate=N)
        assert r.returncode == 0, r.stderr
        m = wait_scrape(b.http_addr, lambda s: s.get("fabricbus_events_out_total", sink="kafka") == N
                        and s.get("fabricbus_kafka_backlog_events") == 0, f"{N} in Kafka", timeout=120)
        assert m.get("fabricbus_kafka_connected") == 1
        assert m.get("fabricbus_kafka_cursor_event_id") == m.get("fabricbus_committed_event_id") == N
        assert m.get("fabricbus_kafka_produced_total") >= N
        k.kill()
        r = publish(b.agent_addr, "metrics-kafka", generate=50)
        assert r.returncode == 0, r.stderr
        m = wait_scrape(b.http_addr, lambda s: s.get("fabricbus_kafka_connected") == 0 and
                        s.get("fabricbus_kafka_backlog_events") == 50, "Kafka down, backlog 50",
                        timeout=60)
        print(f"  kafka: out={N}, then down: backlog={m.get('fabricbus_kafka_backlog_events'):.0f} "
              f"cursor={m.get('fabricbus_kafka_cursor_event_id'):.0f}", flush=True)
    finally:
        rc = b.stop() if b else 0
        k.stop()
    assert rc == 0, b.log()[-3000:]


def agents_and_slurm_adapter_metrics():
    import chain
    from slurm_rig import SlurmRig, is_ours, not_drained
    ib_addr, node_addr, slurm_addr = (f"127.0.0.1:{free_port()}" for _ in range(3))
    r = SlurmRig(base={"HoldDown": "500ms", "StableFor": "2s"},
                 ib_args=["--metrics", ib_addr]).start()
    ok = False
    try:
        sim, broker = r.chain.sim, r.chain.broker
        # One more node agent, on --metrics (h9 is not a Slurm node: no drains).
        with open(os.path.join(sim.workdir, "node-node009.log"), "ab") as log:
            p = sim.spawn([chain.NODE_AGENT, "--broker", broker.agent_addr, "--map",
                           broker.http_addr, "--agent-id", "node-node009", "--node-name",
                           "node009", "--no-eth", "--interval", "200", "--metrics", node_addr],
                          "h9", env_extra=sim.sanitizer_env(), stdout=log,
                          stderr=subprocess.STDOUT)
        r.chain.agents.append(("node009", p))
        lab = {"agent": "fabricbus-agent-node"}
        n0 = wait_scrape(node_addr, lambda s: s.get("fabricbus_agent_events_acked_total", **lab) >= 1,
                         "node agent's inventory acked")
        n1 = wait_scrape(node_addr, lambda s: s.get("fabricbus_agent_poll_duration_seconds_count", **lab)
                         >= n0.get("fabricbus_agent_poll_duration_seconds_count", **lab) + 3,
                         "node agent's poll rounds observed")
        assert n1.get("fabricbus_agent_broker_connected", **lab) == 1
        print(f"  node agent: sent={n1.get('fabricbus_agent_events_sent_total', **lab):.0f} "
              f"polls={n1.get('fabricbus_agent_poll_duration_seconds_count', **lab):.0f}", flush=True)

        lab = {"agent": "fabricbus-agent-ib"}
        i0 = scrape(ib_addr)
        assert i0.get("fabricbus_agent_events_sent_total", **lab) > 0, "discovery's topology"
        wait_scrape(ib_addr, lambda s: s.get("fabricbus_agent_poll_duration_seconds_count", **lab)
                    >= i0.get("fabricbus_agent_poll_duration_seconds_count", **lab) + 3,
                    "IB poll rounds observed")

        a = r.adapter()
        a.extra_args = ["--metrics", slurm_addr]
        a.start()
        try:
            r.wait_ready(a)
            s0 = scrape(slurm_addr)
            assert s0.sum("fabricbus_slurm_drains_total") == 0, s0.text
            assert s0.get("fabricbus_slurm_skips_total", action="drain", reason="cap") == 0
            sim.unlink("leaf1", 3)
            r.cluster.wait_node("node003", is_ours, 15, "fabricbus drain")
            s1 = wait_scrape(slurm_addr, lambda s: s.get("fabricbus_slurm_drains_total",
                                                         cause="link_down") == 1, "drain counted")
            assert s1.get("fabricbus_slurm_events_total", result="read") > \
                s0.get("fabricbus_slurm_events_total", result="read")
            assert s1.get("fabricbus_slurm_drained_nodes") == 1
            assert s1.get("fabricbus_slurm_update_duration_seconds_count") >= 1
            wait_scrape(ib_addr, lambda s: s.get("fabricbus_agent_events_sent_total", **lab) >
                        i0.get("fabricbus_agent_events_sent_total", **lab), "IB agent's link_down sent")
            sim.relink("leaf1", 3)
            r.cluster.wait_node("node003", not_drained, 10, "undrain")
            s2 = wait_scrape(slurm_addr, lambda s: s.sum("fabricbus_slurm_undrains_total") == 1,
                             "undrain counted")
            print(f"  slurm: drains={s2.labels('fabricbus_slurm_drains_total')} "
                  f"undrains={s2.labels('fabricbus_slurm_undrains_total')} "
                  f"published={s2.get('fabricbus_slurm_published_total'):.0f}", flush=True)
            assert s2.get("fabricbus_slurm_drained_nodes") == 0
            assert s2.get("fabricbus_slurm_published_total") >= 2  # drain + undrain events
        finally:
            a.stop()
        ok = True
    finally:
        r.stop(check=ok)


def snmp_agent_metrics():
    import snmp
    from fbtest import Tail, oem
    broker = tail = agent = sw = None
    ok = False
    try:
        broker = Broker(FabricName="eth").start()
        tail = Tail(broker.http_addr, os.path.join(broker.workdir, "tail.err"))
        port = free_port()
        sw = snmp.SnmpSwitch("sw1", 1, trap_port=port).start()
        maddr = f"127.0.0.1:{free_port()}"
        agent = snmp.Agent(broker.agent_addr, ["Community=public", f"Switch={sw.addr} sw1 host",
                                               f"Poll={sw.addr} public"],
                           ["--fabric", "eth", "--listen", f"udp:{sw.agent_side}:{port}",
                            "--poll-interval", "600000", "--metrics", maddr]).start()
        time.sleep(1.0)  # the first poll round (names)
        m0 = scrape(maddr)
        sw.cable("swp1", up=False)
        tail.wait_for(lambda d: oem(d).get("Kind") == "link_down", timeout=20, what="link_down")
        m1 = wait_scrape(maddr, lambda s: s.get("fabricbus_snmp_traps_total", result="event") >
                         m0.get("fabricbus_snmp_traps_total", result="event"), "trap counted")
        lab = {"agent": "fabricbus-agent-snmp"}
        print(f"  snmp: traps={m1.labels('fabricbus_snmp_traps_total')} "
              f"packets={m1.get('fabricbus_snmp_trap_packets_total'):.0f} "
              f"sent={m1.get('fabricbus_agent_events_sent_total', **lab):.0f}", flush=True)
        assert m1.get("fabricbus_snmp_trap_packets_total") > m0.get("fabricbus_snmp_trap_packets_total")
        assert m1.get("fabricbus_agent_events_sent_total", **lab) > \
            m0.get("fabricbus_agent_events_sent_total", **lab)
        ok = True
    finally:
        if tail:
            tail.stop()
        rc = agent.stop() if agent and agent.proc else 0
        if sw:
            sw.stop()
        if broker:
            broker.stop()
    if ok:
        assert rc == 0, agent.log()[-3000:]
        fbtest.assert_no_sanitizer_report(agent.log(), "fabricbus-agent-snmp")


def pmix_adapter_metrics():
    from pmix import PmixAdapter
    import tempfile
    broker = Broker().start()
    a = None
    try:
        step_dir = tempfile.mkdtemp(prefix="fbt-pmix-steps-")
        maddr = f"127.0.0.1:{free_port()}"
        a = PmixAdapter(broker.http_addr, NodeName="node001", StepDir=step_dir)
        a.extra_args = ["--metrics", maddr]
        a.start()
        a.wait_log("events: subscribed")
        r = publish(broker.agent_addr, "metrics-pmix", generate=50)
        assert r.returncode == 0, r.stderr
        last = wait_scrape(broker.http_addr,
                           lambda s: s.get("fabricbus_committed_event_id") >= 50,
                           "50 events committed").get("fabricbus_committed_event_id")
        m = wait_scrape(maddr, lambda s: s.get("fabricbus_pmix_position_event_id") == last,
                        f"position {last}")
        print(f"  pmix: position={m.get('fabricbus_pmix_position_event_id'):.0f} "
              f"notifications={m.labels('fabricbus_pmix_notifications_total')}", flush=True)
    finally:
        if a:
            a.stop()
        rc = broker.stop()
    assert rc == 0, broker.log()[-3000:]


if __name__ == "__main__":
    main([broker_counters_move_with_events, broker_kafka_metrics, agents_and_slurm_adapter_metrics,
          snmp_agent_metrics, pmix_adapter_metrics])
