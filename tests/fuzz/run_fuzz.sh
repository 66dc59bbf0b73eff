#!/bin/sh
# Run a libFuzzer target for a few seconds over its seed corpus without
# writing into the source tree: new inputs go to a scratch directory.
# Usage: run_fuzz.sh FUZZER SEED_DIR SECONDS
set -u
fuzzer=$1 seeds=$2 secs=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$scratch/" "$scratch" "$seeds" >"$scratch/log" 2>&1
status=$?
tail -n 12 "$scratch/log"
if [ $status -ne 0 ] || ls "$scratch"/crash-* "$scratch"/leak-* "$scratch"/oom-* >/dev/null 2>&1; then
	echo "fuzzer failed (exit $status); log above"
	exit 1
fi
exit 0
