#!/bin/bash
# Redfish GETs over HTTPS against plain HTTP on the same broker, as a ratio
# (not a test: prints figures, asserts none). See bench_https.py.
#
# Usage: tests/bench/bench_https.sh     (builds ./build-release if needed)
#        REQS=5000 CONNS=500 ROUNDS=3 tests/bench/bench_https.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
bench_require /usr/bin/curl /usr/bin/openssl
. "$here/release_build.sh" broker/fabricbusd broker/cli/fabricbus
bench_exec_python "$here/bench_https.py"
