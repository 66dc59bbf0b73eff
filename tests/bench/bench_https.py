"""Redfish GETs over HTTPS against plain HTTP on the same broker (not a test:
prints figures, asserts none). One fabricbusd with HttpTls=optional serves
both on one port (test CA and certificate made with openssl); curl, one
process per run, fetches /redfish/v1/Fabrics/IB REQS times over one kept-alive
connection, then CONNS times with a new connection (and TLS handshake) each.
Each figure is the best of ROUNDS runs; the ratio is HTTPS/HTTP requests/s.

Usage: tests/bench/bench_https.sh   (REQS=5000 CONNS=500 ROUNDS=3)
"""
import hashlib
import os
import secrets
import subprocess
import tempfile
import time

import fbtest

REQS = int(os.environ.get("REQS", "5000"))
CONNS = int(os.environ.get("CONNS", "500"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))


def sh(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


def certs(d):
    for n in ("ca", "broker"):
        sh("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1",
           "-out", f"{n}.key", cwd=d)
        os.chmod(os.path.join(d, f"{n}.key"), 0o600)
    sh("openssl", "req", "-x509", "-new", "-key", "ca.key", "-out", "ca.pem", "-days", "2",
       "-subj", "/CN=bench CA", cwd=d)
    sh("openssl", "req", "-new", "-key", "broker.key", "-out", "broker.csr", "-subj",
       "/CN=fabricbusd", cwd=d)
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    sh("openssl", "x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
       "-CAcreateserial", "-out", "broker.pem", "-days", "2", "-extfile", "ext", cwd=d)


def run_curl(d, scheme, port, token, n, keep_alive):
    """requests/s of n GETs in one curl process."""
    url = f"{scheme}://127.0.0.1:{port}/redfish/v1/Fabrics/IB"
    cfg = os.path.join(d, f"curl-{scheme}-{keep_alive}.cfg")
    with open(cfg, "w") as f:
        f.write(f'header = "Authorization: Bearer {token}"\n')
        if not keep_alive:
            f.write('header = "Connection: close"\n')
        f.write(f'cacert = "{d}/ca.pem"\n')
        for _ in range(n):
            f.write(f'url = "{url}"\noutput = "/dev/null"\n')
    t0 = time.monotonic()
    r = subprocess.run(["curl", "-sS", "--fail", "-K", cfg], capture_output=True, text=True)
    dt = time.monotonic() - t0
    if r.returncode:
        raise RuntimeError(f"curl {scheme}: {r.stderr[-500:]}")
    return n / dt


def main():
    d = tempfile.mkdtemp(prefix="fb-bench-https-")
    fbtest._workdirs.append(d)
    certs(d)
    tok = secrets.token_hex(32)
    with open(os.path.join(d, "tokens"), "w") as f:
        f.write(f"bench:ReadOnly:{hashlib.sha256(tok.encode()).hexdigest()}\n")
    os.chmod(os.path.join(d, "tokens"), 0o600)
    b = fbtest.Broker(HttpTls="optional", HttpTlsCert=f"{d}/broker.pem",
                      HttpTlsKey=f"{d}/broker.key", HttpTokens=f"{d}/tokens").start()
    try:
        rows = []
        for label, n, keep in (("kept-alive connection", REQS, True),
                               ("new connection each", CONNS, False)):
            best = {}
            for _ in range(ROUNDS):
                for scheme in ("http", "https"):
                    best[scheme] = max(best.get(scheme, 0),
                                       run_curl(d, scheme, b.http_port, tok, n, keep))
            rows.append((label, n, best["http"], best["https"]))
        print(f"{'Redfish GET /redfish/v1/Fabrics/IB':38} {'n':>6} {'http req/s':>11} "
              f"{'https req/s':>12} {'ratio':>6}")
        for label, n, h, s in rows:
            print(f"{label:38} {n:>6} {h:>11.0f} {s:>12.0f} {s / h:>6.2f}")
    finally:
        b.stop()


if __name__ == "__main__":
    fbtest.run(main)
