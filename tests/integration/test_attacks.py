"""The agent port under attack (issue 14): a small Python client speaking the
agent protocol on loopback (tests/lib/agentproto.py) tries to hijack a live
agent's session, poison an agent id's sequence through HELLO or an event,
and abuse the port before HELLO; fabricbusd refuses each, with TLS off.
Each test here fails against the broker before these guards."""
import os
import resource
import socket
import struct
import subprocess
import time

import fbtest
from agentproto import (ACK, ERROR, ERR_BUSY, ERR_IN_USE, ERR_MALFORMED, ERR_PROTOCOL,
                        ERR_SEQUENCE, ERR_TOO_BIG, Conn, describe, event_body, events, frame,
                        hello, ints, parse_error)

U64_MAX = 2 ** 64 - 1


def agent(st, agent_id):
    """The /status entry of agent_id ({} when it has none)."""
    for a in st["broker"]["agents"]:
        if a["id"] == agent_id:
            return a
    return {}


def assert_no_negative(st):
    bad = [(p, v) for p, v in ints(st) if v < 0]
    assert not bad, f"/status shows negative counters: {bad}"


def publish(b, agent_id, n, timeout=10):
    return fbtest.publish(b.agent_addr, agent_id, generate=n, timeout=timeout)


def stop(b):
    assert b.stop() == 0, b.log()[-3000:]
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")


def restart_and_continue(b, agent_id, seq):
    """After a restart the journal still says seq for agent_id (nothing forged
    was kept), /status has no negative counter, and the agent goes on."""
    stop(b)
    b.start()
    st = b.status()
    assert agent(st, agent_id)["last_seq"] == seq, agent(st, agent_id)
    assert st["broker"]["events"]["last_event_id"] == seq, st["broker"]["events"]
    assert_no_negative(st)
    p = publish(b, agent_id, 1)
    assert p.returncode == 0 and f"acked up to seq {seq + 1}" in p.stderr, p.stderr


def test_second_hello_for_live_id_is_refused():
    """A HELLO for an agent id with a live session gets ERROR IN_USE; the
    victim keeps its session, its events are acked under its own numbers, no
    forged event is journaled, and `fabricbus publish` with the id fails."""
    b = fbtest.Broker().start()
    try:
        victim = Conn(b.agent_addr)
        assert victim.hello("ib@leaf01") == ("ack", 0)
        victim.send(events([event_body(1), event_body(2)]))
        assert struct.unpack(">Q", victim.expect(ACK))[0] == 2
        # The attacker: HELLO, then 250 forged events as in the issue.
        attacker = Conn(b.agent_addr)
        attacker.send(hello("ib@leaf01", 0) + events([event_body(3 + i, switch="forged")
                                                      for i in range(250)]))
        f = attacker.read_frame()
        assert f and f[0] == ERROR, describe(f)
        code, text = parse_error(f[1])
        assert code == ERR_IN_USE and "live session" in text, (code, text)
        assert attacker.read_frame() is None  # closed
        # The victim was not told anything and goes on with seq 3.
        victim.send(events([event_body(3)]))
        assert struct.unpack(">Q", victim.expect(ACK))[0] == 3
        st = b.wait_status(lambda s: agent(s, "ib@leaf01").get("last_seq") == 3)
        a = agent(st, "ib@leaf01")
        assert a["events"] == 3 and a["duplicates"] == 0, a
        assert st["broker"]["agent_guards"]["in_use_refused"] == 1, st["broker"]["agent_guards"]
        # The stock CLI under the victim's id does not report success.
        p = publish(b, "ib@leaf01", 5, timeout=3)
        assert p.returncode == 1, (p.returncode, p.stderr)
        assert "ERROR 9" in p.stderr and "live session" in p.stderr, p.stderr
        assert "has a live session from" in b.log()
        victim.close()
        # Once the victim is gone, the id is free again (sequence continues).
        b.wait_status(lambda s: agent(s, "ib@leaf01").get("connected") is False)
        p = publish(b, "ib@leaf01", 5)
        assert p.returncode == 0 and "acked up to seq 8" in p.stderr, p.stderr
    finally:
        stop(b)


def test_hello_last_acked_is_never_adopted():
    """HELLO claiming last_acked = 2^64-1 is answered with what the broker
    holds, not adopted, not journaled: the real agent goes on, also after a
    restart, and /status shows no negative counter."""
    b = fbtest.Broker().start()
    try:
        assert publish(b, "ib@leaf02", 5).returncode == 0
        c = Conn(b.agent_addr)
        assert c.hello("ib@leaf02", U64_MAX) == ("ack", 5)
        c.close()
        b.wait_status(lambda s: agent(s, "ib@leaf02").get("connected") is False)
        p = publish(b, "ib@leaf02", 3)
        assert p.returncode == 0 and "acked up to seq 8" in p.stderr, p.stderr
        assert "not adopted" in b.log(), b.log()[-2000:]
        st = b.wait_status(lambda s: agent(s, "ib@leaf02").get("last_seq") == 8)
        assert st["broker"]["agent_guards"]["claims_refused"] == 1
        assert_no_negative(st)
        restart_and_continue(b, "ib@leaf02", 8)
    finally:
        stop(b)


def test_event_seq_far_ahead_is_refused_not_journaled():
    """One event with seq 2^64-1 gets ERROR SEQUENCE and is not journaled: the
    real agent's next events are taken, before and after a restart."""
    b = fbtest.Broker().start()
    try:
        assert publish(b, "ib@leaf03", 4).returncode == 0
        c = Conn(b.agent_addr)
        assert c.hello("ib@leaf03") == ("ack", 4)
        c.send(events([event_body(U64_MAX, switch="poison")]))
        f = c.read_frame()
        assert f and f[0] == ERROR and parse_error(f[1])[0] == ERR_SEQUENCE, describe(f)
        assert "MaxSeqGap" in parse_error(f[1])[1]
        st = b.wait_status(lambda s: s["broker"]["agent_guards"]["seq_refused"] == 1 and
                           agent(s, "ib@leaf03").get("connected") is False)
        assert st["broker"]["events"]["total"] == 4
        assert_no_negative(st)
        p = publish(b, "ib@leaf03", 2)
        assert p.returncode == 0 and "acked up to seq 6" in p.stderr, p.stderr
        restart_and_continue(b, "ib@leaf03", 6)
    finally:
        stop(b)


def test_sequence_gaps_are_bounded_and_reported():
    """Within MaxSeqGap a gap is taken, counted and logged; beyond, refused."""
    b = fbtest.Broker(MaxSeqGap="100").start()
    try:
        c = Conn(b.agent_addr)
        assert c.hello("gappy") == ("ack", 0)
        c.send(events([event_body(1), event_body(51)]))
        assert struct.unpack(">Q", c.expect(ACK))[0] == 51
        c.send(events([event_body(152)]))  # 101 above 51
        f = c.read_frame()
        assert f and f[0] == ERROR and parse_error(f[1])[0] == ERR_SEQUENCE, describe(f)
        st = b.wait_status(lambda s: s["broker"]["agent_guards"]["seq_refused"] == 1 and
                           agent(s, "gappy").get("connected") is False)
        a = agent(st, "gappy")
        assert a["last_seq"] == 51 and a["gaps"] == 49, a
        assert st["broker"]["agent_guards"]["gaps"] == 49, st["broker"]["agent_guards"]
        assert "sequence jumps from 1 to 51" in b.log()
        c = Conn(b.agent_addr)
        assert c.hello("gappy") == ("ack", 51)
        c.send(events([event_body(151)]))  # exactly MaxSeqGap above: taken
        assert struct.unpack(">Q", c.expect(ACK))[0] == 151
        c.close()
    finally:
        stop(b)


def test_valid_events_before_a_bad_one_are_acked_before_the_error():
    """PROTOCOL.md: the events before a malformed one in the same frame are
    kept and acked, and the ACK comes before the ERROR."""
    b = fbtest.Broker().start()
    try:
        c = Conn(b.agent_addr)
        assert c.hello("halfbad") == ("ack", 0)
        bad = bytearray(event_body(4))
        bad[16] = 99  # kind 99: unknown
        c.send(events([event_body(1), event_body(2), event_body(3), bytes(bad), event_body(5)]))
        got = [describe(c.read_frame()) for _ in range(2)]
        assert got[0] == "ACK 3", got
        assert got[1].startswith("ERROR 2 event 4 of 5"), got
        # The same for a refused sequence in the middle of a frame.
        c = Conn(b.agent_addr)
        assert c.hello("halfbad") == ("ack", 3)
        c.send(events([event_body(4), event_body(4 + 70000)]))
        got = [describe(c.read_frame()) for _ in range(2)]
        assert got[0] == "ACK 4" and got[1].startswith(f"ERROR {ERR_SEQUENCE}"), got
        st = b.wait_status(lambda s: agent(s, "halfbad").get("last_seq") == 4)
        assert st["broker"]["events"]["total"] == 4
    finally:
        stop(b)


def test_big_frame_before_hello_is_refused_at_once():
    """Before HELLO a frame may be 1 KiB: a header announcing 1 MiB is refused
    before any body byte, so 300 such connections cost the broker nothing."""
    b = fbtest.Broker(HeartbeatInterval="60s").start()
    try:
        rss0 = rss_kib(b.proc.pid)
        conns = []
        for _ in range(300):
            c = Conn(b.agent_addr)
            c.send(b"FB" + bytes([1, 1]) + struct.pack(">I", 1 << 20) + b"\0" * 60000)
            conns.append(c)
        for c in conns:
            f = c.read_frame()
            assert f and f[0] == ERROR and parse_error(f[1])[0] == ERR_TOO_BIG, describe(f)
            assert "before HELLO" in parse_error(f[1])[1]
            c.close()
        grown = rss_kib(b.proc.pid) - rss0
        print(f"  RSS grew {grown} KiB for 300 connections")
        assert grown < 64 * 1024, f"RSS grew {grown} KiB"
    finally:
        stop(b)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_trickled_hello_is_closed_at_the_deadline():
    """A client trickling an unfinished HELLO (a byte every 300 ms) is closed
    once HelloTimeout has passed, whatever it sends."""
    b = fbtest.Broker(HelloTimeout="1500ms").start()
    try:
        c = Conn(b.agent_addr)
        data = hello("slowloris")
        t0 = time.monotonic()
        closed_after = None
        for byte in data[:-1]:
            try:
                c.send(bytes([byte]))
            except OSError:
                pass
            time.sleep(0.3)
            c.s.setblocking(False)
            try:
                got = c.s.recv(4096)
                c.buf += got
                if not got or c.buf[3:4] == bytes([ERROR]):
                    closed_after = time.monotonic() - t0
                    break
            except BlockingIOError:
                pass
            except ConnectionResetError:
                closed_after = time.monotonic() - t0
                break
            finally:
                c.s.setblocking(True)
        assert closed_after is not None, "the trickler was never closed"
        assert 1.4 < closed_after < 4.0, closed_after
        assert "no HELLO within HelloTimeout=1500 ms" in b.log(), b.log()[-2000:]
        b.wait_status(lambda s: s["broker"]["agent_guards"]["hello_timeouts"] == 1)
    finally:
        stop(b)


def test_connections_per_source_address_are_capped():
    b = fbtest.Broker(MaxAgentsPerAddress="3", HeartbeatInterval="60s").start()
    try:
        b.wait_status(lambda s: s["broker"]["listeners"]["agents"]["open"] == 0)
        conns = [Conn(b.agent_addr) for _ in range(5)]
        answers = [c.hello(f"cap{i}") for i, c in enumerate(conns)]
        oks = [a for a in answers if a[0] == "ack"]
        busy = [a for a in answers if a[0] == "error"]
        assert len(oks) == 3 and len(busy) == 2, answers
        assert all(a[1] == ERR_BUSY and "MaxAgentsPerAddress=3" in a[2] for a in busy), busy
        for c in conns:
            c.close()
        st = b.wait_status(lambda s: s["broker"]["agent_guards"]["per_address_refused"] == 2 and
                           s["broker"]["listeners"]["agents"]["open"] == 0)
        c = Conn(b.agent_addr)  # freed slots are counted down
        assert c.hello("cap9")[0] == "ack"
        c.close()
    finally:
        stop(b)


def test_idle_agent_ids_expire_and_resume():
    """Throwaway agent ids leave memory and /status after AgentIdleExpiry;
    an expired id that comes back resumes its sequence."""
    b = fbtest.Broker(AgentIdleExpiry="2s").start()
    try:
        for i in range(30):
            c = Conn(b.agent_addr)
            assert c.hello(f"throwaway{i}") == ("ack", 0)
            c.send(events([event_body(1), event_body(2)]))
            assert struct.unpack(">Q", c.expect(ACK))[0] == 2
            c.close()
        st = b.wait_status(lambda s: s["broker"]["agent_guards"]["expired"] >= 30, timeout=15)
        assert not [a for a in st["broker"]["agents"] if a["id"].startswith("throwaway")], \
            st["broker"]["agents"]
        assert st["broker"]["agent_guards"]["expired_ids_kept"] == 30
        c = Conn(b.agent_addr)
        assert c.hello("throwaway7") == ("ack", 2)
        c.send(events([event_body(2), event_body(3)]))  # 2 is a duplicate
        assert struct.unpack(">Q", c.expect(ACK))[0] == 3
        c.close()
        st = b.wait_status(lambda s: agent(s, "throwaway7"))
        assert agent(st, "throwaway7")["duplicates"] == 1
        assert st["broker"]["events"]["total"] == 61
    finally:
        stop(b)


TESTS = [test_second_hello_for_live_id_is_refused, test_hello_last_acked_is_never_adopted,
         test_event_seq_far_ahead_is_refused_not_journaled, test_sequence_gaps_are_bounded_and_reported,
         test_valid_events_before_a_bad_one_are_acked_before_the_error,
         test_big_frame_before_hello_is_refused_at_once, test_trickled_hello_is_closed_at_the_deadline,
         test_connections_per_source_address_are_capped, test_idle_agent_ids_expire_and_resume]

if __name__ == "__main__":
    fbtest.main(TESTS)
