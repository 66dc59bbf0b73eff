"""De-duplication across sources (broker/dedupctl.c, broker/fabric/dedup.c)
against real parts: ibsim fattree46, a resident opensm with the fabricbus
OpenSM plugin (libfabricbus_osm.so, agent osm@sim-h1, as in test_osm.py)
and fabricbus-agent-ib polling at h40 (as in test_ib.py).

One `Unlink leaf1 3` (host h3's cable) is reported by the IB agent's poll
(leaf1 port 3 link_down) and by the OpenSM plugin (trap 65: h3's port GUID
out of service). One `Unlink leaf1 33` (an uplink to spine1) is reported by
the IB agent from both ends (leaf1 port 33 and spine1 port 1).

What it proves, for each cable: a default subscriber (`fabricbus tail`)
gets exactly one link-down event for it; a subscriber that asks for quiet
events (quiet=1) also gets the other reports, each quiet "duplicate" with
EventGroupId = the visible event's EventId and its own AgentId / port; all
of them are in the journal (a since=0 replay with quiet=1 after the fact);
/status "dedup" lists the cable with every source that reported it.

Run: FB_BUILD=<build> FB_SRC=<src> PYTHONPATH=<src>/tests/lib \\
     /usr/bin/python3 tests/integration/test_dedup.py [test_name ...]
"""
import asyncio
import json
import os
import subprocess
import threading
import time

import ibsim
from fbtest import check_redfish_event, main, oem, origin, rec, wait_for
from test_ib import AGENT, FABRIC, INTERVAL_MS, Tail, brief
from test_osm import AGENT_ID as OSM_ID, OsmRig

IB_ID = "ib@sim-h40"
IB_HOST = "h40"  # leaf4[10]: untouched here


def quiet(d):
    return oem(d).get("Quiet")


def link_down(d):
    return oem(d).get("Kind") == "link_down"


class WsTail(Tail):
    """test_ib.Tail's interface (mark, since, wait_for) over a Python
    websockets subscriber to /ws/events with a query of our own (quiet=1:
    `fabricbus tail` has no option for it)."""

    def __init__(self, url):
        self.url = url
        self.events, self.stamps = [], []
        self.cv = threading.Condition()
        self.done = False
        self.error = None
        self.proc = self  # Tail.wait_for asks proc.poll() whether the reader is gone
        self.returncode = None
        self.err_path = os.devnull
        threading.Thread(target=lambda: asyncio.run(self._read()), daemon=True).start()

    def poll(self):
        return self.returncode

    async def _read(self):
        import websockets
        try:
            async with websockets.connect(self.url, max_size=2 ** 22, max_queue=4096) as ws:
                while not self.done:
                    try:
                        msg = await asyncio.wait_for(ws.recv(), timeout=0.2)
                    except asyncio.TimeoutError:
                        continue
                    d = json.loads(msg)
                    if "Events" not in d:
                        continue  # a notice
                    with self.cv:
                        self.events.append(d)
                        self.stamps.append(time.monotonic())
                        self.cv.notify_all()
        except Exception as e:  # the test's wait_for reports it
            self.error = e
            with self.cv:
                self.returncode = 1
                self.cv.notify_all()

    def stop(self):
        self.done = True


class DedupRig(OsmRig):
    """OsmRig (ibsim, fabricbusd, tail, opensm + plugin) + the IB agent + a
    second tail that asks for quiet events."""

    def start(self):
        super().start()
        self.qtail = WsTail(self.broker.ws_url(since=0, quiet=1))
        args = [AGENT, "--broker", self.broker.agent_addr, "--map", self.broker.http_addr,
                "--agent-id", IB_ID, "--fabric", FABRIC, "--interval", str(INTERVAL_MS)]
        self.agent_log = os.path.join(self.sim.workdir, "agent.log")
        with open(self.agent_log, "ab") as log:
            self.agent = self.sim.spawn(args, IB_HOST, env_extra=self.sim.sanitizer_env(), stdout=log,
                                        stderr=subprocess.STDOUT)
        self.tail.wait_for(lambda d: oem(d).get("AgentId") == IB_ID and oem(d).get("Kind") == "topology",
                           timeout=30, what="a topology event from the IB agent")
        self.tail.wait_quiet(2.0, timeout=60)
        return self

    def stop(self):
        if getattr(self, "agent", None) is not None:
            self.agent_rc = ibsim._stop_proc(self.agent, timeout=10)
        if getattr(self, "qtail", None) is not None:
            self.qtail.stop()
        return super().stop()


def one_unlink(r, sw, port, what, want_agents):
    """Unlink sw:port; the sources in want_agents must all have reported it
    (seen by the quiet=1 subscriber). Returns (visible, duplicates)."""
    mark, qmark = r.tail.mark(), r.qtail.mark()
    st0 = r.broker.status()["broker"]["dedup"]
    r.sim.unlink(sw, port)

    def reported():
        got = [d for _, d in r.qtail.since(qmark) if link_down(d)]
        return got if {oem(d)["AgentId"] for d in got} >= want_agents and len(got) >= 2 else None
    got = wait_for(reported, lambda g: g, 20, f"{what}: link_down from {sorted(want_agents)}",
                   show=lambda g: "\n  ".join(brief(d) for _, d in r.qtail.since(qmark)))
    time.sleep(1.0)  # a late report from a slower source would show by now
    got = [d for _, d in r.qtail.since(qmark) if link_down(d)]
    visible = [d for d in got if not quiet(d)]
    dups = [d for d in got if quiet(d)]
    default = [d for _, d in r.tail.since(mark) if link_down(d)]
    st = r.broker.status()["broker"]["dedup"]
    print(f"  {what}: {len(got)} link_down reports from {sorted({oem(d)['AgentId'] for d in got})}; "
          f"a default subscriber got {len(default)}: {[brief(d) for d in default]}; quiet duplicates "
          f"{[(rec(d)['EventId'], oem(d)['AgentId'], quiet(d), rec(d).get('EventGroupId')) for d in dups]}; "
          f"/status dedup duplicates {st['duplicates'] - st0['duplicates']}", flush=True)
    # One visible event, at the default subscriber and in the quiet=1 stream alike.
    assert len(visible) == 1, [brief(d) for d in visible]
    assert [rec(d)["EventId"] for d in default] == [rec(visible[0])["EventId"]], \
        ([brief(d) for d in default], brief(visible[0]))
    first = int(rec(visible[0])["EventId"])
    assert dups, f"{what}: no duplicate"
    for d in dups:
        check_redfish_event(d)
        assert quiet(d) == "duplicate", oem(d)
        assert rec(d)["EventGroupId"] == first and int(rec(d)["EventId"]) > first, rec(d)
        assert oem(d)["Counters"]["dedup_sources"] >= 2, oem(d)
    assert st["duplicates"] - st0["duplicates"] == len(dups), st
    # /status lists the cable with every source that reported it.
    entry = [e for e in st["recent"] if e["EventId"] == first]
    assert entry and entry[0]["Direction"] == "down" and entry[0]["Reports"] == len(got), (first, st)
    srcs = entry[0]["Sources"]
    assert {s.split(" ")[0] for s in srcs} == {oem(d)["AgentId"] for d in got}, (srcs, got)
    print(f"  {what}: /status dedup: {entry[0]}", flush=True)
    return visible[0], dups


def one_unlink_seen_by_several_sources_is_one_event():
    with DedupRig() as r:
        vis, dups = one_unlink(r, "leaf1", 3, "host cable leaf1:3", {IB_ID, OSM_ID})
        assert {oem(d)["AgentId"] for d in dups + [vis]} == {IB_ID, OSM_ID}, dups
        vis, dups = one_unlink(r, "leaf1", 33, "uplink leaf1:33 - spine1:1", {IB_ID})
        ends = {origin(d) for d in dups + [vis]}
        assert any(o.endswith("/Switches/leaf1/Ports/33") for o in ends) and \
            any(o.endswith("/Switches/spine1/Ports/1") for o in ends), ends
        # Everything is in the journal: a since=0 replay with quiet=1 has
        # the visible events and the duplicates, with their flags.
        ids = {rec(d)["EventId"]: quiet(d) for d in dups + [vis]}
        replay = WsTail(r.broker.ws_url(since=0, quiet=1))
        try:
            last = max(int(i) for i in ids)
            replay.wait_for(lambda d: int(rec(d)["EventId"]) >= last, timeout=20, what="the replay")
            got = {rec(d)["EventId"]: quiet(d) for _, d in replay.since() if rec(d)["EventId"] in ids}
            assert got == ids, (got, ids)
        finally:
            replay.stop()
        assert r.agent.poll() is None, "the IB agent exited"


TESTS = [one_unlink_seen_by_several_sources_is_one_event]

if __name__ == "__main__":
    main(TESTS)
