"""tests/bench/bench_page.sh's body: see there. Prints, asserts nothing."""
import os
import random
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
BATCHES_PER_S = 4  # one `fabricbus publish` per quarter second


def guid(i):
    return f"0x0008f104004{i:05x}"


def ev(kind, i, port):
    return {"kind": kind, "tech": "infiniband", "link_class": "isl", "switch": f"sw{i:04d}",
            "switch_guid": guid(i), "port": port}


class Stream:
    """PER_MINUTE link events, a random port of a random switch going down or
    back up, in BATCHES_PER_S publishes a second, until stop()."""

    def __init__(self, addr):
        self.addr, self.sent, self.down = addr, 0, set()
        self.halt = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def run(self):
        per_batch = max(1, round(PER_MINUTE / 60 / BATCHES_PER_S))
        t_next = time.monotonic()
        rnd = random.Random(7)
        while not self.halt.is_set():
            batch = []
            for _ in range(per_batch):
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


def cpu_ns(pid):
    """The process's CPU time over all its threads (schedstat, ns)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


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


def broker_run(b, addr, stream):
    """The broker's CPU over SECONDS, with or without the stream; and the
    events sent."""
    c0 = cpu_ns(b.proc.pid)
    s = Stream(addr).start() if stream else None
    time.sleep(SECONDS)
    sent = s.stop() if s else 0
    return cpu_ns(b.proc.pid) - c0, sent


def broker_cost(b, label):
    """CPU per event above the broker's CPU without events in the same state
    (its timers, and the pages' /status and /fabric/map polls)."""
    idle, _ = broker_run(b, b.agent_addr, False)
    busy, sent = broker_run(b, b.agent_addr, True)
    per = (busy - idle) / max(1, sent)
    print(f"{label}_broker_cpu_idle: {idle / SECONDS / 1e7:.2f} % of a core (no events)")
    print(f"{label}_broker_cpu_per_event: {per / 1000:.1f} us ({sent} events in {SECONDS:.0f} s, "
          f"above idle)")
    time.sleep(1.0)  # the last batch's delivery
    return per


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
        page = browser.Chromium(browser.artifacts_dir("bench_page")).start()
        t0 = time.monotonic()
        page.goto(url)
        page.wait(f"document.querySelectorAll('#fabric .sw').length === {SWITCHES}", 120,
                  f"{SWITCHES} switches drawn")
        cells = page.eval("document.querySelectorAll('#fabric .port').length")
        print(f"switches: {SWITCHES} x {PORTS} ports ({cells} port cells)")
        print(f"first_draw: {(time.monotonic() - t0) * 1000:.0f} ms (load to {SWITCHES} switches drawn)")
        time.sleep(2)
        idle = frame_run(page, b.agent_addr, False)
        show("reference_idle", idle)
        busy = frame_run(page, b.agent_addr, True)
        show("stream", busy)
        page.screenshot("stream", full=False)
        print(f"ratio: stream/idle frame interval p95 {busy['p95'] / idle['p95']:.2f}, "
              f"p99 {busy['p99'] / idle['p99']:.2f}")
        print(f"ratio: stream/idle renderer busy {busy['busy'] / max(idle['busy'], 1e-9):.2f}")
        errs = page.log()["errors"]
        print(f"page_errors: {len(errs)}{' ' + errs[0] if errs else ''}")

        page.goto("about:blank")
        time.sleep(1)
        ref_cpu = broker_cost(b, "reference_no_page")
        page.tabs(url, TABS)
        b.wait_status(lambda st: sum(1 for s in st["websocket"]["subscribers"]
                                     if s.get("state") == "live") >= TABS, timeout=120)
        time.sleep(2)
        tab_cpu = broker_cost(b, f"pages_{TABS}")
        dropped = b.status()["websocket"].get("dropped_slow", 0)
        print(f"pages_{TABS}_dropped_as_slow: {dropped}")
        print(f"ratio: {TABS} pages/no page broker cpu per event {tab_cpu / max(ref_cpu, 1):.2f}")
        page.close_tabs()
    finally:
        if page:
            page.stop()
        b.stop()


if __name__ == "__main__":
    main()
    fbtest._cleanup()
