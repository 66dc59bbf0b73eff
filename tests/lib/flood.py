"""Agents that flood the agent port, and the share of the broker's intake each
one got, counted from the journal rather than timed (issue 14: per-connection
read budgets, AgentReadBudget in broker/ingest.c).

    shares = flood_shares(broker, [Flooder("a", 30000), Flooder("b", 30000),
                                   Flooder("c", 30000, frame_events=8)])
    shares["c"]   # c's events among the first events of the journal, as a fraction

Each flooder is a raw agent-protocol connection (tests/lib/agentproto.py)
in a process of its own (no GIL shared with the others) that sends all its
EVENTS frames at once without waiting for acks, so that the broker always has
bytes to read from it; a windowed one (window=N) keeps at most N events
unacked, as the stock client does (fabricbus publish: 16384). All of them say
HELLO first and start sending together. The share is counted over the window in which all of
them still had events queued: the journal's events up to the last one of the
flooder that finished first.
"""
import multiprocessing
import struct
import subprocess

import fbtest
from agentproto import ACK, Conn, event_body, events

_TEMPLATE = event_body(1)


def frames(n, frame_events, first_seq=1):
    """n 'test' events from first_seq on, frame_events to a frame, as bytes."""
    out = []
    seq = first_seq
    while seq < first_seq + n:
        k = min(frame_events, first_seq + n - seq)
        bodies = []
        for s in range(seq, seq + k):
            b = bytearray(_TEMPLATE)
            struct.pack_into(">Q", b, 0, s)
            bodies.append(bytes(b))
        out.append(events(bodies))
        seq += k
    return b"".join(out)


class Flooder:
    """One agent id that sends n events, frame_events per EVENTS frame; with
    window, at most that many unacked."""

    def __init__(self, agent_id, n, frame_events=512, window=None):
        self.agent_id, self.n, self.frame_events, self.window = agent_id, n, frame_events, window

    def run(self, addr, go, result):
        """In the child: HELLO, wait for go, send everything, wait for the
        last ACK; result gets (agent id, error or None)."""
        try:
            chunks = [frames(min(self.frame_events, self.n - s), self.frame_events, s + 1)
                      for s in range(0, self.n, self.frame_events)]
            conn = Conn(addr, timeout=300)
            got = conn.hello(self.agent_id)
            assert got == ("ack", 0), f"HELLO answered {got}"
            result.put((self.agent_id, "ready"))
            go.wait()
            if self.window is None:
                conn.send(b"".join(chunks))
            acked = sent = 0
            i = 0
            while acked < self.n:
                while self.window is not None and i < len(chunks) and sent - acked < self.window:
                    conn.send(chunks[i])
                    sent += min(self.frame_events, self.n - i * self.frame_events)
                    i += 1
                acked = struct.unpack(">Q", conn.expect(ACK, timeout=300))[0]
            conn.close()
            result.put((self.agent_id, None))
        except Exception as e:  # reported by the parent
            result.put((self.agent_id, repr(e)))


def journal_agents(broker, total, timeout=300):
    """The AgentId of each journaled event in EventId order (a replay from
    the journal with `fabricbus tail --since 0`)."""
    r = subprocess.run([fbtest.FABRICBUS, "tail", "--http", broker.http_addr, "--since", "0",
                        "--count", str(total), "--timeout", str(timeout), "--events-only",
                        "--quiet"], capture_output=True, text=True, timeout=timeout + 30)
    assert r.returncode == 0, f"tail --since 0 --count {total}: {r.stderr[-2000:]}"
    import json
    out = []
    for line in r.stdout.splitlines():
        if line.strip():
            out.append(json.loads(line)["Events"][0]["Oem"]["Fabricbus"]["AgentId"])
    return out


def start_ready(addr, agents, timeout=300):
    """Each agent's run(addr, go, result) in a process of its own (forked),
    once every one of them has said HELLO and put (id, "ready"); returns
    (go, result, procs): set go to start them together, then read each one's
    (id, outcome) from result."""
    ctx = multiprocessing.get_context("fork")
    go, result = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=a.run, args=(addr, go, result), daemon=True) for a in agents]
    for p in procs:
        p.start()
    for _ in agents:
        who, what = result.get(timeout=timeout)
        assert what == "ready", f"{who}: {what}"
    return go, result, procs


def flood_shares(broker, flooders, timeout=300):
    """Run the flooders together against broker; returns ({agent id: share of
    the window}, window size in events, {agent id: events in the window})."""
    go, result, procs = start_ready(broker.agent_addr, flooders, timeout)
    go.set()
    for _ in flooders:
        who, err = result.get(timeout=timeout)
        assert err is None, f"flooder {who}: {err}"
    for p in procs:
        p.join(timeout)
    n = {f.agent_id: f.n for f in flooders}
    order = journal_agents(broker, sum(n.values()), timeout)
    # The window: up to where the first flooder ran out of events.
    seen = {a: 0 for a in n}
    end = len(order)
    for i, a in enumerate(order):
        seen[a] += 1
        if seen[a] == n[a]:
            end = i + 1
            break
    counts = {a: 0 for a in n}
    for a in order[:end]:
        counts[a] += 1
    return {a: c / end for a, c in counts.items()}, end, counts
