#!/bin/bash
# Fan-out benchmark (not a test: it prints figures, asserts none).
#
# For 1, 10, 100 and 1,000 WebSocket subscribers (bench_ws_sink, C):
#   4 publishers -> fabricbusd (default config) -> S subscribers
# printing delivered messages/s, the broker's CPU per delivered message and
# its VmHWM, against the copy limit: bench_fanout_ref writes the same frames,
# pre-rendered, to the same number of sockets from one thread.
# Then the catch-up cost: CPU per message served from the journal
# (?since=0 after a restart, ring empty) against from the ring.
#
# Usage: tests/bench/bench_fanout.sh          (builds ./build-release if needed)
#        SUBS="1 10 100" MESSAGES=20000000 tests/bench/bench_fanout.sh
#        SUBS=10 CATCHUP_EVENTS=0 tests/bench/bench_fanout.sh   (no catch-up part)
# Output: "name: value unit" lines and "ratio:" lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
SUBS=${SUBS:-1 10 100 1000}
MESSAGES=${MESSAGES:-20000000}   # delivered messages per subscriber count
MAX_EVENTS=${MAX_EVENTS:-1000000}
CATCHUP_EVENTS=${CATCHUP_EVENTS:-60000} # below WsRingEvents (65536): all in the ring
CATCHUP_SINKS=${CATCHUP_SINKS:-20}

. "$here/release_build.sh"
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus
sink=$build/tests/bench/bench_ws_sink
ref=$build/tests/bench/bench_fanout_ref

. "$here/bench_lib.sh"
bench_start
. "$here/bench_fanout_lib.sh"

echo "benchmark: fan-out, 4 publishers, default config, $(nproc) cores"
for S in $SUBS; do
	E=$((MESSAGES / S)); [ "$E" -gt "$MAX_EVENTS" ] && E=$MAX_EVENTS; E=$((E - E % 4))
	j="$work/journal-$S"
	start_broker "$j"
	start_sinks "$sink" "$HP" "$S" "$E" "/ws/events"
	wait_subscribers "$HP" "$S"
	c0=$(cpu_s "$BROKER"); t0=$(now)
	publish "$AP" "$E"
	wait_sinks
	t1=$(now); c1=$(cpu_s "$BROKER"); hwm=$(hwm_mib "$BROKER")
	stop_broker
	# The copy limit: the same frames, pre-rendered, to S sockets from one thread.
	rp=$(port)
	"$ref" "$j" "$rp" "$S" >"$work/ref.out" & refpid=$!; pids+=($refpid)
	wait_port "$rp"
	start_sinks "$sink" "$rp" "$S" "$E" "/ws/events"
	rt0=$(now)
	wait_sinks
	wait "$refpid" || true
	rt1=$(now)
	awk -v s="$S" -v e="$E" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v h="$hwm" \
	    -v r0="$rt0" -v r1="$rt1" -v rc="$(awk '/ref_cpu_s/ {print $2}' "$work/ref.out")" 'BEGIN {
		m = s * e
		printf "fanout_%d_delivered: %.0f messages/s (%d events x %d subscribers)\n", s, m / (t1 - t0), e, s
		printf "fanout_%d_broker_cpu: %.3f us/message\n", s, (c1 - c0) * 1e6 / m
		printf "fanout_%d_broker_vmhwm: %d MiB\n", s, h
		printf "fanout_%d_ref_delivered: %.0f messages/s\n", s, m / (r1 - r0)
		printf "fanout_%d_ref_cpu: %.3f us/message\n", s, rc * 1e6 / m
		printf "ratio: fanout_%d broker/ref = %.2f\n", s, (m / (t1 - t0)) / (m / (r1 - r0))
	}'
done

# Catch-up: the same events served to CATCHUP_SINKS subscribers with
# ?since=0, once from the ring, once from the journal (after a restart).
# CATCHUP_EVENTS=0 leaves it out (a sink for 0 events never subscribes).
[ "$CATCHUP_EVENTS" -gt 0 ] || exit 0
j="$work/journal-catchup"
start_broker "$j"
start_sinks "$sink" "$HP" 1 "$CATCHUP_EVENTS" /ws/events
wait_subscribers "$HP" 1
publish "$AP" "$CATCHUP_EVENTS"
wait_sinks
m=$((CATCHUP_SINKS * CATCHUP_EVENTS))
c0=$(cpu_s "$BROKER"); t0=$(now)
start_sinks "$sink" "$HP" "$CATCHUP_SINKS" "$CATCHUP_EVENTS" "/ws/events?since=0"
wait_sinks
t1=$(now); c1=$(cpu_s "$BROKER")
stop_broker
start_broker "$j"
jc0=$(cpu_s "$BROKER"); jt0=$(now)
start_sinks "$sink" "$HP" "$CATCHUP_SINKS" "$CATCHUP_EVENTS" "/ws/events?since=0"
wait_sinks
jt1=$(now); jc1=$(cpu_s "$BROKER")
stop_broker
awk -v m="$m" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v jc0="$jc0" -v jc1="$jc1" \
    -v jt0="$jt0" -v jt1="$jt1" 'BEGIN {
	r = (c1 - c0) * 1e6 / m; j = (jc1 - jc0) * 1e6 / m
	printf "catchup_ring: %.3f us/message (%.0f messages/s)\n", r, m / (t1 - t0)
	printf "catchup_journal: %.3f us/message (%.0f messages/s)\n", j, m / (jt1 - jt0)
	printf "ratio: catchup journal/ring = %.2f\n", (r > 0) ? (j / r) : 0
}'
