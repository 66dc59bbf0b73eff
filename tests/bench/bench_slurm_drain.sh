#!/bin/bash
# Unlink -> DRAIN benchmark of the whole chain (not a test: prints figures,
# asserts none): ibsim Unlink of a host cable to the node showing DRAIN in
# sinfo, with fabricbus-slurm at HoldDown=0, RUNS runs (median, p99); the
# in-run reference is Unlink -> the link_down event at a WebSocket subscriber
# (the IB agent's detection through the broker). See bench_slurm_drain.py.
#
# Usage: tests/bench/bench_slurm_drain.sh      (builds ./build-release if needed)
#        RUNS=50 INTERVAL_MS=100 tests/bench/bench_slurm_drain.sh
# Exit 77 (skip) when ibsim or Slurm is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
bench_require /usr/bin/ibsim /usr/sbin/opensm /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged
. "$here/release_build.sh"
bench_require_built "$build/adapters/slurm/fabricbus-slurm"
bench_exec_python "$here/bench_slurm_drain.py"
