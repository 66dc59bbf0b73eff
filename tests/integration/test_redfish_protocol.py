"""The DMTF Redfish-Protocol-Validator against fabricbusd with Redfish accounts,
run ONLY through ../shared/tools/redfish-validate proto, which starts the
broker inside a private network namespace (unshare -n) together with the
validator (the stock tool subscribes a destination outside this machine).

The broker serves HTTPS (HttpTls=required) with a certificate for 127.0.0.1
from a test CA that openssl makes in the workdir; the validator trusts it
through REQUESTS_CA_BUNDLE (requests' own variable: the shared tool passes no
--ca-bundle) and also sends plain HTTP to the same port, which the broker
redirects (a GET without credentials) or refuses (403).

It prints the validator's summary and every FAIL, WARN and NOT_TESTED, and
asserts on what the accounts, sessions and HTTPS parts control
(docs/redfish.md, "Protocol validator results", lists the rest and why):
  - no FAIL in the session, privilege and HTTPS assertions (SEC_*), nor in
    REQ_POST_CREATE_TO_MEMBERS_PROP;
  - the session, privilege and account assertions ran and passed (MUST_PASS:
    logins, sessions, roles, and the validator's own account created, PATCHed
    with and without good If-Match, raced by 4 writers and deleted; that
    account's PasswordChangeRequired set, then login, own-account GET and
    password PATCH allowed and everything else refused), and an unknown
    HTTP method answered 501.

Needs root (unshare -n) and the validator's venv (the script makes it the
first time: RF_WORK, default /tmp/fb-redfish-validate).
Run: /usr/bin/python3 tests/integration/test_redfish_protocol.py
"""
import collections
import csv
import os
import re
import subprocess
import tempfile

import fbtest

TOOL = os.path.join(fbtest.SRC, "..", "shared", "tools", "redfish-validate")
ADMIN, ADMIN_PW = "rfadmin", "rfadmin-Password-1"

MUST_PASS = ["SEC_REQUIRE_LOGIN_SESSIONS", "SEC_SESSION_POST_RESPONSE",
             "SEC_SESSIONS_URI_LOCATION", "SEC_BOTH_AUTH_TYPES", "SEC_BASIC_AUTH_STANDALONE",
             "SEC_WRITE_REQUIRES_AUTH", "SEC_READ_REQUIRES_AUTH", "SEC_NO_PRIV_INFO_IN_MSGS",
             "SEC_NO_AUTH_COOKIES", "SEC_PRIV_SUPPORT_PREDEFINED_ROLES",
             "REQ_POST_CREATE_TO_MEMBERS_PROP",
             # account creation, PATCH and DELETE over HTTP (the validator's own account)
             "SEC_ACCOUNTS_SUPPORT_ETAGS", "SEC_HEADERS_FIRST", "SEC_PRIV_ONE_ROLE_PRE_USER",
             "SEC_PRIV_OPERATION_TO_PRIV_MAPPING", "SEC_PRIV_PREDEFINED_ROLE_NOT_MODIFIABLE",
             "SEC_PRIV_ROLE_ASSIGNED_AT_ACCOUNT_CREATE", "PROTO_ETAG_IF_MATCH_ENFORCED",
             "PROTO_ETAG_412_WRITE_NOT_APPLIED", "PROTO_ETAG_LOST_UPDATE",
             "PROTO_ETAG_ROTATES_ON_WRITE", "PROTO_ETAG_STABLE_WITHOUT_MODIFICATION",
             "REQ_PATCH_BAD_PROP", "REQ_PATCH_MIXED_PROPS", "REQ_PATCH_ODATA_PROPS",
             "REQ_POST_CREATE_VIA_COLLECTION", "REQ_POST_CREATE_URI_IN_LOCATION_HDR",
             # HTTPS (HttpTls=required): plain HTTP redirected or refused, an X.509 v3
             # certificate, and the redirect still asks for credentials
             "SEC_BASIC_AUTH_OVER_HTTPS", "SEC_SESSION_CREATE_HTTPS_ONLY",
             "SEC_CERTS_CONFORM_X509V3", "PROTO_REDIRECT_ENFORCES_TARGET_PRIVS",
             # PasswordChangeRequired on the validator's own account
             "SEC_PWD_CHANGE_REQ_ALLOW_SESSION_LOGIN", "SEC_PWD_CHANGE_REQ_ALLOW_GET_ACCOUNT",
             "SEC_PWD_CHANGE_REQ_DISALLOW_ALL_OTHERS", "SEC_PWD_CHANGE_REQ_ALLOW_PATCH_PASSWORD",
             # a method libwebsockets does not know: 501, not its own 403
             "PROTO_HTTP_UNSUPPORTED_METHODS"]


def tool():
    t = os.environ.get("FB_REDFISH_VALIDATE", TOOL)
    assert os.access(t, os.X_OK), f"{t} not found: ../shared/tools beside the project"
    return t


def make_accounts(d):
    path = os.path.join(d, "accounts")
    for user, role, pw in ((ADMIN, "Administrator", ADMIN_PW),
                           ("rfviewer", "ReadOnly", "rfviewer-Password-1")):
        out = subprocess.run([fbtest.FABRICBUS, "passwd", "-f", path, user, role],
                             input=pw + "\n", capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
    return path


def make_certs(d):
    """ca.pem and broker.pem/broker.key (IP:127.0.0.1) in d, with openssl."""
    def run(*args):
        subprocess.run(args, cwd=d, check=True, capture_output=True, timeout=60)
    for name in ("ca", "broker"):
        run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-out", f"{name}.key")
        os.chmod(os.path.join(d, f"{name}.key"), 0o600)
    run("openssl", "req", "-x509", "-new", "-key", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=fabricbus protocol test CA")
    run("openssl", "req", "-new", "-key", "broker.key", "-out", "broker.csr", "-subj",
        "/CN=fabricbusd")
    with open(os.path.join(d, "broker.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "broker.pem", "-days", "2", "-extfile", "broker.ext")
    return os.path.join(d, "ca.pem")


def run_validator(d):
    http_port, agent_port = fbtest.free_port(), fbtest.free_port()
    log = os.path.join(d, "fabricbusd.log")
    ca = make_certs(d)
    cmd = (f"exec {fbtest.FABRICBUSD} -o RedfishAccounts={make_accounts(d)} "
           f"-o HttpListen=127.0.0.1:{http_port} -o AgentListen=127.0.0.1:{agent_port} "
           f"-o HttpTls=required -o HttpTlsCert={d}/broker.pem -o HttpTlsKey={d}/broker.key "
           f"-o JournalDir={d}/journal >{log} 2>&1")
    env = dict(os.environ, RF_USER=ADMIN, RF_PASS=ADMIN_PW, SERVICE_WAIT="3",
               REQUESTS_CA_BUNDLE=ca)
    out = subprocess.run([tool(), "proto", cmd, f"https://127.0.0.1:{http_port}"], env=env,
                         capture_output=True, text=True, timeout=900)
    text = out.stdout + out.stderr
    tsv = re.search(r"^(\S+\.tsv)$", out.stdout, re.M)
    assert tsv, f"no report from the validator (exit {out.returncode}):\n{text[-4000:]}"
    fbtest.assert_no_sanitizer_report(fbtest.read_text(log), "fabricbusd")
    return text, tsv.group(1), log


def protocol_validator_passes_the_session_and_auth_assertions():
    d = tempfile.mkdtemp(prefix="fb-rfproto-")
    fbtest._workdirs.append(d)
    text, tsv, log = run_validator(d)
    summary = re.search(r"Summary - PASS: (\d+), WARN: (\d+), FAIL: (\d+), NOT_TESTED: (\d+)", text)
    assert summary, text[-3000:]
    print(f"  {summary.group(0)}  (report {tsv})", flush=True)
    by = collections.defaultdict(list)
    with open(tsv, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            by[row["Assertion"]].append(row)
    for kind in ("FAIL", "WARN", "NOT_TESTED"):
        rows = [r for rs in by.values() for r in rs if r["Result"] == kind]
        for r in rows:
            print(f"  {kind:10} {r['Assertion']}: {r['Method']} {r['URI']} {r['Status code']}: "
                  f"{r['Message'][:160]}", flush=True)
    ours = [r for a, rs in by.items() for r in rs if r["Result"] == "FAIL" and
            (a.startswith("SEC_") or a == "REQ_POST_CREATE_TO_MEMBERS_PROP")]
    assert not ours, "accounts/sessions/HTTPS assertions failed:\n" + "\n".join(
        f"{r['Assertion']}: {r['Message']}" for r in ours)
    for a in MUST_PASS:
        results = {r["Result"] for r in by.get(a, [])}
        assert results == {"PASS"}, f"{a}: want PASS only, got {results or 'no result'}"
    broker_log = fbtest.read_text(log)
    assert ADMIN_PW not in broker_log, "the administrator's password is in the broker log"
    assert "failed login as" in broker_log, "the validator's bad login was not logged"


if __name__ == "__main__":
    fbtest.main([protocol_validator_passes_the_session_and_auth_assertions])
