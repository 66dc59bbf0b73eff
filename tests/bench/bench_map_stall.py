"""The ack stall of GET /fabric/map rendering (issue 14; not a test: prints
figures, asserts none). For each mode, one fabricbusd gets 16 jobs of 16384
nodes (262144 (job, node) pairs, JobMembersMax's default; 47-byte names);
then, while job 0 is registered again and again (each time the map is
rendered again) and /fabric/map is fetched, an agent sends one event at a
time and waits for its ack (tests/lib/mapstall.py). Printed per mode: the
worst and median ack gap, the render's duration and the loop's part of it;
then the worst gaps' ratio, loop / thread (how many times shorter the
longest stall is with the renderer thread).

Usage: tests/bench/bench_map_stall.sh   (SECONDS_EACH=20)
"""
import os

import fbtest
import mapstall

SECONDS_EACH = float(os.environ.get("SECONDS_EACH", "20"))


def one(thread):
    b = fbtest.Broker(MapRenderThread="yes" if thread else "no", **mapstall.OPTS).start()
    try:
        return mapstall.run(b, churn=True, renders=3, min_s=SECONDS_EACH)
    finally:
        b.stop()


def main():
    rows = {}
    for name, thread in (("loop (MapRenderThread=no)", False), ("renderer thread", True)):
        r = rows[name] = one(thread)
        print(f"{name:28s} worst ack gap {r['worst'] * 1000:8.1f} ms  median "
              f"{r['median'] * 1000:6.2f} ms  events acked {r['acked']:6d}  renders "
              f"{r['renders']:3d}  render {r['render_ms']:6.1f} ms, on the loop "
              f"{r['take_ms']:6.1f} ms", flush=True)
    loop, thr = rows["loop (MapRenderThread=no)"], rows["renderer thread"]
    print(f"same map bytes: {'yes' if loop['map'] == thr['map'] else 'NO'} "
          f"({len(thr['map'])} bytes)")
    print(f"ratio: {loop['worst'] / thr['worst']:.1f} (worst ack gap, loop / thread)")


if __name__ == "__main__":
    main()
