#!/bin/bash
# Redfish push delivery benchmark (not a test: it prints figures, asserts none).
#
# fabricbus: N events are journaled while the subscription is suspended
#   (Status.State Disabled), then it is re-enabled and timed until the
#   receiver has N POSTs: the push engine reading the journal from its cursor,
#   rendering, matching and POSTing each event (one in flight per
#   destination, keep-alive) through libcurl on the loop.
# Reference: curl (the same libcurl, one process, one keep-alive connection,
#   sequential) POSTing the same N rendered Events (read back with
#   `fabricbus tail`) to the same receiver, timed the same way.
# The receiver is bench_http_sink (libevent evhttp, 204 to every POST), so it
# is not the bottleneck of either side.
#
# Usage: tests/bench/bench_push.sh        N=20000 tests/bench/bench_push.sh
# Output: "name: value unit" lines and a "ratio:" line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
N=${N:-20000}

. "$here/release_build.sh" broker/fabricbusd broker/cli/fabricbus tests/bench/bench_http_sink
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus
sink=$build/tests/bench/bench_http_sink
command -v curl >/dev/null || { echo "bench_push: curl not found (deploy/install-deps.sh)" >&2; exit 1; }
. "$here/bench_lib.sh"
bench_start

ap=$(port); hp=$(port); sp=$(port)
"$fabricbusd" -o AgentListen=127.0.0.1:$ap -o HttpListen=127.0.0.1:$hp -o JournalDir="$work/j" \
	-o JournalSync=none >"$work/fabricbusd.log" 2>&1 &
pids+=($!)
wait_port "$ap"; wait_port "$hp"
rf() { curl -sS -f -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "http://127.0.0.1:$hp$2"; }

"$sink" "$sp" "$N" >"$work/sink.out" &
sinkpid=$!; pids+=($sinkpid)
wait_port "$sp"
rf POST /redfish/v1/EventService/Subscriptions \
	"{\"Destination\":\"http://127.0.0.1:$sp/events\",\"Context\":\"bench\"}" >/dev/null
rf PATCH /redfish/v1/EventService/Subscriptions/1 '{"Status":{"State":"Disabled"}}' >/dev/null
"$fabricbus" publish --broker 127.0.0.1:$ap --agent-id bench-push --generate "$N" --quiet
"$fabricbus" tail --http 127.0.0.1:$hp --since 0 --count "$N" --timeout 120 >"$work/events.jsonl"
t0=$(now)
rf PATCH /redfish/v1/EventService/Subscriptions/1 '{"Status":{"State":"Enabled"}}' >/dev/null
wait "$sinkpid"
t1=$(now)
read -r got secs <"$work/sink.out"
# The receiver's clock, first POST to the Nth, for both sides.
push_rate=$(awk -v n="$got" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
push_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')

# Reference: curl, one connection, the same bodies in sequence.
sp2=$(port)
"$sink" "$sp2" "$N" >"$work/sink2.out" &
sinkpid=$!; pids+=($sinkpid)
wait_port "$sp2"
awk -v url="http://127.0.0.1:$sp2/events" '
	{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "%surl = \"%s\"\ndata-binary = \"%s\"\n", (NR > 1 ? "next\n" : ""), url, $0 }
	' "$work/events.jsonl" >"$work/curl.conf"
t0=$(now)
curl -sS -o /dev/null -H "Content-Type: application/json" -H "Expect:" --config "$work/curl.conf" || { echo "bench_push: curl failed ($?)" >&2; exit 1; }
wait "$sinkpid"
t1=$(now)
read -r got2 secs2 <"$work/sink2.out"
ref_rate=$(awk -v n="$got2" -v s="$secs2" 'BEGIN { printf "%.0f", n / s }')

echo "events: $N"
echo "fabricbus push (journal -> render -> match -> POST, 1 destination): $push_rate deliveries/s (resume to last delivery: $push_wall s)"
echo "curl reference (same bodies, same receiver, 1 keep-alive connection): $ref_rate POSTs/s"
awk -v a="$push_rate" -v b="$ref_rate" 'BEGIN { printf "ratio: %.2f (fabricbus push / curl)\n", a / b }'
