#!/bin/bash
# An agent's worst ack gap while GET /fabric/map (262144 job-node pairs) is
# rendered again and again, with the renderer thread against the event loop
# (MapRenderThread=no, the path before), as a ratio (not a test: prints
# figures, asserts none). See bench_map_stall.py.
#
# Usage: tests/bench/bench_map_stall.sh     (builds ./build-release if needed)
#        SECONDS_EACH=20 tests/bench/bench_map_stall.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
. "$here/release_build.sh" broker/fabricbusd broker/cli/fabricbus
bench_exec_python "$here/bench_map_stall.py"
