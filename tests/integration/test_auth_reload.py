"""Revoking bearer tokens and accounts without a restart (docs/security.md,
"Revoking a token or an account"): SIGHUP makes fabricbusd read HttpTokens and
RedfishAccounts again; new requests with a removed token get 401, the wss
streams it opened are closed with the reason, the others stay; a malformed
file keeps the tables in use.

Before this work SIGHUP killed the broker (no handler) and a removed token kept
working until a restart.
"""
import asyncio
import base64
import hashlib
import http.client
import os
import signal
import ssl
import subprocess

import websockets

import fbtest
from test_http_auth import LINK_DOWN, publish, request, sec


def token_line(name, role, tok):
    return f"{name}:{role}:{hashlib.sha256(tok.encode()).hexdigest()}\n"


def sighup(b, expect):
    n = b.log().count(expect)
    b.proc.send_signal(signal.SIGHUP)
    fbtest.wait_for(lambda: b.log().count(expect), lambda c: c > n, 30,
                    f"no {expect!r} after SIGHUP", show=lambda _: b.log()[-2000:])


def revoked_token_gets_401_and_its_wss_stream_is_closed():
    s = sec()
    viewer, slurm = s.tokens["viewer"], s.tokens["slurm"]
    s.write("reload.tokens", token_line("viewer", "ReadOnly", viewer) +
            token_line("slurm", "Operator", slurm))
    b = s.broker(tls="required", HttpTokens=s.path("reload.tokens")).start()
    ctx, url = s.ctx(), f"wss://127.0.0.1:{b.http_port}/ws/events"

    async def go():
        hdr = lambda t: [("Authorization", f"Bearer {t}")]
        async with websockets.connect(url, extra_headers=hdr(viewer), ssl=ctx,
                                      open_timeout=10) as gone, \
                websockets.connect(url, extra_headers=hdr(slurm), ssl=ctx,
                                   open_timeout=10) as kept:
            assert request(b, "GET", "/status", token=viewer, ctx=ctx)[0] == 200
            sse = open_sse(b, viewer, ctx)
            s.write("reload.tokens", token_line("slurm", "Operator", slurm))
            sighup(b, "HttpTokens re-read: 1 tokens (were 2)")
            st, _, body = request(b, "GET", "/status", token=viewer, ctx=ctx)
            assert st == 401, f"the removed token after SIGHUP: {st} {body[:200]}"
            assert request(b, "GET", "/status", token=slurm, ctx=ctx)[0] == 200
            try:
                msg = await asyncio.wait_for(gone.recv(), 30)
                raise AssertionError(f"the revoked token's stream got {msg[:200]!r}")
            except websockets.exceptions.ConnectionClosed as e:
                assert e.code == 1008 and "revoked" in e.reason, (e.code, e.reason)
            # the SSE stream of the removed token ends too
            await asyncio.get_running_loop().run_in_executor(None, read_to_end, sse)
            # the other token's stream is open and still delivers
            await asyncio.get_running_loop().run_in_executor(None, publish, b)
            doc = __import__("json").loads(await asyncio.wait_for(kept.recv(), 30))
            assert doc["Events"][0]["MessageId"], doc
        assert await ws_refused(url, viewer, ctx) == 401, "a new wss with the removed token"

    try:
        asyncio.run(go())
        assert "were revoked: closing it" in b.log(), b.log()[-2000:]
        for tok in (viewer, slurm):
            assert tok not in b.log(), "a token is in the broker's log"
    finally:
        assert b.stop() == 0


def open_sse(b, token, ctx):
    c = http.client.HTTPSConnection("127.0.0.1", b.http_port, timeout=30, context=ctx)
    c.request("GET", "/redfish/v1/EventService/SSE", headers={"Authorization": f"Bearer {token}"})
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type", "").startswith("text/event-stream")
    return c, r


def read_to_end(sse):
    """Until the broker ends the stream (a read timeout fails the test)."""
    c, r = sse
    try:
        while r.read1(4096):
            pass
    except (http.client.IncompleteRead, ConnectionError, ssl.SSLEOFError):
        pass  # cut between chunks: ended all the same (a timeout is not caught)
    finally:
        c.close()


async def ws_refused(url, token, ctx):
    try:
        async with websockets.connect(url, extra_headers=[("Authorization", f"Bearer {token}")],
                                      ssl=ctx, open_timeout=10):
            return 101
    except websockets.exceptions.InvalidStatusCode as e:
        return e.status_code


def malformed_or_unsafe_file_keeps_the_old_tokens():
    s = sec()
    viewer, slurm = s.tokens["viewer"], s.tokens["slurm"]
    good = token_line("viewer", "ReadOnly", viewer)
    s.write("bad.tokens", good)
    b = s.broker(HttpTokens=s.path("bad.tokens")).start()
    try:
        assert request(b, "GET", "/status", token=viewer)[0] == 200
        # a new token on a line after a malformed one: nothing of the file is taken
        s.write("bad.tokens", "viewer:Nobody:zz\n" + token_line("slurm", "Operator", slurm))
        sighup(b, "keeping the tokens and accounts in use")
        assert "bad.tokens:1" in b.log(), b.log()[-2000:]
        assert request(b, "GET", "/status", token=viewer)[0] == 200, "old token lost"
        assert request(b, "GET", "/status", token=slurm)[0] == 401, "half a bad file taken"
        # readable by others: refused as at start
        s.write("bad.tokens", token_line("slurm", "Operator", slurm), mode=0o644)
        sighup(b, "keeping the tokens and accounts in use")
        assert request(b, "GET", "/status", token=slurm)[0] == 401
        # fixed: taken
        os.chmod(s.path("bad.tokens"), 0o600)
        sighup(b, "HttpTokens re-read: 1 tokens (were 1)")
        assert request(b, "GET", "/status", token=slurm)[0] == 200
        assert request(b, "GET", "/status", token=viewer)[0] == 401
        assert b.proc.poll() is None
    finally:
        assert b.stop() == 0


def removed_account_is_refused_and_its_session_ended():
    s = sec()
    acc = s.path("reload.accounts")
    for user in ("alice", "bob"):
        r = subprocess.run([fbtest.FABRICBUS, "passwd", "-f", acc, user, "ReadOnly"],
                           input="correct-horse-battery-9\n" * 2, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
    b = fbtest.Broker(RedfishAccounts=acc).start()
    basic = lambda u: {"Authorization": "Basic " + base64.b64encode(
        f"{u}:correct-horse-battery-9".encode()).decode()}
    try:
        assert request(b, "GET", "/status", headers=basic("alice"))[0] == 200
        st, h, body = request(b, "POST", "/redfish/v1/SessionService/Sessions",
                              body={"UserName": "alice", "Password": "correct-horse-battery-9"})
        assert st == 201, f"login: {st} {body[:200]}"
        sess = {"X-Auth-Token": h["x-auth-token"]}
        assert request(b, "GET", "/status", headers=sess)[0] == 200
        with open(acc) as f:
            lines = [ln for ln in f if not ln.startswith("alice:")]
        s.write("reload.accounts", "".join(lines))
        sighup(b, "RedfishAccounts re-read: 1 accounts (were 2)")
        assert request(b, "GET", "/status", headers=basic("alice"))[0] == 401
        assert request(b, "GET", "/status", headers=sess)[0] == 401, "the session outlived it"
        assert request(b, "GET", "/status", headers=basic("bob"))[0] == 200
    finally:
        assert b.stop() == 0


ALL = [revoked_token_gets_401_and_its_wss_stream_is_closed,
       malformed_or_unsafe_file_keeps_the_old_tokens,
       removed_account_is_refused_and_its_session_ended]

if __name__ == "__main__":
    fbtest.main(ALL)
