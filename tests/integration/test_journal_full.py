"""A full journal disk (issue 14): the broker stops acking instead of exiting,
raises an alarm (/status journal.stalled, fabricbus_journal_stalled, one log
line), never corrupts the journal, restarts cleanly on the full disk, and
acks everything by itself once space returns: nothing lost, nothing
duplicated (broker/journal/journal.c, broker/commit.c).

The journal lives on a real 1 MiB tmpfs, filled to the brim by a filler file.
The test re-runs itself inside `unshare -m` so that the mount dies with it.
Needs root.

    sudo /usr/bin/python3 tests/integration/test_journal_full.py [test_name ...]
"""
import asyncio
import errno
import os
import subprocess
import sys
import time
import tempfile
import urllib.request

import fbtest
from fbtest import Broker, check_stream, publish, publish_async, wait_for, ws_collect

AGENT = "full@leaf01"
BEFORE = 200     # acked before the disk fills
DURING = 3000    # published while it is full: ~1 MiB of records, more than the disk


def _in_private_mount_ns():
    if os.environ.get("FB_JOURNAL_FULL_NS") == "1":
        return
    if os.geteuid() != 0:
        raise SystemExit("test_journal_full needs root (unshare -m, mount -t tmpfs)")
    env = dict(os.environ, FB_JOURNAL_FULL_NS="1")
    args = ["unshare", "-m", "--propagation", "private", sys.executable, *sys.argv]
    os.execvpe("unshare", args, env)


def fill(path):
    """Write until ENOSPC, in pages then in bytes: the disk is full to the brim."""
    with open(path, "wb", buffering=0) as f:
        for chunk in (b"\0" * 65536, b"\0" * 4096, b"\0"):
            while True:
                try:
                    f.write(chunk)
                except OSError as e:
                    assert e.errno == errno.ENOSPC, e
                    break


def metric(addr, name):
    with urllib.request.urlopen(f"http://{addr}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError(f"no {name} in /metrics")


def stalled(st):
    return st["broker"]["journal"]["stalled"]


def wait_stalled(b, timeout=60):
    st = b.wait_status(stalled, timeout=timeout)
    assert st["broker"]["journal"]["stall_error"], st["broker"]["journal"]
    return st


def full_disk_run(sync):
    mnt = os.path.join(tempfile.mkdtemp(prefix="fb-jfull-"), "disk")
    os.makedirs(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], check=True)
    jdir = os.path.join(mnt, "journal")
    b = Broker(JournalDir=jdir, JournalSegmentSize="64k", JournalSync=sync).start()
    r = publish(b.agent_addr, AGENT, generate=BEFORE, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not stalled(b.status())

    filler = os.path.join(mnt, "filler")
    fill(filler)
    pub = publish_async(b.agent_addr, AGENT, DURING, timeout=600)
    st = wait_stalled(b)
    print(f"stalled: {st['broker']['journal']}", flush=True)
    assert metric(b.http_addr, "fabricbus_journal_stalled") == 1
    assert metric(b.http_addr, "fabricbus_journal_stalls_total") >= 1
    # Nothing more is acked while it lasts, and the broker stays up.
    committed = st["broker"]["events"]["committed_id"]
    time.sleep(3)
    st = b.status()
    assert stalled(st) and st["broker"]["events"]["committed_id"] == committed, st["broker"]
    assert pub.poll() is None, "publish finished although the disk is full"
    assert b.proc.poll() is None
    # One alarm line, not one per retry (the broker retries every second).
    assert b.log().count("nothing more is acked") == 1, b.log()[-3000:]

    # A clean stop and a crash on the full disk: both restart, recover
    # without cutting anything (no torn record was left), and stall again.
    assert b.stop() == 0, b.log()[-3000:]
    b.start()
    wait_stalled(b)
    b.kill9()
    b.start()
    wait_stalled(b)
    assert "torn" not in b.log() and "corrupt" not in b.log(), b.log()[-3000:]
    assert pub.poll() is None, "publish finished although the disk is full"

    # Space returns: the broker acks everything by itself.
    os.unlink(filler)
    out, err = pub.communicate(timeout=300)
    assert pub.returncode == 0, f"publish: {err}"
    b.wait_status(lambda s: not stalled(s), timeout=30)
    assert metric(b.http_addr, "fabricbus_journal_stalled") == 0
    assert "writable again" in b.log(), b.log()[-3000:]

    docs = asyncio.run(ws_collect(b.ws_url(since=0), BEFORE + DURING, 300))
    last = check_stream(docs, BEFORE + DURING, agents=[AGENT])
    assert last[AGENT] == BEFORE + DURING, last
    # And the journal is whole: a restart finds nothing to cut.
    assert b.stop() == 0, b.log()[-3000:]
    mark = len(b.log())
    b.start()
    st = b.wait_status(lambda s: s["broker"]["journal"]["last_id"] == BEFORE + DURING, timeout=30)
    assert "torn" not in b.log()[mark:] and "corrupt" not in b.log()[mark:], b.log()[mark:]
    assert b.stop() == 0, b.log()[-3000:]
    print("".join(line + "\n" for line in b.log().splitlines() if "journal" in line), flush=True)
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")
    subprocess.run(["umount", mnt], check=False)


def journal_full_stalls_and_recovers():
    for sync in ("batch", "interval", "none"):
        print(f"JournalSync={sync}", flush=True)
        full_disk_run(sync)


if __name__ == "__main__":
    _in_private_mount_ns()
    fbtest.main([journal_full_stalls_and_recovers])
