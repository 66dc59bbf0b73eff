"""A real OFMF core for integration tests: the OpenFabrics Sunfish reference
server, started with ../shared/ofmf/run_core.sh (HANDSHAKE.md next to it
says what it does with an agent), and a subscriber of that core: an HTTP
receiver on 127.0.0.1 that the core forwards events to.

    missing = ofmf.available()            # None, or why there is no core
    core = ofmf.Core(workdir).start()     # a fresh core on a free port
    core.get("/redfish/v1/AggregationService/AggregationSources")
    sub = ofmf.Subscriber().start(); sub.subscribe(core, RegistryPrefixes=["Fabric"])
    core.restart()                        # same port, forgets everything
    core.stop()

The core is found through FB_OFMF_CORE (the folder holding run_core.sh) or
../shared/ofmf beside the source tree. Its Python venv comes from PyPI on
first use (flask 2.3, requests, the sunfish library); it is built once into
~/.cache/fabricbus-ofmf/venv-<hash of what it installs> (or FB_OFMF_VENV)
and reused. `python3 tests/lib/ofmf.py fetch` builds it ahead of a test run
(tests/run-all.sh does), so the download is not charged to a test's timeout.
Every core started here is killed by pid when the test process exits, pass
or fail (fbtest's registry).
"""
import fcntl
import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fbtest  # noqa: E402


def core_dir():
    """The folder of run_core.sh: FB_OFMF_CORE, else ../shared/ofmf."""
    d = os.environ.get("FB_OFMF_CORE")
    if d:
        return d
    return os.path.normpath(os.path.join(os.path.abspath(fbtest.SRC), "..", "shared", "ofmf"))


def run_core_sh():
    return os.path.join(core_dir(), "run_core.sh")


def available():
    """None when a core can be started, else a sentence saying what is
    missing (for a clear skip)."""
    sh = run_core_sh()
    if not os.access(sh, os.X_OK):
        return (f"no OFMF core: {sh} is not there (set FB_OFMF_CORE to the folder holding "
                "the Sunfish reference core's run_core.sh)")
    if subprocess.run(["/usr/bin/python3", "-c", "import venv, ensurepip"],
                      capture_output=True).returncode != 0:
        return "no OFMF core: /usr/bin/python3 cannot make a venv (Debian's python3-venv)"
    return None


def _venv_key():
    """A hash of what the venv installs: the sunfish library's project files
    and run_core.sh's pip line, so an updated core gets a fresh venv."""
    h = hashlib.sha256()
    for rel in ("lib/pyproject.toml", "lib/poetry.lock", "lib/requirements.txt", "run_core.sh"):
        try:
            with open(os.path.join(core_dir(), rel), "rb") as f:
                h.update(f.read())
        except OSError:
            h.update(rel.encode())
    return h.hexdigest()[:16]


def venv_path():
    if os.environ.get("FB_OFMF_VENV"):
        return os.environ["FB_OFMF_VENV"]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "fabricbus-ofmf", f"venv-{_venv_key()}")


def fetch(timeout=900):
    """Build the cached venv unless it is complete (its stamp is written
    last, under a lock, so a build cut short is redone, not half-used).
    Returns the seconds the build took (0.0 when cached)."""
    venv = venv_path()
    stamp = venv + ".ok"
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(stamp) and os.access(os.path.join(venv, "bin", "flask"), os.X_OK):
            return 0.0
        shutil.rmtree(venv, ignore_errors=True)
        work = tempfile.mkdtemp(prefix="fb-ofmf-fetch-")
        t0 = time.monotonic()
        env = dict(os.environ, FB_OFMF_VENV=venv)
        try:
            # run_core.sh builds the venv on its first start; a core that
            # answers proves the venv works.
            out = subprocess.run([run_core_sh(), "start", work, str(fbtest.free_port())], env=env,
                                 capture_output=True, text=True, timeout=timeout)
            if out.returncode != 0:
                raise RuntimeError(f"building the OFMF core's venv in {venv} failed "
                                   f"(is PyPI reachable?):\n{out.stdout}{out.stderr}"
                                   f"{fbtest.read_text(os.path.join(work, 'core.log'))[-2000:]}")
        finally:
            subprocess.run([run_core_sh(), "stop", work], capture_output=True, timeout=30)
            shutil.rmtree(work, ignore_errors=True)
        took = time.monotonic() - t0
        with open(stamp, "w") as f:
            f.write(f"{took:.1f}\n")
        return took


class Core:
    """One OFMF core on 127.0.0.1:port, its files under workdir."""

    def __init__(self, workdir=None, port=None):
        self.workdir = workdir or tempfile.mkdtemp(prefix="fb-ofmf-")
        fbtest._workdirs.append(self.workdir)  # removed by fbtest.run() after a clean run
        self.port = port or fbtest.free_port()
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self):
        return os.path.join(self.workdir, "core.log")

    def log(self):
        return fbtest.read_text(self.log_path)

    def start(self):
        """A fresh core (run_core.sh start copies its start-up files anew)."""
        fetch()
        env = dict(os.environ, FB_OFMF_VENV=venv_path())
        out = subprocess.run([run_core_sh(), "start", self.workdir, str(self.port)], env=env,
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"the OFMF core did not start: {out.stdout}{out.stderr}"
                               f"{self.log()[-3000:]}")
        with open(os.path.join(self.workdir, "core.pid")) as f:
            self.proc = fbtest.track(fbtest.PidProcess(int(f.read().strip()), b"flask"))
        fbtest.at_exit(self.stop)
        return self

    def stop(self):
        if self.proc is None:
            return
        subprocess.run([run_core_sh(), "stop", self.workdir], capture_output=True, timeout=30)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self):
        """Stop, then start a fresh core on the same port: it forgets every
        agent, AggregationSource and subscriber, as the reference core does."""
        self.stop()
        fbtest.wait_for(lambda: _port_free(self.port), bool, 20, f"port {self.port} free")
        return self.start()

    def request(self, method, path, body=None, timeout=30):
        """(status, parsed JSON or text, or None when the core closed the
        connection without a reply)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        text = raw.decode(errors="replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def get(self, path):
        return self.request("GET", path)

    def sources(self):
        """{id: AggregationSource} of every agent the core knows."""
        st, coll = self.get("/redfish/v1/AggregationService/AggregationSources")
        assert st == 200, f"core: AggregationSources: {st} {coll}"
        out = {}
        for m in coll.get("Members", []):
            st, src = self.get(m["@odata.id"])
            if st == 200:
                out[src["Id"]] = src
        return out


def _port_free(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class Subscriber:
    """A subscriber of the core: an HTTP server on 127.0.0.1 that keeps every
    JSON body POSTed to it (the core's forwarded events), in order."""

    def __init__(self):
        self.events = []
        self.cond = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                try:
                    doc = json.loads(body)
                except ValueError:
                    doc = {"unparsed": body.decode(errors="replace")}
                with outer.cond:
                    outer.events.append(doc)
                    outer.cond.notify_all()

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/events"

    def start(self):
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        fbtest.at_exit(self.stop)
        return self

    def stop(self):
        if self.thread is not None:
            self.server.shutdown()
            self.server.server_close()
            self.thread = None

    def subscribe(self, core, **filters):
        """Subscribe to core's EventService (the core answers 200, not 201,
        and keeps subscriptions in memory only: subscribe again after a
        restart). Returns the subscription's Id."""
        body = {"@odata.type": "#EventDestination.v1_13_0.EventDestination",
                "Destination": self.url, "Protocol": "Redfish", "Context": "fb-test"}
        body.update(filters)
        st, doc = core.request("POST", "/redfish/v1/EventService/Subscriptions", body)
        assert st in (200, 201), f"core refused the subscription: {st} {doc}"
        return doc["Id"]

    def mark(self):
        with self.cond:
            return len(self.events)

    def wait_for(self, pred, timeout, what, start=0):
        """The first event doc from index start on with pred(doc), waiting up
        to timeout s."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for doc in self.events[start:]:
                    if pred(doc):
                        return doc
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{what}: not within {timeout}s; got "
                                         f"{json.dumps(self.events)[-3000:]}")
                self.cond.wait(left)


if __name__ == "__main__":
    if sys.argv[1:] == ["fetch"]:
        why = available()
        if why:
            print(f"ofmf.py: {why}; skipping", file=sys.stderr)
            sys.exit(0)
        took = fetch()
        print(f"ofmf.py: the OFMF core's venv is in {venv_path()}"
              + (f" (built in {took:.1f} s)" if took else " (cached)"), file=sys.stderr)
        sys.exit(0)
    print("usage: ofmf.py fetch", file=sys.stderr)
    sys.exit(2)
