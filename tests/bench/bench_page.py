"""tests/bench/bench_page.sh's body: see there. Prints, asserts nothing."""
import json
import os
import random
import statistics
import threading
import time

import browser
import fbtest
from fbtest import Broker, publish

SWITCHES = int(os.environ.get("SWITCHES", "500"))
PORTS = int(os.environ.get("PORTS", "36"))
PER_MINUTE = int(os.environ.get("PER_MINUTE", "10000"))
SECONDS = float(os.environ.get("SECONDS_", "20"))
TABS = int(os.environ.get("TABS", "20"))
EVENTS = int(os.environ.get("EVENTS", "2000"))  # per broker-cost run
ROUNDS = int(os.environ.get("ROUNDS", "3"))     # broker-cost runs of each kind, interleaved
FRAMES = os.environ.get("FRAMES", "1") != "0"   # FRAMES=0: the broker's cost only
VIEWS = ("dom", "canvas")
BATCHES_PER_S = 4  # one `fabricbus publish` per quarter second


def guid(i):
    return f"0x0008f104004{i:05x}"


def ev(kind, i, port):
    return {"kind": kind, "tech": "infiniband", "link_class": "isl", "switch": f"sw{i:04d}",
            "switch_guid": guid(i), "port": port}


class Stream:
    """PER_MINUTE link events, a random port of a random switch going down or
    back up, in BATCHES_PER_S publishes a second, until stop()."""

    def __init__(self, addr, limit=0):
        self.addr, self.sent, self.down, self.limit = addr, 0, set(), limit
        self.halt = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def run(self):
        per_batch = max(1, round(PER_MINUTE / 60 / BATCHES_PER_S))
        t_next = time.monotonic()
        rnd = random.Random(7)
        while not self.halt.is_set() and not (self.limit and self.sent >= self.limit):
            batch = []
            n = min(per_batch, self.limit - self.sent) if self.limit else per_batch
            for _ in range(n):
                k = (rnd.randrange(SWITCHES), rnd.randrange(1, PORTS + 1))
                batch.append(ev("link_up" if k in self.down else "link_down", *k))
                self.down ^= {k}
            r = publish(self.addr, "bench-page", batch, timeout=30, extra=["--quiet"])
            assert r.returncode == 0, r.stderr
            self.sent += len(batch)
            t_next += 1.0 / BATCHES_PER_S
            self.halt.wait(max(0.0, t_next - time.monotonic()))

    def start(self):
        self.t.start()
        return self

    def stop(self):
        self.halt.set()
        self.t.join()
        return self.sent


def cpu_s(pid):
    """The process's CPU time, utime + stime over all its threads (/proc/PID/stat), in s."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


RECORDER = """(() => {
  window.__fb = { frames: [], loaf: [] };
  if (!window.__fbTick) {  /* one rAF chain, however often this runs */
    window.__fbTick = (t) => { window.__fb.frames.push(t); requestAnimationFrame(window.__fbTick); };
    requestAnimationFrame(window.__fbTick);
  }
  if (!window.__fbObs) {
    window.__fbObs = new PerformanceObserver((l) => { for (const e of l.getEntries())
      if (window.__fb) window.__fb.loaf.push(e.duration); });
    window.__fbObs.observe({ type: "long-animation-frame" });
  }
  return true;
})()"""
RESULTS = """(() => { const f = window.__fb.frames, d = [];
  for (let i = 1; i < f.length; i++) d.push(f[i] - f[i - 1]);
  const r = { intervals: d, loaf: window.__fb.loaf };
  window.__fb = { frames: [], loaf: [] };
  return r; })()"""


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))] if xs else float("nan")


def frame_run(page, addr, stream):
    page.eval(RECORDER)
    m0 = page.metrics()
    s = Stream(addr).start() if stream else None
    time.sleep(SECONDS)
    sent = s.stop() if s else 0
    m1 = page.metrics()
    r = page.eval(RESULTS)
    iv = r["intervals"]
    busy = (m1["TaskDuration"] - m0["TaskDuration"]) / SECONDS
    script = (m1["ScriptDuration"] - m0["ScriptDuration"]) / SECONDS
    layout = ((m1["LayoutDuration"] - m0["LayoutDuration"]) +
              (m1["RecalcStyleDuration"] - m0["RecalcStyleDuration"])) / SECONDS
    return {"frames": len(iv), "p50": pct(iv, 50), "p95": pct(iv, 95), "p99": pct(iv, 99),
            "max": max(iv) if iv else float("nan"), "loaf": len(r["loaf"]),
            "loaf_ms": sum(r["loaf"]), "busy": busy, "script": script, "layout": layout,
            "sent": sent}


def show(name, r):
    print(f"{name}_frames: {r['frames']} frames in {SECONDS:.0f} s ({r['frames'] / SECONDS:.1f} fps)")
    for k in ("p50", "p95", "p99", "max"):
        print(f"{name}_frame_interval_{k}: {r[k]:.1f} ms")
    print(f"{name}_long_animation_frames: {r['loaf']} ({r['loaf_ms']:.0f} ms in all)")
    print(f"{name}_renderer_main_thread_busy: {r['busy'] * 100:.1f} % "
          f"(script {r['script'] * 100:.1f} %, style+layout {r['layout'] * 100:.1f} %)")
    if r["sent"]:
        print(f"{name}_events: {r['sent']} ({r['sent'] / SECONDS * 60:.0f}/min)")


def ratios(what, a, b):
    print(f"ratio: {what} frame interval p50 {a['p50'] / b['p50']:.2f}, p95 {a['p95'] / b['p95']:.2f}, "
          f"p99 {a['p99'] / b['p99']:.2f}; renderer busy {a['busy'] / max(b['busy'], 1e-9):.2f}")


def open_view(page, url, view):
    """The page with that fabric view, drawn and settled; its first draw."""
    t0 = time.monotonic()
    if view == "dom":
        page.goto(url + "?view=dom")
        page.wait(f"document.querySelectorAll('#fabric .sw').length === {SWITCHES}", 120,
                  f"{SWITCHES} switches drawn (dom)")
    else:
        page.goto(url)
        page.wait(f"typeof fabricView === 'object' && fabricView.rows() === {SWITCHES}", 120,
                  f"{SWITCHES} switches drawn (canvas)")
    print(f"{view}_first_draw: {(time.monotonic() - t0) * 1000:.0f} ms (load to {SWITCHES} switches drawn)")
    time.sleep(3)


class Readers:
    """n WebSocket subscribers reading /ws/events as the page does (each
    message parsed as JSON, its EventId kept), in one asyncio thread."""

    def __init__(self, b, n, since):
        import asyncio
        self.asyncio, self.b, self.n, self.since = asyncio, b, n, since
        self.last = [0] * n
        self.loop = asyncio.new_event_loop()
        self.tasks = []
        self.t = threading.Thread(target=self.loop.run_until_complete, args=(self.main(),), daemon=True)

    async def one(self, i):
        import websockets
        async with websockets.connect(f"ws://{self.b.http_addr}/ws/events?since={self.since}",
                                      max_size=None) as ws:
            async for msg in ws:
                rec = (json.loads(msg).get("Events") or [{}])[0]
                self.last[i] = max(self.last[i], int(rec.get("EventId") or 0))

    async def main(self):
        self.tasks = [self.asyncio.ensure_future(self.one(i)) for i in range(self.n)]
        await self.asyncio.gather(*self.tasks, return_exceptions=True)

    def start(self):
        self.t.start()
        self.b.wait_status(lambda st: sum(1 for s in st["websocket"]["subscribers"]
                                          if s.get("state") == "live") >= self.n, timeout=60)
        return self

    def stop(self):
        self.loop.call_soon_threadsafe(lambda: [t.cancel() for t in self.tasks])
        self.t.join(30)


def broker_run(b, readers):
    """The broker's CPU (utime + stime) per event for EVENTS events at
    PER_MINUTE, from the first publish until every reader has read the last."""
    first = b.status()["broker"]["events"]["committed_id"]
    r = Readers(b, readers, first).start() if readers else None
    time.sleep(1)
    c0 = cpu_s(b.proc.pid)
    sent = Stream(b.agent_addr, EVENTS).start()
    sent.t.join()
    end = first + sent.sent
    b.wait_status(lambda st: st["broker"]["events"]["committed_id"] >= end, timeout=120)
    deadline = time.monotonic() + 120
    while r and min(r.last) < end:
        assert time.monotonic() < deadline, f"readers at {r.last}, want {end}"
        time.sleep(0.02)
    c1 = cpu_s(b.proc.pid)
    if r:
        r.stop()
        b.wait_status(lambda st: not st["websocket"]["subscribers"], timeout=60)
    return (c1 - c0) / sent.sent


def broker_cost(b):
    """Interleaved runs without and with TABS readers; the median of each."""
    runs = {0: [], TABS: []}
    for _ in range(ROUNDS):
        for n in (0, TABS):
            runs[n].append(broker_run(b, n))
    med = {n: statistics.median(v) for n, v in runs.items()}
    for n, label in ((0, "no_subscriber"), (TABS, f"subscribers_{TABS}")):
        print(f"{label}_broker_cpu_per_event: {med[n] * 1e6:.1f} us (median of {ROUNDS}: "
              + ", ".join(f"{x * 1e6:.1f}" for x in runs[n]) + f"; {EVENTS} events at {PER_MINUTE}/min)")
    dropped = b.status()["websocket"].get("dropped_slow", 0)
    print(f"subscribers_{TABS}_dropped_as_slow: {dropped}")
    print(f"ratio: {TABS} subscribers/none broker cpu per event {med[TABS] / max(med[0], 1e-12):.2f}")


def main():
    why = browser.missing()
    if why:
        print(f"skipped: {why}")
        raise SystemExit(77)
    b = Broker().start()
    page = None
    try:
        url = f"http://{b.http_addr}/"
        topo = [ev("link_up", i, p) for i in range(SWITCHES) for p in range(1, PORTS + 1)]
        r = publish(b.agent_addr, "bench-topo", topo, timeout=300, extra=["--quiet"])
        assert r.returncode == 0, r.stderr
        b.wait_status(lambda st: st["broker"]["events"]["committed_id"] >= len(topo), timeout=120)
        print(f"switches: {SWITCHES} x {PORTS} ports")
        if FRAMES:
            page = browser.Chromium(browser.artifacts_dir("bench_page")).start()
            res = {}
            for view in VIEWS:  # the reference (dom) first, then the canvas
                open_view(page, url, view)
                res[view, "idle"] = frame_run(page, b.agent_addr, False)
                show(f"{view}_no_stream", res[view, "idle"])
                res[view, "stream"] = frame_run(page, b.agent_addr, True)
                show(f"{view}_stream", res[view, "stream"])
                page.screenshot(f"stream_{view}", full=False)
                # The fabric view's own share: the same stream with the event
                # table paused (rows held, not drawn; the fabric still follows).
                page.click("#pause")
                res[view, "paused"] = frame_run(page, b.agent_addr, True)
                page.click("#pause")
                show(f"{view}_stream_rows_paused", res[view, "paused"])
            ratios("canvas/dom under the stream", res["canvas", "stream"], res["dom", "stream"])
            ratios("canvas stream/no stream", res["canvas", "stream"], res["canvas", "idle"])
            ratios("dom stream/no stream", res["dom", "stream"], res["dom", "idle"])
            ratios("canvas/dom under the stream, event table paused", res["canvas", "paused"],
                   res["dom", "paused"])
            ratios("canvas stream, event table paused/no stream", res["canvas", "paused"],
                   res["canvas", "idle"])
            errs = page.log()["errors"]
            print(f"page_errors: {len(errs)}{' ' + errs[0] if errs else ''}")
            page.stop()
            page = None
            time.sleep(1)
        broker_cost(b)
    finally:
        if page:
            page.stop()
        b.stop()


if __name__ == "__main__":
    main()
    fbtest._cleanup()
