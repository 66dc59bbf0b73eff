"""A real Slurm cluster on loopback for tests: munged, slurmctld and one
slurmd per node, all in a temp dir, started and stopped by pid.

    c = SlurmCluster(nodes=8).start()       # node001..node008 idle
    c.scontrol("update", "NodeName=node005", "State=DRAIN", "Reason=maint")
    c.node("node005")                       # {"state": "IDLE+DRAIN", "reason": "maint", ...}
    c.stop_ctld(); c.start_ctld()           # an outage, state kept
    c.set_plugstack(["required /x/spank_y.so a=1"])  # next steps load it (made with plugstack=)
    c.stop()

Facts this relies on (measured, see /work/shared/notes/slurm.md):
- munged refuses a key dir of mode 700; every client finds it through
  AuthInfo=socket=... in slurm.conf, and every client reads SLURM_CONF.
- Several slurmd on one host work when each node has its own port.
- Nodes defined without a running slurmd (nodes > slurmds) stay UNKNOWN;
  they accept DRAIN (the 100-node benchmark uses that). At start every such
  node is set DOWN then RESUME so that later UNDRAINs return rc 0.
- PID 1 here does not reap: a killed daemon stays a zombie, so "gone" means
  no such pid or state Z.

Run under /usr/bin/python3. Every daemon is killed at interpreter exit even
when a test failed; a passing run's temp dir is removed by fbtest.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import fbtest

SLURMCTLD = "/usr/sbin/slurmctld"
SLURMD = "/usr/sbin/slurmd"
MUNGED = "/usr/sbin/munged"
SCONTROL = "/usr/bin/scontrol"

_clusters = []


def available():
    """None if the Slurm and munge daemons are installed, else what is missing."""
    missing = [p for p in (SLURMCTLD, SLURMD, MUNGED, SCONTROL) if not os.path.exists(p)]
    return ", ".join(missing) if missing else None


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _free_port_range(n):
    """n consecutive free ports (slurm.conf's Port=[a-b] needs a range),
    below the kernel's ephemeral range: there, thousands of client
    connections (a load test's, still open or in TIME_WAIT) never take them
    (seen: 50 random tries in the ephemeral range, each with a taken port).
    Probed as slurmd binds them, with SO_REUSEADDR."""
    import random
    hi = _ephemeral_low()
    lo = 10000 if hi > 10000 + 8 * n else 1024
    for _ in range(200):
        base = random.randrange(lo, hi - n)
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError(f"no {n} consecutive free ports in {lo}-{hi}")


def _pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _wait_pid_file(path, timeout=10.0):
    """The pid a daemon wrote after it forked into the background: the
    parent returns before the child has written it, so wait for it."""
    deadline = time.monotonic() + timeout
    while True:
        pid = _read_pid(path)
        if pid and _pid_alive(pid):
            return pid
        if time.monotonic() > deadline:
            raise RuntimeError(f"no live pid in {path} within {timeout}s")
        time.sleep(0.02)


def _kill_pid(pid, sig=signal.SIGTERM, timeout=10.0):
    if not pid or not _pid_alive(pid):
        return True
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_alive(pid):
            return True
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return False


def node_names(n, prefix="node"):
    return [f"{prefix}{i:03d}" for i in range(1, n + 1)]


class SlurmCluster:
    """munged + slurmctld + `slurmds` slurmd for node001..node<nodes>."""

    def __init__(self, nodes=8, slurmds=None, workdir=None, plugstack=None, extra_conf=""):
        self.nodes = node_names(nodes)
        self.slurmds = self.nodes[: (nodes if slurmds is None else slurmds)]
        self.workdir = workdir or tempfile.mkdtemp(prefix="fb-slurm-")
        self.plugstack = plugstack  # lines of plugstack.conf, or None
        self.extra_conf = extra_conf
        self.ctld_port = fbtest.free_port()
        self.slurmd_port = fbtest.free_port()
        self.node_port0 = _free_port_range(len(self.nodes))
        self.conf = os.path.join(self.workdir, "etc", "slurm.conf")
        self.pids = {}  # daemon -> pid, read as each starts: stop() needs no files
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        fbtest._workdirs.append(self.workdir)

    # ---- paths ------------------------------------------------------------

    def path(self, *p):
        return os.path.join(self.workdir, *p)

    def log(self, name="slurmctld"):
        return fbtest.read_text(self.path("log", f"{name}.log"))

    # ---- start ------------------------------------------------------------

    def _write_conf(self):
        for d in ("munge", "etc", "state", "spool", "log", "run"):
            os.makedirs(self.path(d), exist_ok=True)
        # munged wants execute permission for all on the socket's directories
        # (mkdtemp makes 700), and refuses a key dir of 700.
        os.chmod(self.workdir, 0o755)
        os.chmod(self.path("munge"), 0o755)
        lo, hi = self.node_port0, self.node_port0 + len(self.nodes) - 1
        nodes = f"node[001-{len(self.nodes):03d}]"
        lines = [
            "ClusterName=fbtest",
            f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={self.path('munge', 'munge.sock')}",
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool')}/%n",
            f"SlurmdPidFile={self.path('run')}/slurmd-%n.pid",
            f"SlurmctldPidFile={self.path('run', 'slurmctld.pid')}",
            f"SlurmctldLogFile={self.path('log', 'slurmctld.log')}",
            f"SlurmdLogFile={self.path('log')}/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "MpiDefault=none", "ReturnToService=2", "SlurmdTimeout=300", "MailProg=/bin/true",
            f"NodeName={nodes} NodeAddr=127.0.0.1 Port=[{lo}-{hi}] CPUs=2 RealMemory=1000 State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        if self.plugstack is not None:
            ps = self.path("etc", "plugstack.conf")
            with open(ps, "w") as f:
                f.write("\n".join(self.plugstack) + "\n")
            lines.append(f"PlugStackConfig={ps}")
        if self.extra_conf:
            lines.append(self.extra_conf)
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _start_munge(self):
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        m = self.path("munge")
        subprocess.run([MUNGED, f"--key-file={key}", f"--socket={m}/munge.sock",
                        f"--log-file={m}/munged.log", f"--pid-file={m}/munged.pid",
                        f"--seed-file={m}/munged.seed"], check=True, timeout=30)
        self.pids["munged"] = _wait_pid_file(f"{m}/munged.pid")

    def start_ctld(self, clean=False, timeout=30.0):
        """Start slurmctld (clean: -c, no saved state) and wait until it answers."""
        args = [SLURMCTLD, "-f", self.conf] + (["-c"] if clean else [])
        subprocess.run(args, check=True, env=self.env, timeout=30)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = subprocess.run([SCONTROL, "ping"], env=self.env, capture_output=True, text=True,
                               timeout=30)
            if "is UP" in r.stdout:
                self.pids["slurmctld"] = _wait_pid_file(self.path("run", "slurmctld.pid"))
                return
            time.sleep(0.1)
        raise RuntimeError(f"slurmctld not up within {timeout}s:\n{self.log()[-3000:]}")

    def stop_ctld(self):
        pid = self.pids.pop("slurmctld", 0) or _read_pid(self.path("run", "slurmctld.pid"))
        if not _kill_pid(pid):
            raise RuntimeError("slurmctld did not stop on SIGTERM")

    def _start_slurmd(self, n):
        os.makedirs(self.path("spool", n), exist_ok=True)
        subprocess.run([SLURMD, "-f", self.conf, "-N", n], check=True, env=self.env, timeout=30)
        self.pids[f"slurmd-{n}"] = _wait_pid_file(self.path("run", f"slurmd-{n}.pid"))

    def start(self, timeout=60.0):
        missing = available()
        assert missing is None, f"Slurm not installed ({missing}): run deploy/install-deps.sh"
        _clusters.append(self)
        fbtest.at_exit(self.stop)
        self._write_conf()
        self._start_munge()
        self.start_ctld(clean=True)
        for n in self.slurmds:
            self._start_slurmd(n)
        want = set(self.slurmds)
        deadline = time.monotonic() + timeout
        while True:
            idle = set(self.sinfo_nodes("idle"))
            if want <= idle:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"nodes not idle within {timeout}s: have {sorted(idle)}")
            time.sleep(0.1)
        # Nodes with no slurmd: make later UNDRAINs clean (see the module doc).
        rest = [n for n in self.nodes if n not in want]
        if rest:
            hl = self.hostlist(rest)
            self.scontrol("update", f"NodeName={hl}", "State=DOWN", "Reason=init")
            self.scontrol("update", f"NodeName={hl}", "State=RESUME")
        return self

    def stop(self):
        if self not in _clusters:
            return
        _clusters.remove(self)
        # slurmds and slurmctld first, munged (which they need) last
        for name in sorted(self.pids, key=lambda k: k == "munged"):
            _kill_pid(self.pids[name])
        self.pids = {}

    def set_plugstack(self, lines):
        """Replace plugstack.conf (atomically) on a running cluster. srun,
        sbatch and every slurmstepd read it afresh: a step started after the
        call runs the new lines, and so does slurmd's SPANK epilog of a job
        that ends after it (measured on 22.05). slurmd itself reads it only
        at start. Needs a cluster made with plugstack= (slurm.conf then names
        the file)."""
        assert self.plugstack is not None, "SlurmCluster(plugstack=[...]) names the file"
        self.plugstack = list(lines)
        ps = self.path("etc", "plugstack.conf")
        with open(ps + ".tmp", "w") as f:
            f.write("\n".join(self.plugstack) + "\n")
        os.replace(ps + ".tmp", ps)

    # ---- queries and commands ----------------------------------------------

    def scontrol(self, *args, check=True):
        r = subprocess.run([SCONTROL, *args], env=self.env, capture_output=True, text=True,
                           timeout=60)
        if check and r.returncode != 0:
            raise RuntimeError(f"scontrol {' '.join(args)}: rc {r.returncode}: {r.stderr.strip()}")
        return r

    def run(self, *args, check=True, timeout=60):
        """Any Slurm client (sinfo, squeue, sbatch, srun, ...) against this cluster."""
        r = subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=timeout,
                           cwd=self.workdir)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: rc {r.returncode}: {r.stderr.strip()}")
        return r

    def hostlist(self, names):
        r = self.scontrol("show", "hostlist", ",".join(names))
        return r.stdout.strip()

    def sinfo_nodes(self, state):
        r = self.run("sinfo", "-h", "-N", "-t", state, "-o", "%N", check=False)
        return [x for x in r.stdout.split() if x]

    def nodes_info(self):
        """{name: {"state": "IDLE+DRAIN", "reason": "..."}} from `scontrol show node -o`."""
        r = self.scontrol("show", "node", "-o")
        out = {}
        for line in r.stdout.splitlines():
            m = re.match(r"NodeName=(\S+)", line)
            if not m:
                continue
            st = re.search(r"\bState=(\S+)", line)
            # Reason is the last field that may hold spaces: up to " Reason..=[" or end.
            rs = re.search(r"\bReason=(.*?)(?: \[[^\]]*\])?(?: \w+=|$)", line)
            out[m.group(1)] = {"state": st.group(1) if st else "",
                               "reason": rs.group(1).strip() if rs else ""}
        return out

    def node(self, name):
        return self.nodes_info()[name]

    def drained(self):
        """Names of nodes whose state has the DRAIN flag."""
        return sorted(n for n, i in self.nodes_info().items() if "DRAIN" in i["state"])

    def wait_node(self, name, pred, timeout, what):
        deadline = time.monotonic() + timeout
        info = None
        while time.monotonic() < deadline:
            info = self.node(name)
            if pred(info):
                return info
            time.sleep(0.02)
        raise AssertionError(f"{name}: no {what} within {timeout}s; last {info}")

    def sbatch(self, *args):
        """Submit (output files land in the cluster's workdir); return the job id."""
        r = self.run("sbatch", "--parsable", "-D", self.workdir, *args)
        return r.stdout.strip().split(";")[0]

    def job_state(self, jobid):
        r = self.run("squeue", "-h", "-j", jobid, "-o", "%T", check=False)
        return r.stdout.strip()

    def wait_job(self, jobid, state="RUNNING", timeout=30.0):
        deadline = time.monotonic() + timeout
        st = ""
        while time.monotonic() < deadline:
            st = self.job_state(jobid)
            if st == state:
                return
            time.sleep(0.1)
        raise AssertionError(f"job {jobid} not {state} within {timeout}s (state {st!r})")

    def cancel_all(self):
        self.run("scancel", "--full", "-u", "root", check=False)
