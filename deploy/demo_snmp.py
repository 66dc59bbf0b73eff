"""The demo's Ethernet part: one snmpd-backed switch on veth links, watched by
fabricbus-agent-snmp (used by deploy/demo.py).

Two network namespaces, created here and deleted on every exit:
- fbdemo-sw1, the switch: snmpd (tests/lib/snmp.py SnmpSwitch: linkDown /
  linkUp traps within about 1 s) and veth ports swp1..swp4, each cabled to
  its far end swpNh in the same namespace; `ip link set swpNh down` takes
  swpN's carrier away, so snmpd sees a real link failure;
- fbdemo-mgmt, the management station: the SNMP agent, reaching the switch
  (10.77.1.2) over the management veth fbm1 (10.77.1.1) <-> mgmt0.

The host's own namespace gets no interface, address or route. The agent
reaches fabricbusd (127.0.0.1 in the host's namespace) through a TCP relay
this module runs: sockets listening on 127.0.0.1:AGENT_PORT and :HTTP_PORT
inside fbdemo-mgmt (opened by a thread that setns()'d there), each
connection copied to the same port on the host's loopback.

Needs root with CAP_SYS_ADMIN (ip netns), snmpd and the SNMP agent built;
start() returns None when it is up, or the reason it skipped it.
"""
import ctypes
import os
import shutil
import socket
import subprocess
import threading

import snmp
from fbtest import BUILD, read_text

SW_NS = "fbdemo-sw1"
MGMT_NS = "fbdemo-mgmt"
NAMESPACES = (SW_NS, MGMT_NS)
SWITCH = "sw1"
PORTS = ("swp1", "swp2", "swp3", "swp4")
TRAP_PORT = 1162
AGENT_ID = "snmp-demo"
FABRIC = "ETH"
AGENT = os.path.join(BUILD, "agents", "snmp", "fabricbus-agent-snmp")
CLONE_NEWNET = 0x40000000


def missing():
    """Why the Ethernet part cannot run here, or None."""
    if not shutil.which("ip"):
        return "no ip command (iproute2)"
    if not os.path.exists(snmp.SNMPD):
        return f"{snmp.SNMPD} not installed (deploy/install-deps.sh installs snmpd)"
    if not os.access(AGENT, os.X_OK):
        return f"{AGENT} not built (libsnmp-dev missing at meson setup?)"
    return None


def remove_namespaces():
    """Kill what runs in the demo's namespaces and delete them (their veths
    go with them). Safe when they are not there."""
    for ns in NAMESPACES:
        if os.path.exists(os.path.join("/run/netns", ns)):
            snmp.delete_namespace(ns)


def link(port, up):
    """Plug (up) or pull (down) the cable of a switch port of the running
    demo: its far end swpNh. Returns an error text or None."""
    if port not in PORTS:
        return f"{port!r} is not one of {', '.join(PORTS)}"
    if not os.path.exists(os.path.join("/run/netns", SW_NS)):
        return f"no network namespace {SW_NS}: is the demo running (with its SNMP switch)?"
    r = snmp.ip("link", "set", port + "h", "up" if up else "down", ns=SW_NS, check=False)
    if r.returncode != 0:
        return r.stderr.strip() or f"ip exited {r.returncode}"
    return None


def _listen_in_netns(ns, port):
    """A TCP socket listening on 127.0.0.1:port inside namespace ns. Only the
    short-lived thread that opens it enters ns (setns changes the calling
    thread only); the socket keeps its namespace after the thread ends."""
    got = {}

    def run():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(os.path.join("/run/netns", ns), os.O_RDONLY | os.O_CLOEXEC)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    e = ctypes.get_errno()
                    raise OSError(e, f"setns({ns}): {os.strerror(e)}")
            finally:
                os.close(fd)
            got["sock"] = socket.create_server(("127.0.0.1", port))
        except OSError as e:
            got["err"] = e
    t = threading.Thread(target=run, name=f"netns-{ns}")
    t.start()
    t.join()
    if "err" in got:
        raise got["err"]
    return got["sock"]


class Relay:
    """127.0.0.1:port in a namespace -> 127.0.0.1:port on the host."""

    def __init__(self, ns, port):
        self.port = port
        self.lsock = _listen_in_netns(ns, port)
        self.conns = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return  # closed by stop()
            try:
                up = socket.create_connection(("127.0.0.1", self.port), timeout=5)
                up.settimeout(None)
            except OSError:
                c.close()  # the broker is not there (yet): the agent retries
                continue
            with self.lock:
                self.conns += [c, up]
            for a, b in ((c, up), (up, c)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):  # one side gone: close both, the agent reconnects
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self.lsock.close()
        with self.lock:
            for s in self.conns:
                s.close()
            self.conns = []


class EthSwitch:
    """The switch, the management namespace, the relays and the agent."""

    def __init__(self, demo_dir, agent_port, http_port):
        self.demo_dir, self.agent_port, self.http_port = demo_dir, agent_port, http_port
        self.sw = self.agent = None
        self.relays = []

    def start(self):
        """None when the switch and its agent are up, else why the Ethernet
        part is skipped. Raises when a part fails in a way that is a bug."""
        why = missing()
        if why:
            return why
        remove_namespaces()  # a previous demo killed hard
        r = snmp.ip("netns", "add", MGMT_NS, check=False)
        if r.returncode != 0:
            return (f"cannot create network namespace {MGMT_NS} ({r.stderr.strip()}): "
                    "needs root with CAP_SYS_ADMIN")
        snmp.ip("link", "set", "lo", "up", ns=MGMT_NS)
        self.relays = [Relay(MGMT_NS, p) for p in (self.agent_port, self.http_port)]
        self.sw = snmp.SnmpSwitch(SWITCH, 1, ports=PORTS, trap_port=TRAP_PORT, ns=SW_NS,
                                  mgmt_ns=MGMT_NS)
        self.sw.workdir = os.path.join(self.demo_dir, "snmpd")  # config, log: kept
        os.makedirs(self.sw.workdir, exist_ok=True)
        self.sw.start()
        conf = [f"Community={self.sw.community}", f"Switch={self.sw.addr} {SWITCH} host",
                f"Poll={self.sw.addr} {self.sw.community}"]
        self.agent = snmp.Agent(f"127.0.0.1:{self.agent_port}", conf, agent_id=AGENT_ID,
                                args=["--fabric", FABRIC, "--map", f"127.0.0.1:{self.http_port}",
                                      "--listen", f"udp:{self.sw.agent_side}:{TRAP_PORT}",
                                      "--poll-interval", "2000"])
        self.agent.args = ["ip", "netns", "exec", MGMT_NS] + self.agent.args
        self.agent.log_path = os.path.join(self.demo_dir, "agent-snmp.log")
        self.agent.start()
        return None

    def switch_path(self):
        return f"/redfish/v1/Fabrics/{FABRIC}/Switches/{SWITCH}"

    def port_path(self, port):
        return f"{self.switch_path()}/Ports/{self.sw.ifindex(port)}"

    def describe(self):
        return (f"snmpd in netns {SW_NS} at {self.sw.addr}, ports {','.join(PORTS)}; "
                f"fabricbus-agent-snmp (AgentId {AGENT_ID}) in netns {MGMT_NS}")

    def stop(self):
        """The agent (SIGTERM), snmpd, the relays, then both namespaces."""
        rc = None
        try:
            if self.agent and self.agent.proc:
                rc = self.agent.stop()
        finally:
            if self.sw:
                self.sw.stop_snmpd()
            for r in self.relays:
                r.stop()
            remove_namespaces()
        return rc

    def agent_log(self):
        return read_text(self.agent.log_path) if self.agent else ""
