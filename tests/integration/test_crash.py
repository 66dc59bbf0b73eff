"""kill -9 the broker in mid-stream and restart it: publishers resend what
was not acked, subscribers resume with since, and every event arrives
exactly once (checked by count, EventIds and per-agent sequences)."""
import asyncio
import os
import time

from fbtest import (Broker, check_stream, publish_async, read_jsonl, run, tail_async,
                    ws_collect)

PUBLISHERS = 4
PER_PUBLISHER = 50000
TOTAL = PUBLISHERS * PER_PUBLISHER


def wait_total(b, at_least, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        total = b.status()["broker"]["events"]["total"]
        if total >= at_least:
            return total
        time.sleep(0.02)
    raise AssertionError(f"broker did not reach {at_least} events in {timeout}s")


def crash_midstream_every_event_exactly_once():
    b = Broker(WsRingEvents="65536", WsQueueEvents="60000").start()
    out = os.path.join(b.workdir, "tail.jsonl")
    tail = tail_async(b.http_addr, out, ["--since", "0", "--count", str(TOTAL), "--reconnect",
                                         "--timeout", "900"])
    agents = [f"crash-pub{i}" for i in range(PUBLISHERS)]
    pubs = [publish_async(b.agent_addr, a, PER_PUBLISHER, timeout=600) for a in agents]
    seen = wait_total(b, TOTAL // 10)
    b.kill9()
    assert seen < TOTAL, "the stream ended before the kill; raise PER_PUBLISHER"
    time.sleep(0.5)
    b.start()  # same journal, same ports
    for p, a in zip(pubs, agents):
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, f"publisher {a} exited {p.returncode}: {err}"
    assert tail.wait(timeout=900) == 0, f"tail failed: {tail.stderr.read().decode()}"
    seqs = check_stream(read_jsonl(out), TOTAL, agents)
    assert all(seqs[a] == PER_PUBLISHER for a in agents), seqs

    # A subscriber that connects after the crash replays the journal: the
    # same events, once each, with EventIds 1..TOTAL and no holes.
    docs = asyncio.run(ws_collect(b.ws_url(since=0), TOTAL, 600))
    check_stream(docs, TOTAL, agents)
    ids = [int(d["Events"][0]["EventId"]) for d in docs]
    assert ids == list(range(1, TOTAL + 1)), "EventIds are not 1..N after recovery"
    log = b.log()
    assert "journal" in log and "recovered" in log, log[-2000:]
    assert b.stop() == 0, "fabricbusd did not exit cleanly:\n" + b.log()[-3000:]


def torn_journal_tail_is_truncated_on_restart():
    b = Broker().start()
    agents = ["torn-pub"]
    p = publish_async(b.agent_addr, agents[0], 1000)
    p.communicate(timeout=300)
    assert p.returncode == 0
    assert b.stop() == 0
    jdir = b.overrides["JournalDir"]
    seg = sorted(f for f in os.listdir(jdir) if f.endswith(".fbj"))[-1]
    with open(os.path.join(jdir, seg), "ab") as f:
        f.write(b"\x00\x00\x01\x00torn-record")  # a record header cut short
    b.start()
    log = b.log()
    assert "torn tail" in log, log[-2000:]
    docs = asyncio.run(ws_collect(b.ws_url(since=0), 1000, 120))
    check_stream(docs, 1000, agents)
    assert b.stop() == 0


if __name__ == "__main__":
    run(crash_midstream_every_event_exactly_once, torn_journal_tail_is_truncated_on_restart)
