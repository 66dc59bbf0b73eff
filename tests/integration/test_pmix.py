"""fabricbus-pmix against real PMIx: fabric events reach running
applications' PMIx event handlers, and never kill a job (docs/pmix.md).

In a real Slurm step: a real munge + slurmctld + slurmd cluster
(tests/lib/slurm.py) whose plugstack.conf loads spank_fabricbus_pmix.so,
`srun --mpi=pmix` (Slurm's own mpi/pmix plugin and libpmix) running the
example app adapters/pmix/examples/fabric_events, a real fabricbusd fed by a
real ibsim fabric (tests/lib/chain.py), and fabricbus-pmix for node001.

In a PMIx server: tests/lib/fb_pmix_server.c (PMIx_server_init with tool
support) forks 4 copies of the example app; fabricbus-pmix attaches as a tool
(Delivery=server).

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_pmix.py [test_name ...]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import fbtest
from chain import FabricChain
from fbtest import publish, run
from pmix import FABRIC_EVENTS, SPANK_PMIX, PmixAdapter, PmixServer, Srun, is_event, is_ready
from slurm import SlurmCluster
from test_http_auth import sec as http_secrets

FABRIC_UPDATED = -175  # PMIX_FABRIC_UPDATED in OpenPMIx 4.x (pmix_common.h)
SITE_CODE = -3001      # PMIX_EXTERNAL_ERR_BASE - 1


class Rig:
    """The chain, a 2-node cluster loading the plugin, and the adapter for
    node001; started once, on first use."""

    def __init__(self):
        self.chain = self.cluster = self.adapter = None
        self.sruns = []

    def start(self):
        if self.cluster is not None:
            return self
        assert os.path.exists(SPANK_PMIX), f"{SPANK_PMIX} not built (needs libpmix-dev, libslurm-dev)"
        t0 = time.monotonic()
        self.step_dir = tempfile.mkdtemp(prefix="fb-pmix-steps-")
        fbtest._workdirs.append(self.step_dir)
        self.chain = FabricChain().start()
        self.cluster = SlurmCluster(nodes=2, plugstack=[
            f"optional {SPANK_PMIX} dir={self.step_dir}"])
        # Slurm's mpi/pmix makes <TmpFS>/spmix_appdir_<uid>_<job>.<step> and
        # refuses a step when it exists: job ids restart at 1 with every test
        # cluster, and the slurmds share one host, so each cluster and node
        # gets its own (TmpFS expands %n to the node's name).
        for n in self.cluster.nodes:
            os.makedirs(self.cluster.path("tmp", n), exist_ok=True)
        self.cluster.extra_conf = f"TmpFS={self.cluster.path('tmp')}/%n"
        self.cluster.start()
        mpi = self.cluster.run("srun", "--mpi=list").stdout + \
            self.cluster.run("srun", "--mpi=list").stderr
        assert "pmix" in mpi, f"srun --mpi=list has no pmix:\n{mpi}"
        self.adapter = PmixAdapter(self.broker, NodeName="node001", StepDir=self.step_dir).start()
        self.adapter.wait_log("events: subscribed")
        print(f"  rig up in {time.monotonic() - t0:.1f}s (chain, broker {self.broker}, 2 slurmd, "
              f"fabricbus-pmix)", flush=True)
        return self

    @property
    def broker(self):
        return self.chain.broker.http_addr

    def publish(self, *events):
        r = publish(self.chain.broker.agent_addr, "pmix-test", events=list(events))
        assert r.returncode == 0, f"fabricbus publish: {r.stderr}"

    def srun(self, *app_args, n=2, nodes="node001"):
        # A step a failed test left running holds node001's CPUs: end it.
        for old in self.sruns:
            if old.proc.poll() is None:
                old.proc.kill()
                old.proc.wait()
                self.cluster.cancel_all()
        self.sruns = [s for s in self.sruns if s.proc.poll() is None]
        s = Srun(self.cluster, ["--mpi=pmix", "-w", nodes, f"-n{n}", FABRIC_EVENTS,
                                   *app_args])
        self.sruns.append(s)
        return s

    def wait_step(self, s, n=2):
        """Until every rank registered its handler and the adapter found
        this step (its namespace is slurm.pmix.<job>.<step>)."""
        s.wait_ready(n)
        ns = s.out.wait_for(is_ready, 1, "ready line")[0].split(" of ")[1].split()[0]
        job_step = ns[len("slurm.pmix."):]
        self.adapter.wait_log(f"steps: job {job_step} on node001")
        return job_step

    def stop(self, check):
        try:
            if self.adapter is not None:
                self.adapter.stop(check=check)
            if self.cluster is not None:
                self.cluster.stop()
        finally:
            if self.chain is not None:
                self.chain.stop(check=check)
        self.chain = self.cluster = self.adapter = None


RIG = Rig()


def link_down(node, port, switch="leaf1"):
    return {"kind": "link_down", "link_class": "host", "switch": switch, "port": port, "node": node}


def uplink_down(switch, port):
    return {"kind": "link_down", "link_class": "uplink", "switch": switch, "port": port}


def check_keys(keys, kind, nodes):
    assert keys.get("pmix.evnondef") == "true", keys
    assert keys.get("pmix.evtext"), keys
    assert int(keys.get("pmix.evtstamp", "0")) > 1_600_000_000, keys
    assert keys.get("fabricbus.kind") == kind, keys
    assert keys.get("fabricbus.nodes") == nodes, keys
    assert keys.get("fabricbus.severity") in ("OK", "Warning", "Critical"), keys
    assert keys.get("fabricbus.origin", "").startswith("/redfish/v1/"), keys
    assert int(keys.get("fabricbus.event_id", "0")) > 0, keys
    assert fbtest.MESSAGE_ID_RE.match(keys.get("fabricbus.message_id", "")), keys


# ---------------------------------------------------------------------------


def slurm_step_hears_its_node_unlinked():
    """An ibsim Unlink of node001's cable, through the IB agent, the node
    agent and fabricbusd, reaches both ranks' handlers of an srun --mpi=pmix
    step on node001 as PMIX_FABRIC_UPDATED with the fabricbus keys; srun
    exits 0."""
    r = RIG.start()
    s = r.srun("--count", "1", "--timeout", "60")
    r.wait_step(s)
    r.chain.sim.unlink("leaf1", 1)
    try:
        evs = s.wait_events(2, timeout=15)
        assert s.wait() == 0, s.out.text()
    finally:
        r.chain.sim.relink("leaf1", 1)
    ranks = sorted(rank for rank, _, _ in evs)
    assert ranks == [0, 1], evs
    for rank, code, keys in evs:
        assert code == FABRIC_UPDATED, evs
        check_keys(keys, "link_down", "node001")
        assert keys["fabricbus.message_id"] in ("Fabric.1.0.DownstreamLinkDropped",
                                                "NetworkDevice.1.1.ConnectionDropped"), keys
        assert keys.get("pmix.evaffected") == "0,1", keys  # both ranks live on node001
    assert "done, 1 event(s)" in s.out.text()
    # let the relink's link_up reach the broker before the next test
    r.chain.broker.wait_status(lambda st: True)


def app_without_handler_runs_to_the_end():
    """A PMIx client that registers no handler gets the events too (its
    server delivers them) and is not killed: PMIX_EVENT_NON_DEFAULT keeps
    them from Slurm's catch-all handler. srun exits 0."""
    r = RIG.start()
    s = r.srun("--no-handler", "--timeout", "3")
    r.wait_step(s)
    n0 = r.adapter.log().count("deliver: EventId")
    r.publish(link_down("node001", 1))
    r.adapter.wait_log("deliver: EventId", count=n0 + 1)
    assert s.wait() == 0, s.out.text()
    assert s.out.count(is_event) == 0, s.out.text()
    assert s.out.count(lambda l: "done, 0 event(s)" in l) == 2, s.out.text()


def adapter_kill9_step_survives_and_catches_up():
    """kill -9 of fabricbus-pmix while a step runs: the step lives on; the
    event published during the outage is delivered after the restart (the
    step kept its Position), and a later one too, in order, none twice."""
    r = RIG.start()
    s = r.srun("--count", "3", "--timeout", "60")
    r.wait_step(s)
    r.publish(link_down("node001", 1))
    first = s.wait_events(2)
    r.adapter.kill9()
    r.publish(link_down("node001", 2))  # while no adapter runs
    time.sleep(0.3)
    assert s.proc.poll() is None, f"step ended with the adapter:\n{s.out.text()}"
    r.adapter.start()
    r.adapter.wait_log("events: subscribed")
    second = s.wait_events(4)
    r.publish(link_down("node001", 3))
    evs = s.wait_events(6)
    assert s.wait() == 0, s.out.text()
    for rank in (0, 1):
        ids = [int(k["fabricbus.event_id"]) for rk, _, k in evs if rk == rank]
        assert len(ids) == 3 and ids == sorted(set(ids)), evs
    assert len(first) == 2 and len(second) == 4, (first, second)
    assert "resuming after EventId" in r.adapter.log(), r.adapter.log()[-2000:]


def other_node_or_switch_never_reaches_the_job():
    """Events on node002 (not in the step) and on leaf4's uplink (no step
    node hangs off leaf4) never reach the step on node001; leaf1's uplink
    (node001's switch) does, naming node001. The app takes one event: it
    must be the last one published."""
    r = RIG.start()
    s = r.srun("--count", "1", "--timeout", "60")
    r.wait_step(s)
    r.publish(link_down("node002", 2), uplink_down("leaf4", 33), uplink_down("leaf1", 33))
    evs = s.wait_events(2)
    assert s.wait() == 0, s.out.text()
    for rank, code, keys in evs:
        check_keys(keys, "link_down", "node001")
        assert keys["fabricbus.message_id"] == "Fabric.1.0.UpstreamLinkDropped", keys
        assert "leaf1" in keys["fabricbus.origin"], keys
    log = r.adapter.log()
    assert "deliver: EventId" in log and "UpstreamLinkDropped" in log, log[-2000:]


def two_node_step_every_rank_hears():
    """A step on node001 and node002 (one rank each), one fabricbus-pmix per
    node: a link-down of node002 reaches both ranks (each through its own
    node's slurmstepd), naming rank 1 as the affected process."""
    r = RIG.start()
    a2 = PmixAdapter(r.broker, NodeName="node002", StepDir=r.step_dir).start()
    try:
        a2.wait_log("events: subscribed")
        s = r.srun("--count", "1", "--timeout", "60", n=2, nodes="node[001-002]")
        job_step = r.wait_step(s)
        a2.wait_log(f"steps: job {job_step} on node002")
        r.publish(link_down("node002", 7))
        evs = s.wait_events(2)
        assert s.wait() == 0, s.out.text()
    finally:
        a2.stop()
    assert sorted(rank for rank, _, _ in evs) == [0, 1], evs
    for rank, code, keys in evs:
        check_keys(keys, "link_down", "node002")
        assert keys.get("pmix.evaffected") == "1", keys


def site_code_reaches_a_handler_for_it():
    """Code= a site code below PMIX_EXTERNAL_ERR_BASE: a handler registered
    for that code gets it."""
    r = RIG.start()
    r.adapter.stop()
    r.adapter = PmixAdapter(r.broker, NodeName="node001", StepDir=r.step_dir,
                            Code=str(SITE_CODE)).start()
    r.adapter.wait_log("events: subscribed")
    s = r.srun("--code", str(SITE_CODE), "--count", "1", "--timeout", "60")
    r.wait_step(s)
    r.publish(link_down("node001", 4))
    evs = s.wait_events(2)
    assert s.wait() == 0, s.out.text()
    assert [c for _, c, _ in evs] == [SITE_CODE, SITE_CODE], evs


def plugin_exports_only_spank_symbols():
    """spank_fabricbus_pmix.so shows slurmstepd its identity and callbacks
    only (a helper named like one of slurmstepd's would otherwise interpose),
    and needs no sanitizer runtime."""
    out = subprocess.run(["nm", "-D", "--defined-only", SPANK_PMIX], capture_output=True, text=True,
                         check=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert names == {"plugin_name", "plugin_type", "plugin_version", "spank_plugin_version",
                     "slurm_spank_init", "slurm_spank_init_post_opt", "slurm_spank_exit"}, names
    undef = subprocess.run(["nm", "-D", "--undefined-only", SPANK_PMIX], capture_output=True,
                           text=True, check=True).stdout
    assert "__asan" not in undef and "__ubsan" not in undef, undef


def bad_settings_are_refused():
    """A Code that is neither PMIX_FABRIC_UPDATED nor a site code, and
    Delivery=server without ServerUri: exit 2 naming the key."""
    from pmix import FABRICBUS_PMIX
    for args, want in ((["-o", "Code=-5"], "Code: bad value '-5'"),
                       (["-o", "Delivery=server"], "ServerUri"),
                       (["-o", "Kinds=link_down,bogus"], "unknown kind 'bogus'")):
        p = subprocess.run([FABRICBUS_PMIX, *args, "--check-config"], capture_output=True, text=True,
                           timeout=30)
        assert p.returncode == 2 and want in p.stderr, (args, p.returncode, p.stderr)


PMIX_KEYS = ["Broker", "BrokerTokenFile", "BrokerTlsCa", "NodeName", "Delivery", "StepDir",
             "ServerUri", "ServerNamespace", "ServerNodes", "Code", "Range", "Kinds",
             "ScanInterval", "LogLevel"]


def check_config_output_parses_back():
    """--check-config prints every key (PMIX_FABRIC_UPDATED by name, not its
    number, which is no site code), and that output, read back with -f,
    prints the same again: it can be kept as the configuration file."""
    from pmix import FABRICBUS_PMIX
    d = tempfile.mkdtemp(prefix="fb-pmix-conf-")
    for args in ([], ["-o", "Code=-3001", "-o", "Kinds=flap,link_down", "-o", "Broker=[::1]:7412",
                      "-o", "Delivery=server", "-o", "ServerUri=srv;tcp4://127.0.0.1:5",
                      "-o", "ServerNamespace=job1", "-o", "ServerNodes=node[001-002]",
                      "-o", "Range=nodes", "-o", "ScanInterval=1500ms", "-o", "LogLevel=debug"]):
        p = subprocess.run([FABRICBUS_PMIX, *args, "--check-config"], capture_output=True,
                           text=True, timeout=30)
        assert p.returncode == 0, (args, p.stderr)
        keys = [line.split("=", 1)[0] for line in p.stdout.splitlines()]
        assert keys == PMIX_KEYS, (args, p.stdout)
        assert args or "Code=PMIX_FABRIC_UPDATED\n" in p.stdout, p.stdout
        conf = os.path.join(d, "pmix.conf")
        with open(conf, "w") as f:
            f.write(p.stdout)
        back = subprocess.run([FABRICBUS_PMIX, "-f", conf, "--check-config"], capture_output=True,
                              text=True, timeout=30)
        assert back.returncode == 0 and back.stdout == p.stdout, (args, p.stdout, back.stderr,
                                                                  back.stdout)


def tool_adapter(r, srv, nspace, **kw):
    a = PmixAdapter(r.broker, NodeName="node001", Delivery="server", ServerUri=srv.uri(),
                    ServerNamespace=nspace, **kw).start()
    a.wait_log("events: subscribed")
    a.wait_log("server: attached")
    return a


def server_every_process_hears_its_node():
    """A real libpmix server (PMIx_server_init, tool support) hosting 4
    example apps on node001; fabricbus-pmix attached as a tool
    (Delivery=server): a link-down for node001 reaches all 4 handlers with
    the fabricbus keys and all 4 procs as affected; every app exits 0."""
    r = RIG.start()
    srv = PmixServer("fbt-all", ["node001"], 4, ["--count", "1", "--timeout", "30"])
    a = tool_adapter(r, srv, "fbt-all")
    try:
        r.publish(link_down("node001", 5))
        srv.out.wait_count(is_event, 4, 10, "event lines")
        exits = srv.wait()
    finally:
        a.stop()
    evs = srv.out.events()
    assert sorted(rank for rank, _, _ in evs) == [0, 1, 2, 3], evs
    for rank, code, keys in evs:
        assert code == FABRIC_UPDATED, evs
        check_keys(keys, "link_down", "node001")
        assert keys["fabricbus.message_id"] == "Fabric.1.0.DownstreamLinkDropped", keys
        assert keys.get("pmix.evaffected") == "0,1,2,3", keys
    assert exits == {0: 0, 1: 0, 2: 0, 3: 0}, (exits, srv.out.text())


def server_custom_range_reaches_only_named_ranks():
    """Range=nodes (PMIX_RANGE_CUSTOM): with ranks 0,1 on node001 and 2,3 on
    node002, a link-down for node002 reaches ranks 2 and 3 only; 0 and 1 see
    nothing and time out."""
    r = RIG.start()
    srv = PmixServer("fbt-range", ["node001", "node002"], 2, ["--count", "1", "--timeout", "4"])
    a = tool_adapter(r, srv, "fbt-range", ServerNodes="node[001-002]", Range="nodes")
    try:
        r.publish(link_down("node002", 6))
        exits = srv.wait()
    finally:
        a.stop()
    evs = srv.out.events()
    assert sorted(rank for rank, _, _ in evs) == [2, 3], srv.out.text()
    for rank, code, keys in evs:
        check_keys(keys, "link_down", "node002")
        assert keys.get("pmix.evaffected") == "2,3", keys
    assert exits == {0: 3, 1: 3, 2: 0, 3: 0}, (exits, srv.out.text())


def server_hears_events_over_wss_with_a_token():
    """A broker with logins on (HttpTokens) and HTTPS only (HttpTls=required):
    fabricbus-pmix with BrokerTokenFile and BrokerTlsCa reads /status and
    /fabric/map and subscribes over wss, and a link-down reaches the app;
    without the token every read gets 401 and the log says to set
    BrokerTokenFile; a token file others may read stops it at start."""
    from pmix import FABRICBUS_PMIX
    r = RIG.start()
    s = http_secrets()
    b = s.broker(tls="required").start()
    ca = s.path("ca.pem")
    s.write("loose.token", s.tokens["viewer"] + "\n", 0o644)
    p = subprocess.run([FABRICBUS_PMIX, "-o", f"Broker={b.http_addr}", "-o", "NodeName=node001",
                        "-o", f"StepDir={r.step_dir}", "-o", f"BrokerTokenFile={s.path('loose.token')}"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "loose.token: mode 0644 lets group or others read" in p.stderr, \
        (p.returncode, p.stderr)
    srv = PmixServer("fbt-auth", ["node001"], 1, ["--count", "1", "--timeout", "60"])
    try:
        a = PmixAdapter(b.http_addr, NodeName="node001", Delivery="server", ServerUri=srv.uri(),
                        ServerNamespace="fbt-auth", BrokerTlsCa=ca).start()
        try:
            a.wait_log("GET /status: HTTP 401 (the broker wants a login: is BrokerTokenFile set")
            a.wait_log("GET /fabric/map for node001: HTTP 401")
            a.wait_log("events: connection lost", timeout=30)
            assert "events: subscribed" not in a.log(), a.log()[-2000:]
        finally:
            a.stop()
        a = tool_adapter(r, srv, "fbt-auth", Broker=b.http_addr, BrokerTlsCa=ca,
                         BrokerTokenFile=s.path("viewer.token"))
        try:
            assert "events: subscribed to wss://" in a.log(), a.log()[-2000:]
            assert "HTTP 401" not in a.log(), a.log()[-2000:]
            p = publish(b.agent_addr, "pmix-test", events=[link_down("node001", 5)])
            assert p.returncode == 0, f"fabricbus publish: {p.stderr}"
            srv.out.wait_count(is_event, 1, 30, "event lines")
            exits = srv.wait()
        finally:
            a.stop()
    finally:
        b.stop()
    evs = srv.out.events()
    assert len(evs) == 1, evs
    check_keys(evs[0][2], "link_down", "node001")
    assert exits == {0: 0}, (exits, srv.out.text())


def rig_stops_clean():
    """fabricbus-pmix, the broker and the agents stop with rc 0 and no
    sanitizer report."""
    RIG.stop(check=True)


ALL = [plugin_exports_only_spank_symbols, bad_settings_are_refused, check_config_output_parses_back,
       slurm_step_hears_its_node_unlinked,
       app_without_handler_runs_to_the_end, adapter_kill9_step_survives_and_catches_up,
       other_node_or_switch_never_reaches_the_job, two_node_step_every_rank_hears,
       site_code_reaches_a_handler_for_it,
       server_every_process_hears_its_node, server_custom_range_reaches_only_named_ranks,
       server_hears_events_over_wss_with_a_token,
       rig_stops_clean]

if __name__ == "__main__":
    names = sys.argv[1:]
    tests = [t for t in ALL if not names or t.__name__ in names]
    if names and rig_stops_clean not in tests:
        tests.append(rig_stops_clean)
    run(*tests)
