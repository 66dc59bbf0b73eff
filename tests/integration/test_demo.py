"""deploy/demo.py (what README's first command runs after installing and
building) works: the chain comes up on the default ports, a pulled cable
drains its node and the put-back cable undrains it, and Ctrl-C stops it all;
`demo.py --smoke` does the same headless and exits 0 with a PASS verdict.

- demo_drains_and_undrains_then_stops: the demo runs in a process group of
  its own, as under a terminal, and every process it starts is in another
  group (so a terminal's Ctrl-C reaches only demo.py); its "try this"
  commands work as printed, the Ethernet ones too (eth-down swp2 is a
  DownstreamLinkDropped of the SNMP agent on the printed tail command, eth-up
  a DownstreamLinkEstablished); SIGINT to its whole group (a terminal's
  Ctrl-C) stops everything: exit 0, opensm stopped after its clients, and
  no fbdemo-* namespace or snmpd is left.
- demo_smoke_passes: the verdict names the IB agent's, opensm's plugin's and
  the SNMP agent's link_down, each shown as an event line.
- demo_failure_removes_namespaces: a part that cannot start (fabricbus-slurm's
  metrics port taken) fails --smoke with exit 1, and the namespaces and
  snmpd it had already made are gone.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_demo.py
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import fbtest
from fbtest import SRC, track

DEMO = os.path.join(SRC, "deploy", "demo.py")
NS_PREFIX = "fbdemo-"
SW_NS = "fbdemo-sw1"


def demo_namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [x.split()[0] for x in out.splitlines() if x.startswith(NS_PREFIX)]


def snmpd_in_demo_ns():
    """pids of processes in the demo's switch namespace ([] when it is gone)."""
    if SW_NS not in demo_namespaces():
        return []
    return subprocess.run(["ip", "netns", "pids", SW_NS], capture_output=True,
                          text=True).stdout.split()


def assert_nothing_left(out):
    assert not demo_namespaces(), f"namespaces left: {demo_namespaces()}\n{out[-2000:]}"
    r = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert "fbm1" not in r and "swp" not in r, f"a demo veth in the host namespace: {r}"


def group_members(pgid):
    """pids whose process group is pgid."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, split after ')'
        if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:
            pids.append(int(d))
    return pids


def demo_drains_and_undrains_then_stops():
    work = tempfile.mkdtemp(prefix="fb-demo-")
    fbtest._workdirs.append(work)
    env = dict(os.environ, DEMO_PERIOD="4")
    # Its own process group, as a terminal's foreground job.
    p = track(subprocess.Popen([sys.executable, DEMO], cwd=work, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               process_group=0))
    lines = []
    threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True).start()

    def wait_for(text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in x for x in lines):
                return
            assert p.poll() is None, "demo exited early:\n" + "".join(lines[-40:])
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} within {timeout}s:\n" + "".join(lines[-40:]))

    try:
        wait_for("fabricbus demo is running", 60)
        # A terminal's Ctrl-C would reach only demo.py: its children (ibsim,
        # opensm, agents, Slurm, snmpd) are in groups of their own.
        assert group_members(p.pid) == [p.pid], \
            f"group {p.pid} holds {group_members(p.pid)}, not only demo.py"
        # The demo's pulls drain a node (reason from the IB agent's or the
        # opensm plugin's link_down, whichever the adapter saw first).
        wait_for("drain: fabric: link down ", 30)
        wait_for("undrain: ", 40)
        # The "try this" lines work as printed: the page, and both metrics
        # commands (run by the shell, pipe and all) show their series.
        page = [x.split()[-1] for x in lines if x.strip().startswith("live page")][0]
        req = urllib.request.Request(page, headers={"Accept": "text/html"})
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.status == 200 and b"<title>fabricbus" in r.read()
        for label, want in (("broker metrics", "fabricbus_events_in_total"),
                            ("adapter metrics", "fabricbus_slurm_drains_total{cause=\"link_down\"}")):
            cmd = [x for x in lines if x.strip().startswith(label)][0].strip()[len(label):].strip()
            r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10)
            assert want in r.stdout, f"{cmd!r}: {r.stdout!r} {r.stderr!r}"
            print(f"  {cmd}: {r.stdout.split(chr(10))[0]}", flush=True)
        try_commands(lines)
        eth_try_commands(lines)
        assert snmpd_in_demo_ns(), "no process in the switch namespace while the demo runs"
    finally:
        os.killpg(p.pid, signal.SIGINT)  # a terminal's Ctrl-C: its foreground group
        rc = p.wait(timeout=90)
    time.sleep(0.2)
    out = "".join(lines)
    assert "demo stopped" in out, out[-3000:]
    assert rc == 0, f"demo exited {rc}:\n{out[-3000:]}"
    assert os.path.isdir(os.path.join(work, "demo", "broker", "journal")), os.listdir(work)
    # In order: opensm after its clients (the agents), before ibsim.
    stops = [x.strip() for x in lines if x.startswith("opensm stopped")]
    assert len(stops) == 1, out[-3000:]
    print(f"  {stops[0][:160]}", flush=True)
    assert_nothing_left(out)
    # With the demo gone, the printed unlink and eth-down say so and fail.
    r = sh(printed(lines, "fail a link"))
    assert r.returncode == 1 and "no running demo" in r.stderr, (r.returncode, r.stderr)
    r = sh(printed(lines, "fail an Ethernet link"))
    assert r.returncode == 1 and "no network namespace" in r.stderr, (r.returncode, r.stderr)
    print("  " + "  ".join(x for x in lines if "drain: fabric:" in x)[:300].strip(), flush=True)


def printed(lines, label):
    """The command the demo printed after label."""
    got = [x.strip()[len(label):].strip() for x in lines if x.strip().startswith(label)]
    assert got, f"the demo printed no {label!r} line"
    return got[0]


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30)


def wait_cmd(cmd, pred, timeout, what):
    """Run cmd until pred(its stdout) (generous liveness deadline)."""
    deadline = time.monotonic() + timeout
    while True:
        r = sh(cmd)
        assert r.returncode == 0, f"{cmd!r} exited {r.returncode}: {r.stderr!r}"
        if pred(r.stdout):
            return r.stdout
        assert time.monotonic() < deadline, f"{cmd!r}: no {what} within {timeout}s: {r.stdout!r}"
        time.sleep(0.5)


def try_commands(lines):
    """The "try this" commands work as printed: status and the map answer;
    unlink drains the node (sinfo -R says so), relink undrains it."""
    for label, want in (("status", ""), ("fabric map", "node008")):
        cmd = printed(lines, label)
        r = sh(cmd)
        assert r.returncode == 0 and r.stdout.strip() and want in r.stdout, \
            f"{cmd!r}: {r.returncode} {r.stdout[:300]!r} {r.stderr!r}"
    unlink, relink = printed(lines, "fail a link"), printed(lines, "put it back")
    node = unlink.split()[-1]
    r = sh(unlink)
    assert r.returncode == 0, f"{unlink!r} exited {r.returncode}: {r.stderr!r}"
    print(f"  {r.stdout.strip()}", flush=True)
    watch = printed(lines, "watch the drain")
    out = wait_cmd(watch, lambda o: o.startswith(node) and "drain" in o.split()[1]
                   and "fabric: link down" in o, 60, f"{node} drained")
    print(f"  sinfo: {out.strip()}", flush=True)
    r = sh(relink)
    assert r.returncode == 0, f"{relink!r} exited {r.returncode}: {r.stderr!r}"
    print(f"  {r.stdout.strip()}", flush=True)

    out = wait_cmd(watch, lambda o: o.startswith(node) and "drain" not in o.split()[1],
                   90, f"{node} undrained")
    print(f"  sinfo: {out.strip()}", flush=True)


def eth_try_commands(lines):
    """The Ethernet "try this" commands work as printed: eth-down PORT is a
    DownstreamLinkDropped from the SNMP agent on the printed tail command,
    naming that port; eth-up a DownstreamLinkEstablished after it."""
    down, up = printed(lines, "fail an Ethernet link"), printed(lines, "put it back up")
    watch = printed(lines, "watch its events")
    port = down.split()[-1]

    def events(out):
        return [json.loads(x) for x in out.splitlines() if x.startswith("{")]

    def port_events(out, kind):
        return [d for d in events(out) if fbtest.oem(d).get("Device") == port
                and fbtest.oem(d).get("AgentId") == "snmp-demo"
                and fbtest.oem(d).get("Kind") == kind]
    before = len(port_events(sh(watch).stdout, "link_down"))
    r = sh(down)
    assert r.returncode == 0, f"{down!r} exited {r.returncode}: {r.stderr!r}"
    print(f"  {r.stdout.strip()}", flush=True)
    out = wait_cmd(watch, lambda o: len(port_events(o, "link_down")) > before, 60,
                   f"{port} link_down")
    d = port_events(out, "link_down")[-1]
    assert fbtest.rec(d)["MessageId"] == "Fabric.1.0.DownstreamLinkDropped", d
    print(f"  {fbtest.rec(d)['MessageId']} {fbtest.origin(d)} {fbtest.oem(d).get('Text')}",
          flush=True)
    ups = len(port_events(out, "link_up"))
    r = sh(up)
    assert r.returncode == 0, f"{up!r} exited {r.returncode}: {r.stderr!r}"
    out = wait_cmd(watch, lambda o: len(port_events(o, "link_up")) > ups, 60, f"{port} link_up")
    assert fbtest.rec(port_events(out, "link_up")[-1])["MessageId"] == \
        "Fabric.1.0.DownstreamLinkEstablished"
    print(f"  {r.stdout.strip()}", flush=True)


def run_smoke(*extra):
    """Run demo.py --smoke [extra] in a fresh directory: (exit status, output)."""
    work = tempfile.mkdtemp(prefix="fb-demo-smoke-")
    fbtest._workdirs.append(work)
    p = track(subprocess.Popen([sys.executable, DEMO, "--smoke", *extra], cwd=work, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    try:
        out, _ = p.communicate(timeout=400)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, out


def smoke(*extra):
    """Run demo.py --smoke [extra]; assert it passed; return its lines."""
    rc, out = run_smoke(*extra)
    lines = out.splitlines()
    assert rc == 0, f"demo --smoke exited {rc}:\n{out[-3000:]}"
    assert lines and lines[-1].startswith("demo smoke: PASS"), out[-3000:]
    # The verdict comes after everything stopped, and the checks really ran.
    assert any(x.startswith("demo stopped") for x in lines), out[-3000:]
    assert any("drain: fabric: link down leaf1/3" in x or
               "drain: fabric: link down node003 port 0x" in x for x in lines), out[-3000:]
    assert any(" undrain: " in x for x in lines), out[-3000:]
    # Each agent's link_down is in the verdict and was shown as an event.
    verdict = lines[-1]
    assert "link_down event (IB agent and opensm plugin)" in verdict, verdict
    assert "sw1 swp1 down -> link_down event (SNMP agent)" in verdict, verdict
    assert any("--- smoke: opensm's plugin (AgentId osm@sim-h39)" in x for x in lines), out[-3000:]
    assert any("DownstreamLinkDropped /redfish/v1/Systems/node003" in x and "trap 65" in x
               for x in lines), out[-3000:]
    assert any("DownstreamLinkDropped /redfish/v1/Fabrics/ETH/Switches/sw1/Ports/" in x
               and "swp1" in x for x in lines), out[-3000:]
    assert_nothing_left(out)
    print("  " + lines[-1], flush=True)
    return lines


def demo_smoke_passes():
    """--smoke brings everything up, checks one pulled cable (event, drain,
    undrain), stops everything and says so in one line, exit 0."""
    smoke()


def demo_kafka_smoke_passes():
    """--smoke --kafka: a real Kafka and the broker's sink; the printed
    `fabricbus consume` command (run by the smoke) reads the link-down event."""
    import kafka
    kafka.fetch()  # cached by the build; a no-op then
    lines = smoke("--kafka")
    assert "(in Kafka too)" in lines[-1], lines[-1]
    cmd = printed(lines, "read Kafka")
    assert cmd.startswith(fbtest.FABRICBUS + " consume --kafka 127.0.0.1:9092 "), cmd
    assert any(x.startswith("--- smoke: EventId ") and "is in Kafka" in x for x in lines), lines


def demo_failure_removes_namespaces():
    """A part that cannot start fails --smoke (exit 1, a FAIL verdict naming
    it), and what the demo made before it is gone: its namespaces and snmpd."""
    import socket
    taken = socket.create_server(("127.0.0.1", 7419))  # fabricbus-slurm's --metrics
    try:
        rc, out = run_smoke()
    finally:
        taken.close()
    lines = out.splitlines()
    assert rc == 1, f"demo --smoke exited {rc}:\n{out[-3000:]}"
    assert lines[-1].startswith("demo smoke: FAIL") and "fabricbus-slurm exited" in lines[-1], \
        out[-3000:]
    # It got as far as the switch, so there was something to remove.
    assert any(x.startswith("starting munged") for x in lines), out[-3000:]
    assert not any("SNMP switch: SKIPPED" in x for x in lines), out[-3000:]
    assert_nothing_left(out)
    print("  " + lines[-1][:200], flush=True)


if __name__ == "__main__":
    fbtest.main([demo_drains_and_undrains_then_stops, demo_smoke_passes,
                 demo_failure_removes_namespaces, demo_kafka_smoke_passes])
