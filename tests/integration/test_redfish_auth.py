"""Redfish accounts and sessions against the real fabricbusd: an accounts file
made by the real `fabricbus passwd`, Basic and X-Auth-Token logins, the
public service root, roles and privileges, failed-login lockout, session
timeout, and the same auth on POST/DELETE /fabric/jobs.

Run: /usr/bin/python3 tests/integration/test_redfish_auth.py [test names]
"""
import asyncio
import base64
import http.client
import json
import os
import re
import socket
import subprocess
import tempfile
import time

import websockets

import fbtest
from test_http_auth import LINK_DOWN

PASSWORDS = {"admin": "admin-password1", "ops": "ops-password1", "viewer": "viewer-password1"}
ROLES = {"admin": "Administrator", "ops": "Operator", "viewer": "ReadOnly"}
JOB = '{"JobId":"4242","User":"alice","Nodes":["node001","node002"]}'


def make_accounts(d, mode=0o600):
    path = os.path.join(d, "redfish-accounts")
    for user, role in ROLES.items():
        out = subprocess.run([fbtest.FABRICBUS, "passwd", "-f", path, user, role],
                             input=PASSWORDS[user] + "\n", capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, f"fabricbus passwd {user}: {out.stderr}"
    assert os.stat(path).st_mode & 0o777 == 0o600, "fabricbus passwd must make the file 0600"
    text = open(path).read()
    for user, pw in PASSWORDS.items():
        assert f"{user}:{ROLES[user]}:$y$" in text, f"no yescrypt line for {user}:\n{text}"
        assert pw not in text
    os.chmod(path, mode)
    return path


def broker(**overrides):
    d = tempfile.mkdtemp(prefix="fb-rfauth-")
    fbtest._workdirs.append(d)
    return fbtest.Broker(workdir=d, RedfishAccounts=make_accounts(d), **overrides).start()


def basic(user, pw=None):
    raw = f"{user}:{PASSWORDS[user] if pw is None else pw}".encode()
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


def req(br, method, path, body=None, headers=None):
    """(status, headers dict with lower-case names, parsed JSON or text or None)."""
    c = http.client.HTTPConnection("127.0.0.1", br.http_port, timeout=30)
    h = dict(headers or {})
    if body is not None:
        h.setdefault("Content-Type", "application/json")
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    raw = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    c.close()
    try:
        doc = json.loads(raw) if raw else None
    except ValueError:
        doc = raw.decode(errors="replace")
    return r.status, hdrs, doc


def msg_id(doc):
    return doc["error"]["@Message.ExtendedInfo"][0]["MessageId"] if isinstance(doc, dict) else None


def assert_401(got, what):
    status, hdrs, doc = got
    assert status == 401, f"{what}: want 401, got {status} {doc}"
    assert hdrs.get("www-authenticate", "").startswith("Basic realm="), f"{what}: {hdrs}"


def fabrics_path(br):
    """The Fabrics collection, once the resource tree serves it (rf-tree);
    else a resource of ours that needs a login just the same."""
    status, _, _ = req(br, "GET", "/redfish/v1/Fabrics", headers=basic("admin"))
    if status == 200:
        return "/redfish/v1/Fabrics"
    print(f"  note: /redfish/v1/Fabrics answers {status} to an administrator (the resource "
          f"tree does not serve it in this build); using /redfish/v1/SessionService", flush=True)
    return "/redfish/v1/SessionService"


def login(br, user, pw=None):
    body = json.dumps({"UserName": user, "Password": PASSWORDS[user] if pw is None else pw})
    return req(br, "POST", "/redfish/v1/SessionService/Sessions", body)


# ---------------------------------------------------------------------------


def accounts_file_readable_by_others_stops_the_start():
    d = tempfile.mkdtemp(prefix="fb-rfauth-")
    fbtest._workdirs.append(d)
    path = make_accounts(d, mode=0o644)
    br = fbtest.Broker(workdir=d, RedfishAccounts=path)
    out = subprocess.run([fbtest.FABRICBUSD] + sum((["-o", f"{k}={v}"] for k, v in
                                                   br.overrides.items()), []),
                         capture_output=True, text=True, timeout=30, cwd=d)
    assert out.returncode == 2, f"want exit 2, got {out.returncode}: {out.stderr}"
    want = f"RedfishAccounts: {path}: mode 0644 lets group or others read or write password " \
           f"hashes; run chmod 600 {path}"
    assert want in out.stderr, out.stderr
    out = subprocess.run([fbtest.FABRICBUSD, "--check-config", "-o", f"RedfishAccounts={path}"],
                         capture_output=True, text=True, timeout=30, cwd=d)
    assert out.returncode == 2 and "chmod 600" in out.stderr, out.stderr
    print(f"  {out.stderr.strip()}", flush=True)


def anonymous_reads_when_the_site_opts_in():
    br = broker(RedfishAnonymousReads="yes")
    assert req(br, "GET", "/redfish/v1/Fabrics")[0] == 200
    assert req(br, "GET", "/redfish/v1/SessionService")[0] == 200
    # not who has an account or a session, and never a write
    for path in ("/redfish/v1/AccountService/Accounts", "/redfish/v1/AccountService/Accounts/ops",
                 "/redfish/v1/SessionService/Sessions"):
        assert_401(req(br, "GET", path), f"anonymous GET {path}")
    assert_401(req(br, "PATCH", "/redfish/v1/SessionService", '{"SessionTimeout":60}'), "PATCH")
    assert_401(req(br, "POST", "/fabric/jobs", JOB), "anonymous POST /fabric/jobs")
    assert req(br, "GET", "/redfish/v1/Fabrics", headers=basic("ops", "wrong-wrong"))[0] == 401
    assert br.stop() == 0


def without_accounts_jobs_stay_open_and_the_log_warns():
    br = fbtest.Broker().start()
    br_log = fbtest.wait_for(br.log, lambda t: "ready" in t, 10, "broker never ready")
    assert "RedfishAccounts is not set" in br_log and "unauthenticated" in br_log, br_log
    assert req(br, "POST", "/fabric/jobs", JOB)[0] == 201
    assert req(br, "DELETE", "/fabric/jobs/4242")[0] == 204
    assert br.stop() == 0


def service_root_is_public_and_the_rest_needs_a_login():
    br = broker()
    for path in ("/redfish/v1", "/redfish/v1/", "/redfish/v1/$metadata", "/redfish/v1/odata"):
        status, _, doc = req(br, "GET", path)
        assert status == 200, f"anonymous GET {path}: {status} {doc}"
    root = req(br, "GET", "/redfish/v1")[2]
    assert root["SessionService"]["@odata.id"] == "/redfish/v1/SessionService", root
    assert root["Links"]["Sessions"]["@odata.id"] == "/redfish/v1/SessionService/Sessions", root
    for path in (fabrics_path(br), "/redfish/v1/SessionService", "/redfish/v1/AccountService",
                 "/redfish/v1/SessionService/Sessions"):
        got = req(br, "GET", path)
        assert_401(got, f"anonymous GET {path}")
        assert msg_id(got[2]) == "Base.1.22.NoValidSession", got
        assert_401(req(br, "GET", path, headers=basic("viewer", "wrong-password")), path)
        assert_401(req(br, "GET", path, headers={"X-Auth-Token": "0" * 64}), path)
    assert br.stop() == 0


def readonly_reads_but_may_not_write():
    br = broker()
    ro = basic("viewer")
    assert req(br, "GET", fabrics_path(br), headers=ro)[0] == 200
    status, _, svc = req(br, "GET", "/redfish/v1/SessionService", headers=ro)
    assert status == 200 and svc["SessionTimeout"] == 1800, svc
    got = req(br, "PATCH", "/redfish/v1/SessionService", '{"SessionTimeout":60}', ro)
    assert got[0] == 403 and msg_id(got[2]) == "Base.1.22.InsufficientPrivilege", got
    got = req(br, "POST", "/redfish/v1/EventService/Subscriptions",
              '{"Destination":"http://127.0.0.1:9/x","Protocol":"Redfish"}', ro)
    assert got[0] == 403, f"ReadOnly POST Subscriptions: {got}"
    got = req(br, "POST", "/fabric/jobs", JOB, ro)
    assert got[0] == 403 and got[2]["error"] == "forbidden", got
    assert req(br, "DELETE", "/fabric/jobs/4242", headers=ro)[0] == 403
    # its own account, not the others
    status, _, me = req(br, "GET", "/redfish/v1/AccountService/Accounts/viewer", headers=ro)
    assert status == 200 and me["RoleId"] == "ReadOnly" and me["Password"] is None, me
    assert req(br, "GET", "/redfish/v1/AccountService/Accounts/admin", headers=ro)[0] == 403
    status, _, role = req(br, "GET", "/redfish/v1/AccountService/Roles/ReadOnly", headers=ro)
    assert status == 200 and role["AssignedPrivileges"] == ["Login", "ConfigureSelf"], role
    assert br.stop() == 0


def operator_writes_and_administrator_manages():
    br = broker()
    op, adm = basic("ops"), basic("admin")
    got = req(br, "POST", "/fabric/jobs", JOB, op)
    assert got[0] == 201 and got[2] == {"JobId": "4242", "Nodes": 2}, got
    assert req(br, "DELETE", "/fabric/jobs/4242", headers=op)[0] == 204
    # the session timeout is the manager's: ConfigureManager
    assert req(br, "PATCH", "/redfish/v1/SessionService", '{"SessionTimeout":60}', op)[0] == 403
    status, _, svc = req(br, "PATCH", "/redfish/v1/SessionService", '{"SessionTimeout":60}', adm)
    assert status == 200 and svc["SessionTimeout"] == 60, svc
    got = req(br, "PATCH", "/redfish/v1/SessionService", '{"SessionTimeout":5}', adm)
    assert got[0] == 400 and msg_id(got[2]) == "Base.1.22.PropertyValueOutOfRange", got
    got = req(br, "PATCH", "/redfish/v1/SessionService", '{"ServiceEnabled":false}', adm)
    assert got[0] == 400 and msg_id(got[2]) == "Base.1.22.PropertyNotWritable", got
    got = req(br, "PATCH", "/redfish/v1/SessionService", '{"SessionTimeout":90}',
              dict(adm, **{"If-Match": 'W/"0000000000000000"'}))
    assert got[0] == 412, got
    status, _, users = req(br, "GET", "/redfish/v1/AccountService/Accounts", headers=adm)
    ids = sorted(m["@odata.id"].rsplit("/", 1)[1] for m in users["Members"])
    assert ids == ["admin", "ops", "viewer"], users
    assert req(br, "GET", "/redfish/v1/AccountService/Accounts/ops", headers=adm)[0] == 200
    got = req(br, "POST", "/redfish/v1/AccountService/Accounts",
              '{"UserName":"x","Password":"xxxxxxxxxx","RoleId":"ReadOnly"}', op)
    assert got[0] in (403, 405), f"Operator POST Accounts: {got}"
    assert br.stop() == 0


def wrong_passwords_are_refused_logged_and_locked_out():
    br = broker(RedfishLoginFailures="3", RedfishLoginLockout="3s")
    path = "/redfish/v1/SessionService"
    for i in range(3):
        assert_401(req(br, "GET", path, headers=basic("ops", f"guess-{i}-guess")), "wrong password")
    assert_401(req(br, "GET", path, headers=basic("nobody", "guess-guess")), "unknown user")
    fbtest.wait_for(br.log, lambda t: "failed login as 'ops' from 127.0.0.1 (3 within 60 s): "
                    "its logins are refused for 3 s" in t, 5, "no lockout line")
    # locked: the right password too, for that user from this address
    assert_401(req(br, "GET", path, headers=basic("ops")), "locked out")
    assert "login as 'ops' from 127.0.0.1 refused without checking: locked out" in br.log()
    assert req(br, "GET", path, headers=basic("admin"))[0] == 200  # others are not held
    assert login(br, "ops")[0] == 401  # nor may it log in with a session
    time.sleep(3.2)
    assert req(br, "GET", path, headers=basic("ops"))[0] == 200
    log = br.log()
    for pw in list(PASSWORDS.values()) + ["guess-0-guess"]:
        assert pw not in log, f"a password is in the log: {pw}"
    assert br.stop() == 0


def sessions_log_in_use_and_log_out():
    br = broker()
    status, hdrs, s = login(br, "ops")
    assert status == 201, (status, s)
    token, loc = hdrs["x-auth-token"], hdrs["location"]
    assert len(token) == 64 and loc == f"/redfish/v1/SessionService/Sessions/{s['Id']}", hdrs
    assert s["UserName"] == "ops" and s["@odata.id"] == loc and s["Password"] is None, s
    assert "set-cookie" not in hdrs
    tok = {"X-Auth-Token": token}
    assert req(br, "GET", "/redfish/v1/SessionService", headers=tok)[0] == 200
    status, _, one = req(br, "GET", loc, headers=tok)
    assert status == 200 and one["Id"] == s["Id"] and one["ClientOriginIPAddress"] == "127.0.0.1"
    assert req(br, "POST", "/fabric/jobs", JOB, tok)[0] == 201
    # another user's session: not even shown to a non-manager
    _, h2, s2 = login(br, "viewer")
    assert req(br, "GET", loc, headers={"X-Auth-Token": h2["x-auth-token"]})[0] == 404
    _, _, coll = req(br, "GET", "/redfish/v1/SessionService/Sessions", headers=basic("admin"))
    assert {m["@odata.id"] for m in coll["Members"]} >= {loc, h2["location"]}, coll
    # a bad login and a session login through the collection's Members
    got = login(br, "ops", "not-the-password")
    assert got[0] == 401 and "not-the-password" not in json.dumps(got[2]), got
    assert req(br, "POST", "/redfish/v1/SessionService/Sessions/Members",
               json.dumps({"UserName": "ops", "Password": PASSWORDS["ops"]}))[0] == 201
    assert req(br, "POST", "/redfish/v1/SessionService/Sessions", '{"UserName":"ops"}')[0] == 400
    # log out: the token is refused everywhere afterwards
    assert req(br, "DELETE", loc, headers=tok)[0] == 204
    assert_401(req(br, "GET", "/redfish/v1/SessionService", headers=tok), "deleted session")
    assert_401(req(br, "POST", "/fabric/jobs", JOB, tok), "deleted session on /fabric/jobs")
    assert_401(req(br, "DELETE", "/fabric/jobs/4242", headers=tok), "deleted session DELETE")
    assert req(br, "GET", loc, headers=basic("admin"))[0] == 404
    log = br.log()
    assert token not in log and h2["x-auth-token"] not in log, "a session token is in the log"
    assert br.stop() == 0


def idle_sessions_time_out():
    br = broker(RedfishSessionTimeout="30s")
    _, ha, _ = login(br, "ops")
    _, hb, _ = login(br, "ops")
    a, b = {"X-Auth-Token": ha["x-auth-token"]}, {"X-Auth-Token": hb["x-auth-token"]}
    t0 = time.monotonic()
    time.sleep(20)
    assert req(br, "GET", "/redfish/v1/SessionService", headers=b)[0] == 200  # b is used
    time.sleep(max(0.0, 31.5 - (time.monotonic() - t0)))
    assert_401(req(br, "GET", "/redfish/v1/SessionService", headers=a), "idle 31 s")
    assert req(br, "GET", "/redfish/v1/SessionService", headers=b)[0] == 200, "used 11 s ago"
    assert req(br, "GET", ha["location"], headers=basic("admin"))[0] == 404
    assert br.stop() == 0


def deleting_a_session_closes_its_websocket():
    """DELETE of one session closes the /ws/events streams opened with its
    token at once (not only a SIGHUP reload does), and the token gets 401;
    another session of the same user keeps its stream. A Redfish SSE stream
    opened with the deleted session goes on: DSP0266 "Session termination or
    logout" (the Protocol Validator's SEC_SESSION_TERMINATION_SIDE_EFFECTS)
    says ending a session shall not affect its SSE connections."""
    br = broker()
    _, h1, s1 = login(br, "ops")
    _, h2, _ = login(br, "ops")
    gone, kept = {"X-Auth-Token": h1["x-auth-token"]}, {"X-Auth-Token": h2["x-auth-token"]}
    url = f"ws://127.0.0.1:{br.http_port}/ws/events"
    c = http.client.HTTPConnection("127.0.0.1", br.http_port, timeout=30)
    c.request("GET", "/redfish/v1/EventService/SSE", headers=gone)
    sse = c.getresponse()
    assert sse.status == 200, (sse.status, sse.read()[:300])

    def sse_event():
        """The next `data:` line of the SSE stream, as JSON."""
        while True:
            line = sse.readline()
            assert line, "the SSE stream of the deleted session ended"
            if line.startswith(b"data:"):
                return json.loads(line[5:])

    async def go():
        async with websockets.connect(url, extra_headers=list(gone.items()), open_timeout=10) as w1, \
                websockets.connect(url, extra_headers=list(kept.items()), open_timeout=10) as w2:
            fbtest.wait_for(lambda: req(br, "GET", "/status", headers=basic("admin"))[2],
                            lambda st: len(st["websocket"]["subscribers"]) >= 3, 30,
                            "three streams open")
            assert req(br, "DELETE", h1["location"], headers=basic("admin"))[0] == 204
            try:
                msg = await asyncio.wait_for(w1.recv(), 30)
                raise AssertionError(f"the deleted session's WebSocket got {msg[:200]!r}")
            except websockets.exceptions.ConnectionClosed as e:
                assert e.code == 1008 and "revoked" in e.reason, (e.code, e.reason)
            r = await asyncio.get_running_loop().run_in_executor(
                None, lambda: fbtest.publish(br.agent_addr, "ib@leaf3", [LINK_DOWN], timeout=30))
            assert r.returncode == 0, r.stderr
            # the other session of the same user still streams
            doc = json.loads(await asyncio.wait_for(w2.recv(), 30))
            assert doc["Events"][0]["MessageId"], doc
            # and so does the deleted session's SSE stream (DSP0266)
            doc = await asyncio.get_running_loop().run_in_executor(None, sse_event)
            assert doc["Events"][0]["MessageId"], doc
        try:
            async with websockets.connect(url, extra_headers=list(gone.items()), open_timeout=10):
                raise AssertionError("a new WebSocket with the deleted session's token opened")
        except websockets.exceptions.InvalidStatusCode as e:
            assert e.status_code == 401, e

    asyncio.run(go())
    c.close()
    assert_401(req(br, "GET", "/redfish/v1/SessionService", headers=gone), "deleted session")
    st, _, _ = req(br, "GET", "/redfish/v1/EventService/SSE", headers=gone)
    assert st == 401, f"a new SSE stream with the deleted session's token: {st}"
    assert req(br, "GET", "/redfish/v1/SessionService", headers=kept)[0] == 200
    log = br.log()
    assert re.search(rf"ws \S+: its credentials \(session {s1['Id']} of ops\) were revoked: "
                     "closing it", log), log[-3000:]
    assert not re.search(r"sse \S+: its credentials .* were revoked", log), log[-3000:]
    assert h1["x-auth-token"] not in log, "a session token is in the log"
    assert br.stop() == 0


def jobs_need_a_login_when_accounts_exist():
    br = broker()
    got = req(br, "POST", "/fabric/jobs", JOB)
    assert_401(got, "anonymous POST /fabric/jobs")
    assert got[2]["error"] == "unauthorized", got
    assert_401(req(br, "POST", "/fabric/jobs", JOB, {"X-Auth-Token": "f" * 64}), "bad token")
    assert_401(req(br, "POST", "/fabric/jobs", JOB, basic("ops", "nope-nope")), "bad password")
    assert_401(req(br, "DELETE", "/fabric/jobs/4242"), "anonymous DELETE")
    # the connection stays usable after a refusal: two requests on one connection
    c = http.client.HTTPConnection("127.0.0.1", br.http_port, timeout=30)
    c.request("POST", "/fabric/jobs", body=JOB, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    assert r.status == 401
    c.request("POST", "/fabric/jobs", body=JOB, headers=dict(basic("ops"),
                                                              **{"Content-Type": "application/json"}))
    r = c.getresponse()
    assert r.status == 201, (r.status, r.read())
    c.close()
    # reads of the broker's own routes need a login too once accounts exist
    # (docs/security.md, "HTTP and WebSocket"); any role will do
    assert req(br, "GET", "/fabric/map")[0] == 401
    assert req(br, "GET", "/fabric/map", headers=basic("viewer"))[0] in (200, 503)
    assert br.stop() == 0


def accounts_changed_over_http_persist_and_end_sessions():
    br = broker()
    adm, accounts = basic("admin"), br.overrides["RedfishAccounts"]
    new = json.dumps({"UserName": "newbie", "Password": "newbie-password1", "RoleId": "ReadOnly"})
    assert req(br, "POST", "/redfish/v1/AccountService/Accounts", new, basic("ops"))[0] == 403
    status, hdrs, acct = req(br, "POST", "/redfish/v1/AccountService/Accounts", new, adm)
    assert status == 201 and hdrs["location"] == "/redfish/v1/AccountService/Accounts/newbie", \
        (status, acct)
    assert acct["RoleId"] == "ReadOnly" and acct["Password"] is None, acct
    assert req(br, "POST", "/redfish/v1/AccountService/Accounts", new, adm)[0] == 409
    got = req(br, "POST", "/redfish/v1/AccountService/Accounts",
              '{"UserName":"shorty","Password":"pw-1","RoleId":"ReadOnly"}', adm)
    assert got[0] == 400 and "pw-1" not in json.dumps(got[2]), got
    got = req(br, "POST", "/redfish/v1/AccountService/Accounts",
              '{"UserName":"x","Password":"xxxxxxxxxx","RoleId":"Root"}', adm)
    assert got[0] == 400 and msg_id(got[2]) == "Base.1.22.PropertyValueNotInList", got
    me = {"Authorization": "Basic " + base64.b64encode(b"newbie:newbie-password1").decode()}
    acct_path = "/redfish/v1/AccountService/Accounts/newbie"
    assert req(br, "GET", acct_path, headers=me)[0] == 200
    # one's own password with ConfigureSelf; not one's own role
    assert req(br, "PATCH", acct_path, '{"RoleId":"Administrator"}', me)[0] == 403
    assert req(br, "PATCH", "/redfish/v1/AccountService/Accounts/ops",
               '{"Password":"hijacked-password"}', me)[0] == 403
    status, _, _ = req(br, "PATCH", acct_path, '{"Password":"newbie-password2"}', me)
    assert status == 200
    assert_401(req(br, "GET", acct_path, headers=me), "old password after a change")
    me = {"Authorization": "Basic " + base64.b64encode(b"newbie:newbie-password2").decode()}
    _, h, _ = req(br, "POST", "/redfish/v1/SessionService/Sessions",
                  '{"UserName":"newbie","Password":"newbie-password2"}')
    tok = {"X-Auth-Token": h["x-auth-token"]}
    assert req(br, "GET", acct_path, headers=tok)[0] == 200
    # the administrator changes the role, with If-Match: a stale tag is 412
    got = req(br, "PATCH", acct_path, '{"RoleId":"Operator"}',
              dict(adm, **{"If-Match": 'W/"0123456789abcdef"'}))
    assert got[0] == 412, got
    etag = req(br, "GET", acct_path, headers=adm)[1]["etag"]
    status, _, acct = req(br, "PATCH", acct_path, '{"RoleId":"Operator"}',
                          dict(adm, **{"If-Match": etag}))
    assert status == 200 and acct["RoleId"] == "Operator", acct
    assert_401(req(br, "GET", acct_path, headers=tok), "session of an account whose role changed")
    assert req(br, "POST", "/fabric/jobs", JOB, me)[0] == 201  # now an Operator
    text = open(accounts).read()
    assert "newbie:Operator:$y$" in text and os.stat(accounts).st_mode & 0o777 == 0o600, text
    # it survives a restart, and `fabricbus passwd` sees the same file
    assert br.stop() == 0
    br.start()
    assert req(br, "GET", acct_path, headers=me)[0] == 200
    assert req(br, "DELETE", acct_path, headers=me)[0] == 403
    assert req(br, "DELETE", acct_path, headers=adm)[0] == 204
    assert_401(req(br, "GET", "/redfish/v1/SessionService", headers=me), "deleted account")
    assert "newbie" not in open(accounts).read()
    assert req(br, "GET", acct_path, headers=adm)[0] == 404
    assert "account 'newbie' deleted by 'admin'" in br.log()
    assert "newbie-password" not in br.log()
    assert br.stop() == 0


def password_change_required_allows_only_the_change():
    """An initial account (`fabricbus passwd --change-required`, the line's
    fourth field 0) may log in (the session says PasswordChangeRequired), read
    its own account and PATCH its Password; everything else, the /fabric
    writes included, is 403 PasswordChangeRequired naming the account. The
    PATCH clears it in the file; an administrator can set it again."""
    br = broker()
    accounts = br.overrides["RedfishAccounts"]
    out = subprocess.run([fbtest.FABRICBUS, "passwd", "-f", accounts, "--change-required", "fresh",
                          "Operator"], input="initial-password\n", capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [l for l in open(accounts) if l.startswith("fresh:Operator:$y$") and
            l.rstrip().endswith(":0")], open(accounts).read()
    assert br.stop() == 0
    br.start()
    acct_path = "/redfish/v1/AccountService/Accounts/fresh"
    me = {"Authorization": "Basic " + base64.b64encode(b"fresh:initial-password").decode()}
    for method, path, body in [("GET", "/redfish/v1/SessionService/Sessions", None),
                               ("GET", "/redfish/v1/Fabrics", None),
                               ("GET", "/redfish/v1/AccountService/Accounts/ops", None),
                               ("POST", "/fabric/jobs", JOB),
                               ("PATCH", acct_path, '{"Password":"changed-password1",'
                                                    '"Enabled":true}')]:
        status, _, doc = req(br, method, path, body, me)
        assert status == 403, (method, path, status, doc)
        if path.startswith("/redfish"):
            assert msg_id(doc) == "Base.1.22.PasswordChangeRequired", doc
            assert acct_path in doc["error"]["@Message.ExtendedInfo"][0]["MessageArgs"], doc
    status, hdrs, doc = req(br, "POST", "/redfish/v1/SessionService/Sessions",
                            '{"UserName":"fresh","Password":"initial-password"}')
    assert status == 201, (status, doc)
    ids = [m["MessageId"] for m in doc.get("@Message.ExtendedInfo", [])]
    assert "Base.1.22.PasswordChangeRequired" in ids, doc
    tok = {"X-Auth-Token": hdrs["x-auth-token"]}
    assert req(br, "GET", "/redfish/v1/SessionService/Sessions", headers=tok)[0] == 403
    status, hdrs, acct = req(br, "GET", acct_path, headers=me)
    assert status == 200 and acct["PasswordChangeRequired"] is True, acct
    status, _, acct = req(br, "PATCH", acct_path, '{"Password":"changed-password1"}',
                          dict(me, **{"If-Match": hdrs["etag"]}))
    assert status == 200 and acct["PasswordChangeRequired"] is False, (status, acct)
    me = {"Authorization": "Basic " + base64.b64encode(b"fresh:changed-password1").decode()}
    assert req(br, "GET", "/redfish/v1/SessionService/Sessions", headers=me)[0] == 200
    assert req(br, "GET", "/redfish/v1/SessionService/Sessions", headers=tok)[0] == 200
    assert req(br, "POST", "/fabric/jobs", JOB, me)[0] == 201
    line = [l for l in open(accounts) if l.startswith("fresh:")][0]
    assert not line.rstrip().endswith(":0"), line
    # the administrator sets it again (the validator's way); the owner may not
    assert req(br, "PATCH", acct_path, '{"PasswordChangeRequired":false}', me)[0] == 403
    status, _, acct = req(br, "PATCH", acct_path, '{"PasswordChangeRequired":true}',
                          basic("admin"))
    assert status == 200 and acct["PasswordChangeRequired"] is True, acct
    assert req(br, "GET", "/redfish/v1/SessionService/Sessions", headers=me)[0] == 403
    assert [l for l in open(accounts) if l.startswith("fresh:") and l.rstrip().endswith(":0")]
    assert br.stop() == 0


def unknown_method_gets_501():
    """A method libwebsockets does not know gets 501 with a Redfish error
    (it used to answer 403 by itself), and the service goes on."""
    br = broker()
    s = socket.create_connection(("127.0.0.1", br.http_port), timeout=10)
    s.sendall(b"FAKEMETHODFORTEST /redfish/v1/Systems HTTP/1.1\r\nHost: x\r\n\r\n")
    with s.makefile("rb") as f:
        raw = f.read()  # up to the close that follows the answer
    s.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501 "), raw[:300]
    assert b"application/json" in head and b"OData-Version: 4.0" in head, head
    doc = json.loads(body)
    assert doc["error"]["@Message.ExtendedInfo"][0]["MessageId"].startswith("Base.1.22."), doc
    assert req(br, "GET", "/redfish/v1/")[0] == 200
    assert br.stop() == 0


TESTS = [accounts_file_readable_by_others_stops_the_start,
         without_accounts_jobs_stay_open_and_the_log_warns,
         anonymous_reads_when_the_site_opts_in,
         service_root_is_public_and_the_rest_needs_a_login,
         readonly_reads_but_may_not_write,
         operator_writes_and_administrator_manages,
         wrong_passwords_are_refused_logged_and_locked_out,
         sessions_log_in_use_and_log_out, deleting_a_session_closes_its_websocket,
         jobs_need_a_login_when_accounts_exist,
         accounts_changed_over_http_persist_and_end_sessions,
         password_change_required_allows_only_the_change, unknown_method_gets_501,
         idle_sessions_time_out]

if __name__ == "__main__":
    fbtest.main(TESTS)
