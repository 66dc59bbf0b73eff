#!/bin/bash
# The live page's benchmark (not a test: it prints figures, asserts none).
#
# 1. Frame time: the page in Debian's headless Chromium (playwright-core,
#    tests/browser) on a release fabricbusd whose map holds 500 switches of
#    36 ports, under a stream of 10k link events a minute; Chromium's own
#    figures (requestAnimationFrame intervals, long-animation-frame entries
#    of the performance timeline, CDP Performance.getMetrics TaskDuration),
#    against the reference: the same page on the same map with no stream.
# 2. The broker's CPU per event at that rate with 20 pages subscribed (each
#    also polling /status and /fabric/map as the page does), against the
#    reference: the same stream with no page.
#
# Usage: tests/bench/bench_page.sh      (builds ./build-release if needed)
#        SWITCHES=500 PER_MINUTE=10000 SECONDS_=20 TABS=20 tests/bench/bench_page.sh
# Output: "name: value unit" lines and "ratio:" lines. Needs deploy/install-deps.sh
# (chromium, npm ci in tests/browser).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/release_build.sh"
. "$here/bench_lib.sh"
bench_exec_python "$here/bench_page.py"
