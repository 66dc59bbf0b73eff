"""The live page served by fabricbusd (broker/http/www, compiled in by
www/embed.py; ws_www.c):

- page_served_by_accept: GET / with a browser's Accept (text/html) is the
  page, every /ui/ file it references is served byte for byte from
  broker/http/www with its content type; GET / as curl sends it (Accept: */*)
  stays the plain-text list of endpoints; an unknown /ui/ file is 404 and a
  POST is 405.
- page_script_parses: node --check on the served app.js (skipped, saying
  so, without node). The browser tests of issue 16 (headless Chromium) are
  not here yet.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_page.py [test_name ...]
"""
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request

from fbtest import SRC, Broker, main

WWW = os.path.join(SRC, "broker", "http", "www")
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def get(addr, path, accept=None, method="GET"):
    req = urllib.request.Request(f"http://{addr}{path}", method=method)
    if accept:
        req.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def page_served_by_accept():
    b = Broker().start()
    try:
        code, ctype, body = get(b.http_addr, "/", BROWSER_ACCEPT)
        assert code == 200 and ctype.startswith("text/html"), (code, ctype)
        assert body == open(os.path.join(WWW, "index.html"), "rb").read()
        refs = re.findall(r'(?:src|href)="(/ui/[^"]+)"', body.decode())
        assert sorted(refs) == ["/ui/app.css", "/ui/app.js"], refs
        for ref in refs:
            code, ctype, data = get(b.http_addr, ref, BROWSER_ACCEPT)
            want = {"css": "text/css", "js": "text/javascript"}[ref.rsplit(".", 1)[1]]
            assert code == 200 and ctype.startswith(want), (ref, code, ctype)
            assert data == open(os.path.join(WWW, ref[4:]), "rb").read(), ref
        code, ctype, body = get(b.http_addr, "/", "*/*")
        assert code == 200 and ctype.startswith("text/plain"), (code, ctype)
        assert b"GET /metrics" in body and b"GET /status" in body, body
        assert get(b.http_addr, "/ui/nope.js")[0] == 404
        assert get(b.http_addr, "/ui/app.js", method="POST")[0] == 405
        print(f"  / -> page for browsers, text for curl; {len(refs)} files served", flush=True)
    finally:
        rc = b.stop()
    assert rc == 0, b.log()[-3000:]


def page_script_parses():
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        print("  SKIP: node not installed (Debian: nodejs)", flush=True)
        return
    b = Broker().start()
    try:
        _, _, js = get(b.http_addr, "/ui/app.js")
    finally:
        b.stop()
    with tempfile.NamedTemporaryFile("wb", suffix=".js", delete=False) as f:
        f.write(js)
    try:
        r = subprocess.run([node, "--check", f.name], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main([page_served_by_accept, page_script_parses])
