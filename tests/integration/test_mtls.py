"""Agent identity with mutual TLS on the agent port (docs/security.md).

The test makes its certificates with the openssl command: a CA, a broker
certificate for 127.0.0.1, agent certificates (CN = the agent id, or a group
name mapped by AgentIdentity), one from another CA and one expired. Then:
`fabricbus publish` over mTLS works end to end; a wrong CA, no certificate,
an expired certificate, a certificate for another id and plain TCP are each
refused with a clear log line; a certificate for the id takes over a live
session (the old one gets REPLACED), a connection without one cannot.
"""
import socket
import ssl
import struct

import certs
import fbtest
from agentproto import (ACK, ERROR, ERR_FORBIDDEN, ERR_IN_USE, ERR_REPLACED, Conn, describe,
                        event_body, events, parse_error)


class Pki(certs.Pki):
    """The agents' PKI: a CA, another CA, the broker's certificate."""

    def __init__(self):
        super().__init__("fb-pki-")
        self.ca("ca")
        self.ca("otherca")
        self.cert("broker", "fabricbusd", "ca", san="IP:127.0.0.1")

    def tls_args(self, name):
        return ["--tls-ca", self.path("ca.pem"), "--tls-cert", self.path(f"{name}.pem"),
                "--tls-key", self.path(f"{name}.key")]

    def broker(self, mode="required", **over):
        return fbtest.Broker(AgentTls=mode, AgentTlsCert=self.path("broker.pem"),
                             AgentTlsKey=self.path("broker.key"), AgentTlsCa=self.path("ca.pem"),
                             **over)

    def conn(self, b, name):
        """A Python mTLS agent connection presenting name's certificate."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(self.path("ca.pem"))
        if name:
            ctx.load_cert_chain(self.path(f"{name}.pem"), self.path(f"{name}.key"))
        raw = socket.create_connection(("127.0.0.1", b.agent_port), timeout=5)
        return Conn(b.agent_addr, sock=ctx.wrap_socket(raw, server_hostname="127.0.0.1"))


def publish(b, pki, agent_id, cert, n=10, timeout=10, ca=None):
    args = pki.tls_args(cert) if cert else ["--tls-ca", pki.path("ca.pem")]
    if ca:
        args[1] = pki.path(ca)
    return fbtest.publish(b.agent_addr, agent_id, generate=n, timeout=timeout, extra=args)


def stop(b):
    assert b.stop() == 0, b.log()[-3000:]
    fbtest.assert_no_sanitizer_report(b.log(), "fabricbusd")


PKI = None


def pki():
    global PKI
    if PKI is None:
        PKI = Pki()
        PKI.cert("leaf01", "ib@leaf01").cert("leaf02", "ib@leaf02")
        PKI.cert("group", "leaf-agents")
        PKI.cert("sanonly", "someone", san="DNS:node@node007")
        PKI.cert("stranger", "ib@leaf01", ca="otherca")
        PKI.cert("expired", "ib@leaf01", days=-1)
    return PKI


def test_publish_over_mtls_end_to_end():
    p = pki()
    b = p.broker().start()
    try:
        r = publish(b, p, "ib@leaf01", "leaf01", n=2000, timeout=30)
        assert r.returncode == 0 and "published 2000 events (acked up to seq 2000)" in r.stderr, \
            r.stderr
        st = b.wait_status(lambda s: s["broker"]["events"]["total"] == 2000)
        assert st["broker"]["agent_guards"]["tls"] == "required"
        assert "agent ib@leaf01 connected from 127.0.0.1" in b.log()
        assert "over TLS as CN=ib@leaf01" in b.log(), b.log()[-2000:]
        # A DNS SAN names the id too.
        r = publish(b, p, "node@node007", "sanonly", n=3)
        assert r.returncode == 0, r.stderr
    finally:
        stop(b)


def test_agent_identity_rule_maps_a_group_certificate():
    p = pki()
    b = p.broker(AgentIdentity="CN:leaf-* -> ib@leaf0* ib@spine*").start()
    try:
        r = publish(b, p, "ib@leaf05", "group", n=5)
        assert r.returncode == 0, r.stderr
        r = publish(b, p, "node@node003", "group", n=1, timeout=3)
        assert r.returncode == 1 and "ERROR 11" in r.stderr, r.stderr
        assert "certificate CN=leaf-agents may not use agent id node@node003" in b.log()
    finally:
        stop(b)


def test_bad_certificates_are_refused_with_a_clear_log_line():
    """Wrong CA, no certificate, expired, another id's certificate, plain TCP:
    each refused, nothing journaled, each with its own log line."""
    p = pki()
    b = p.broker().start()
    try:
        cases = [
            ("stranger", "unable to get local issuer certificate"),
            (None, "TLS handshake failed"),
            ("expired", "certificate has expired"),
            ("leaf02", "certificate CN=ib@leaf02 may not use agent id ib@leaf01"),
        ]
        for cert, line in cases:
            r = publish(b, p, "ib@leaf01", cert, n=1, timeout=2)
            assert r.returncode == 1, (cert, r.returncode, r.stderr)
            fbtest.wait_for(b.log, lambda log: line in log, 5, f"log line {line!r} for {cert}")
        no_cert = [l for l in b.log().splitlines() if "TLS handshake failed" in l and
                   "certificate" in l.lower()]
        assert no_cert, b.log()[-3000:]
        # A plain TCP agent gets a plain ERROR that says what to do.
        c = Conn(b.agent_addr)
        res = c.hello("ib@leaf01")
        assert res[0] == "error" and res[1] == ERR_FORBIDDEN and "TLS only" in res[2], res
        r = fbtest.publish(b.agent_addr, "ib@leaf01", generate=1, timeout=2)
        assert r.returncode == 1 and "AgentTls=required" in r.stderr, r.stderr
        st = b.wait_status(lambda s: s["broker"]["agent_guards"]["forbidden"] >= 3)
        g = st["broker"]["agent_guards"]
        assert g["tls_failed"] >= 3, g
        assert st["broker"]["events"]["total"] == 0
    finally:
        stop(b)


def test_certificate_takes_over_a_live_session_plain_cannot():
    """optional: a live session of ib@leaf01 is taken over only by a connection
    with a certificate for the id (the old one is told REPLACED); a plain one
    gets IN_USE."""
    p = pki()
    b = p.broker(mode="optional").start()
    try:
        old = p.conn(b, "leaf01")
        assert old.hello("ib@leaf01") == ("ack", 0)
        old.send(events([event_body(1)]))
        assert struct.unpack(">Q", old.expect(ACK))[0] == 1
        plain = Conn(b.agent_addr)
        res = plain.hello("ib@leaf01")
        assert res[0] == "error" and res[1] == ERR_IN_USE, res
        new = p.conn(b, "leaf01")
        assert new.hello("ib@leaf01") == ("ack", 1)
        f = old.read_frame()
        assert f and f[0] == ERROR and parse_error(f[1])[0] == ERR_REPLACED, describe(f)
        new.send(events([event_body(2)]))
        assert struct.unpack(">Q", new.expect(ACK))[0] == 2
        assert "takes over the session" in b.log()
        # optional still takes plain agents for ids nobody holds.
        r = fbtest.publish(b.agent_addr, "plain@host", generate=3, timeout=10)
        assert r.returncode == 0, r.stderr
        new.close()
    finally:
        stop(b)


TESTS = [test_publish_over_mtls_end_to_end, test_agent_identity_rule_maps_a_group_certificate,
         test_bad_certificates_are_refused_with_a_clear_log_line,
         test_certificate_takes_over_a_live_session_plain_cannot]

if __name__ == "__main__":
    fbtest.main(TESTS)
