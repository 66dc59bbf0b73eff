"""GET /fabric/map rendered off the event loop (issue 14): with 262144 (job,
node) pairs registered (JobMembersMax's default) and the map rendered again
and again, an agent's events are still acked one by one (liveness: every
ack comes, the worst gap is printed, never asserted), and the map the
renderer thread publishes is, byte for byte, the map the event loop renders
for the same state (MapRenderThread=no, the path before the thread).
tests/bench/bench_map_stall.sh compares the ack gaps on a release build.

    /usr/bin/python3 tests/integration/test_map_render.py [test_name ...]
"""
import fbtest
import mapstall
from fbtest import assert_no_sanitizer_report, main


def stop(b):
    assert b.stop() == 0, b.log()[-3000:]
    assert_no_sanitizer_report(b.log(), "fabricbusd")


def acks_flow_while_the_map_renders_and_the_map_is_unchanged():
    b = fbtest.Broker(**mapstall.OPTS).start()
    try:
        st = b.status()["broker"]["fabric_map"]
        assert st["render_thread"] is True, st
        got = mapstall.run(b, churn=True, renders=3)
    finally:
        stop(b)
    print(f"renderer thread: {got['acked']} events acked one by one while the map was "
          f"rendered {got['renders']} times ({got['regs']} registrations, {got['gets']} GETs): "
          f"worst ack gap {got['worst'] * 1000:.1f} ms, median {got['median'] * 1000:.2f} ms; "
          f"render {got['render_ms']:.0f} ms, of it on the loop {got['take_ms']:.0f} ms")
    assert got["renders"] >= 3 and got["acked"] > 0, got
    old = fbtest.Broker(MapRenderThread="no", **mapstall.OPTS).start()
    try:
        assert old.status()["broker"]["fabric_map"]["render_thread"] is False
        ref = mapstall.run(old, churn=False, renders=0, min_s=0)
    finally:
        stop(old)
    assert len(got["map"]) > mapstall.JOBS * mapstall.PER_JOB * 47, len(got["map"])
    assert got["map"] == ref["map"], "the renderer thread's map differs from the loop's"


ALL = [acks_flow_while_the_map_renders_and_the_map_is_unchanged]

if __name__ == "__main__":
    main(ALL)
