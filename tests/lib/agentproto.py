"""A small client of the agent protocol (proto/PROTOCOL.md) for tests that
play an attacker or a misbehaving agent: raw frames over a plain socket (or
one that ssl wrapped), nothing the real session would refuse to send."""
import socket
import struct
import time

HELLO, HELLO_ACK, EVENTS, ACK, HEARTBEAT, ERROR = 1, 2, 3, 4, 5, 6
ERR_MALFORMED, ERR_TOO_BIG, ERR_PROTOCOL, ERR_REPLACED, ERR_BUSY = 2, 3, 4, 5, 8
ERR_IN_USE, ERR_SEQUENCE, ERR_FORBIDDEN = 9, 10, 11
KIND_TEST = 14


def frame(ftype, body):
    return b"FB" + bytes([1, ftype]) + struct.pack(">I", len(body)) + body


def hello(agent_id, last_acked=0):
    aid = agent_id.encode()
    return frame(HELLO, bytes([1, len(aid)]) + aid + struct.pack(">Q", last_acked))


def str8(s):
    b = s.encode()
    return bytes([len(b)]) + b


def event_body(seq, port=1, switch="attacker", text=""):
    """A valid 'test' event (the kind `fabricbus publish --generate` sends)."""
    fixed = struct.pack(">QQBBBBBBHHHIQQQ", seq, time.time_ns(), KIND_TEST, 0, 0, 1, 0, 0, port,
                        0, 0, 0, 0, 0, 0)
    assert len(fixed) == 56
    return fixed + str8("") + str8(switch) + b"".join(str8("") for _ in range(4)) + str8(text) + b"\0"


def events(bodies):
    return frame(EVENTS, struct.pack(">I", len(bodies)) +
                 b"".join(struct.pack(">H", len(b)) + b for b in bodies))


class Conn:
    """One connection; frames() parses what the broker sent."""

    def __init__(self, addr, sock=None, timeout=5.0):
        host, port = addr.rsplit(":", 1)
        self.s = sock or socket.create_connection((host, int(port)), timeout=timeout)
        self.s.settimeout(timeout)
        self.buf = b""
        self.closed = False

    def send(self, data):
        self.s.sendall(data)

    def read_frame(self, timeout=5.0):
        """The next frame as (type, body), or None when the broker closed."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 8:
                (n,) = struct.unpack(">I", self.buf[4:8])
                if len(self.buf) >= 8 + n:
                    f = (self.buf[3], self.buf[8:8 + n])
                    self.buf = self.buf[8 + n:]
                    return f
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no frame from the broker in time")
            self.s.settimeout(left)
            try:
                data = self.s.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                self.closed = True
                return None
            self.buf += data

    def expect(self, ftype, timeout=5.0):
        """Skip heartbeats; the next frame must be ftype. Returns its body."""
        while True:
            f = self.read_frame(timeout)
            assert f is not None, f"broker closed, expected frame type {ftype}"
            if f[0] == HEARTBEAT:
                continue
            if f[0] != ftype:
                raise AssertionError(f"expected frame type {ftype}, got {describe(f)}")
            return f[1]

    def hello(self, agent_id, last_acked=0):
        """Send HELLO; returns ('ack', last_seq) or ('error', code, text)."""
        self.send(hello(agent_id, last_acked))
        while True:
            f = self.read_frame()
            assert f is not None, "broker closed without answering HELLO"
            if f[0] == HELLO_ACK:
                return ("ack", struct.unpack(">Q", f[1][:8])[0])
            if f[0] == ERROR:
                return ("error",) + parse_error(f[1])

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def parse_error(body):
    code = struct.unpack(">H", body[:2])[0]
    return code, body[3:3 + body[2]].decode(errors="replace")


def describe(f):
    if f is None:
        return "close"
    if f[0] == ERROR:
        return "ERROR %d %s" % parse_error(f[1])
    if f[0] == ACK:
        return "ACK %d" % struct.unpack(">Q", f[1])[0]
    return f"frame type {f[0]}"


def ints(doc, path=""):
    """Every integer in a JSON document, with where it is."""
    if isinstance(doc, bool):
        return
    if isinstance(doc, int):
        yield path, doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from ints(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from ints(v, f"{path}[{i}]")
