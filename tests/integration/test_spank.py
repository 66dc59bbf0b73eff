"""spank_fabricbus.so in the real slurmstepd: a real munge + slurmctld + 8
slurmd cluster (tests/lib/slurm.py) whose plugstack.conf loads the plugin,
against a real fabricbusd fed by a real ibsim fabric (tests/lib/chain.py:
fattree46, node agents h1..h8 naming node001..node008, h<k> on leaf1 port k,
and the IB agent). Nothing is faked.

One chain and one cluster serve every test; each test rewrites
plugstack.conf (SlurmCluster.set_plugstack: srun, sbatch and every
slurmstepd read it afresh). The link-down test runs last. The whole file
takes about 10 s.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_spank.py [test_name ...]
"""
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.request

import fbtest
from chain import FabricChain
from fbtest import BUILD, free_port, main, wait_for
from slurm import SlurmCluster
from test_http_auth import request as http_request
from test_http_auth import sec as http_secrets

PLUGIN = os.path.join(BUILD, "adapters", "spank", "spank_fabricbus.so")
SPANK_EXPORTS = {"plugin_name", "plugin_type", "plugin_version", "spank_plugin_version"}


class Rig:
    """The chain and the cluster, started once, on first use."""

    def __init__(self):
        self.chain = self.cluster = None
        self.mapdir = None

    def start(self):
        if self.cluster is not None:
            return self
        assert os.path.exists(PLUGIN), f"{PLUGIN} not built (needs libslurm-dev)"
        t0 = time.monotonic()
        if self.chain is None:
            self.chain = FabricChain().start()
            self.mapdir = tempfile.mkdtemp(prefix="fb-spank-maps-")
            os.chmod(self.mapdir, 0o1777)  # like /tmp, the default: any job's user reads there
            fbtest._workdirs.append(self.mapdir)
        self.cluster = SlurmCluster(nodes=8, plugstack=self.lines()).start()
        print(f"  rig up in {time.monotonic() - t0:.1f}s (chain, broker {self.broker}, "
              f"8 slurmd)", flush=True)
        return self

    @property
    def broker(self):
        return self.chain.broker.http_addr

    def lines(self, *args, broker=None, mapdir=None):
        a = [f"broker={broker or self.broker}", f"mapdir={mapdir or self.mapdir}"] + list(args)
        return [f"required {PLUGIN} " + " ".join(a)]

    def plugstack(self, *args, **kw):
        self.cluster.set_plugstack(self.lines(*args, **kw))

    def fabric_map(self):
        with urllib.request.urlopen(f"http://{self.broker}/fabric/map", timeout=10) as r:
            assert r.status == 200, r.status
            return json.loads(r.read())

    def wait_map(self, pred, timeout, what):
        return wait_for(self.fabric_map, pred, timeout, f"/fabric/map: no {what}", interval=0.1,
                        show=lambda m: json.dumps(m.get("Nodes", {}) if m else None))

    def srun(self, *args, env=None, timeout=60):
        e = dict(self.cluster.env, **(env or {}))
        return subprocess.run(["srun", *args], env=e, capture_output=True, text=True,
                              timeout=timeout)

    def wait_idle(self, timeout=30):
        """Until every job's epilog has run: each node plainly "idle" (`sinfo
        -t idle` also lists nodes that are idle+completing, epilog running)."""
        deadline = time.monotonic() + timeout
        while True:
            out = self.cluster.run("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout
            states = dict(x.split() for x in out.splitlines() if len(x.split()) == 2)
            if set(states) == set(self.cluster.nodes) and set(states.values()) == {"idle"}:
                return
            assert time.monotonic() < deadline, f"nodes not idle within {timeout}s: {states}"
            time.sleep(0.05)

    def stop(self, check):
        try:
            if self.cluster is not None:
                self.cluster.stop()
        finally:
            if self.chain is not None:
                self.chain.stop(check=check)
        self.chain = self.cluster = None


RIG = Rig()


def first_ib(node):
    return next(p for p in node["Ports"] if p["Technology"] == "IB")


def env_of(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def jobs_on(fmap, node):
    return fmap["Nodes"].get(node, {}).get("Jobs", [])


# ---------------------------------------------------------------------------


def plugin_exports_only_spank_symbols():
    """Built for an uninstrumented daemon: no sanitizer runtime needed, and
    only the plugin's identity and callbacks visible (a static helper named
    like one of slurmstepd's would otherwise interpose)."""
    assert os.path.exists(PLUGIN), f"{PLUGIN} not built"
    out = subprocess.run(["nm", "-D", "--defined-only", PLUGIN], capture_output=True, text=True,
                         check=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if line.strip()}
    extra = {n for n in names if n not in SPANK_EXPORTS and not n.startswith("slurm_spank_")}
    assert not extra, f"exported beyond the SPANK symbols: {sorted(extra)}"
    assert SPANK_EXPORTS <= names, sorted(names)
    assert {"slurm_spank_init", "slurm_spank_init_post_opt", "slurm_spank_user_init",
            "slurm_spank_task_init_privileged", "slurm_spank_job_epilog"} <= names, sorted(names)
    und = subprocess.run(["nm", "-D", "--undefined-only", PLUGIN], capture_output=True,
                         text=True, check=True).stdout
    assert "__asan" not in und and "__ubsan" not in und and "__sanitizer" not in und, und
    print(f"  exports: {sorted(names)}", flush=True)


def plugstack_typo_fails_naming_the_argument():
    r = RIG.start()
    r.plugstack("timout=500")
    p = r.srun("-w", "node001", "true")
    assert p.returncode != 0, f"srun ran with a bad plugstack.conf: {p.stderr}"
    want = "fabricbus: plugstack.conf: unknown argument 'timout=500'"
    assert want in p.stderr, p.stderr
    print(f"  srun: {p.stderr.splitlines()[0]}", flush=True)
    r.plugstack("fail_on_down=maybe")
    p = r.srun("-w", "node001", "true")
    assert p.returncode != 0 and "bad value in 'fail_on_down=maybe'" in p.stderr, p.stderr
    # The shipped example is valid as it stands (its paths and address swapped for ours).
    with open(os.path.join(fbtest.SRC, "deploy", "plugstack.conf.example")) as f:
        lines = [x for x in f.read().splitlines() if x.strip() and not x.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith("required "), lines
    words = lines[0].split()
    words[1] = PLUGIN
    swap = {"broker": r.broker, "mapdir": r.mapdir}
    words = [f"{w.split('=')[0]}={swap[w.split('=')[0]]}" if w.split("=")[0] in swap else w
             for w in words]
    r.cluster.set_plugstack([" ".join(words)])
    p = r.srun("-w", "node001", "sh", "-c", "echo $FABRICBUS_SWITCH")
    assert p.returncode == 0 and p.stdout.strip() == "leaf1", (p.stdout, p.stderr)


def mapping_reaches_job_environment():
    r = RIG.start()
    r.plugstack()
    fmap = r.wait_map(lambda m: all(first_ib(m["Nodes"][f"node{i:03d}"]).get("LinkState") == "up"
                                    for i in (2, 3)), 20, "node002/node003 up")
    guid3 = next(g for g, n in r.chain.want.items() if n == "node003")  # ibstat at h3
    port3 = first_ib(fmap["Nodes"]["node003"])

    # One node. A stale value inherited from the submitting shell is replaced.
    p = r.srun("-w", "node003", "sh", "-c", 'env; echo @@MAP@@; cat "$FABRICBUS_MAP_FILE"',
               env={"FABRICBUS_SWITCH": "stale", "FABRICBUS_NODES": "stale"})
    assert p.returncode == 0, p.stderr
    env_text, map_text = p.stdout.split("@@MAP@@\n", 1)
    env = env_of(env_text)
    job = env["SLURM_JOB_ID"]
    fb = {k: v for k, v in env.items() if k.startswith("FABRICBUS_")}
    print(f"  job {job} on node003: {json.dumps(fb)}", flush=True)
    assert env["FABRICBUS_SWITCH"] == "leaf1", fb
    assert env["FABRICBUS_SWITCH_PORT"] == "3", fb
    assert env["FABRICBUS_LINK_STATE"] == "up", fb
    assert int(env["FABRICBUS_PORT_GUID"], 16) == guid3, (fb, hex(guid3))
    assert env["FABRICBUS_LID"] == str(port3["LID"]), (fb, port3)
    assert env["FABRICBUS_SWITCH_GUID"] == port3["SwitchGUID"], (fb, port3)
    assert env["FABRICBUS_NODES"] == "node003=leaf1:3", fb
    assert env["FABRICBUS_MAP_FILE"] == os.path.join(r.mapdir, f"fabricbus-{job}.node003.json"), fb
    doc = json.loads(map_text)
    assert doc["JobId"] == job and doc["Node"] == "node003", doc
    assert doc["Fabric"] == fmap["Fabric"] and doc["JobNodes"] == ["node003"], doc
    assert list(doc["Nodes"]) == ["node003"], doc
    assert doc["Nodes"]["node003"]["Ports"] == fmap["Nodes"]["node003"]["Ports"], \
        (doc["Nodes"], fmap["Nodes"]["node003"])

    # Two nodes: each sees its own port, both the whole list; the file,
    # copied out by the task, holds both nodes as /fabric/map has them.
    out = os.path.join(r.mapdir, "copies")
    os.makedirs(out, exist_ok=True)
    p = r.srun("-N2", "-w", "node[002-003]", "sh", "-c",
               'echo "$SLURMD_NODENAME $FABRICBUS_SWITCH_PORT $FABRICBUS_NODES"; '
               f'cp "$FABRICBUS_MAP_FILE" {out}/$SLURMD_NODENAME.json; '
               'stat -c "%U %a" "$FABRICBUS_MAP_FILE"')
    assert p.returncode == 0, p.stderr
    lines = sorted(x for x in p.stdout.splitlines() if x.startswith("node"))
    print(f"  2-node job: {lines}", flush=True)
    assert lines == ["node002 2 node002=leaf1:2,node003=leaf1:3",
                     "node003 3 node002=leaf1:2,node003=leaf1:3"], p.stdout
    assert p.stdout.count("root 640") == 2, p.stdout  # the job's user (root here) owns it
    fmap = r.fabric_map()
    for n in ("node002", "node003"):
        with open(os.path.join(out, f"{n}.json")) as f:
            doc = json.load(f)
        assert doc["Node"] == n and doc["JobNodes"] == ["node002", "node003"], doc
        assert sorted(doc["Nodes"]) == ["node002", "node003"], doc
        for k in ("node002", "node003"):
            assert doc["Nodes"][k]["Ports"] == fmap["Nodes"][k]["Ports"], (k, doc["Nodes"][k])
        # the switch the job hangs off, as /fabric/map has it (keyed by GUID)
        sw_guid = first_ib(fmap["Nodes"]["node002"])["SwitchGUID"]
        assert doc["Switches"] == {sw_guid: fmap["Switches"][sw_guid]}, doc["Switches"]

    # A job of another user: the file is that user's to read, not the world's.
    p = r.srun("--uid=nobody", "-D", "/", "-w", "node001", "sh", "-c",
               'id -un; stat -c "%U %a" "$FABRICBUS_MAP_FILE"; cat "$FABRICBUS_MAP_FILE"')
    assert p.returncode == 0, p.stderr
    who, st, text = p.stdout.split("\n", 2)
    assert (who, st) == ("nobody", "nobody 640"), p.stdout[:200]
    assert json.loads(text)["Node"] == "node001", text[:200]

    # The epilog removes each node's map file.
    r.wait_idle()
    left = [f for f in os.listdir(r.mapdir) if f.startswith("fabricbus-")]
    assert not left, f"map files left after the jobs ended: {left}"


def job_registered_while_running():
    r = RIG.start()
    r.plugstack()
    job = r.cluster.sbatch("-w", "node002", "-o", "/dev/null", "--wrap", "sleep 120")
    r.cluster.wait_job(job, "RUNNING", timeout=30)
    t0 = time.monotonic()
    r.wait_map(lambda m: job in jobs_on(m, "node002"), 10, f"job {job} on node002")
    print(f"  job {job} on node002 in /fabric/map {time.monotonic() - t0:.2f}s after RUNNING",
          flush=True)
    r.cluster.run("scancel", job)
    t0 = time.monotonic()
    m = r.wait_map(lambda m: job not in jobs_on(m, "node002"), 20, f"job {job} gone")
    print(f"  gone {time.monotonic() - t0:.2f}s after scancel (node002 Jobs: "
          f"{jobs_on(m, 'node002')})", flush=True)
    # A batch job that ends by itself, with a step of its own: gone after it ended.
    job = r.cluster.sbatch("-w", "node004", "-o", "/dev/null", "--wrap",
                           "srun -w node004 sleep 1")
    r.wait_map(lambda m: job in jobs_on(m, "node004"), 10, f"job {job} on node004")
    r.wait_map(lambda m: job not in jobs_on(m, "node004"), 20, f"job {job} gone")
    # A short srun job: registered by its step, gone after it ended.
    p = r.srun("-w", "node001", "sh", "-c", "echo $SLURM_JOB_ID; sleep 1")
    assert p.returncode == 0, p.stderr
    job2 = p.stdout.strip()
    r.wait_map(lambda m: job2 not in jobs_on(m, "node001"), 20, f"job {job2} gone")
    r.wait_idle()


def broker_unreachable_job_runs():
    r = RIG.start()
    closed = free_port()  # nothing listens there
    addr = f"127.0.0.1:{closed}"
    r.plugstack("timeout=1000", broker=addr)
    p = r.srun("-w", "node001", "sh", "-c", "echo ran $SLURM_JOB_ID; env | grep ^FABRICBUS_ || true",
               env={"FABRICBUS_SWITCH": "stale"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("ran "), p.stdout
    job = p.stdout.split()[1]
    assert "FABRICBUS_" not in p.stdout, f"stale or half values in the job: {p.stdout}"
    assert "fabricbus" not in p.stderr, f"the user got a message: {p.stderr}"
    log = r.cluster.log("slurmd-node001")
    lines = [x for x in log.splitlines() if f"[{job}.0]" in x and "fabricbus" in x]
    print(f"  slurmd-node001: {lines}", flush=True)
    assert len(lines) == 1, lines
    want = (f"fabricbus: broker {addr} unreachable (", f"; job {job}.0 runs without the fabric map "
            "(on_unreachable=continue)")
    assert all(w in lines[0] for w in want), lines[0]

    # A real daemon that does not speak HTTP: fabricbusd's agent port.
    garbage = r.chain.broker.agent_addr
    r.plugstack("timeout=1000", broker=garbage)
    p = r.srun("-w", "node001", "sh", "-c", "echo ran $SLURM_JOB_ID")
    assert p.returncode == 0 and p.stdout.startswith("ran "), (p.stdout, p.stderr)
    job = p.stdout.split()[1]
    lines = [x for x in r.cluster.log("slurmd-node001").splitlines()
             if f"[{job}.0]" in x and "fabricbus" in x]
    print(f"  non-HTTP peer: {lines}", flush=True)
    assert len(lines) == 1 and f"fabricbus: broker {garbage} sent no usable map (" in lines[0] \
        and "runs without the fabric map (on_unreachable=continue)" in lines[0], lines

    # A peer that accepts and never answers: the step waits timeout= once.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        mute = f"127.0.0.1:{silent.getsockname()[1]}"
        r.plugstack("timeout=300", broker=mute)
        t0 = time.monotonic()
        p = r.srun("-w", "node001", "sh", "-c", "echo ran $SLURM_JOB_ID")
        took = time.monotonic() - t0
    assert p.returncode == 0 and p.stdout.startswith("ran "), (p.stdout, p.stderr)
    job = p.stdout.split()[1]
    lines = [x for x in r.cluster.log("slurmd-node001").splitlines()
             if f"[{job}.0]" in x and "fabricbus" in x]
    print(f"  silent peer: srun took {took:.2f}s; {lines}", flush=True)
    assert len(lines) == 1 and f"fabricbus: broker {mute} unreachable (" in lines[0], lines
    assert took < 10, took

    r.plugstack("timeout=1000", "on_unreachable=fail", broker=addr)
    p = r.srun("-w", "node001", "sh", "-c", "echo ran")
    print(f"  on_unreachable=fail: rc {p.returncode}, stderr: {p.stderr.strip().splitlines()}",
          flush=True)
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "ran" not in p.stdout, p.stdout
    assert re.search(rf"fabricbus: broker {re.escape(addr)} unreachable \(.*\); job \d+ refused "
                     r"\(on_unreachable=fail in plugstack.conf\)", p.stderr), p.stderr
    r.wait_idle()


def plugstack_typo_at_job_end_never_drains_the_node():
    """slurmd's SPANK epilog (`slurmstepd spank epilog`) reads plugstack.conf
    afresh and calls slurm_spank_init too. A typo made while a job runs must
    cost that job's end one log line (and its unregistration), never the
    node: a failed epilog drains it. (22.05 does not fail the epilog for a
    required plugin whose init fails; this holds the plugin to that.)"""
    r = RIG.start()
    r.plugstack()
    node = "node005"
    job = r.cluster.sbatch("-w", node, "-o", "/dev/null", "--wrap", "sleep 2")
    r.cluster.wait_job(job, "RUNNING", timeout=30)
    r.wait_map(lambda m: job in jobs_on(m, node), 10, f"job {job} on {node}")
    r.plugstack("timout=500")  # the typo, while the job runs
    try:
        deadline = time.monotonic() + 30
        while True:
            st = r.cluster.node(node)["state"]
            if "DRAIN" in st or st == "IDLE" and not r.cluster.job_state(job):
                break
            assert time.monotonic() < deadline, f"{node} still {st} 30 s after the job's end"
            time.sleep(0.1)
        info = r.cluster.node(node)
        print(f"  {node} after the job's epilog: {info}", flush=True)
        assert "DRAIN" not in info["state"], f"the epilog failed and drained {node}: {info}"
        lines = [x for x in r.cluster.log(f"slurmd-{node}").splitlines()
                 if "fabricbus" in x and "timout=500" in x]
        assert lines, "the epilog did not log the bad argument"
    finally:
        r.plugstack()
        if "DRAIN" in r.cluster.node(node)["state"]:
            r.cluster.scontrol("update", f"NodeName={node}", "State=RESUME")
    r.wait_idle()


def fail_on_down_refuses_job():
    r = RIG.start()
    r.plugstack("fail_on_down=yes")
    p = r.srun("-w", "node003", "true")
    assert p.returncode == 0, f"refused with node003 up: {p.stderr}"
    r.chain.sim.unlink("leaf1", 3)
    try:
        t0 = time.monotonic()
        r.wait_map(lambda m: first_ib(m["Nodes"]["node003"]).get("LinkState") == "down", 20,
                   "node003 down")
        print(f"  /fabric/map: node003 down {time.monotonic() - t0:.2f}s after the unlink",
              flush=True)
        p = r.srun("-w", "node003", "true")
        print(f"  srun -w node003: rc {p.returncode}, stderr: {p.stderr.strip().splitlines()}",
              flush=True)
        assert p.returncode != 0, "a job ran on a node whose port is down"
        assert re.search(r"fabricbus: node003 port leaf1/3 is down; job \d+ refused "
                         r"\(fail_on_down=yes in plugstack.conf\)", p.stderr), p.stderr
        p = r.srun("-w", "node001", "true")
        assert p.returncode == 0, f"node001 refused: {p.stderr}"
        # A multi-node job is refused for any of its nodes; a batch job FAILS
        # with the message in its output.
        p = r.srun("-N2", "-w", "node[002-003]", "true")
        assert p.returncode != 0 and "node003 port leaf1/3 is down" in p.stderr, p.stderr
        out = os.path.join(r.mapdir, "batch.out")
        job = r.cluster.sbatch("-w", "node003", "-o", out, "--wrap", "echo ran")
        deadline = time.monotonic() + 30
        while "JobState=FAILED" not in r.cluster.scontrol("show", "job", job).stdout:
            assert time.monotonic() < deadline, r.cluster.scontrol("show", "job", job).stdout
            time.sleep(0.1)
        with open(out) as f:
            text = f.read()
        assert "ran" not in text and f"node003 port leaf1/3 is down; job {job} refused" in text, text
    finally:
        r.chain.sim.relink("leaf1", 3)
    r.wait_idle()


def logins_with_token_file_and_tls_ca():
    """A broker with logins on (HttpTokens) and HTTPS only (HttpTls=required):
    with token_file= and tls_ca= the plugin reads the job's map, registers
    the job and unregisters it at its end; without the token the broker
    answers 401 and the refusal says to set token_file=; without tls_ca=
    (plain HTTP on the HTTPS port) and with a token file others may read the
    job is refused too, the latter naming the file's mode."""
    r = RIG.start()
    s = http_secrets()
    b = s.broker(tls="required").start()
    token, ca = f"token_file={s.path('slurm.token')}", f"tls_ca={s.path('ca.pem')}"

    def jobs():
        st, _, body = http_request(b, "GET", "/status", token=s.tokens["viewer"], ctx=s.ctx())
        assert st == 200, (st, body)
        return json.loads(body)["broker"]["fabric_map"]["jobs"]

    def refused(*args):
        r.plugstack("on_unreachable=fail", *args, broker=b.http_addr)
        p = r.srun("-w", "node005", "true")
        assert p.returncode != 0, f"srun ran: {p.stderr}"
        assert re.search(r"job \d+ refused \(on_unreachable=fail in plugstack.conf\)", p.stderr), \
            p.stderr
        return p.stderr

    try:
        def line(text):
            return next((x for x in text.splitlines() if "fabricbus:" in x), text)

        err = refused(ca)
        print(f"  without a token: {line(err)}", flush=True)
        assert "HTTP 401" in err and "set token_file= in plugstack.conf" in err, err
        err = refused(token)
        print(f"  without tls_ca: {line(err)}", flush=True)
        s.write("loose.token", s.tokens["slurm"] + "\n", 0o644)
        err = refused(f"token_file={s.path('loose.token')}", ca)
        assert "loose.token: mode 0644 lets group or others read" in err, err
        assert jobs() == 0

        r.plugstack("on_unreachable=fail", token, ca, broker=b.http_addr)
        p = r.srun("-w", "node005", "sh", "-c", 'echo "$FABRICBUS_MAP_FILE"')
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip().endswith(".node005.json"), p.stdout
        job = r.cluster.sbatch("-w", "node005", "-o", "/dev/null", "--wrap", "sleep 120")
        r.cluster.wait_job(job, "RUNNING", timeout=30)
        wait_for(jobs, lambda n: n == 1, 30, f"job {job} not registered over HTTPS with the token")
        r.cluster.run("scancel", job)
        wait_for(jobs, lambda n: n == 0, 60, f"job {job} not unregistered by the epilog")
        r.wait_idle()
    finally:
        r.plugstack()
        b.stop()


def rig_stops_clean():
    """The broker served every request the plugin made and stops with rc 0
    and no sanitizer report; the agents likewise."""
    RIG.stop(check=True)


ALL = [plugin_exports_only_spank_symbols, plugstack_typo_fails_naming_the_argument,
       mapping_reaches_job_environment, job_registered_while_running,
       broker_unreachable_job_runs, plugstack_typo_at_job_end_never_drains_the_node,
       fail_on_down_refuses_job, logins_with_token_file_and_tls_ca, rig_stops_clean]

if __name__ == "__main__":
    main(ALL, always=[rig_stops_clean])
