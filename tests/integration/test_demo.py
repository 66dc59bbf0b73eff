"""deploy/demo.py (what README's first command runs after installing and
building) works: the chain comes up on the default ports, a pulled cable
drains its node and the put-back cable undrains it, and Ctrl-C stops it all;
`demo.py --smoke` does the same headless and exits 0 with a PASS verdict.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_demo.py
"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import fbtest
from fbtest import SRC, run, track

DEMO = os.path.join(SRC, "deploy", "demo.py")


def demo_drains_and_undrains_then_stops():
    work = tempfile.mkdtemp(prefix="fb-demo-")
    fbtest._workdirs.append(work)
    env = dict(os.environ, DEMO_PERIOD="4")
    p = track(subprocess.Popen([sys.executable, DEMO], cwd=work, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
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
        wait_for("drain: fabric: link down leaf1/", 30)
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
    finally:
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=60)
    time.sleep(0.2)
    out = "".join(lines)
    assert "demo stopped" in out, out[-3000:]
    assert rc == 0, f"demo exited {rc}:\n{out[-3000:]}"
    assert os.path.isdir(os.path.join(work, "demo", "broker", "journal")), os.listdir(work)
    # With the demo gone, the printed unlink says so and fails.
    r = sh(printed(lines, "fail a link"))
    assert r.returncode == 1 and "no running demo" in r.stderr, (r.returncode, r.stderr)
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


def smoke(*extra):
    """Run demo.py --smoke [extra]; assert it passed; return its lines."""
    work = tempfile.mkdtemp(prefix="fb-demo-smoke-")
    fbtest._workdirs.append(work)
    p = track(subprocess.Popen([sys.executable, DEMO, "--smoke", *extra], cwd=work, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    try:
        out, _ = p.communicate(timeout=400)
    finally:
        if p.poll() is None:
            p.kill()
    lines = out.splitlines()
    assert p.returncode == 0, f"demo --smoke exited {p.returncode}:\n{out[-3000:]}"
    assert lines and lines[-1].startswith("demo smoke: PASS"), out[-3000:]
    # The verdict comes after everything stopped, and the checks really ran.
    assert any(x.startswith("demo stopped") for x in lines), out[-3000:]
    assert any("drain: fabric: link down leaf1/3" in x for x in lines), out[-3000:]
    assert any(" undrain: " in x for x in lines), out[-3000:]
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


if __name__ == "__main__":
    fbtest.main([demo_drains_and_undrains_then_stops, demo_smoke_passes, demo_kafka_smoke_passes])
