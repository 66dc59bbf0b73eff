#!/bin/bash
# The load and fault suite (issue 14): not part of `meson test` (it takes
# minutes to tens of minutes); prints tables, exits 1 if any sink with a
# durability promise lost an event or a scenario failed.
#
#   tests/load/run.sh [--quick] [--only scale,overload,subscribers,diskfull,broker,kafka,ib,slurm,attacks]
#
# Needs what the integration tests need (deploy/install-deps.sh: ibsim,
# Slurm, the Kafka jars of tests/kafka) and root for the tmpfs of the
# disk-full scenario. Builds ./build-release if needed (FB_BENCH_BUILD overrides).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$src/tests/bench/release_build.sh"
# 10k agents and 1k subscribers: the broker and the driver need descriptors.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
export FB_BUILD=$build FB_SRC=$src PYTHONPATH=$src/tests/lib:$src/tests/integration
exec /usr/bin/python3 "$here/load.py" "$@"
