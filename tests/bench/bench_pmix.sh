#!/bin/bash
# Broker -> PMIx handler latency of fabricbus-pmix (not a test: prints figures,
# asserts none): RUNS link_down events for node001 (fabricbus publish) reach
# the handler of an `srun --mpi=pmix` step through fabricbus-pmix and
# spank_fabricbus_pmix.so; median and p99, and the ratio against the same
# events at a WebSocket subscriber (fabricbus tail). See bench_pmix.py.
#
# Usage: tests/bench/bench_pmix.sh            (builds ./build-release if needed)
#        RUNS=100 tests/bench/bench_pmix.sh
# Exit 77 (skip) when Slurm or libpmix is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
for f in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so; do
	[ -e "$f" ] || { echo "skipped: $f is not installed"; exit 77; }
done
. "$here/release_build.sh"
[ -x "$build/adapters/pmix/fabricbus-pmix" ] || { echo "skipped: fabricbus-pmix not built (libpmix-dev)"; exit 77; }
export FB_BUILD=$build FB_SRC=$src PYTHONPATH=$src/tests/lib
exec /usr/bin/python3 "$here/bench_pmix.py"
