"""The daemon's and the CLI's user-facing behaviour against a real broker:
embedded defaults, config errors, publish/tail/status, filters, and the
agent port refusing bad frames with an ERROR frame and a log line."""
import json
import os
import socket
import struct
import subprocess
import tempfile
import time

from fbtest import (BUILD, FABRICBUS, FABRICBUSD, Broker, check_redfish_event, free_port, publish,
                    run, stop_gracefully, track, wait_port)


def sh(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=kw.get("timeout", 60),
                          input=kw.get("input"))


def tail_n(b, n, *extra, timeout=60):
    r = sh(FABRICBUS, "tail", "--http", b.http_addr, "--count", str(n), "--timeout", str(timeout),
           *extra, timeout=timeout + 30)
    assert r.returncode == 0, f"tail exit {r.returncode}: {r.stderr}"
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


LINK_DOWN = {"kind": "link_down", "link_class": "host", "tech": "infiniband", "switch": "leaf3",
             "switch_guid": "0x0008f10400411a08", "port": 17, "node": "node003",
             "counters": {"link_downed": 1}}


def daemon_help_version_and_config_errors():
    r = sh(FABRICBUSD, "--help")
    assert r.returncode == 0 and "Usage: fabricbusd" in r.stdout, r
    r = sh(FABRICBUSD, "--version")
    assert r.returncode == 0 and "fabricbusd" in r.stdout
    r = sh(FABRICBUSD, "--help-config")
    assert "JournalSync" in r.stdout and "WsQueueEvents" in r.stdout
    d = tempfile.mkdtemp(prefix="fb-conf-")
    conf = os.path.join(d, "fabricbus.conf")
    with open(conf, "w") as f:
        f.write("# test\nLogLevel=info\nJournalSync=whenever\n")
    r = sh(FABRICBUSD, "-f", conf)
    assert r.returncode == 2, r
    assert f"{conf}:3" in r.stderr and "JournalSync" in r.stderr, r.stderr
    r = sh(FABRICBUSD, "-o", "NoSuchKey=1")
    assert r.returncode == 2 and "unknown key 'NoSuchKey'" in r.stderr, r.stderr
    r = sh(FABRICBUSD, "-f", os.path.join(d, "missing.conf"))
    assert r.returncode == 2 and "cannot open" in r.stderr, r.stderr
    r = sh(FABRICBUSD, "-o", "AgentListen=127.0.0.1:9", "--check-config")
    assert r.returncode == 0 and "AgentListen=127.0.0.1:9" in r.stdout, r
    # --check-config is the unit's ExecStartPre: it refuses what the start
    # would, and what it prints is a file fabricbusd takes back unchanged.
    r = sh(FABRICBUSD, "-o", "AgentListen=127.0.0.1:19101", "-o", "HttpListen=127.0.0.1:19101",
           "--check-config")
    assert r.returncode == 2 and "AgentListen and HttpListen must differ" in r.stderr, r
    r = sh(FABRICBUSD, "--check-config")
    assert r.returncode == 0, r
    with open(conf, "w") as f:
        f.write(r.stdout)
    back = sh(FABRICBUSD, "-f", conf, "--check-config")
    assert back.returncode == 0 and back.stdout == r.stdout, back


def agents_refuse_a_fabric_fabricbusd_refuses():
    """-f is --fabric on the agents: `-f /tmp/x/snmp.conf` (meant as the
    config file) is refused as a usage error, exit 2, by fabricbusd's own
    FabricName rule, instead of running with that fabric in every Redfish
    path; the agent with a --config says so."""
    snmp_agent = os.path.join(BUILD, "agents", "snmp", "fabricbus-agent-snmp")
    ib_agent = os.path.join(BUILD, "agents", "ib", "fabricbus-agent-ib")
    broker = f"127.0.0.1:{free_port()}"
    hint = "did you mean --config FILE? (-f is --fabric here)"
    rule = "1..31 bytes, none of '/', ' ', '?', '#', '%'"
    for agent, args, want_hint in (
            (snmp_agent, ["-f", "/tmp/x/snmp.conf", "--no-traps"], True),
            (snmp_agent, ["--fabric", "eth 0.conf", "--no-traps"], True),
            (snmp_agent, ["-f", "a?b", "--no-traps"], False),
            (snmp_agent, ["-f", "x" * 32, "--no-traps"], False),
            (ib_agent, ["-f", "/tmp/x/ib.conf"], False),
            (ib_agent, ["--fabric", "a%2Fb"], False)):
        name = os.path.basename(agent)
        try:
            r = sh(agent, *args, "--broker", broker, "--no-resync", timeout=15)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{name} {args}: ran instead of refusing the fabric") from None
        assert r.returncode == 2, (name, args, r.returncode, r.stderr)
        assert f"{name}: bad --fabric '{args[1]}'" in r.stderr and rule in r.stderr, r.stderr
        assert (hint in r.stderr) == want_hint, (name, args, r.stderr)
        # fabricbusd refuses the same name as its FabricName.
        d = sh(FABRICBUSD, "-o", f"FabricName={args[1]}", "--check-config")
        assert d.returncode == 2 and "FabricName" in d.stderr, (args[1], d.returncode, d.stderr)


def agent_metrics_log_names_the_bound_address():
    """--metrics :PORT binds 127.0.0.1 only: the agent's log line names that
    address (where a scraper must go), not "http://:PORT/metrics"."""
    agent = os.path.join(BUILD, "agents", "snmp", "fabricbus-agent-snmp")
    port = free_port()
    d = tempfile.mkdtemp(prefix="fb-agent-metrics-")
    err_path = os.path.join(d, "stderr")
    with open(err_path, "wb") as err:
        p = track(subprocess.Popen([agent, "--no-traps", "--no-resync", "--metrics", f":{port}",
                                    "--broker", f"127.0.0.1:{free_port()}"],
                                   stdout=subprocess.DEVNULL, stderr=err))
    want = f"serving Prometheus metrics on http://127.0.0.1:{port}/metrics"
    deadline = time.time() + 30
    while want not in open(err_path).read() and p.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    log = open(err_path).read()
    assert stop_gracefully(p, "fabricbus-agent-snmp") == 0, log
    assert want in log, log


def embedded_defaults_run_with_no_config():
    for port in (7411, 7412):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, f"port {port} busy: cannot test defaults"
    d = tempfile.mkdtemp(prefix="fb-defaults-")
    log = open(os.path.join(d, "log"), "wb")
    p = track(subprocess.Popen([FABRICBUSD], cwd=d, stdout=log, stderr=log))
    wait_port(7411, proc=p)
    wait_port(7412, proc=p)
    r = sh(FABRICBUS, "publish", json.dumps(LINK_DOWN))
    assert r.returncode == 0, r.stderr
    r = sh(FABRICBUS, "tail", "--since", "0", "--count", "1", "--timeout", "30")
    assert r.returncode == 0, r.stderr
    rec = check_redfish_event(json.loads(r.stdout.splitlines()[0]))
    assert rec["MessageId"] == "Fabric.1.0.DownstreamLinkDropped", rec
    deadline = time.time() + 10
    while True:  # /status is refreshed every 100 ms
        r = sh(FABRICBUS, "status")
        if (r.returncode == 0 and "cli@" in r.stdout) or time.time() > deadline:
            break
        time.sleep(0.1)
    assert r.returncode == 0 and "cli@" in r.stdout, r.stdout + r.stderr
    assert os.path.isdir(os.path.join(d, "fabricbus-journal"))
    p.terminate()
    assert p.wait(timeout=30) == 0, open(os.path.join(d, "log")).read()[-2000:]


def publish_tail_status_and_filters():
    b = Broker().start()
    events = [
        dict(LINK_DOWN),
        {"kind": "link_down", "link_class": "isl", "switch": "spine1", "port": 3, "severity": "Critical"},
        {"kind": "link_up", "link_class": "isl", "switch": "spine1", "port": 3},
        {"kind": "switch_unreachable", "switch": "leaf7"},
        {"kind": "congestion", "link_class": "isl", "switch": "leaf2", "port": 19,
         "counters": {"congestion_ppm": 250000, "threshold": 100000, "xmit_wait": 123456}},
    ]
    r = publish(b.agent_addr, "cli-test", events)
    assert r.returncode == 0, r.stderr
    docs = tail_n(b, 5, "--since", "0")
    ids = [d["Events"][0]["MessageId"] for d in docs]
    assert ids == ["Fabric.1.0.DownstreamLinkDropped", "Fabric.1.0.InterswitchLinkDropped",
                   "Fabric.1.0.InterswitchLinkEstablished", "Fabric.1.0.SwitchFailed",
                   "ResourceEvent.1.4.ResourceWarningThresholdExceeded"], ids
    for d in docs:
        check_redfish_event(d)
    origin = docs[0]["Events"][0]["OriginOfCondition"]["@odata.id"]
    assert origin == "/redfish/v1/Fabrics/IB/Switches/leaf3/Ports/17", origin
    assert docs[1]["Events"][0]["MessageSeverity"] == "Critical"

    isl = tail_n(b, 2, "--since", "0", "--prefix", "Fabric.1.0.InterswitchLink", "--idle-exit", "2")
    assert [d["Events"][0]["MessageId"].split(".")[-1] for d in isl] == \
        ["InterswitchLinkDropped", "InterswitchLinkEstablished"], isl
    crit = tail_n(b, 1, "--since", "0", "--severity", "Critical", "--idle-exit", "2")
    assert len(crit) == 1 and crit[0]["Events"][0]["MessageSeverity"] == "Critical"
    leaf7 = tail_n(b, 1, "--since", "0", "--origin", "/redfish/v1/Fabrics/IB/Switches/leaf7",
                   "--idle-exit", "2")
    assert leaf7[0]["Events"][0]["MessageId"] == "Fabric.1.0.SwitchFailed"

    b.wait_status(lambda st: st["broker"]["events"]["total"] == 5)
    r = sh(FABRICBUS, "status", "--http", b.http_addr)
    assert r.returncode == 0 and "cli-test" in r.stdout, r.stdout + r.stderr
    # The health line names why (publish's agent has gone), without colour
    # off a terminal; --color always colours it; a bad WHEN is a usage error.
    assert "health:   WARN: 1 agent(s) disconnected" in r.stdout, r.stdout
    assert "\033[" not in r.stdout, r.stdout
    r = sh(FABRICBUS, "status", "--http", b.http_addr, "--color", "always")
    assert "health:   \033[33mWARN\033[0m" in r.stdout, repr(r.stdout)
    r = sh(FABRICBUS, "status", "--http", b.http_addr, "--color", "sometimes")
    assert r.returncode == 2 and "--color" in r.stderr, r

    # Bad input: a clear message, exit 2, and nothing sent.
    r = publish(b.agent_addr, "cli-test", [LINK_DOWN, {"kind": "link_sideways"}])
    assert r.returncode == 2 and "stdin:2" in r.stderr and "kind" in r.stderr, r.stderr
    r = sh(FABRICBUS, "publish", "--broker", b.agent_addr, "{not json")
    assert r.returncode == 2, r.stderr
    r = sh(FABRICBUS, "publish", "--broker", b.agent_addr, json.dumps({"kind": "link_down", "port": "x"}))
    assert r.returncode == 2 and "port" in r.stderr, r.stderr
    time.sleep(0.3)
    assert b.status()["broker"]["events"]["total"] == 5
    r = sh(FABRICBUS, "tail", "--http", b.http_addr, "--since", "abc")
    assert r.returncode == 2, r
    r = sh(FABRICBUS, "frobnicate")
    assert r.returncode == 2 and "frobnicate" in r.stderr, r
    assert b.stop() == 0, b.log()[-3000:]


def publish_to_unreachable_broker_fails_clearly():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.time()
    r = sh(FABRICBUS, "publish", "--broker", f"127.0.0.1:{port}", "--timeout", "2", json.dumps(LINK_DOWN))
    assert r.returncode == 1, r
    assert time.time() - t0 < 20
    assert f"127.0.0.1:{port}" in r.stderr, r.stderr
    r = sh(FABRICBUS, "status", "--http", f"127.0.0.1:{port}")
    assert r.returncode == 1 and "cannot reach" in r.stderr, r.stderr


def read_error_frame(s):
    s.settimeout(10)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    assert len(data) >= 10 and data[:2] == b"FB" and data[3] == 6, data
    code = struct.unpack(">H", data[8:10])[0]
    text = data[11:11 + data[10]].decode()
    return code, text


def agent_port_refuses_bad_frames():
    b = Broker(MaxFrameSize="64K").start()
    # An HTTP client on the agent port.
    with socket.create_connection(("127.0.0.1", b.agent_port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        code, text = read_error_frame(s)
        assert code == 2 and "bad magic" in text, (code, text)
    # A future protocol version.
    with socket.create_connection(("127.0.0.1", b.agent_port)) as s:
        s.sendall(b"FB\x09\x01" + struct.pack(">I", 0))
        code, text = read_error_frame(s)
        assert code == 1 and "version 9" in text, (code, text)
    # A frame over the limit before HELLO (1 KiB: docs/security.md).
    with socket.create_connection(("127.0.0.1", b.agent_port)) as s:
        s.sendall(b"FB\x01\x03" + struct.pack(">I", 1 << 20))
        code, text = read_error_frame(s)
        assert code == 3 and "before HELLO" in text, (code, text)
    # A frame over MaxFrameSize after HELLO.
    with socket.create_connection(("127.0.0.1", b.agent_port)) as s:
        aid = b"cli-big"
        hello = b"\x01" + bytes([len(aid)]) + aid + struct.pack(">Q", 0)
        s.sendall(b"FB\x01\x01" + struct.pack(">I", len(hello)) + hello)
        ack = b""
        while len(ack) < 32:  # HELLO_ACK: header and 24 bytes
            ack += s.recv(32 - len(ack))
        assert ack[3] == 2, ack
        s.sendall(b"FB\x01\x03" + struct.pack(">I", 1 << 20))
        code, text = read_error_frame(s)
        assert code == 3 and "MaxFrameSize" in text, (code, text)
    # EVENTS before HELLO.
    with socket.create_connection(("127.0.0.1", b.agent_port)) as s:
        s.sendall(b"FB\x01\x03" + struct.pack(">I", 4) + struct.pack(">I", 0))
        code, text = read_error_frame(s)
        assert code == 4 and "HELLO" in text, (code, text)
    # A HELLO whose agent id is not valid.
    with socket.create_connection(("127.0.0.1", b.agent_port)) as s:
        body = b"\x01" + bytes([7]) + b"bad id!" + struct.pack(">Q", 0)
        s.sendall(b"FB\x01\x01" + struct.pack(">I", len(body)) + body)
        code, text = read_error_frame(s)
        assert code == 2 and "HELLO" in text, (code, text)
    log = b.log()
    assert "version 9 not supported" in log and "127.0.0.1:" in log, log[-2000:]
    # The broker still serves well-behaved agents.
    r = publish(b.agent_addr, "after-garbage", [LINK_DOWN])
    assert r.returncode == 0, r.stderr
    b.wait_status(lambda st: st["broker"]["events"]["total"] == 1)
    assert b.stop() == 0, b.log()[-3000:]


def tail_reconnect_without_since_resumes_from_the_head():
    """tail --reconnect without --since starts after what the broker already
    had (its head EventId, read from /status), and after a broker restart it
    resumes from there: events published before it reconnects are printed,
    each once, with no hole (a live-only subscription would lose them)."""
    b = Broker().start()

    def cable(p):
        return {"kind": "link_down", "link_class": "host", "tech": "infiniband",
                "switch": f"leaf{p}", "port": p, "node": f"node{p:03d}"}

    r = publish(b.agent_addr, "cli-head-1", [cable(p) for p in range(1, 4)])
    assert r.returncode == 0, r.stderr
    b.wait_status(lambda st: st["broker"]["events"]["total"] == 3)
    time.sleep(0.5)
    head0 = b.status()["websocket"]["head_id"]
    assert head0 >= 3, head0
    out, err = os.path.join(b.workdir, "tail.jsonl"), os.path.join(b.workdir, "tail.err")
    with open(out, "wb") as o, open(err, "wb") as e:
        t = track(subprocess.Popen([FABRICBUS, "tail", "--http", b.http_addr, "--reconnect",
                                    "--all", "--timeout", "300"], stdout=o, stderr=e))
    b.wait_status(lambda st: len(st["websocket"]["subscribers"]) == 1, timeout=60)
    assert b.stop() == 0, b.log()[-3000:]
    time.sleep(4)  # tail's back-off reaches its 2 s cap: it reconnects late
    b.start()
    r = publish(b.agent_addr, "cli-head-2", [cable(p) for p in range(4, 9)])
    assert r.returncode == 0, r.stderr
    b.wait_status(lambda st: st["broker"]["events"]["total"] == 5)  # counted since the restart
    time.sleep(0.5)
    head1 = b.status()["websocket"]["head_id"]

    def printed():
        with open(out) as f:
            return [int(json.loads(line)["Events"][0]["EventId"]) for line in f if line.strip()]
    deadline = time.time() + 120
    while time.time() < deadline and (not printed() or printed()[-1] < head1):
        time.sleep(0.1)
    t.terminate()
    assert t.wait(timeout=30) == 0, open(err).read()
    ids = printed()
    # From the head at start on (not the 3 events before it), every EventId
    # once and in order through the ones published after the restart.
    assert ids and ids[0] > head0 and ids[-1] >= head1, (head0, head1, ids, open(err).read())
    assert ids == list(range(ids[0], ids[0] + len(ids))), (head0, head1, ids, open(err).read())
    assert "reconnected" in open(err).read()
    assert b.stop() == 0, b.log()[-3000:]


if __name__ == "__main__":
    run(daemon_help_version_and_config_errors, agents_refuse_a_fabric_fabricbusd_refuses,
        agent_metrics_log_names_the_bound_address,
        embedded_defaults_run_with_no_config,
        publish_tail_status_and_filters, publish_to_unreachable_broker_fails_clearly,
        agent_port_refuses_bad_frames, tail_reconnect_without_since_resumes_from_the_head)
