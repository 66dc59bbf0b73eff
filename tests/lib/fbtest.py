"""Helpers for fabricbus integration tests: start the real fabricbusd and the
real CLI, clean up by pid even when a test fails, and check Redfish events.

Run under /usr/bin/python3 (Debian's python3-websockets lives there).
"""
import asyncio
import atexit
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BUILD = os.environ.get("FB_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build-asan"))
SRC = os.environ.get("FB_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
FABRICBUSD = os.path.join(BUILD, "broker", "fabricbusd")
FABRICBUS = os.path.join(BUILD, "broker", "cli", "fabricbus")

# The one process registry of the test helpers (ibsim, slurm, kafka and the
# chain use it too): at interpreter exit, even after a failed assertion,
# every tracked process is killed by pid, then every registered stop() runs,
# newest first (an ibsim after the agents and opensm that were its clients).
_procs = []
_stops = []
_workdirs = []


def _cleanup():
    for p in _procs:
        if p.poll() is None:
            try:
                p.kill()
                p.wait(timeout=10)
            except Exception:
                pass
    for stop in reversed(list(_stops)):
        try:
            stop()
        except Exception:
            pass


atexit.register(_cleanup)


def track(p):
    """Kill p (anything with poll/kill/wait) at exit if it still runs."""
    _procs.append(p)
    return p


class PidProcess:
    """What the registry needs (poll/kill/wait) of a daemon that a script
    started and that we know only by pid (Kafka's JVM, the OFMF core). mark:
    bytes its command line holds, so that a reused pid is never taken for it."""

    def __init__(self, pid, mark=b""):
        self.pid = pid
        self.mark = mark

    def _alive(self):
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{self.pid}/cmdline", "rb") as f:
                ours = self.mark in f.read()
        except (OSError, IndexError):
            return False
        return ours and state not in ("Z", "X")

    def poll(self):
        return None if self._alive() else 0

    def kill(self):
        if self._alive():
            os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout=None):
        deadline = time.time() + (timeout if timeout is not None else 3600)
        while self._alive():
            if time.time() > deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
            time.sleep(0.05)
        return 0


def at_exit(stop):
    """Call stop() at exit (it must be harmless when already stopped)."""
    _stops.append(stop)
    return stop


def read_text(path):
    """A log file's text ("" when it is not there yet), bad bytes replaced."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_for(get, pred, timeout, what, interval=0.05, show=repr):
    """Call get() every interval until pred(value) holds, and return that
    value; after timeout seconds, fail naming what and show(last value)."""
    deadline = time.monotonic() + timeout
    v = None
    while time.monotonic() < deadline:
        v = get()
        if pred(v):
            return v
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout}s; last: {show(v)[:4000]}")


_ports_given = set()


def free_port():
    """A loopback TCP port nothing is bound to, never one this process has
    handed out before: the kernel can give the same free port to two binds in
    a row, and a broker whose AgentListen and HttpListen came out equal
    refuses to start (seen once in CI: "AgentListen and HttpListen must
    differ")."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _ports_given:
            _ports_given.add(port)
            return port
    raise RuntimeError("no loopback port this test has not used already, after 100 tries")


def wait_port(port, timeout=30.0, proc=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before port {port} opened")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open within {timeout}s")


SANITIZER_MARKS = ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer")


def assert_no_sanitizer_report(out, who, tail=3000):
    """UBSan goes on after a report, so a clean exit status is not enough."""
    for bad in SANITIZER_MARKS:
        assert bad not in out, f"sanitizer report from {who}:\n{out[-tail:]}"


def assert_http_at_limit(http_addr, what, timeout=10):
    """A plain GET /status is answered 503 "connection limit": the HTTP
    listener at http_addr is full. what names the request for the failure."""
    try:
        urllib.request.urlopen(f"http://{http_addr}/status", timeout=timeout)
    except urllib.error.HTTPError as e:
        assert e.code == 503 and b"connection limit" in e.read(), e
        return
    raise AssertionError(f"{what} was served")


def stop_gracefully(proc, name, timeout=30):
    """SIGTERM and wait; kill and fail if it does not stop in time. Returns
    the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(f"{name} did not stop within {timeout} s of SIGTERM")
    return proc.returncode


class Program:
    """A fabricbus program as a test process: `path -o Key=Value...` in its
    workdir, its output in <name>.log there, stopped by pid. Subclasses set
    the overrides a test run needs (fabricbus-slurm, fabricbus-pmix)."""

    def __init__(self, path, workdir, overrides, env=None, missing=""):
        self.path, self.name = path, os.path.basename(path)
        self.workdir = workdir or tempfile.mkdtemp(prefix=f"fb-{self.name}-")
        _workdirs.append(self.workdir)  # removed by run() after a clean run
        self.overrides = dict(overrides)
        self.env = env
        self.missing = missing  # why it may not be built, for the assertion
        self.log_path = os.path.join(self.workdir, self.name + ".log")
        self.proc = None
        self.extra_args = []  # options after the -o ones (e.g. --metrics)

    def args(self):
        a = [self.path]
        for k, v in self.overrides.items():
            a += ["-o", f"{k}={v}"]
        return a + list(self.extra_args)

    def start(self):
        assert os.access(self.path, os.X_OK), f"{self.path} not built{self.missing}"
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.args(), stdout=log, stderr=subprocess.STDOUT,
                                               env=self.env, cwd=self.workdir))
        return self

    def log(self):
        return read_text(self.log_path)

    def wait_log(self, text, timeout=10.0, count=1):
        """Until text is in the log count times; fails early if the program exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log().count(text) >= count:
                return
            assert self.proc.poll() is None, \
                f"{self.name} exited {self.proc.returncode}:\n{self.log()[-3000:]}"
            time.sleep(0.02)
        times = f" (x{count})" if count > 1 else ""
        raise AssertionError(f"no {text!r}{times} in the {self.name} log within {timeout}s:\n"
                             f"{self.log()[-3000:]}")

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, check=True):
        """SIGTERM; with check, asserts exit 0 and no sanitizer report."""
        if self.proc is None:
            return 0
        rc = stop_gracefully(self.proc, self.name)
        self.proc = None
        if check:
            out = self.log()
            assert rc == 0, f"{self.name} exited with {rc}:\n{out[-3000:]}"
            assert_no_sanitizer_report(out, self.name)
        return rc


class Broker:
    """One fabricbusd with its own journal dir and ports."""

    def __init__(self, workdir=None, agent_port=None, http_port=None, keep=False, wrapper=(),
                 **overrides):
        """keep: the workdir is not removed after a passing run (the demo).
        wrapper: a command line to run fabricbusd under (e.g. prlimit)."""
        self.wrapper = list(wrapper)
        self.workdir = workdir or tempfile.mkdtemp(prefix="fb-test-")
        if not keep:
            _workdirs.append(self.workdir)
        self.agent_port = agent_port or free_port()
        self.http_port = http_port or free_port()
        self.overrides = {
            "AgentListen": f"127.0.0.1:{self.agent_port}",
            "HttpListen": f"127.0.0.1:{self.http_port}",
            "JournalDir": os.path.join(self.workdir, "journal"),
            "HeartbeatInterval": "1s",
        }
        self.overrides.update(overrides)
        self.proc = None
        self.log_path = os.path.join(self.workdir, "fabricbusd.log")

    @property
    def agent_addr(self):
        return f"127.0.0.1:{self.agent_port}"

    @property
    def http_addr(self):
        return f"127.0.0.1:{self.http_port}"

    def start(self):
        args = self.wrapper + [FABRICBUSD]
        for k, v in self.overrides.items():
            args += ["-o", f"{k}={v}"]
        log = open(self.log_path, "ab")
        self.proc = track(subprocess.Popen(args, stdout=log, stderr=log, cwd=self.workdir))
        wait_port(self.agent_port, proc=self.proc)
        wait_port(self.http_port, proc=self.proc)
        return self

    def stop(self):
        """SIGTERM and wait; returns the exit status (sanitizer errors make it non-zero)."""
        return stop_gracefully(self.proc, "fabricbusd") if self.proc else 0

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def log(self):
        return read_text(self.log_path)

    def status(self):
        out = subprocess.run([FABRICBUS, "status", "--json", "--http", self.http_addr],
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError(f"fabricbus status failed: {out.stderr}")
        return json.loads(out.stdout)

    def wait_status(self, pred, timeout=10.0):
        """Poll /status (refreshed every 100 ms) until pred(status) holds."""
        return wait_for(self.status, pred, timeout, "status never matched", show=json.dumps)

    def ws_url(self, **params):
        q = "&".join(f"{k}={v}" for k, v in params.items())
        return f"ws://127.0.0.1:{self.http_port}/ws/events" + (f"?{q}" if q else "")


def publish(broker_addr, agent_id, events=None, generate=None, timeout=120, extra=()):
    """Run `fabricbus publish`; returns the CompletedProcess."""
    args = [FABRICBUS, "publish", "--broker", broker_addr, "--agent-id", agent_id,
            "--timeout", str(timeout)] + list(extra)
    stdin = None
    if generate is not None:
        args += ["--generate", str(generate)]
    elif events is not None:
        stdin = "".join(json.dumps(e) + "\n" for e in events)
    return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout + 60)


def publish_async(broker_addr, agent_id, generate, timeout=300, extra=()):
    args = [FABRICBUS, "publish", "--broker", broker_addr, "--agent-id", agent_id,
            "--timeout", str(timeout), "--generate", str(generate)] + list(extra)
    return track(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))


def tail_async(http_addr, out_path, extra=()):
    args = [FABRICBUS, "tail", "--http", http_addr] + list(extra)
    out = open(out_path, "wb")
    return track(subprocess.Popen(args, stdout=out, stderr=subprocess.PIPE))


MESSAGE_ID_RE = re.compile(r"^[A-Za-z0-9]+\.\d+\.\d+\.[A-Za-z0-9.]+$")
SEVERITIES = {"OK", "Warning", "Critical"}
EVENT_TYPES = {"StatusChange", "ResourceUpdated", "ResourceAdded", "ResourceRemoved", "Alert",
               "MetricReport", "Other"}


def check_redfish_event(doc):
    """Assert doc is a Redfish Event as DSP0266/Event.v1_13 requires; returns its record."""
    assert doc.get("@odata.type", "").startswith("#Event.v1_"), doc
    for k in ("Id", "Name", "Events"):
        assert k in doc, f"missing {k}: {doc}"
    assert isinstance(doc["Events"], list) and len(doc["Events"]) == 1, doc
    rec = doc["Events"][0]
    for k in ("EventType", "MessageId", "MemberId"):
        assert k in rec, f"record missing {k}: {rec}"
    assert rec["EventType"] in EVENT_TYPES, rec
    assert MESSAGE_ID_RE.match(rec["MessageId"]), rec["MessageId"]
    assert rec.get("MessageSeverity") in SEVERITIES, rec
    if "OriginOfCondition" in rec:
        assert rec["OriginOfCondition"]["@odata.id"].startswith("/redfish/v1/"), rec
    return rec


def event_key(doc):
    """(EventId, AgentId, Sequence) of a fabricbus Redfish Event."""
    rec = doc["Events"][0]
    oem = rec["Oem"]["Fabricbus"]
    return int(rec["EventId"]), oem["AgentId"], int(oem["Sequence"])


def is_missed_notice(doc):
    return doc["Events"][0]["MessageId"].startswith("Fabricbus.") and \
        doc["Events"][0]["MessageId"].endswith("SubscriberEventsMissed")


def read_jsonl(path):
    with open(path, "rb") as f:
        return [json.loads(line) for line in f if line.strip()]


def check_stream(docs, expected_total, agents=None):
    """Every event exactly once, EventIds strictly increasing, per-agent order."""
    events = [d for d in docs if not is_missed_notice(d)]
    assert len(events) == expected_total, f"got {len(events)} events, want {expected_total}"
    last_id = 0
    last_seq = {}
    for d in events:
        check_redfish_event(d)
        eid, agent, seq = event_key(d)
        assert eid > last_id, f"EventId {eid} after {last_id}"
        last_id = eid
        prev = last_seq.get(agent, 0)
        assert seq == prev + 1, f"agent {agent}: seq {seq} after {prev}"
        last_seq[agent] = seq
    if agents is not None:
        assert set(last_seq) == set(agents), f"agents {sorted(last_seq)} != {sorted(agents)}"
    return last_seq


async def ws_collect(url, count, timeout):
    """A Python websockets subscriber: collect `count` events (notices kept too)."""
    import websockets
    docs = []
    n = 0
    async with websockets.connect(url, max_size=2 ** 22, max_queue=4096) as ws:
        deadline = time.time() + timeout
        while n < count:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"python subscriber got {n} of {count} events in {timeout}s")
            msg = await asyncio.wait_for(ws.recv(), timeout=left)
            d = json.loads(msg)
            docs.append(d)
            if not is_missed_notice(d):
                n += 1
    return docs


def rec(doc):
    return doc["Events"][0]


def oem(doc):
    return rec(doc).get("Oem", {}).get("Fabricbus", {})


def origin(doc):
    return rec(doc).get("OriginOfCondition", {}).get("@odata.id", "")


class Tail:
    """`fabricbus tail --since 0 --reconnect`, lines collected by a thread;
    wait_for(pred) returns the first event matching pred."""

    def __init__(self, http_addr, err_path, extra=()):
        args = [FABRICBUS, "tail", "--http", http_addr, "--since", "0", "--reconnect",
                "--events-only", "--quiet"] + list(extra)
        with open(err_path, "ab") as err:
            self.proc = track(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err))
        self.events = []
        self.stamps = []  # time.monotonic() when each event was read
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            if line.strip():
                with self.cv:
                    self.events.append(json.loads(line))
                    self.stamps.append(time.monotonic())
                    self.cv.notify_all()

    def wait_for(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for d in self.events:
                    if pred(d):
                        return d
                left = deadline - time.monotonic()
                if left <= 0:
                    got = "\n  ".join(f"{rec(d).get('MessageId')} {origin(d)} {json.dumps(oem(d))}"
                                      for d in self.events[-20:])
                    raise AssertionError(f"no {what} within {timeout}s; last events:\n  {got}")
                self.cv.wait(min(left, 0.1))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def main(tests, always=()):
    """A test file's __main__: run the tests named on the command line (all
    when none is), then the ones in always that were not run."""
    names = sys.argv[1:]
    chosen = [t for t in tests if not names or t.__name__ in names]
    run(*chosen, *[t for t in always if t not in chosen])


def run(*tests):
    """Run named test functions in order; print one line each and a closing
    "N passed, N failed" line; exit non-zero if any failed."""
    import traceback
    passed = failed = 0
    for t in tests:
        t0 = time.time()
        try:
            t()
            passed += 1
            print(f"ok   {t.__name__} ({time.time() - t0:.1f}s)", flush=True)
        except Exception:
            traceback.print_exc()
            failed += 1
            print(f"FAIL {t.__name__} ({time.time() - t0:.1f}s)", flush=True)
    _cleanup()
    if not failed:  # keep journals and logs of a failed run for a look
        import shutil
        for d in _workdirs:
            shutil.rmtree(d, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
