"""The journal's sync thread (broker/journal/journal_worker.c, commit.c)
against a slow disk: fdatasync is wrapped (tests/lib/slow_fdatasync.c,
LD_PRELOAD) to take FB_SLOW_SYNC_MS and to log, once it has returned, how
many bytes of which segment are durable.

- The loop reads and numbers the next events while a sync is in flight (the
  pipeline): /status shows the second burst's events taken while nothing is
  committed yet, and the first sync covered only the first burst. With the
  sync on the loop thread the second burst could not be read before the
  first sync had returned and committed it.
- No ACK precedes the sync of its events: at every ACK the agent reads the
  sync log and finds its events up to the acked seq in the durable prefix of
  the journal.
- A clean stop waits for the sync in flight: everything acked is in the
  journal after SIGTERM, and a restart recovers it all."""
import json
import os
import struct
import tempfile
import time
import urllib.request

import fbtest
from agentproto import ACK, Conn, event_body, events

SHIM = os.path.join(fbtest.BUILD, "tests", "integration", "libslow_fdatasync.so")
SLOW_MS = 1500
AGENT = "slowsync"


def start_broker(work, sync_log, slow_ms=SLOW_MS):
    assert os.path.exists(SHIM), f"{SHIM} not built"
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = ["env", f"LD_PRELOAD={SHIM}", f"FB_SYNC_LOG={sync_log}", f"FB_SLOW_SYNC_MS={slow_ms}",
           # The wrapper is loaded before the ASan runtime; it calls nothing ASan intercepts.
           f"ASAN_OPTIONS={asan}{':' if asan else ''}verify_asan_link_order=0"]
    # The raw agent below sends no heartbeats: a long interval keeps it.
    return fbtest.Broker(workdir=work, wrapper=env, JournalSync="batch",
                         HeartbeatInterval="60s").start()


def status(b):
    with urllib.request.urlopen(f"http://{b.http_addr}/status", timeout=10) as r:
        return json.load(r)["broker"]["events"]


def durable(sync_log):
    """{segment path: durable bytes} from the wrapper's log."""
    out = {}
    if os.path.exists(sync_log):
        for line in open(sync_log):
            path, size = line.rsplit(" ", 1)
            if path.endswith(".fbj"):
                out[path] = max(out.get(path, 0), int(size))
    return out


def durable_seqs(sync_log, agent):
    """The seqs of agent's events within the durable prefix of each segment."""
    seqs = []
    aid = agent.encode()
    for path, size in durable(sync_log).items():
        with open(path, "rb") as f:
            data = f.read(size)
        off = 16  # segment header
        while off + 16 <= len(data):
            (plen,) = struct.unpack(">I", data[off:off + 4])
            if off + 16 + plen > len(data):
                break
            payload = data[off + 16:off + 16 + plen]
            alen = payload[0]
            if payload[1:1 + alen] == aid:
                seqs.append(struct.unpack(">Q", payload[1 + alen:1 + alen + 8])[0])
            off += 16 + plen
    return sorted(seqs)


def check_ack(sync_log, acked):
    seqs = durable_seqs(sync_log, AGENT)
    assert seqs[:acked] == list(range(1, acked + 1)), \
        f"ACK {acked} arrived before its events were durable (durable: {len(seqs)} events)"


def ack_never_precedes_its_sync_and_loop_reads_while_syncing():
    work = tempfile.mkdtemp(prefix="fb-test-")  # removed with the broker's
    sync_log = os.path.join(work, "syncs.log")
    b = start_broker(work, sync_log)
    try:
        c = Conn(b.agent_addr, timeout=30)
        assert c.hello(AGENT) == ("ack", 0)
        first = 10
        c.send(events([event_body(s) for s in range(1, first + 1)]))
        # The first burst is taken and its sync (FB_SLOW_SYNC_MS) started.
        fbtest.wait_for(lambda: status(b), lambda s: s["last_event_id"] >= first, 30,
                        "the first burst was not taken")
        second = 10
        c.send(events([event_body(s) for s in range(first + 1, first + second + 1)]))
        st = fbtest.wait_for(lambda: status(b), lambda s: s["last_event_id"] >= first + second,
                             30, "the second burst was not taken")
        # Read while the first sync was still in flight (the wrapper logs only
        # when it returns; no ACK has come either).
        pipelined = st["committed_id"] == 0
        acks = []
        while not acks or acks[-1] < first + second:
            body = c.expect(ACK, timeout=60)
            (seq,) = struct.unpack(">Q", body)
            check_ack(sync_log, seq)
            acks.append(seq)
        assert acks == sorted(acks), acks
        sizes = [int(line.rsplit(" ", 1)[1]) for line in open(sync_log) if ".fbj" in line]
        first_sync = durable_seqs_upto(sync_log, sizes[0])
        assert pipelined and first_sync == list(range(1, first + 1)), \
            f"the second burst was not read while the first synced: committed_id " \
            f"{st['committed_id']} when it was taken, first sync covered {first_sync}"

        # More, pipelined without waiting: every ACK still after its sync.
        seq = first + second
        for _ in range(5):
            c.send(events([event_body(s) for s in range(seq + 1, seq + 51)]))
            seq += 50
            time.sleep(0.2)
        last = acks[-1]
        while last < seq:
            (last,) = struct.unpack(">Q", c.expect(ACK, timeout=60))
            check_ack(sync_log, last)
        c.close()

        # A clean stop with a sync in flight waits for it.
        c = Conn(b.agent_addr, timeout=30)
        assert c.hello(AGENT) == ("ack", seq)
        c.send(events([event_body(s) for s in range(seq + 1, seq + 21)]))
        fbtest.wait_for(lambda: status(b), lambda s: s["last_event_id"] >= seq + 20, 30,
                        "the last burst was not taken")
        c.close()
        assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]
        b = start_broker(work, sync_log, slow_ms=0)
        c = Conn(b.agent_addr, timeout=30)
        assert c.hello(AGENT) == ("ack", seq + 20), "the stop did not wait for the sync"
        c.close()
        assert status(b)["last_event_id"] == seq + 20
    finally:
        b.stop()


def durable_seqs_upto(sync_log, size):
    """Seqs in the first segment's first `size` bytes (the first sync)."""
    path = next(iter(durable(sync_log)))
    with open(path, "rb") as f:
        data = f.read(size)
    seqs, off = [], 16
    while off + 16 <= len(data):
        (plen,) = struct.unpack(">I", data[off:off + 4])
        payload = data[off + 16:off + 16 + plen]
        seqs.append(struct.unpack(">Q", payload[1 + payload[0]:9 + payload[0]])[0])
        off += 16 + plen
    return seqs


if __name__ == "__main__":
    fbtest.main([ack_never_precedes_its_sync_and_loop_reads_while_syncing])
