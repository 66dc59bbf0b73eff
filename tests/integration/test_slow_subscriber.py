"""A subscriber that never reads must not stall the broker or the others:
they get everything, and the slow one gets the "missed N events, resume from
X" notice. Resuming from X then gets the rest from the journal."""
import asyncio
import base64
import json
import os
import socket
import struct
import threading
import time

from fbtest import (Broker, check_stream, event_key, is_missed_notice, publish_async,
                    read_jsonl, run, tail_async, ws_collect)

ROUNDS = 12
PER_ROUND = 5000
TOTAL = ROUNDS * PER_ROUND


class RawWsClient:
    """A WebSocket client on a bare socket, so that the test controls when
    (and whether) it reads. Small receive buffer: the TCP window fills fast."""

    def __init__(self, port, path):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.s.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(4096)
            assert chunk, "connection closed during the handshake"
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def pong(self, payload):
        """A masked pong (RFC 6455 5.5.3) echoing the ping's payload; the
        broker hangs up on a peer that answers no ping for 2 intervals."""
        mask = os.urandom(4)
        body = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        self.s.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask + body)

    def frames(self):
        """Yield (opcode, payload) until the server closes."""
        self.s.settimeout(60)
        while self._need(2):
            op, ln = self.buf[0] & 0x0F, self.buf[1] & 0x7F
            hdr = 2
            if ln == 126:
                if not self._need(4):
                    return
                ln, hdr = struct.unpack(">H", self.buf[2:4])[0], 4
            elif ln == 127:
                if not self._need(10):
                    return
                ln, hdr = struct.unpack(">Q", self.buf[2:10])[0], 10
            if not self._need(hdr + ln):
                return
            payload, self.buf = self.buf[hdr:hdr + ln], self.buf[hdr + ln:]
            if op == 9:  # ping (every WsPingInterval): a live client answers
                self.pong(payload)
                continue
            yield op, payload
            if op == 8:
                return


def slow_subscriber_is_cut_off_and_others_get_everything():
    # Events arrive in rounds that the live subscribers can keep up with
    # (even the ASan build of `fabricbus tail`), so the only one that falls
    # more than WsQueueEvents behind is the one that does not read at all.
    b = Broker(WsRingEvents="16384", WsQueueEvents="8192").start()
    slow = RawWsClient(b.http_port, "/ws/events")  # live from the head, never reads (yet)
    out = os.path.join(b.workdir, "fast.jsonl")
    fast = tail_async(b.http_addr, out, ["--since", "0", "--count", str(TOTAL), "--timeout", "600"])
    py = {}
    t = threading.Thread(target=lambda: py.update(
        docs=asyncio.run(ws_collect(b.ws_url(since=0), TOTAL, 600))))
    t.start()
    agents = ["slow-pub0"]
    for _ in range(ROUNDS):
        p = publish_async(b.agent_addr, agents[0], PER_ROUND)
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        time.sleep(0.3)
    assert fast.wait(timeout=600) == 0, fast.stderr.read().decode()
    check_stream(read_jsonl(out), TOTAL, agents)
    t.join(timeout=600)
    assert "docs" in py, "the python subscriber did not finish"
    check_stream(py["docs"], TOTAL, agents)

    # Now the slow one reads: some events, then the notice, then a close.
    got, notice, closed = [], None, False
    for op, payload in slow.frames():
        if op == 1:
            d = json.loads(payload)
            if is_missed_notice(d):
                notice = d
            else:
                got.append(event_key(d)[0])
        elif op == 8:
            closed = True
    assert notice is not None, f"no missed notice after {len(got)} events"
    assert closed, "slow subscriber was not disconnected"
    oem = notice["Events"][0]["Oem"]["Fabricbus"]
    missed, resume = int(oem["Missed"]), int(oem["ResumeSince"])
    assert missed > 0 and resume >= 0, oem
    assert got == list(range(1, len(got) + 1)), "events before the notice are not contiguous"
    assert resume == len(got), f"ResumeSince {resume} but {len(got)} events were delivered"

    # Resuming from the notice gets the rest from the journal: nothing lost.
    rest = asyncio.run(ws_collect(b.ws_url(since=resume), TOTAL - resume, 300))
    ids = [event_key(d)[0] for d in rest if not is_missed_notice(d)]
    assert ids == list(range(resume + 1, TOTAL + 1)), "resume did not return exactly the rest"

    b.wait_status(lambda st: st["websocket"]["dropped_slow"] >= 1)
    assert b.stop() == 0, b.log()[-3000:]


if __name__ == "__main__":
    run(slow_subscriber_is_cut_off_and_others_get_everything)
