"""Real net-snmp peers for the fabricbus-agent-snmp tests, in network
namespaces these helpers create (needs root, snmpd and snmptrap).

- `run_in_own_netns(argv)`: re-runs the test script inside a fresh
  namespace `fbtsnmp-main` (its own loopback: broker, agent and the test all
  live there) and deletes every `fbtsnmp-*` namespace afterwards, killing
  what still runs in them, pass or fail. No address is ever added outside
  these namespaces. `enter_own_netns(__name__)`, first thing in a test
  script: the same, exiting with the inner run's status.
- `SnmpSwitch`: a switch stand-in. Namespace `fbtsnmp-<name>` holds snmpd
  and veth pairs `swpN` (the switch port) <-> `swpNh` (the cable's far
  end); a veth `fbmN` (main namespace, 10.77.N.1) <-> `mgmt0` (switch,
  10.77.N.2) is the management network. `ip link set swpNh down` takes
  swpN's carrier away with ifAdminStatus up: snmpd sends a real linkDown.
  snmpd gets `linkUpDownNotifications yes` and, because that monitor samples
  only every 60 s, the same two monitors at 1 s (same events, so the traps
  are the same linkDown/linkUp; a late 60 s sample may repeat one).
- `HostPort`: a "host" namespace `fbtsnmp-<host>` cabled to a switch port
  through a patch panel: host `eth0` <-> `pNa` [bridge in `fbtsnmp-patch`]
  `pNb` <-> switch `swpN`. The switch port is routed (10.78.N.1/30, the host
  10.78.N.2/30), so snmpd's ipNetToPhysicalTable ties the host's MAC to
  swpN's ifIndex once the host has sent it a packet. `ip link set pNb down`
  pulls the cable at the switch's end: swpN loses its carrier (snmpd sends
  linkDown) while the host's own eth0 stays up, so only the switch sees it.
  A management veth `fbhN` (main, 10.79.N.1) <-> `mgmt0` (host, 10.79.N.2)
  lets a node agent in the host namespace reach the broker.
- `Agent`: fabricbus-agent-snmp with a mode-600 config; `stats()` asks for
  its stats line (SIGUSR1) and parses it.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from fbtest import BUILD, _workdirs, track

PREFIX = "fbtsnmp"
MAIN_NS = PREFIX + "-main"
AGENT = os.path.join(BUILD, "agents", "snmp", "fabricbus-agent-snmp")
FLOOD = os.path.join(BUILD, "tests", "snmp_flood")
SNMPD = "/usr/sbin/snmpd"
ENGINE = "0x80001f8804666162726963"  # the switches' snmpEngineID (v3 traps)
INTERNAL = "internalUser"  # snmpd's own user for its DisMan monitors
LINK_UP_DOWN_FAST = [
    'monitor -r 1 -S -e _linkUp "linkUpFast" .1.3.6.1.2.1.2.2.1.8 != 2',
    'monitor -r 1 -S -e _linkDown "linkDownFast" .1.3.6.1.2.1.2.2.1.8 == 2',
]


def ip(*args, ns=None, check=True):
    cmd = ["ip"] + (["-n", ns] if ns else []) + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


def our_namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(PREFIX + "-")]


def delete_namespace(ns):
    """Kill what still runs in namespace ns (by pid), then delete it."""
    pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                          text=True).stdout.split()
    for p in pids:
        try:
            os.kill(int(p), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    ip("netns", "del", ns, check=False)


def delete_namespaces():
    """Every fbtsnmp-* namespace."""
    for ns in our_namespaces():
        delete_namespace(ns)


def run_in_own_netns(argv):
    """None when already inside MAIN_NS; else run argv there and return its
    exit status, deleting the namespaces afterwards."""
    if os.environ.get("FBT_SNMP_NS") == MAIN_NS:
        return None
    if os.geteuid() != 0:
        print("FAIL test_snmp needs root to create network namespaces", flush=True)
        return 1
    delete_namespaces()  # a previous run killed hard
    try:
        ip("netns", "add", MAIN_NS)
        ip("link", "set", "lo", "up", ns=MAIN_NS)
        env = dict(os.environ, FBT_SNMP_NS=MAIN_NS)
        return subprocess.run(["ip", "netns", "exec", MAIN_NS, sys.executable] + argv,
                              env=env).returncode
    finally:
        delete_namespaces()


def enter_own_netns(name):
    """Called with the test script's __name__ before it imports what the
    namespace must see: run as a script outside MAIN_NS, it runs itself in
    there (run_in_own_netns) and exits with that run's status."""
    if name != "__main__":
        return
    status = run_in_own_netns(sys.argv)
    if status is not None:
        sys.exit(status)


class SnmpSwitch:
    """snmpd in its own namespace, with veth ports and a management link."""

    def __init__(self, name, index, ports=("swp1", "swp2"), trap_port=None, v3=None,
                 community="public", poll_user=None, ns=None, mgmt_ns=None):
        """trap_port: where the agent listens (on 10.77.index.1); None: no
        traps. v3: (user, authpass, privpass) for an authPriv trapsess
        instead of the v2c trap2sink. poll_user: (user, authpass, privpass)
        of a read-only SHA/AES authPriv USM user (SNMPv3 polling).
        ns: the switch's namespace (default fbtsnmp-<name>); mgmt_ns: the
        namespace holding the management end fbm<index> (default: ours;
        deploy/demo.py keeps the host's own namespace untouched)."""
        self.poll_user = poll_user
        self.name, self.index, self.ports = name, index, list(ports)
        self.ns = ns or f"{PREFIX}-{name}"
        self.mgmt_ns = mgmt_ns
        self.addr = f"10.77.{index}.2"
        self.agent_side = f"10.77.{index}.1"
        self.trap_port, self.v3, self.community = trap_port, v3, community
        self.workdir = tempfile.mkdtemp(prefix=f"fbt-snmpd-{name}-")
        _workdirs.append(self.workdir)
        self.proc = None

    def _conf(self):
        lines = [f"agentAddress udp:{self.addr}:161",
                 f"rocommunity {self.community} default",
                 f"createUser {INTERNAL} SHA internalpass1",
                 f"iquerySecName {INTERNAL}",
                 f"rouser {INTERNAL}"]
        if self.poll_user:
            user, a, x = self.poll_user
            lines += [f"createUser {user} SHA {a} AES {x}", f"rouser {user} priv"]
        if self.trap_port and self.v3:
            user, a, x = self.v3
            lines.append(f"trapsess -v 3 -e {ENGINE} -u {user} -a SHA -A {a} -x AES -X {x} "
                         f"-l authPriv {self.agent_side}:{self.trap_port}")
        elif self.trap_port:
            lines.append(f"trap2sink {self.agent_side}:{self.trap_port} {self.community}")
        if self.trap_port:
            lines.append("linkUpDownNotifications yes")
            lines += LINK_UP_DOWN_FAST
        return "\n".join(lines) + "\n"

    def start(self):
        ns = self.ns
        ip("netns", "add", ns)
        ip("link", "set", "lo", "up", ns=ns)
        mg = f"fbm{self.index}"
        ip("link", "add", mg, "type", "veth", "peer", "name", "mgmt0", "netns", ns,
           ns=self.mgmt_ns)
        ip("addr", "add", f"{self.agent_side}/24", "dev", mg, ns=self.mgmt_ns)
        ip("link", "set", mg, "up", ns=self.mgmt_ns)
        ip("addr", "add", f"{self.addr}/24", "dev", "mgmt0", ns=ns)
        ip("link", "set", "mgmt0", "up", ns=ns)
        for p in self.ports:
            ip("link", "add", p, "type", "veth", "peer", "name", p + "h", ns=ns)
            ip("link", "set", p, "up", ns=ns)
            ip("link", "set", p + "h", "up", ns=ns)
        return self.start_snmpd()

    def start_snmpd(self):
        conf = os.path.join(self.workdir, "snmpd.conf")
        with open(conf, "w") as f:
            f.write(self._conf())
        persist = os.path.join(self.workdir, "persist")
        os.makedirs(persist, exist_ok=True)
        self.log_path = os.path.join(self.workdir, "snmpd.log")
        env = dict(os.environ, SNMP_PERSISTENT_DIR=persist, MIBS="")
        self.proc = track(subprocess.Popen(
            ["ip", "netns", "exec", self.ns, SNMPD, "-f", "-C", "-c", conf, "-Lf", self.log_path],
            env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"snmpd {self.name} exited: {self.log()[-2000:]}")
            here = ["ip", "netns", "exec", self.mgmt_ns] if self.mgmt_ns else []
            r = subprocess.run(here + ["snmpget", "-v2c", "-c", self.community, "-t", "0.3", "-r", "0",
                                "-On", self.addr, "1.3.6.1.2.1.1.3.0"], capture_output=True,
                               text=True, env=dict(os.environ, MIBS=""))
            if r.returncode == 0:
                time.sleep(1.5)  # the 1 s monitors take their first (silent) sample
                return self
            time.sleep(0.2)
        raise RuntimeError(f"snmpd {self.name} never answered: {self.log()[-2000:]}")

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def engine_id(self):
        """snmpd's snmpEngineID as 0xHEX (read over v2c)."""
        r = subprocess.run(["snmpget", "-v2c", "-c", self.community, "-On", self.addr,
                            "1.3.6.1.6.3.10.2.1.1.0"], capture_output=True, text=True,
                           env=dict(os.environ, MIBS=""), check=True)
        return "0x" + "".join(r.stdout.split("Hex-STRING:", 1)[1].split()).lower()

    def ifindex(self, port):
        out = ip("-o", "link", "show", "dev", port, ns=self.ns).stdout
        return int(out.split(":", 1)[0])

    def cable(self, port, up):
        """Plug (up) or pull (down) the cable of a port: its far end."""
        ip("link", "set", port + "h", "up" if up else "down", ns=self.ns)

    def admin(self, port, up):
        """`ip link set swpN up|down` on the port itself: ifAdminStatus."""
        ip("link", "set", port, "up" if up else "down", ns=self.ns)

    def restart_snmpd(self):
        """A switch whose SNMP agent restarts: sysUpTime starts over."""
        self.stop_snmpd()
        return self.start_snmpd()

    def stop_snmpd(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def stop(self):
        self.stop_snmpd()
        ip("link", "del", f"fbm{self.index}", ns=self.mgmt_ns, check=False)
        ip("netns", "del", self.ns, check=False)


PATCH_NS = PREFIX + "-patch"


class HostPort:
    """A host namespace cabled to switch port swp<n> of sw through the
    patch namespace (see the module doc)."""

    def __init__(self, sw, n, host):
        self.sw, self.n, self.host = sw, n, host
        self.ns = f"{PREFIX}-{host}"
        self.port = f"swp{n}"
        self.patch = f"p{n}b"  # the patch cord's switch end
        self.mgmt_main, self.mgmt_host = f"10.79.{n}.1", f"10.79.{n}.2"

    def start(self):
        if PATCH_NS not in our_namespaces():
            ip("netns", "add", PATCH_NS)
            ip("link", "set", "lo", "up", ns=PATCH_NS)
        ns, pn, n = self.ns, PATCH_NS, self.n
        ip("netns", "add", ns)
        ip("link", "set", "lo", "up", ns=ns)
        ip("link", "add", "eth0", "type", "veth", "peer", "name", f"p{n}a", "netns", pn, ns=ns)
        ip("link", "add", self.port, "type", "veth", "peer", "name", self.patch, "netns", pn,
           ns=self.sw.ns)
        ip("link", "add", f"br{n}", "type", "bridge", ns=pn)
        for dev in (f"p{n}a", self.patch):
            ip("link", "set", dev, "master", f"br{n}", ns=pn)
            ip("link", "set", dev, "up", ns=pn)
        ip("link", "set", f"br{n}", "up", ns=pn)
        ip("addr", "add", f"10.78.{n}.1/30", "dev", self.port, ns=self.sw.ns)
        ip("link", "set", self.port, "up", ns=self.sw.ns)
        ip("addr", "add", f"10.78.{n}.2/30", "dev", "eth0", ns=ns)
        ip("link", "set", "eth0", "up", ns=ns)
        ip("link", "add", f"fbh{n}", "type", "veth", "peer", "name", "mgmt0", "netns", ns)
        ip("addr", "add", f"{self.mgmt_main}/30", "dev", f"fbh{n}")
        ip("link", "set", f"fbh{n}", "up")
        ip("addr", "add", f"{self.mgmt_host}/30", "dev", "mgmt0", ns=ns)
        ip("link", "set", "mgmt0", "up", ns=ns)
        return self

    def mac(self):
        out = ip("-o", "link", "show", "dev", "eth0", ns=self.ns).stdout
        return out.split("link/ether", 1)[1].split()[0]

    def announce(self, timeout=10):
        """The host sends the switch a datagram: the switch's neighbour table
        (ipNetToPhysicalTable) learns the host's MAC on swp<n>."""
        deadline = time.monotonic() + timeout
        mac = self.mac()
        while time.monotonic() < deadline:
            subprocess.run(["ip", "netns", "exec", self.ns, sys.executable, "-c",
                            "import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); "
                            f"s.sendto(b'x', ('10.78.{self.n}.1', 9))"], check=True)
            out = ip("neigh", "show", "dev", self.port, ns=self.sw.ns).stdout
            if mac in out:
                return
            time.sleep(0.2)
        raise AssertionError(f"switch never learned {mac} on {self.port}")

    def cable(self, up):
        """Plug (up) or pull (down) the patch cord at the switch's end."""
        ip("link", "set", self.patch, "up" if up else "down", ns=PATCH_NS)

    def stop(self):
        """Its namespace and management link (and the patch namespace, once
        no host is left in it)."""
        ip("link", "del", f"fbh{self.n}", check=False)
        delete_namespace(self.ns)
        if not [ns for ns in our_namespaces() if ns.startswith(PREFIX + "-h")]:
            delete_namespace(PATCH_NS)


STATS_RE = re.compile(r"stats: (.*)$")


class Agent:
    """fabricbus-agent-snmp with a config file of the given lines."""

    def __init__(self, broker_addr, conf_lines, args=(), agent_id="snmp-test"):
        self.workdir = tempfile.mkdtemp(prefix="fbt-snmp-agent-")
        _workdirs.append(self.workdir)
        self.conf = os.path.join(self.workdir, "agent.conf")
        fd = os.open(self.conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(conf_lines) + "\n")
        self.log_path = os.path.join(self.workdir, "agent.log")
        self.args = [AGENT, "--broker", broker_addr, "--agent-id", agent_id,
                     "--config", self.conf] + list(args)
        self.proc = None

    def start(self, ready="reporting fabric"):
        log = open(self.log_path, "ab")
        self.proc = track(subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 15
        while ready not in self.log():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"agent did not start: {self.log()[-3000:]}")
            time.sleep(0.05)
        return self

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stats(self, timeout=5.0):
        """The counters of a fresh stats line (SIGUSR1), as a dict of ints."""
        before = self.log().count("stats:")
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = [l for l in self.log().splitlines() if "stats:" in l]
            if len(lines) > before:
                return {k: int(v) for k, v in
                        (kv.split("=") for kv in STATS_RE.search(lines[-1]).group(1).split())}
            time.sleep(0.05)
        raise AssertionError(f"no stats line: {self.log()[-2000:]}")

    def stop(self):
        from fbtest import stop_gracefully
        return stop_gracefully(self.proc, "fabricbus-agent-snmp") if self.proc else 0
