"""The live page served by fabricbusd (broker/http/www, compiled in by
www/embed.py; ws_www.c):

- page_served_by_accept: GET / with a browser's Accept (text/html) is the
  page, every /ui/ file it references is served byte for byte from
  broker/http/www with its content type; GET / as curl sends it (Accept: */*)
  stays the plain-text list of endpoints; an unknown /ui/ file is 404 and a
  POST is 405.
- page_script_parses: node --check on the served app.js and fabric.js
  (skipped, saying so, without node).
- fabric_view_follows_map_and_events: the fabric view's model (fabric.js,
  run by node) built from the broker's real GET /fabric/map and then fed the
  stream's real events: a port down in the map, back up by a later link_up;
  a degraded port; an unreachable switch; events already in the map ignored. The page itself in headless Chromium:
  test_browser.py.

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
        assert sorted(refs) == ["/ui/app.css", "/ui/app.js", "/ui/fabric.js"], refs
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


def node_bin():
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        print("  SKIP: node not installed (Debian: nodejs)", flush=True)
    return node


def page_script_parses():
    node = node_bin()
    if not node:
        return
    b = Broker().start()
    try:
        scripts = [get(b.http_addr, f"/ui/{n}")[2] for n in ("app.js", "fabric.js")]
    finally:
        b.stop()
    for js in scripts:
        with tempfile.NamedTemporaryFile("wb", suffix=".js", delete=False) as f:
            f.write(js)
        try:
            r = subprocess.run([node, "--check", f.name], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
        finally:
            os.unlink(f.name)


LEAF, SPINE = "0x0008f10400411a08", "0x0008f10400411b00"


def ev(kind, sw, guid, port=0, link_class="host"):
    e = {"kind": kind, "tech": "infiniband", "link_class": link_class, "switch": sw,
         "switch_guid": guid}
    if port:
        e["port"] = port
    return e


NODE_SCRIPT = """
const fs = require("fs");
const FV = require(process.argv[2]);
const map = JSON.parse(fs.readFileSync(process.argv[3]));
const events = fs.readFileSync(process.argv[4], "utf8").split("\\n").filter(Boolean).map(JSON.parse);
const m = FV.model(map);
const show = () => Object.fromEntries(FV.sortedSwitches(m).map((sw) => [sw.name,
  { reachable: sw.reachable, ports: Object.fromEntries([...sw.ports].map(([n, p]) => [n, p.state])) }]));
const before = show();
const changed = events.map((d) => FV.apply(m, d.Events[0].Oem.Fabricbus, Number(d.Events[0].EventId)));
console.log(JSON.stringify({ before, after: show(), changed }));
"""


def fabric_view_follows_map_and_events():
    node = node_bin()
    if not node:
        return
    import json
    from fbtest import FABRICBUS, publish
    b = Broker().start()
    work = tempfile.mkdtemp(prefix="fbt-page-")
    try:
        first = [ev("link_up", "leaf1", LEAF, 1, "isl"), ev("link_up", "leaf1", LEAF, 2),
                 ev("link_down", "leaf1", LEAF, 3), ev("link_degraded", "spine1", SPINE, 7, "isl")]
        assert publish(b.agent_addr, "page-sw", first).returncode == 0
        wait = __import__("fbtest").wait_for
        map_doc = wait(lambda: json.loads(get(b.http_addr, "/fabric/map")[2]),
                       lambda m: m.get("LastEventId") == 4, 10, "the map at EventId 4")
        later = [ev("link_up", "leaf1", LEAF, 3), ev("switch_unreachable", "spine1", SPINE)]
        assert publish(b.agent_addr, "page-sw", later).returncode == 0
        r = subprocess.run([FABRICBUS, "tail", "--http", b.http_addr, "--since", "0", "--count", "6",
                            "--timeout", "20"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and len(r.stdout.splitlines()) == 6, (r.stdout, r.stderr)
        paths = {}
        for name, data in (("fabric.js", get(b.http_addr, "/ui/fabric.js")[2]),
                           ("map.json", json.dumps(map_doc).encode()),
                           ("events.jsonl", r.stdout.encode()), ("run.js", NODE_SCRIPT.encode())):
            paths[name] = os.path.join(work, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        out = subprocess.run([node, paths["run.js"], paths["fabric.js"], paths["map.json"],
                              paths["events.jsonl"]], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        res = json.loads(out.stdout)
        print(f"  map: {res['before']}\n  after the stream: {res['after']}", flush=True)
        assert res["before"] == {"leaf1": {"reachable": True, "ports": {"1": "up", "2": "up", "3": "down"}},
                                 "spine1": {"reachable": True, "ports": {"7": "degraded"}}}, res
        assert res["after"]["leaf1"]["ports"]["3"] == "up", res
        assert res["after"]["spine1"]["reachable"] is False, res
        assert res["changed"] == [False, False, False, False, True, True], res["changed"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        rc = b.stop()
    assert rc == 0, b.log()[-3000:]


if __name__ == "__main__":
    main([page_served_by_accept, page_script_parses, fabric_view_follows_map_and_events])
