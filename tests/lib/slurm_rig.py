"""The whole chain for Slurm adapter tests, one per test file: ibsim + fabricbusd
+ node agents + the IB agent (chain.FabricChain), a real Slurm cluster
(slurm.SlurmCluster) and a tail of the broker's events, plus the checks those
tests share.

    r = SlurmRig(slurm_nodes=8, base={"HoldDown": "500ms"}).start()
    with r.running_adapter(StableFor="2s") as a:   # started, subscribed, stopped
        r.chain.sim.unlink("leaf1", 3)
        r.cluster.wait_node("node003", is_ours, 10, "drain")
    r.stop(check=True)
"""
import contextlib
import json
import os
import sys
import time

import slurm
from chain import FabricChain
from fbtest import Tail, rec, run
from slurm import SlurmCluster
from slurm_adapter import SlurmAdapter


def is_ours(info):
    return "DRAIN" in info["state"] and info["reason"].startswith("fabric: ")


def not_drained(info):
    return "DRAIN" not in info["state"]


def last_event_id(tail):
    ids = [int(rec(d).get("EventId", 0)) for d in list(tail.events)]
    return max(ids) if ids else 0


class SlurmRig:
    def __init__(self, slurm_nodes=8, base=None, interval_ms=100, ib_args=()):
        self.slurm_nodes, self.base, self.interval_ms = slurm_nodes, dict(base or {}), interval_ms
        self.ib_args = list(ib_args)
        self.chain = self.cluster = self.tail = None

    def start(self):
        missing = slurm.available()
        assert missing is None, f"Slurm not installed ({missing}): run deploy/install-deps.sh"
        self.chain = FabricChain(interval_ms=self.interval_ms, ib_args=self.ib_args).start()
        self.cluster = SlurmCluster(nodes=self.slurm_nodes).start()
        self.tail = Tail(self.chain.broker.http_addr,
                         os.path.join(self.chain.broker.workdir, "tail.err"))
        return self

    def adapter(self, **kw):
        o = dict(self.base)
        o.update(kw)
        return SlurmAdapter(self.chain.broker, self.cluster, **o)

    def wait_ready(self, a):
        """Until the adapter is both a live WebSocket subscriber (next to our
        tail) and a connected agent (for its own events) of the broker."""
        def ready(st):
            subs = [s for s in st["websocket"]["subscribers"] if s["state"] == "live"]
            agents = [x for x in st["broker"]["agents"] if x["id"].startswith("slurm@")]
            return len(subs) >= 2 and any(x["connected"] for x in agents)

        assert a.proc.poll() is None, f"fabricbus-slurm exited:\n{a.log()[-3000:]}"
        try:
            self.chain.broker.wait_status(ready, timeout=15)
        except AssertionError:
            st = self.chain.broker.status()
            raise AssertionError(f"adapter not subscribed and connected: websocket "
                                 f"{json.dumps(st['websocket']['subscribers'])}\n"
                                 f"adapter log:\n{a.log()[-3000:]}") from None
        time.sleep(0.3)  # its start-up reconciliation

    @contextlib.contextmanager
    def running_adapter(self, **kw):
        a = self.adapter(**kw).start()
        try:
            self.wait_ready(a)
            yield a
        finally:
            a.stop()

    def stop(self, check):
        try:
            if self.tail:
                self.tail.stop()
            if self.cluster:
                self.cluster.stop()
        finally:
            if self.chain:
                self.chain.stop(check=check)


class FileRig:
    """One rig for a whole test file, started by the first test that asks
    for it; the file's last test stops it and checks that everything exited
    clean."""

    def __init__(self, make):
        self.make, self.r = make, None

    def get(self):
        if self.r is None:
            self.r = self.make().start()
        return self.r

    def stop_clean(self):
        if self.r is not None:
            r, self.r = self.r, None
            r.stop(check=True)

    def main(self, tests, last):
        """Run the tests named on the command line (all by default), and
        `last` (the stop_clean test) whatever was asked."""
        names = sys.argv[1:]
        tests = [t for t in tests if not names or t.__name__ in names]
        if last not in tests:
            tests.append(last)
        try:
            run(*tests)
        finally:
            if self.r is not None:  # a test failed before the rig could stop
                self.r.stop(check=False)
