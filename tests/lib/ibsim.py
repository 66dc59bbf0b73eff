"""A simulated InfiniBand fabric for tests: ibsim + the umad2sim preload shim.

    sim = IbSim(os.path.join(TOPOLOGIES, "fattree46.net")).start()
    sim.run_sm_once()                      # opensm -o: LIDs, routes, ports Active
    p = sim.spawn(["ibstat"], host="h2")   # a tracked client attached at h2
    sim.unlink("leaf1", 3); sim.relink("leaf1", 3)
    sim.stop()                             # clients first, then ibsim

Facts this relies on (measured, see /work/shared/notes/ibsim.md):
- ibsim reads its console from stdin. stdin is a FIFO opened read-write, so it
  never sees EOF (EOF makes ibsim spin at 100% CPU). Console lines are <= 128
  characters. console() waits for ibsim's next "sim> " prompt, so a command has
  been applied when it returns.
- Clients find the sim by IBSIM_SOCKNAME (abstract unix sockets: nothing to
  clean on disk) and attach at the node SIM_HOST names. The sim is ready when
  "@<sockname>:ctl" shows in /proc/net/unix; a client that comes earlier
  retries only every 2 s.
- The shim writes a fake /sys to ./sys-<pid> in the client's cwd, so clients
  run with cwd=workdir.
- ibsim takes at most 10 clients (opensm included).
- Stop order: clients, then ibsim. A client whose ibsim is gone hangs in its
  atexit handler. Every process is tracked by pid and killed in that order at
  interpreter exit too, even when a test failed.

Run under /usr/bin/python3. The workdir and the sim are registered with fbtest
(its one process registry), so that a passing run removes the workdir and
interpreter exit stops the sim.
"""
import os
import signal
import subprocess
import tempfile
import time

import fbtest

IBSIM = "/usr/bin/ibsim"
OPENSM = "/usr/sbin/opensm"
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"  # package libumad2sim0
# Topology files (ibsim's .net format). fattree46.net is kept in the repo,
# next to this file (copied from /work/shared/topologies); FB_TOPOLOGIES
# points elsewhere, e.g. at /work/shared/topologies for the bigger ones.
TOPOLOGIES = os.environ.get("FB_TOPOLOGIES", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "topologies"))
MAX_CLIENTS = 10
CONSOLE_MAX = 128

_sims = []  # every IbSim started in this process (their socket names differ)


def available():
    """None if ibsim, opensm and the shim are installed, else what is missing."""
    missing = [p for p in (IBSIM, OPENSM, UMAD2SIM) if not os.path.exists(p)]
    return ", ".join(missing) if missing else None


def _stop_proc(p, sig=signal.SIGTERM, timeout=5.0):
    """Signal one process by pid and reap it; SIGKILL if it does not go."""
    if p.poll() is not None:
        return p.returncode
    try:
        p.send_signal(sig)
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout=10)
    except ProcessLookupError:
        pass
    return p.returncode


class IbSim:
    """One ibsim instance with its own socket name and working directory."""

    def __init__(self, topology_path, workdir=None, sockname=None):
        self.topology = os.path.abspath(topology_path)
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix="fb-ibsim-")
            fbtest._workdirs.append(workdir)  # a passing fbtest.run() removes it
        self.workdir = workdir
        os.makedirs(self.workdir, exist_ok=True)
        # Unique across parallel test processes and across sims in one process.
        self.sockname = sockname or f"fbsim{os.getpid()}x{len(_sims)}x{int(time.time() * 1000) % 100000}"
        self.ctl_path = os.path.join(self.workdir, "ctl")
        self.out_path = os.path.join(self.workdir, "sim.out")
        self.osm_log = os.path.join(self.workdir, "osm.log")
        self.proc = None
        self.clients = []  # every client process started through this sim
        self._ctl_fd = -1
        self.start_s = None  # how long start() took

    # ---- lifecycle -------------------------------------------------------

    def start(self, timeout=10.0):
        if not os.path.exists(self.ctl_path):
            os.mkfifo(self.ctl_path)
        # Read-write: never blocks on open, and ibsim never sees EOF.
        self._ctl_fd = os.open(self.ctl_path, os.O_RDWR | os.O_CLOEXEC)
        out = open(self.out_path, "ab")
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env["IBSIM_SOCKNAME"] = self.sockname
        t0 = time.monotonic()
        self.proc = subprocess.Popen([IBSIM, "-s", self.topology], stdin=self._ctl_fd,
                                     stdout=out, stderr=subprocess.STDOUT, cwd=self.workdir, env=env)
        out.close()
        _sims.append(self)
        fbtest.at_exit(self.stop)
        needle = f"@{self.sockname}:ctl"
        deadline = t0 + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ibsim exited with {self.proc.returncode}: {self.output()[-2000:]}")
            with open("/proc/net/unix") as f:
                if any(line.rstrip().split(" ")[-1].startswith(needle) for line in f):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"ibsim not ready within {timeout}s: {self.output()[-2000:]}")
            time.sleep(0.005)
        self.start_s = time.monotonic() - t0
        return self

    def stop(self):
        """Stop every tracked client (SIGTERM, then SIGKILL), then ibsim.
        Returns ibsim's exit status. Safe to call twice."""
        for p in reversed(self.clients):
            _stop_proc(p)
        if self.proc is not None and self.proc.poll() is None:
            _stop_proc(self.proc, timeout=5.0)
        if self._ctl_fd >= 0:
            os.close(self._ctl_fd)
            self._ctl_fd = -1
        return self.proc.returncode if self.proc else None

    def __enter__(self):
        return self.start() if self.proc is None else self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- clients ---------------------------------------------------------

    def env(self, host, base=None):
        """The environment for a client attached at `host` (a node description)."""
        e = dict(os.environ if base is None else base)
        pre = e.get("LD_PRELOAD", "")
        e["LD_PRELOAD"] = UMAD2SIM + (":" + pre if pre else "")
        e["IBSIM_SOCKNAME"] = self.sockname
        e["SIM_HOST"] = host
        e["OSM_CACHE_DIR"] = self.workdir  # opensm: guid2lid etc. here, not /var/cache
        return e

    def sanitizer_env(self):
        """ASAN_OPTIONS/LSAN_OPTIONS for an ASan-built client under the shim
        (use for that process only):
        - verify_asan_link_order=0: the shim is preloaded ahead of the ASan
          runtime, which ASan otherwise refuses at start-up;
        - interceptor_via_lib:libumad2sim.so: the shim's read() copies the
          caller's whole buffer (umad_recv asks 64+256 bytes) out of a
          smaller packet it allocated (288 bytes), a heap-buffer-overflow
          inside the shim (libumad2sim0 0.10), not in the client;
        - leak:libumad2sim.so: what the shim allocates and never frees."""
        supp = os.path.join(self.workdir, "asan.supp")
        if not os.path.exists(supp):
            with open(supp, "w") as f:
                f.write("interceptor_via_lib:libumad2sim.so\n")
        lsupp = os.path.join(self.workdir, "lsan.supp")
        if not os.path.exists(lsupp):
            with open(lsupp, "w") as f:
                f.write("leak:libumad2sim.so\n")

        def merge(name, extra):
            cur = os.environ.get(name, "")
            return ":".join(x for x in (cur, extra) if x)
        return {"ASAN_OPTIONS": merge("ASAN_OPTIONS", f"verify_asan_link_order=0:suppressions={supp}"),
                "LSAN_OPTIONS": merge("LSAN_OPTIONS", f"suppressions={lsupp}")}

    def live_clients(self):
        return [p for p in self.clients if p.poll() is None]

    def spawn(self, args, host, env_extra=None, stdout=None, stderr=None, **kw):
        """Start a client under the shim, tracked (stopped before ibsim).
        cwd is the workdir: the shim writes ./sys-<pid> there."""
        if len(self.live_clients()) >= MAX_CLIENTS:
            raise RuntimeError(f"ibsim takes at most {MAX_CLIENTS} clients")
        env = self.env(host)
        if env_extra:
            env.update(env_extra)
        p = subprocess.Popen(args, env=env, cwd=self.workdir, stdout=stdout, stderr=stderr, **kw)
        self.clients.append(p)
        return p

    def run(self, args, host="h2", timeout=30.0):
        """Run a client to completion (ibstat, smpquery, ...); returns
        (returncode, stdout+stderr text). Killed if it overruns."""
        p = self.spawn(args, host, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            raise AssertionError(f"{args} did not finish within {timeout}s: {out.decode(errors='replace')[-2000:]}")
        return p.returncode, out.decode(errors="replace")

    def run_sm_once(self, host="h1", timeout=30.0):
        """opensm -o: assign LIDs, program routes, bring ports to Active, exit.
        Returns the seconds it took."""
        t0 = time.monotonic()
        rc, out = self.run([OPENSM, "-o", "-f", self.osm_log, "--dump_files_dir", self.workdir],
                           host=host, timeout=timeout)
        if rc != 0:
            raise RuntimeError(f"opensm -o exited with {rc}: {out[-2000:]}\n(log: {self.osm_log})")
        return time.monotonic() - t0

    # ---- console ---------------------------------------------------------

    def output(self):
        return fbtest.read_text(self.out_path)

    def console(self, cmd, timeout=5.0):
        """Send one console line and wait until ibsim has handled it (its
        next prompt). Returns what ibsim printed for it."""
        line = cmd.rstrip("\n") + "\n"
        if "\n" in cmd.rstrip("\n") or len(line) > CONSOLE_MAX:
            raise ValueError(f"console line must be one line of at most {CONSOLE_MAX} chars: {cmd!r}")
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError("ibsim is not running")
        before = self.output()
        n = before.count("sim> ")
        os.write(self._ctl_fd, line.encode())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.output()
            if now.count("sim> ") > n:
                return now[len(before):]
            time.sleep(0.002)
        raise RuntimeError(f"ibsim did not answer {cmd!r} within {timeout}s")

    def unlink(self, sw, port):
        """Take the link at sw[port] down (both ends go Down/Polling)."""
        return self.console(f'Unlink "{sw}"[{port}]')

    def relink(self, sw, port):
        """Restore it: the port goes to Init, and Active after an SM sweep."""
        return self.console(f'ReLink "{sw}"[{port}]')

    def perf_set(self, sw, port, counter, value):
        """Set a counter to an absolute value, e.g.
        perf_set("leaf1", 3, "PortCounters.SymbolErrorCounter", 7)."""
        if "." not in counter:
            counter = "PortCounters." + counter
        return self.console(f'PerformanceSet "{sw}"[{port}] {counter}={int(value)}')

    def error(self, sw, pct, attr=None):
        """Drop pct% of the MADs the switch answers (all of them at 100);
        attr limits it to one attribute (21 = PortInfo). Whole switch only:
        per port did nothing."""
        return self.console(f'Error "{sw}" {int(pct)}' + (f" {int(attr)}" if attr is not None else ""))

    def attached(self):
        """ibsim's list of attached clients (the "Attached" command)."""
        return self.console("Attached")
