"""TLS and auth on the HTTP/WebSocket listener (docs/security.md, "HTTP and
WebSocket"): bearer tokens (HttpTokens) with Redfish roles, reads that need a
login, HTTPS/wss with a test CA made by openssl in the test's workdir, plain
HTTP on an HTTPS-only port redirected or refused, the start-up rules, and the
clients (fabricbus status/tail, fabricbus-slurm) with --token-file/--tls-ca.

Every check here fails without the HttpTls/HttpTokens work: before it the
broker served every read to anyone and had no TLS on this port.
"""
import asyncio
import hashlib
import http.client
import json
import os
import secrets
import ssl
import subprocess
import time
import warnings

import websockets

import certs
import fbtest

LINK_DOWN = {"kind": "link_down", "link_class": "host", "tech": "infiniband", "switch": "leaf3",
             "switch_guid": "0x0008f10400411a08", "port": 17, "node": "node003",
             "counters": {"link_downed": 1}}


class Secrets(certs.Pki):
    """A CA, a broker certificate for 127.0.0.1, and tokens, in one workdir."""

    def __init__(self):
        super().__init__("fb-httpsec-")
        self.ca("ca")
        self.ca("otherca")
        self.cert("broker", "fabricbusd", san="IP:127.0.0.1,DNS:localhost")
        self.cert("client", "test client")
        self.tokens = {}
        lines = []
        for name, role in (("viewer", "ReadOnly"), ("slurm", "Operator"), ("root", "Administrator")):
            tok = secrets.token_hex(32)
            self.tokens[name] = tok
            self.write(f"{name}.token", tok + "\n")
            lines.append(f"{name}:{role}:{hashlib.sha256(tok.encode()).hexdigest()}  # {role}\n")
        self.write("tokens", "# NAME:ROLE:SHA256\n" + "".join(lines))

    def broker(self, tls=None, **over):
        o = {"HttpTokens": self.path("tokens")}
        if tls:
            o.update(HttpTls=tls, HttpTlsCert=self.path("broker.pem"),
                     HttpTlsKey=self.path("broker.key"))
        o.update(over)
        return fbtest.Broker(**o)

    def ctx(self, ca="ca", client=None):
        c = ssl.create_default_context(cafile=self.path(f"{ca}.pem"))
        if client:
            c.load_cert_chain(self.path(f"{client}.pem"), self.path(f"{client}.key"))
        return c


_S = None


def sec():
    global _S
    if _S is None:
        _S = Secrets()
    return _S


def request(b, method, path, token=None, body=None, ctx=None, headers=None):
    """(status, headers dict, body text) of one request, over TLS when ctx."""
    if ctx:
        c = http.client.HTTPSConnection("127.0.0.1", b.http_port, timeout=10, context=ctx)
    else:
        c = http.client.HTTPConnection("127.0.0.1", b.http_port, timeout=10)
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    if body is not None:
        h["Content-Type"] = "application/json"
        body = json.dumps(body)
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode()
    finally:
        c.close()


def ws_status(url, token=None, ctx=None, query=""):
    """101 when the upgrade succeeds, else the refusal's HTTP status."""
    async def go():
        h = [("Authorization", f"Bearer {token}")] if token else []
        try:
            async with websockets.connect(url + query, extra_headers=h, ssl=ctx, open_timeout=10):
                return 101
        except websockets.exceptions.InvalidStatusCode as e:
            return e.status_code
    return asyncio.run(go())


def ws_first_event(url, token, ctx, publish):
    """Subscribe, then publish, and return the first event received."""
    async def go():
        async with websockets.connect(url, extra_headers=[("Authorization", f"Bearer {token}")],
                                      ssl=ctx, open_timeout=10) as ws:
            await asyncio.get_running_loop().run_in_executor(None, publish)
            return json.loads(await asyncio.wait_for(ws.recv(), 30))
    return asyncio.run(go())


def publish(b):
    r = fbtest.publish(b.agent_addr, "ib@leaf3", [LINK_DOWN], timeout=30)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------------------


def reads_need_a_login_when_tokens_are_configured():
    s = sec()
    b = s.broker().start()
    try:
        viewer = s.tokens["viewer"]
        for path in ("/status", "/fabric/map", "/metrics", "/redfish/v1/Fabrics"):
            st, h, body = request(b, "GET", path)
            assert st == 401, f"GET {path} without a token: {st} {body[:200]}"
            assert h.get("www-authenticate", "").startswith("Basic"), h
            st, _, body = request(b, "GET", path, token=viewer)
            assert st == 200, f"GET {path} with the ReadOnly token: {st} {body[:200]}"
            st, _, _ = request(b, "GET", path, token="0" * 64)
            assert st == 401, f"GET {path} with an unknown token: {st}"
        st, _, body = request(b, "GET", "/")
        assert st == 200, "the endpoint list stays public"
        url = f"ws://127.0.0.1:{b.http_port}/ws/events"
        assert ws_status(url) == 401, "/ws/events without a token"
        assert ws_status(url, token="f" * 64) == 401, "/ws/events with an unknown token"
        assert ws_status(url, token=viewer) == 101, "/ws/events with the ReadOnly token"
        assert ws_status(url, query=f"?access_token={viewer}&severity=Critical") == 101, \
            "/ws/events with ?access_token= (browsers)"
        assert ws_status(url, query="?access_token=" + "0" * 64) == 401
        assert "http: 3 bearer tokens" in b.log(), b.log()[-2000:]
        for tok in s.tokens.values():
            assert tok not in b.log(), "a token is in the broker's log"
    finally:
        assert b.stop() == 0


def anonymous_reads_and_public_metrics_are_opt_in():
    s = sec()
    b = s.broker(HttpPublicMetrics="yes").start()
    try:
        assert request(b, "GET", "/metrics")[0] == 200, "HttpPublicMetrics=yes"
        assert request(b, "GET", "/status")[0] == 401, "HttpPublicMetrics opens /metrics only"
        assert request(b, "GET", "/metrics", token="0" * 64)[0] == 401, "a bad token is still 401"
    finally:
        assert b.stop() == 0
    b = s.broker(HttpAnonymousReads="yes").start()
    try:
        assert request(b, "GET", "/status")[0] == 200
        assert request(b, "GET", "/fabric/map")[0] == 200
        assert ws_status(f"ws://127.0.0.1:{b.http_port}/ws/events") == 101
        st, _, body = request(b, "POST", "/fabric/jobs", body={"JobId": "7", "Nodes": "node1"})
        assert st == 401, f"anonymous reads do not open writes: {st} {body}"
    finally:
        assert b.stop() == 0


def read_only_token_cannot_write():
    s = sec()
    b = s.broker().start()
    try:
        job = {"JobId": "42", "User": "alice", "Nodes": ["node001", "node002"]}
        st, _, body = request(b, "POST", "/fabric/jobs", token=s.tokens["viewer"], body=job)
        assert st == 403, f"ReadOnly POST /fabric/jobs: {st} {body}"
        st, _, body = request(b, "DELETE", "/fabric/jobs/42", token=s.tokens["viewer"])
        assert st == 403, f"ReadOnly DELETE /fabric/jobs/42: {st} {body}"
        sub = {"Destination": "http://127.0.0.1:9/x", "Protocol": "Redfish"}
        st, _, body = request(b, "POST", "/redfish/v1/EventService/Subscriptions",
                              token=s.tokens["viewer"], body=sub)
        assert st == 403, f"ReadOnly POST Subscriptions: {st} {body[:300]}"
        st, _, body = request(b, "POST", "/fabric/jobs", token=s.tokens["slurm"], body=job)
        assert st in (200, 201), f"Operator POST /fabric/jobs: {st} {body}"
        st, _, body = request(b, "DELETE", "/fabric/jobs/42", token=s.tokens["root"])
        assert st == 204, f"Administrator DELETE: {st} {body}"
    finally:
        assert b.stop() == 0


def https_and_wss_with_a_test_ca():
    s = sec()
    b = s.broker(tls="required").start()
    try:
        ctx, viewer = s.ctx(), s.tokens["viewer"]
        st, _, body = request(b, "GET", "/status", token=viewer, ctx=ctx)
        assert st == 200 and json.loads(body)["broker"], f"HTTPS GET /status: {st}"
        assert request(b, "GET", "/status", ctx=ctx)[0] == 401, "HTTPS does not replace the token"
        # wss: an event published on the agent port arrives over TLS
        doc = ws_first_event(f"wss://127.0.0.1:{b.http_port}/ws/events", viewer, ctx,
                             lambda: publish(b))
        assert doc["Events"][0]["MessageId"].startswith(("Fabric.", "NetworkDevice.")), doc
        # SSE over HTTPS: the stream's head and the replayed event
        c = http.client.HTTPSConnection("127.0.0.1", b.http_port, timeout=10, context=ctx)
        c.request("GET", "/redfish/v1/EventService/SSE", headers={
            "Authorization": f"Bearer {viewer}", "Last-Event-ID": "0"})
        r = c.getresponse()
        assert r.status == 200 and r.getheader("Content-Type", "").startswith("text/event-stream")
        head = b""
        while b"data:" not in head:
            head += r.read1(4096)
        assert b"id:" in head, head[:300]
        c.close()
        # a client that does not trust the CA, or TLS 1.1, gets nowhere
        try:
            request(b, "GET", "/status", token=viewer, ctx=s.ctx("otherca"))
            raise AssertionError("a certificate from another CA was accepted")
        except ssl.SSLCertVerificationError:
            pass
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.load_verify_locations(s.path("ca.pem"))
        old.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
        try:
            request(b, "GET", "/status", token=viewer, ctx=old)
            raise AssertionError("TLS 1.1 was accepted")
        except (ssl.SSLError, ConnectionError):
            pass
        # plain HTTP on the HTTPS-only port: a redirect for a bare GET, 403 otherwise
        st, h, _ = request(b, "GET", "/redfish/v1/?x=1")
        assert st == 301 and h["location"] == f"https://127.0.0.1:{b.http_port}/redfish/v1/?x=1", h
        st, _, body = request(b, "GET", "/status", token=viewer)
        assert st == 403 and "HTTPS" in body, f"plain GET with a token: {st} {body}"
        st, _, body = request(b, "POST", "/redfish/v1/SessionService/Sessions",
                              body={"UserName": "a", "Password": "b"})
        assert st == 403, f"plain POST: {st} {body}"
        assert ws_status(f"ws://127.0.0.1:{b.http_port}/ws/events", token=viewer) == 403
        assert "wss://127.0.0.1" in b.log() and "HTTPS only" in b.log(), b.log()[-2000:]
    finally:
        assert b.stop() == 0


def client_certificates_when_a_ca_is_set():
    s = sec()
    b = s.broker(tls="required", HttpTlsCa=s.path("ca.pem")).start()
    try:
        viewer = s.tokens["viewer"]
        st, _, _ = request(b, "GET", "/status", token=viewer, ctx=s.ctx(client="client"))
        assert st == 200, f"with a client certificate: {st}"
        try:
            st = request(b, "GET", "/status", token=viewer, ctx=s.ctx())[0]
            raise AssertionError(f"no client certificate, yet HTTP {st}")
        except (ssl.SSLError, ConnectionError, http.client.RemoteDisconnected):
            pass
    finally:
        assert b.stop() == 0


def cli_status_and_tail_with_token_and_ca():
    s = sec()
    b = s.broker(tls="required").start()
    try:
        base = [fbtest.FABRICBUS]
        auth = ["--http", b.http_addr, "--tls-ca", s.path("ca.pem"),
                "--token-file", s.path("viewer.token")]
        r = subprocess.run(base + ["status", "--json"] + auth, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0 and json.loads(r.stdout)["broker"], r.stderr
        r = subprocess.run(base + ["status", "--http", b.http_addr, "--tls-ca", s.path("ca.pem")],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "401" in r.stderr and "--token-file" in r.stderr, r.stderr
        r = subprocess.run(base + ["status", "--http", b.http_addr], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 1 and "--tls-ca" in r.stderr, r.stderr
        r = subprocess.run(base + ["status"] + auth[:2] + ["--tls-ca", s.path("otherca.pem")],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 1 and "certificate" in r.stderr, r.stderr
        os.chmod(s.path("viewer.token"), 0o644)
        try:
            r = subprocess.run(base + ["status", "--json"] + auth, capture_output=True, text=True,
                               timeout=30)
            assert r.returncode == 2 and "viewer.token" in r.stderr, r.stderr
        finally:
            os.chmod(s.path("viewer.token"), 0o600)
        env = dict(os.environ, FABRICBUS_TOKEN_FILE=s.path("viewer.token"),
                   FABRICBUS_TLS_CA=s.path("ca.pem"))
        r = subprocess.run(base + ["topology", "--http", b.http_addr, "--format", "json",
                                   "--tls-ca", s.path("ca.pem")], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 1 and "401" in r.stderr, r.stderr
        r = subprocess.run(base + ["topology", "--http", b.http_addr, "--format", "json"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert "401" not in r.stderr and "301" not in r.stderr and "cannot reach" not in r.stderr, \
            r.stderr
        t = subprocess.Popen(base + ["tail", "--http", b.http_addr, "--since", "0", "--count", "1",
                                     "--timeout", "60"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        publish(b)
        out, err = t.communicate(timeout=90)
        assert t.returncode == 0 and json.loads(out.splitlines()[0])["Events"], (out, err)
    finally:
        assert b.stop() == 0


def start_refuses_plain_http_off_loopback_and_bad_files():
    s = sec()

    def check(*over):
        args = [fbtest.FABRICBUSD, "--check-config", "-o", "JournalDir=" + s.path("j")]
        for o in over:
            args += ["-o", o]
        return subprocess.run(args, capture_output=True, text=True, timeout=30)
    r = check("HttpListen=0.0.0.0:7999")
    assert r.returncode == 2 and "HttpAllowPlain" in r.stderr and "HttpTls" in r.stderr, r.stderr
    r = check("HttpListen=0.0.0.0:7999", "HttpAllowPlain=yes")
    assert r.returncode == 0, r.stderr
    r = check("HttpListen=0.0.0.0:7999", "HttpTls=optional", "HttpTlsCert=" + s.path("broker.pem"),
              "HttpTlsKey=" + s.path("broker.key"))
    assert r.returncode == 2 and "HttpAllowPlain" in r.stderr, "optional still takes plain"
    r = check("HttpTls=required")
    assert r.returncode == 2 and "HttpTlsCert" in r.stderr, r.stderr
    # the daemon itself: a bad key, a key others may read, a tokens file others may read
    port, aport = fbtest.free_port(), fbtest.free_port()
    common = ["-o", f"HttpListen=127.0.0.1:{port}", "-o", f"AgentListen=127.0.0.1:{aport}",
              "-o", "JournalDir=" + s.path("j2")]

    def start(*over):
        args = [fbtest.FABRICBUSD] + common
        for o in over:
            args += ["-o", o]
        return subprocess.run(args, capture_output=True, text=True, timeout=30)
    tls = ["HttpTls=required", "HttpTlsCert=" + s.path("broker.pem")]
    r = start(*tls, "HttpTlsKey=" + s.path("client.key"))
    assert r.returncode == 2 and "HttpTlsKey" in r.stderr, r.stderr
    os.chmod(s.path("broker.key"), 0o644)
    try:
        r = start(*tls, "HttpTlsKey=" + s.path("broker.key"))
        assert r.returncode == 2 and "broker.key" in r.stderr and "chmod" in r.stderr, r.stderr
    finally:
        os.chmod(s.path("broker.key"), 0o600)
    s.write("badtokens", "x:ReadOnly:1234\n")
    r = start("HttpTokens=" + s.path("badtokens"))
    assert r.returncode == 2 and "badtokens:1" in r.stderr and "SHA-256" in r.stderr, r.stderr
    os.chmod(s.path("tokens"), 0o640)
    try:
        r = start("HttpTokens=" + s.path("tokens"))
        assert r.returncode == 2 and "tokens" in r.stderr and "chmod" in r.stderr, r.stderr
    finally:
        os.chmod(s.path("tokens"), 0o600)


def slurm_adapter_over_wss_with_a_token():
    import slurm
    from slurm import SlurmCluster
    from slurm_adapter import SlurmAdapter
    missing = slurm.available()
    assert missing is None, f"Slurm not installed ({missing}): run deploy/install-deps.sh"
    s = sec()
    b = s.broker(tls="required").start()
    cluster = SlurmCluster(nodes=4).start()
    a = None
    try:
        a = SlurmAdapter(b, cluster, DryRun="yes", HoldDown="0ms", StableFor="1s",
                         BrokerTlsCa=s.path("ca.pem"),
                         BrokerTokenFile=s.path("slurm.token")).start()

        def live(st):
            return any(x["state"] == "live" for x in st["websocket"]["subscribers"])
        st = fbtest.wait_for(lambda: json.loads(request(b, "GET", "/status", s.tokens["root"],
                                                        ctx=s.ctx())[2]),
                             live, 30, "the adapter never subscribed over wss")
        assert st
        publish(b)
        fbtest.wait_for(a.log, lambda t: "dry-run drain" in t and "node003" in t, 30,
                        "the adapter did not act on the event it got over wss",
                        show=lambda t: t[-2000:])
        log = a.log()
        print(f"  adapter: {[l for l in log.splitlines() if 'dry-run drain' in l][0][-160:]}",
              flush=True)
        assert "wss://127.0.0.1" in log, log[-2000:]
        assert s.tokens["slurm"] not in log
    finally:
        if a:
            a.stop()
        cluster.stop()
        assert b.stop() == 0


def https_connection_limit_is_refused_with_a_tls_alert():
    """Over MaxHttpConnections on an HTTPS port a TLS client gets a TLS alert
    it can report (before: a plain-text 503, "wrong version number"); a plain
    client on an optional port still gets the 503."""
    import socket
    s = sec()
    for mode in ("required", "optional"):
        b = s.broker(tls=mode, MaxHttpConnections="2").start()
        idle = []
        try:
            time.sleep(0.3)  # start() probed the port: let that connection go
            idle = [s.ctx().wrap_socket(socket.create_connection(("127.0.0.1", b.http_port), 10),
                                        server_hostname="127.0.0.1") for _ in range(2)]
            time.sleep(0.3)
            try:
                request(b, "GET", "/status", token=s.tokens["viewer"], ctx=s.ctx())
                raise AssertionError(f"HttpTls={mode}: a third connection was served")
            except ssl.SSLError as e:
                assert "alert internal error" in str(e).lower(), f"HttpTls={mode}: {e!r}"
            if mode == "optional":
                fbtest.assert_http_at_limit(b.http_addr, "a third plain connection")
            for c in idle:
                c.close()
            idle = []
            def status():
                try:
                    return request(b, "GET", "/status", token=s.tokens["viewer"], ctx=s.ctx())
                except (ssl.SSLError, ConnectionError) as e:
                    return (repr(e), {}, "")
            fbtest.wait_for(status, lambda r: r[0] == 200, 30,
                            "served again once the idle ones closed", show=lambda r: r[0])
            assert "503 or a TLS alert" in b.log(), b.log()[-2000:]
        finally:
            for c in idle:
                c.close()
            assert b.stop() == 0


ALL = [reads_need_a_login_when_tokens_are_configured, anonymous_reads_and_public_metrics_are_opt_in,
       read_only_token_cannot_write, https_and_wss_with_a_test_ca,
       client_certificates_when_a_ca_is_set, cli_status_and_tail_with_token_and_ca,
       start_refuses_plain_http_off_loopback_and_bad_files, slurm_adapter_over_wss_with_a_token,
       https_connection_limit_is_refused_with_a_tls_alert]

if __name__ == "__main__":
    fbtest.main(ALL)
