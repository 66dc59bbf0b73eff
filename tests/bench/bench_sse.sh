#!/bin/bash
# Redfish SSE against the WebSocket fan-out (not a test: it prints figures,
# asserts none).
#
# For 1, 100 and 1,000 streams: 4 publishers -> fabricbusd (release build,
# default config) -> S subscribers, once as WebSocket (bench_ws_sink on
# /ws/events) and once as SSE (bench_sse_sink on the ServerSentEventUri,
# no $filter), on the same events (the same count of the same generated
# events, a fresh broker each run). Prints events/s and delivered
# messages/s of each, the broker's CPU per delivered message, and the ratio
# SSE/WebSocket. Then the $filter cost: 1,000 SSE streams with 1,000
# different filters that all select every event, against no filter.
#
# Usage: tests/bench/bench_sse.sh         (builds ./build-release if needed)
#        STREAMS="1 100" MESSAGES=4000000 tests/bench/bench_sse.sh
# Run it under flock /tmp/fabricbus-heavy.lock on a shared machine.
# With auth on the Redfish service, set FB_BENCH_AUTH="Basic <base64>".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
STREAMS=${STREAMS:-1 100 1000}
MESSAGES=${MESSAGES:-4000000}   # delivered messages per stream count and kind
MAX_EVENTS=${MAX_EVENTS:-400000}
SSE_PATH=/redfish/v1/EventService/SSE

. "$here/release_build.sh"
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus
ws_sink=$build/tests/bench/bench_ws_sink
sse_sink=$build/tests/bench/bench_sse_sink

. "$here/bench_lib.sh"
bench_start
. "$here/bench_fanout_lib.sh"
# run NAME SINK S E PATH... -> RESULT="t0 t1 cpu0 cpu1" (no subshell: $pids stays whole)
run() {
	local name=$1 sink=$2 s=$3 e=$4; shift 4
	start_broker "$work/journal-$name-$s"
	start_sinks "$sink" "$HP" "$s" "$e" "$@"
	wait_subscribers "$HP" "$s"
	local c0 t0 c1 t1
	c0=$(cpu_s "$BROKER"); t0=$(now)
	publish "$AP" "$e"
	wait_sinks || { echo "$name: a sink failed (see above)" >&2; exit 1; }
	t1=$(now); c1=$(cpu_s "$BROKER")
	stop_broker
	rm -rf "$work/journal-$name-$s"
	RESULT="$t0 $t1 $c0 $c1"
}

report() { # label S E "t0 t1 c0 c1"
	awk -v l="$1" -v s="$2" -v e="$3" -v r="$4" 'BEGIN {
		split(r, a, " "); t = a[2] - a[1]; m = s * e
		printf "%s_%d: %.0f events/s, %.0f messages/s (%d events x %d streams), %.3f us broker CPU/message\n",
		       l, s, e / t, m / t, e, s, (a[4] - a[3]) * 1e6 / m
	}'
}

echo "benchmark: Redfish SSE vs WebSocket fan-out, 4 publishers, default config, $(nproc) cores"
for S in $STREAMS; do
	E=$((MESSAGES / S)); [ "$E" -gt "$MAX_EVENTS" ] && E=$MAX_EVENTS; E=$((E - E % 4))
	run ws "$ws_sink" "$S" "$E" /ws/events; ws=$RESULT
	run sse "$sse_sink" "$S" "$E" "$SSE_PATH"; sse=$RESULT
	report websocket "$S" "$E" "$ws"
	report sse "$S" "$E" "$sse"
	awk -v s="$S" -v w="$ws" -v x="$sse" 'BEGIN {
		split(w, a, " "); split(x, b, " ")
		printf "ratio: sse/websocket events/s with %d streams = %.2f (broker CPU per message %.2f)\n",
		       s, (a[2] - a[1]) / (b[2] - b[1]),
		       ((b[4] - b[3]) > 0 && (a[4] - a[3]) > 0) ? (b[4] - b[3]) / (a[4] - a[3]) : 0
	}'
done

# The $filter cost: 1,000 streams, each with its own filter that selects
# every generated event (they are ResourceEvent TestMessages on switch
# "loadgen"), against the same streams without a filter.
S=1000; E=$((MESSAGES / S)); E=$((E - E % 4))
paths=()
for ((i = 0; i < S; i++)); do
	# (RegistryPrefix eq ResourceEvent and not (MessageId eq Fabric.1.0.PortFailed<i>)) or EventType eq Other<i%7>
	f="(RegistryPrefix%20eq%20ResourceEvent%20and%20not%20(MessageId%20eq%20Fabric.1.0.PortFailed$i))"
	f="$f%20or%20(OriginResource%20eq%20%2Fredfish%2Fv1%2FFabrics%2FIB%2FSwitches%2Fs$i%20and%20SubordinateResources%20eq%20true)"
	paths+=("$SSE_PATH?\$filter=$f")
done
run plain "$sse_sink" "$S" "$E" "$SSE_PATH"; plain=$RESULT
run filtered "$sse_sink" "$S" "$E" "${paths[@]}"; filtered=$RESULT
report sse_nofilter "$S" "$E" "$plain"
report sse_filter "$S" "$E" "$filtered"
awk -v p="$plain" -v f="$filtered" 'BEGIN {
	split(p, a, " "); split(f, b, " ")
	printf "ratio: sse filtered/unfiltered events/s with 1000 streams = %.2f\n", (a[2] - a[1]) / (b[2] - b[1])
}'
