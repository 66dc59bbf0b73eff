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
. "$here/bench_lib.sh"
bench_require /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged \
	/usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so
. "$here/release_build.sh"
bench_require_built "$build/adapters/pmix/fabricbus-pmix" libpmix-dev
bench_exec_python "$here/bench_pmix.py"
