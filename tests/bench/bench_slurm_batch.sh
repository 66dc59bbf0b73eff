#!/bin/bash
# Slurm batching benchmark (not a test: it prints figures, asserts none).
#
# Starts a real Slurm cluster on loopback (tests/lib/slurm.py: munged,
# slurmctld, node[001-NODES] of which only SLURMDS run a slurmd; the others
# stay UNKNOWN, which accept DRAIN) and runs bench_slurm_batch against it:
# one batched drain + undrain of all NODES nodes through the adapter's
# actuator code (read nodes, filter, one slurm_update_node with a ranged
# hostlist, read running jobs) against NODES single-node drains + undrains
# through the same code, median of ROUNDS.
#
# Usage: tests/bench/bench_slurm_batch.sh          (builds ./build-release if needed)
#        NODES=100 SLURMDS=4 ROUNDS=5 tests/bench/bench_slurm_batch.sh
#        FB_BENCH_BUILD=/path/to/release/build tests/bench/bench_slurm_batch.sh
# Output: "name: value unit" lines and a "ratio:" line. Exit 77 (skip) when
# Slurm or munge is not installed, or the build has no libslurm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
NODES=${NODES:-100}
SLURMDS=${SLURMDS:-4}
ROUNDS=${ROUNDS:-3}

. "$here/bench_lib.sh"
bench_require /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/bin/scontrol

. "$here/release_build.sh" tests/bench/bench_slurm_batch
bench=$build/tests/bench/bench_slurm_batch
bench_require_built "$bench" "libslurm-dev missing?"

exec /usr/bin/python3 - "$src" "$bench" "$NODES" "$SLURMDS" "$ROUNDS" <<'PY'
import shutil
import subprocess
import sys
import time

src, bench, nodes, slurmds, rounds = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
sys.path.insert(0, src + "/tests/lib")
import slurm

t0 = time.monotonic()
c = slurm.SlurmCluster(nodes=nodes, slurmds=slurmds).start()
print(f"cluster_start: {time.monotonic() - t0:.2f} s ({nodes} nodes, {slurmds} slurmd)", flush=True)
try:
    rc = subprocess.run([bench, str(nodes), str(rounds)], env=c.env).returncode
    left = c.drained()
    if left:
        print(f"bench_slurm: still drained after the run: {left}", file=sys.stderr)
        rc = rc or 1
finally:
    c.stop()
    shutil.rmtree(c.workdir, ignore_errors=True)
sys.exit(rc)
PY
