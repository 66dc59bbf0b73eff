"""fabricbus-pmix as a test process, the example app's output read line by
line, and the test PMIx server (tests/lib/fb_pmix_server.c).

    a = PmixAdapter(broker_http, node="node001", step_dir=d).start()
    a.wait_log("steps: job 3.0"); a.kill9(); a.start(); a.stop()
    s = Srun(cluster, ["--mpi=pmix", "-w", "node001", "-n2", FABRIC_EVENTS, "--count", "1"])
    s.wait_ready(2); s.wait_events(2, ...); assert s.wait() == 0
"""
import os
import re
import subprocess
import tempfile
import threading
import time

import fbtest
from fbtest import BUILD, track

PMIX_DIR = os.path.join(BUILD, "adapters", "pmix")
FABRICBUS_PMIX = os.path.join(PMIX_DIR, "fabricbus-pmix")
FABRIC_EVENTS = os.path.join(PMIX_DIR, "fabric_events")
SPANK_PMIX = os.path.join(PMIX_DIR, "spank_fabricbus_pmix.so")
PMIX_SERVER = os.path.join(BUILD, "tests", "integration", "fb_pmix_server")

EVENT_RE = re.compile(r"^(?:(\d+): )?fabric_events: rank (\d+): event (-?\d+) .*?:(.*)$")


def parse_keys(tail):
    """' pmix.evtext=a b fabricbus.kind=link_down ...' -> {key: value}."""
    out = {}
    for m in re.finditer(r" ((?:pmix|fabricbus)\.[a-z_]+)=(.*?)(?= (?:pmix|fabricbus)\.[a-z_]+=|$)", tail):
        out[m.group(1)] = m.group(2)
    return out


class Lines:
    """Collect a process's stdout lines on a thread; wait for patterns."""

    def __init__(self, proc):
        self.proc = proc
        self.lines = []
        self.stamps = []
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cv:
                self.lines.append(line.rstrip("\n"))
                self.stamps.append(time.time())
                self.cv.notify_all()

    def text(self):
        with self.cv:
            return "\n".join(self.lines)

    def wait_for(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                got = [l for l in self.lines if pred(l)]
                if got:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} within {timeout}s; output:\n" +
                                         "\n".join(self.lines[-30:]))
                self.cv.wait(min(left, 0.1))

    def count(self, pred):
        with self.cv:
            return sum(1 for l in self.lines if pred(l))

    def wait_count(self, pred, n, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cv:
            while sum(1 for l in self.lines if pred(l)) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"fewer than {n} {what} within {timeout}s; output:\n" +
                                         "\n".join(self.lines[-30:]))
                self.cv.wait(min(left, 0.1))

    def events(self):
        """[(rank, code, {key: value})] of every event line so far."""
        out = []
        with self.cv:
            for l in self.lines:
                m = EVENT_RE.match(l)
                if m:
                    out.append((int(m.group(2)), int(m.group(3)), parse_keys(m.group(4))))
        return out


def is_ready(l):
    return " ready (" in l


def is_event(l):
    return EVENT_RE.match(l) is not None


class Srun:
    """srun in the background, its labelled output collected."""

    def __init__(self, cluster, args, env=None):
        e = dict(cluster.env, **(env or {}))
        self.proc = track(subprocess.Popen(["srun", "-l", *args], env=e, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True, cwd=cluster.workdir))
        self.out = Lines(self.proc)

    def wait_ready(self, n, timeout=30):
        self.out.wait_count(is_ready, n, timeout, "ready lines")

    def wait_events(self, n, timeout=10):
        self.out.wait_count(is_event, n, timeout, "event lines")
        return self.out.events()

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"srun did not end within {timeout}s:\n{self.out.text()[-3000:]}")


class PmixAdapter(fbtest.Program):
    def __init__(self, broker_http, workdir=None, env=None, **overrides):
        super().__init__(FABRICBUS_PMIX, workdir, {"Broker": broker_http, "LogLevel": "debug"},
                         env=dict(env or os.environ), missing=" (needs libpmix-dev)")
        # OpenPMIx 4.2.2 keeps a few strings that PMIx_tool_init loads after
        # PMIx_tool_finalize (MCA parameters, the server's URI; full stacks
        # with fast_unwind_on_malloc=0 end in libpmix): not fabricbus-pmix's.
        lsupp = os.path.join(self.workdir, "lsan.supp")
        with open(lsupp, "w") as f:
            f.write("leak:libpmix.so\n")
        cur = self.env.get("LSAN_OPTIONS", "")
        self.env["LSAN_OPTIONS"] = ":".join(x for x in (cur, f"suppressions={lsupp}") if x)
        self.overrides.update(overrides)


class PmixServer:
    """tests/lib/fb_pmix_server.c running `fabric_events app_args` as every
    rank of one namespace laid out on nodes (ppn each, all forked here)."""

    def __init__(self, nspace, nodes, ppn, app_args):
        assert os.access(PMIX_SERVER, os.X_OK), f"{PMIX_SERVER} not built (needs libpmix-dev)"
        self.workdir = tempfile.mkdtemp(prefix="fb-pmix-server-")
        fbtest._workdirs.append(self.workdir)
        self.uri_file = os.path.join(self.workdir, "uri")
        args = [PMIX_SERVER, "--uri-file", self.uri_file, "--nspace", nspace, "--nodes",
                ",".join(nodes), "--ppn", str(ppn), "--", FABRIC_EVENTS, *app_args]
        self.proc = track(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True, cwd=self.workdir))
        self.out = Lines(self.proc)
        self.np = len(nodes) * ppn

    def uri(self):
        self.out.wait_count(is_ready, self.np, 30, "ready lines")
        with open(self.uri_file) as f:
            return f.read().strip()

    def wait(self, timeout=60):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"fb_pmix_server did not end within {timeout}s:\n{self.out.text()}")
        time.sleep(0.05)  # the reader thread takes the last lines
        return {int(m.group(1)): int(m.group(2))
                for m in re.finditer(r"fb_pmix_server: rank (\d+) exit (\d+)", self.out.text())}
