"""libfabricbus_osm.so (the OpenSM event plugin) inside a resident opensm on a
simulated fabric (ibsim, fattree46: h1..h40 on leaf1..leaf4 ports 1..10).

opensm runs at h1 with a config file in the sim's workdir naming the plugin
(event_plugin_name fabricbus_osm; opensm dlopen()s "libfabricbus_osm.so", found
through LD_LIBRARY_PATH = the build dir) and perfmgr_max_outstanding_queries 4
(the default of 500 deadlocks opensm and ibsim, see docs/agents.md). opensm is
not an ASan build, so neither is the plugin (agents/osm/meson.build), and
opensm gets no sanitizer environment.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \
     /usr/bin/python3 tests/integration/test_osm.py [test_name ...]
"""
import os
import signal
import subprocess
import sys
import time

from fbtest import BUILD, Broker, check_redfish_event, oem, rec, run
import ibsim
from ibsim import IbSim, OPENSM, TOPOLOGIES
from test_ib import Tail, brief

PLUGIN_DIR = os.path.join(BUILD, "agents", "osm")
TOPO = os.path.join(TOPOLOGIES, "fattree46.net")
FABRIC = "ibsim"
AGENT_ID = "osm@sim-h1"


class OsmRig:
    """ibsim + fabricbusd + tail + a resident opensm with the plugin."""

    def __init__(self):
        self.sim = self.broker = self.tail = self.osm = None
        self.osm_hung = False

    def start(self):
        missing = ibsim.available()
        assert missing is None, f"ibsim not installed ({missing}): run deploy/install-deps.sh"
        lib = os.path.join(PLUGIN_DIR, "libfabricbus_osm.so")
        assert os.path.exists(lib), f"{lib} not built (libopensm-dev missing?)"
        self.sim = IbSim(TOPO).start()
        self.broker = Broker(FabricName=FABRIC).start()
        self.tail = Tail(self.broker.http_addr, os.path.join(self.broker.workdir, "tail.err"))
        wd = self.sim.workdir
        self.cfg = os.path.join(wd, "opensm.conf")
        with open(self.cfg, "w") as f:
            f.write("event_plugin_name fabricbus_osm\n"
                    f"event_plugin_options broker={self.broker.agent_addr},agent_id={AGENT_ID},"
                    f"fabric={FABRIC}\n"
                    "perfmgr TRUE\n"
                    "perfmgr_sweep_time_s 5\n"
                    "perfmgr_max_outstanding_queries 4\n"
                    "force_log_flush TRUE\n"
                    f"dump_files_dir {wd}\n")
        self.out_path = os.path.join(wd, "opensm.out")
        out = open(self.out_path, "ab")
        env = {"LD_LIBRARY_PATH": PLUGIN_DIR + ":" + os.environ.get("LD_LIBRARY_PATH", "")}
        self.osm = self.sim.spawn([OPENSM, "-F", self.cfg, "-f", self.sim.osm_log], "h1",
                                  env_extra=env, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.wait_log("SUBNET UP", 30)
        log = self.osm_log()
        assert "cannot load plugin" not in log, f"opensm refused the plugin:\n{log[-3000:]}"
        return self

    def osm_log(self):
        try:
            with open(self.sim.osm_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_log(self, needle, timeout):
        deadline = time.monotonic() + timeout
        while needle not in self.osm_log():
            assert self.osm.poll() is None, f"opensm exited {self.osm.returncode}:\n" \
                f"{self.osm_log()[-3000:]}"
            assert time.monotonic() < deadline, f"no '{needle}' in osm.log within {timeout}s:\n" \
                f"{self.osm_log()[-3000:]}"
            time.sleep(0.05)

    def stop(self):
        """opensm (SIGTERM: the plugin's delete() runs) -> ibsim -> tail -> broker."""
        rc = None
        if self.osm is not None and self.osm.poll() is None:
            self.osm.send_signal(signal.SIGTERM)
            try:
                rc = self.osm.wait(timeout=15)
            except subprocess.TimeoutExpired:
                rc = self.hung_osm()
        if self.sim is not None:
            self.sim.stop()
        if self.tail is not None:
            self.tail.stop()
        brc = self.broker.stop() if self.broker is not None else 0
        return rc, brc

    def hung_osm(self):
        """opensm did not stop on SIGTERM. Under ibsim its own SM threads can
        hang in shutdown (the shim's lock and small datagram queue; see the
        ibsim note) before it ever calls the plugin's delete(). Look at where
        it hangs: in the plugin that is our bug and fails the test; in opensm's
        sweeper join it is the known sim hang, reported and killed."""
        bt = subprocess.run(["gdb", "-p", str(self.osm.pid), "-batch", "-ex",
                             "thread apply all bt 16"], capture_output=True, text=True,
                            timeout=60).stdout
        ibsim._stop_proc(self.osm, timeout=5)
        self.osm_hung = True
        # The main thread runs the shutdown (and delete()); the plugin's own
        # thread idling in its event loop is normal and says nothing.
        main = bt[bt.find("\nThread 1 "):] if "\nThread 1 " in bt else bt
        in_plugin = any(s in main for s in ("fb_osm", "fabricbus", "osm_epi_", "osm_queue"))
        known = "osm_sm_shutdown" in main and not in_plugin
        print(f"  opensm did not stop on SIGTERM ({'known ibsim shutdown hang in osm_sm_shutdown' if known else 'hang involves the plugin'}); main thread:\n"
              + main[:3000], flush=True)
        assert known, "opensm hangs in the fabricbus plugin on SIGTERM"
        return 0

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, *exc):
        rc, brc = self.stop()
        if exc_type is None:
            assert rc == 0, f"opensm exited {rc}:\n{self.osm_log()[-3000:]}"
            assert brc == 0, f"fabricbusd exited {brc}:\n{self.broker.log()[-3000:]}"
        else:
            print(f"  osm.log (tail):\n{self.osm_log()[-3000:]}", flush=True)
        return False


def from_plugin(kind):
    return lambda d: oem(d).get("AgentId") == AGENT_ID and oem(d).get("Kind") == kind


def osm_plugin_reports_traps():
    with OsmRig() as r:
        # The first SUBNET_UP: a test event proves the chain opensm -> plugin -> broker.
        _, d = r.tail.wait_for(from_plugin("test"), timeout=10, what="the plugin's test event")
        check_redfish_event(d)
        print(f"  subnet up: {brief(d)}", flush=True)
        assert "subnet up" in rec(d).get("Message", "") + str(oem(d)), d

        mark = r.tail.mark()
        t0 = time.monotonic()
        r.sim.unlink("leaf1", 3)
        t, d = r.tail.wait_for(from_plugin("port_state"), timeout=5, mark=mark,
                               what="trap 128 as port_state")
        print(f"  trap 128 after {(t - t0) * 1000:.0f} ms: {brief(d)} {oem(d)}", flush=True)
        check_redfish_event(d)
        assert rec(d)["MessageSeverity"] == "Warning", brief(d)
        assert "trap 128" in str(d), d
        t, d = r.tail.wait_for(from_plugin("link_down"), timeout=10, mark=mark,
                               what="trap 65 as link_down")
        print(f"  trap 65 after {(t - t0) * 1000:.0f} ms: {brief(d)} {oem(d)}", flush=True)
        check_redfish_event(d)
        assert "trap 65" in str(d) and "out of service" in str(d), d
        assert oem(d).get("PortGUID"), d

        mark = r.tail.mark()
        r.sim.relink("leaf1", 3)
        t, d = r.tail.wait_for(from_plugin("link_up"), timeout=15, mark=mark,
                               what="trap 64 as link_up")
        print(f"  trap 64: {brief(d)}", flush=True)
        assert rec(d)["MessageSeverity"] == "OK", brief(d)

        # PerfMgr deltas: only non-zero error deltas are forwarded.
        assert not any(from_plugin("counter_threshold")(d) for _, d in r.tail.since()), \
            "counter_threshold without any error"
        mark = r.tail.mark()
        r.sim.perf_set("leaf2", 5, "SymbolErrorCounter", 7)
        _, d = r.tail.wait_for(from_plugin("counter_threshold"), timeout=20, mark=mark,
                               what="counter_threshold from PerfMgr")
        print(f"  perfmgr: {brief(d)} {oem(d)}", flush=True)
        assert "leaf2" in str(d) and "symbol_error" in str(d), d
    log = r.osm_log()
    if r.osm_hung:
        # opensm never reached delete(): hung_osm() checked the hang is its own.
        print("  delete() not reached: opensm hung in its own shutdown (ibsim)", flush=True)
    else:
        assert "fabricbus_osm: stopped" in log, f"delete() did not run:\n{log[-3000:]}"
        print("  " + [l for l in log.splitlines() if "fabricbus_osm: stopped" in l][-1], flush=True)


TESTS = [osm_plugin_reports_traps]

if __name__ == "__main__":
    wanted = sys.argv[1:]
    run(*[t for t in TESTS if not wanted or t.__name__ in wanted])
