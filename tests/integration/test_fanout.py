"""Fan-out that blames only the guilty (issue 9).

100 subscribers and a burst of events from 4 agents at full speed, with the
default configuration (WsRingEvents, WsQueueEvents): every subscriber gets
every event exactly once and in order, and none is cut off, although the
single WebSocket thread cannot keep up with the burst: the broker holds its
agents instead (backpressure) and says so in the log. One more subscriber
stops reading: it alone is cut off, with the "missed" notice, the log says it
stopped reading, and resuming from its ResumeSince returns everything else.

The subscribers are bench_ws_sink (C, checks every EventId in order), so the
test measures the broker rather than a Python client. Size: 1,000,000 events
(FANOUT_EVENTS overrides): 100M delivered messages, ~71 s under the ASan
build on 2 cores, ~29 s in a release build.
"""
import json
import os
import subprocess
import time

from fbtest import BUILD, Broker, is_missed_notice, publish_async, run, track
from test_slow_subscriber import RawWsClient

SUBSCRIBERS = 100
PUBLISHERS = 4
SINK = os.path.join(BUILD, "tests", "integration", "ws_check_sink")


EVENTS = int(os.environ.get("FANOUT_EVENTS", 1_000_000))
EVENTS -= EVENTS % PUBLISHERS


def finish(b, procs, deadline, what):
    """Wait for procs until the deadline (inside meson's timeout, so that a
    stuck run fails with the broker's view rather than a bare SIGTERM);
    return their (returncode, stdout, stderr)."""
    done = []
    for i, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            st = b.status()
            for q in procs:
                q.kill()
            raise AssertionError(f"{what} {i} of {len(procs)} still running at the deadline; "
                                 f"broker: events {json.dumps(st['broker']['events'])} "
                                 f"websocket {json.dumps(st['websocket'])[:4000]}\n"
                                 f"log tail:\n{b.log()[-3000:]}")
        done.append((p.returncode, out, err))
    return done


def sink(b, count, first, since=None):
    path = "/ws/events" + (f"?since={since}" if since is not None else "")
    return track(subprocess.Popen([SINK, "127.0.0.1", str(b.http_port), path, str(count), str(first)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))


def healthy_subscribers_get_everything_and_only_the_stalled_one_is_cut():
    b = Broker().start()  # default WsRingEvents / WsQueueEvents
    stalled = RawWsClient(b.http_port, "/ws/events")  # live from the head, reads only once cut off
    sinks = [sink(b, EVENTS, 1) for _ in range(SUBSCRIBERS)]
    b.wait_status(lambda st: len(st["websocket"]["subscribers"]) == SUBSCRIBERS + 1, timeout=60)

    t0 = time.time()
    pubs = [publish_async(b.agent_addr, f"fan{i}", EVENTS // PUBLISHERS, timeout=900)
            for i in range(PUBLISHERS)]
    # Cut off once it held the others for 2 s (not before it stalled): it
    # now reads, and gets contiguous events, the notice, a close (a peer
    # that never reads is closed 30 s after the cut without it).
    b.wait_status(lambda st: st["websocket"]["dropped_slow"] >= 1, timeout=120)
    got, notice, closed = [], None, False
    for op, payload in stalled.frames():
        if op == 1:
            d = json.loads(payload)
            if is_missed_notice(d):
                notice = d
            else:
                got.append(int(d["Events"][0]["EventId"]))
        elif op == 8:
            closed = True
    deadline = time.monotonic() + 700
    for rc, _, err in finish(b, pubs, deadline, "publisher"):
        assert rc == 0, err
    for i, (rc, out, err) in enumerate(finish(b, sinks, deadline, "subscriber")):
        assert rc == 0, f"subscriber {i}: {err.strip()} {out.strip()}"
    took = time.time() - t0
    print(f"{EVENTS} events to {SUBSCRIBERS} subscribers in {took:.1f} s "
          f"({EVENTS * SUBSCRIBERS / took:.0f} messages/s)", flush=True)

    st = b.status()["websocket"]
    assert st["dropped_slow"] == 1, f"only the stalled subscriber may be cut off: {st['dropped_slow']}"
    assert st["agents_held"] >= 1, "the burst never held the agents: was it a burst?"
    log = b.log()
    assert "holding agents until it catches up" in log
    cut = [l for l in log.splitlines() if "disconnecting" in l]
    assert len(cut) == 1 and "stopped reading" in cut[0], "\n".join(cut[:5])

    assert notice is not None and closed, f"no notice/close after {len(got)} events"
    oem = notice["Events"][0]["Oem"]["Fabricbus"]
    resume = int(oem["ResumeSince"])
    assert int(oem["Missed"]) > 0
    assert got == list(range(1, len(got) + 1)), "events before the notice are not contiguous"
    assert resume == len(got), f"ResumeSince {resume} but {len(got)} events were delivered"

    # Resuming from ResumeSince: exactly the rest, from the journal.
    rest = sink(b, EVENTS - resume, resume + 1, since=resume)
    out, err = rest.communicate(timeout=600)
    assert rest.returncode == 0, f"resume since={resume}: {err.strip()}"
    assert b.stop() == 0, b.log()[-3000:]


def slow_reader_goes_to_catch_up_and_holds_no_one():
    """A subscriber that keeps reading, but slower than the events come, is
    switched to catch-up (ring, then journal) at the lag bound instead of
    holding the bus: a fast sink finishes long before it, and it still gets
    every event exactly once, in order, with no notice."""
    n = 200_000
    b = Broker().start()
    slow = RawWsClient(b.http_port, "/ws/events")
    fast = sink(b, n, 1)
    b.wait_status(lambda st: len(st["websocket"]["subscribers"]) == 2, timeout=60)
    pubs = [publish_async(b.agent_addr, f"slow{i}", n // 2, timeout=600) for i in range(2)]
    got, t_fast, t0 = [], None, time.time()
    for op, payload in slow.frames():
        assert op == 1, f"opcode {op} after {len(got)} events"
        d = json.loads(payload)
        assert not is_missed_notice(d), f"slow reader cut off after {len(got)} events"
        got.append(int(d["Events"][0]["EventId"]))
        if len(got) % 1000 == 0:
            time.sleep(0.05)  # ~20k events/s at most: slower than the burst
            if t_fast is None and fast.poll() is not None:
                t_fast = time.time() - t0
        if len(got) == n:
            break
    t_slow = time.time() - t0
    out, err = fast.communicate(timeout=600)
    assert fast.returncode == 0, err
    for p in pubs:
        assert p.wait(timeout=600) == 0
    assert got == list(range(1, n + 1)), "slow reader: events missing, repeated or out of order"
    st = b.status()["websocket"]
    print(f"  fast sink done at {t_fast}s, slow reader at {t_slow:.1f}s; "
          f"switches to catch-up: {st['slow_readers_to_catchup']}")
    assert st["slow_readers_to_catchup"] >= 1 and st["dropped_slow"] == 0, st
    assert t_fast is not None and t_fast < t_slow / 2, (t_fast, t_slow)
    assert "reads slower than events arrive" in b.log()
    assert b.stop() == 0, b.log()[-3000:]


if __name__ == "__main__":
    run(healthy_subscribers_get_everything_and_only_the_stalled_one_is_cut,
        slow_reader_goes_to_catch_up_and_holds_no_one)
