#!/bin/bash
# The live page's benchmark (not a test: it prints figures, asserts none).
#
# 1. Frame time: the page in Debian's headless Chromium (playwright-core,
#    tests/browser) on a release fabricbusd whose map holds 500 switches of
#    36 ports, with no stream and then under a stream of 10k link events a
#    minute, for each fabric view: the element-per-port view (?view=dom, the
#    reference) and the canvas view (the default). Chromium's own figures
#    (requestAnimationFrame intervals p50/p95/p99, long-animation-frame
#    entries, CDP Performance.getMetrics TaskDuration as renderer main-thread
#    busy); ratios canvas/dom under the stream and stream/no stream per view.
# 2. The broker's CPU per event (utime + stime of /proc/PID/stat) over a
#    fixed number of events (EVENTS) at PER_MINUTE, counted from the first
#    publish until every subscriber has read the last event, with no
#    subscriber and with TABS WebSocket subscribers reading /ws/events as the
#    page does (each message parsed): ROUNDS runs of each, interleaved, the
#    median of each and their ratio. Pages' /status and /fabric/map polls are
#    not per-event costs and are left out (they made the old idle-subtracted
#    figure swing from run to run).
#
# Usage: tests/bench/bench_page.sh      (builds ./build-release if needed;
#        FB_BENCH_BUILD=<release build> to use another)
#        SWITCHES=500 PER_MINUTE=10000 SECONDS_=20 TABS=20 EVENTS=2000 ROUNDS=3 \
#          tests/bench/bench_page.sh     (FRAMES=0: the broker half only)
# Output: "name: value unit" lines and "ratio:" lines. Needs deploy/install-deps.sh
# (chromium, npm ci in tests/browser). Screenshots of each view under the
# stream go to <build>/test-artifacts/bench_page/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/release_build.sh"
. "$here/bench_lib.sh"
bench_exec_python "$here/bench_page.py"
