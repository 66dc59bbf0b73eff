#!/bin/bash
# fabricbus tail replay benchmark (not a test: it prints figures, asserts none).
#
#   fabricbus publish --generate N -> fabricbusd (journal) ; then, alternately,
#   fabricbus tail --since 0 --count N > /dev/null   with the old and the new tail
#   bench_ws_sink /ws/events?since=0 N                 (the copy limit: a raw reader)
#
# "old" is fabricbus tail as it was before it moved onto the shared source
# fb_source (main at 915ad0d^1: one thread driving its own lws context,
# writing from lws's receive buffer); it is built from that commit (git
# archive into $FB_TAIL_OLD_DIR, default /tmp/fabricbus-tail-old-<commit>,
# release, the fabricbus target only; kept for the next run). FB_TAIL_OLD=
# <path to an old fabricbus binary> skips the build. "new" is this tree's.
#
# Usage: tests/bench/bench_tail.sh     (builds ./build-release if needed)
#        EVENTS=500000 ROUNDS=3 tests/bench/bench_tail.sh
# Output: per round and reader, "events/s" over the whole run (start to exit)
# and CPU per event (user + system of the reader); then the medians and
# "ratio:" lines new/old (target >= 0.95) and new/copy limit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
EVENTS=${EVENTS:-500000}
ROUNDS=${ROUNDS:-3}
OLD_COMMIT=915ad0d^1

. "$here/release_build.sh"
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus
wssink=$build/tests/bench/bench_ws_sink
bench_require_built "$wssink"

old=${FB_TAIL_OLD:-}
if [ -z "$old" ]; then
	rev=$(git -C "$src" rev-parse --short "$OLD_COMMIT") ||
		{ echo "skipped: $OLD_COMMIT is not in this clone (set FB_TAIL_OLD)"; exit 77; }
	dir=${FB_TAIL_OLD_DIR:-${TMPDIR:-/tmp}/fabricbus-tail-old-$rev}
	old=$dir/build/broker/cli/fabricbus
	if [ ! -x "$old" ]; then
		echo "building the old tail ($rev) in $dir"
		mkdir -p "$dir"
		git -C "$src" archive "$rev" | tar -x -C "$dir"
		meson setup "$dir/build" "$dir" --buildtype=release >/dev/null
		ninja -C "$dir/build" broker/cli/fabricbus >/dev/null
	fi
fi
bench_require_built "$old" "the tail before fb_source"

bench_start

ap=$(port); hp=$(port)
"$fabricbusd" -o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$hp" \
	-o "JournalDir=$work/journal" -o JournalSync=batch -o LogLevel=warn \
	2>"$work/broker.log" & pids+=($!)
wait_port "$ap"; wait_port "$hp"
# publish returns once every event is acked, i.e. journaled.
"$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id benchtail --generate "$EVENTS" \
	--timeout 600 --quiet
echo "benchmark: $EVENTS events in the journal, replayed $ROUNDS times by each reader, $(nproc) cores"

# run NAME CMD...: time CMD (stdout to /dev/null); print and record its rate.
declare -A rates cpus
run() {
	local name=$1 t
	shift
	TIMEFORMAT='%R %U %S'
	{ time "$@" >/dev/null 2>"$work/$name.err"; } 2>"$work/$name.time" ||
		{ echo "$name failed:"; cat "$work/$name.err"; exit 1; }
	t=$(cat "$work/$name.time")
	read -r rate cpu < <(echo "$t" | awk -v n="$EVENTS" '{printf "%.0f %.3f\n", n / $1, ($2 + $3) * 1e6 / n}')
	rates[$name]+="$rate "
	cpus[$name]+="$cpu "
	printf '%-6s %8s events/s  %s us/event CPU  (%s)\n' "$name:" "$rate" "$cpu" \
		"$(tr '\n' ' ' <"$work/$name.err")"
}
targs=(tail --http "127.0.0.1:$hp" --since 0 --count "$EVENTS" --timeout 300 --quiet --stats)
for r in $(seq "$ROUNDS"); do
	echo "round $r"
	run old "$old" "${targs[@]}"
	run new "$fabricbus" "${targs[@]}"
	run limit "$wssink" 127.0.0.1 "$hp" "/ws/events?since=0" "$EVENTS"
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
o=$(echo "${rates[old]}" | median); n=$(echo "${rates[new]}" | median); l=$(echo "${rates[limit]}" | median)
oc=$(echo "${cpus[old]}" | median); nc=$(echo "${cpus[new]}" | median); lc=$(echo "${cpus[limit]}" | median)
echo "old_tail_events_per_s: $o events/s (median; rounds: ${rates[old]% })"
echo "new_tail_events_per_s: $n events/s (median; rounds: ${rates[new]% })"
echo "copy_limit_events_per_s: $l events/s (median; rounds: ${rates[limit]% })"
echo "cpu_per_event: old $oc us, new $nc us, copy limit $lc us (medians)"
awk -v n="$n" -v o="$o" -v l="$l" -v nc="$nc" -v oc="$oc" 'BEGIN {
	printf "ratio: new/old tail = %.2f (target >= 0.95)\n", n / o
	printf "ratio: old/new tail cpu per event = %.2f\n", (nc > 0 ? oc / nc : 0)
	printf "ratio: new tail/copy limit = %.2f\n", n / l }'
