#!/bin/bash
# Broker throughput benchmark (not a test: it prints figures, asserts none).
#
#   N publishers -> fabricbusd (journal, JournalSync=batch) -> 1 WebSocket subscriber
# against the reference, in the same script and on the same framing:
#   N publishers -> bare libevent relay (reads frames, writes them to one socket) -> 1 reader
#
# Usage: tests/bench/bench_broker.sh            (builds ./build-release if needed)
#        PUBLISHERS=4 PER_PUBLISHER=500000 ROUNDS=5 tests/bench/bench_broker.sh
# Output: a line per round, then "name: value unit" lines (medians over the
# rounds) and the "ratio:" lines.
#
# Rounds alternate the relay and the broker, ROUNDS (5) times: the machine's
# speed drifts (on this VM the same binary's CPU per event varies by a third
# between runs), and alternating rounds see the same drift. The broker runs
# through all rounds, as brokers do; round 1 includes its start: the first
# fill of its ring (R x ~765 B of fresh memory) and of its journal's page
# cache window, which on a VM cost a host fault per fresh page.
#
# Where the broker's CPU per event goes (perf record -e cpu-clock -g on
# fabricbusd during this script, release build, 2 cores; shares of the
# broker's samples). Session 12 (86cceb3, ~1.2 us/event): WebSocket thread
# 62% (JSON rendering 27%, sendmsg 20%, first fill of the ring: a malloc and
# page faults per slot 13%), loop 31%, sync thread 8%.
# Session 13 (ring arena, renderer at half the instructions, loop cuts;
# 0.73-0.82 us/event on an idle machine, 0.83-1.0 on a loaded one):
#   WebSocket thread   ~50%
#     sendmsg of ~600 B/event incl. the reader's loopback softirq  ~22%
#     Redfish JSON rendering (fb_redfish_render_facts, origin)      ~10%
#     ring push and subscriber fill (arena, no malloc per event)    ~3%
#     page faults of fresh arena chunks (first fill only)           ~2%
#   loop thread        ~44%
#     decode into the ~1 KB record (fb_rd_str8: stores into cold
#     batch lines; decode_why, utf8) 9%, journal record and CRC 4%,
#     socket reads 3%, page faults of fresh batches 3%, wakeups 2%
#   sync thread         ~7%  write(2) of ~124 B/event, fdatasync
# Session 14 (packed batch records, 512 KiB WebSocket writes, 1,024 events
# rendered per pass, 64 KiB agent reads, loop-side cuts; 0.56-0.58 us/event
# on an idle machine; per thread from /proc, 2M-event runs):
#   WebSocket thread   ~0.33-0.37 us/event
#     sendmsg ~0.13 (the copy of ~605 B/event into skbs ~0.07, the reader's
#     loopback receive in our context), rendering ~0.08, unpacking the
#     record 0.015, ring push 0.02
#   loop thread        ~0.14 (was 0.21-0.22 with libevent's 4 KiB reads)
#   sync thread        ~0.06 (write(2) into the page cache; in 6M-event runs
#     0.08-0.17: on this VM first touches of guest pages are expensive)
# Session 15 (steady state, rounds 2-5): the journal's page cache recycled
# (JournalCacheSize: its write(2) 14% -> 3% of the broker's samples) and
# spare batches (minor faults ~15,000 -> 2,000-3,000 per round): broker
# 0.50-0.57 us/event, broker/relay medians 0.45-0.55 (before: 0.43-0.46).
#   WebSocket thread ~63% of the broker: sendmsg's copy 21%, rendering 31%,
#     the loopback receive and the reader's wakeup ~13%, ring push 7%,
#     unpacking 7%; loop thread ~27%; sync thread ~11%.
# Session 16: no 64-bit division per ring lookup, the origin and short
# strings copied as fixed blocks: ring push 3.8% -> 2.4%, unpacking 3.9% ->
# 2.9% of the broker's samples; broker 0.475-0.68 us/event (median of 8 runs
# 0.50), broker/relay medians 0.45-0.55 (6 of 8 at 0.50 or more).
# Session 17 (main unchanged, a fresh machine of the same kind, kernel 6.18):
# broker 0.34-0.475 us/event, broker/relay medians 0.53-0.61 over 26 runs.
# Per event the two cores do ~0.41 us of work in the relay phase (publishers
# 0.25, relay 0.11, reader 0.05) and ~0.75 in the broker phase (publishers
# 0.29, broker 0.35-0.43, reader 0.075): the ratio is the inverse of those.
# The machine is CPU-bound in the broker phase (broker, 4 publishers and the
# WebSocket reader share 2 cores), so the rate follows the sum. What is left
# is mostly kernel copies of the Redfish Event's bytes (sendmsg here, recv in
# the reader) and the renderer (~7x a memcpy of its output). Tried and
# dropped (no gain, measured A/B): a pool of warm batches (session 12: 330
# MB; session 13: 4 batches), 1024-record batches, MADV_HUGEPAGE on batches
# and on ring chunks (zeroing 2 MiB pages cost more than the faults saved),
# prefetchw of the next records (session 13), of the next packed record and
# of the journal buffer (session 14: the sync thread's write(2) paid more),
# 512 events per render pass (no better than 1,024); session 16: prefetching
# the next packed records and the ring's next lines, rendering into a small
# hot buffer and copying it into the ring, 128 KiB sendmsg calls (worse).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
bench_publishers
SYNC=${SYNC:-batch}
RING=${RING:-262144}
ROUNDS=${ROUNDS:-5}

. "$here/release_build.sh"
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus
relay=$build/tests/bench/bench_relay
wssink=$build/tests/bench/bench_ws_sink

bench_start


# Run the publishers (agent ids $3-1..) against $1 and wait for the reader
# ($2: pid) to finish; sets RATE (events/s over the whole run, publisher
# start to last event read).
drive() {
	local addr=$1 reader=$2 tag=$3 t0 t1 pp=()
	t0=$(now)
	for i in $(seq "$PUBLISHERS"); do
		"$fabricbus" publish --broker "$addr" --agent-id "$tag-$i" --generate "$PER_PUBLISHER" \
			--timeout 600 --quiet &
		pp+=($!)
	done
	for p in "${pp[@]}"; do wait "$p"; done
	wait "$reader"
	t1=$(now)
	RATE=$(echo "$t0 $t1" | awk -v n="$TOTAL" '{printf "%.0f", n / ($2 - $1)}')
}

# Drop $1 from $pids once it has exited, so that the cleanup cannot kill
# another process that got its number.
forget() {
	local keep=() p
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
}

# The median of the arguments (numbers).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "benchmark: $ROUNDS rounds of $PUBLISHERS publishers x $PER_PUBLISHER events = $TOTAL events, $(nproc) cores"

# fabricbusd with its journal; one WebSocket subscriber per round. It runs
# through all rounds, as a broker does: round 1 also pays its start (the
# first fill of the ring, fresh journal pages), the later rounds show it
# running.
ap=$(port); hp=$(port)
"$fabricbusd" -o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$hp" \
	-o "JournalDir=$work/journal" -o "JournalSync=$SYNC" -o LogLevel=warn \
	-o WsRingEvents=$RING -o WsQueueEvents=$RING 2>"$work/broker.log" & broker=$!; pids+=($broker)
wait_port "$ap"; wait_port "$hp"

ratios=() relay_rates=() broker_rates=() relay_cpus=() broker_cpus=()
for r in $(seq "$ROUNDS"); do
	# Reference: the bare relay (a fresh one each round: it keeps nothing).
	sp=$(port); rp=$(port)
	"$relay" sink "$sp" "$TOTAL" >"$work/relay.out" & reader=$!; pids+=($reader)
	wait_port "$sp"
	"$relay" relay "$rp" "$sp" & relay_pid=$!; pids+=($relay_pid)
	wait_port "$rp"
	drive "127.0.0.1:$rp" "$reader" "relay$r"; relay_rate=$RATE
	relay_cpu=$(cpu_s "$relay_pid")
	kill "$relay_pid"; wait "$relay_pid" 2>/dev/null || true
	forget "$relay_pid"; forget "$reader"

	# The broker: CPU per event is its CPU during this round.
	"$wssink" 127.0.0.1 "$hp" /ws/events "$TOTAL" >"$work/ws.out" & reader=$!; pids+=($reader)
	sleep 0.3
	c0=$(cpu_s "$broker")
	drive "127.0.0.1:$ap" "$reader" "bench$r"; broker_rate=$RATE
	c1=$(cpu_s "$broker")
	forget "$reader"
	read -r rc bc ratio < <(awk -v r="$relay_cpu" -v c0="$c0" -v c1="$c1" -v n="$TOTAL" \
		-v br="$broker_rate" -v rr="$relay_rate" \
		'BEGIN {printf "%.3f %.3f %.2f\n", r * 1e6 / n, (c1 - c0) * 1e6 / n, br / rr}')
	echo "round $r: relay $relay_rate events/s ($rc us/event), broker $broker_rate events/s" \
		"($bc us/event), broker/relay $ratio"
	if [ "$r" = 1 ]; then
		echo "relay_reader: $(cat "$work/relay.out")"
		echo "broker_reader: $(cat "$work/ws.out")"
	fi
	ratios+=("$ratio") relay_rates+=("$relay_rate") broker_rates+=("$broker_rate")
	relay_cpus+=("$rc") broker_cpus+=("$bc")
done

rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$broker/status")
curl -s "http://127.0.0.1:$hp/status" >"$work/status.json" || true
syncs=$(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["broker"]["journal"]; print(j["syncs"], j["bytes"])' "$work/status.json" 2>/dev/null || echo "? ?")
# The peak RSS bound of docs/configuration.md, from this run's settings and
# its mean frame size F (ring bytes / ring size, from /status); C = the
# ring's chunk size (two chunks beside the messages); rec = the generated
# event's packed batch record with its index (broker/batch.h); J = its
# journal record (this run's journal bytes / events).
frame=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["websocket"]["ring"]; print(r["bytes"] // max(r["size"], 1))' "$work/status.json" 2>/dev/null || echo 700)
jrec=$(awk -v b="${syncs#* }" -v n="$((TOTAL * ROUNDS))" 'BEGIN {printf "%.0f", (b + 0 > 0 ? b / n : 900)}')
rss_bound_mib=$(awk -v R="$RING" -v F="$frame" -v J="$jrec" -v S=1 'BEGIN {
	base = 16 * 1048576; Q = 65536; P = 16 * 4096; rec = 132; slot = 160; C = 2 * 1048576; per_sub = 2 * 65536 + 262144
	printf "%.0f", (base + R * (F + slot) + 2 * C + (Q + 2 * P) * rec + 2 * P * J + S * per_sub) / 1048576 }')
# The figures: medians over the rounds; the ratio of the first round (the
# broker just started) is printed beside them.
echo "relay_events_per_s: $(median "${relay_rates[@]}") events/s (median of $ROUNDS rounds)"
echo "broker_events_per_s: $(median "${broker_rates[@]}") events/s (median of $ROUNDS rounds)"
echo "broker_peak_rss: $((rss_kb / 1024)) MiB (VmHWM)"
echo "broker_peak_rss_bound: $rss_bound_mib MiB (docs/configuration.md: WsRingEvents=$RING, mean frame $frame bytes, journal record $jrec bytes, 1 subscriber)"
echo "broker_journal: sync=$SYNC fdatasyncs=${syncs% *} bytes=${syncs#* }"
# CPU per event (user + system, the process's own): steadier than rates on a
# loaded machine, and what the rate ratio comes to once cores are scarce.
echo "relay_cpu: $(median "${relay_cpus[@]}") us/event (median)"
echo "broker_cpu: $(median "${broker_cpus[@]}") us/event (median)"
awk -v b="$(median "${broker_cpus[@]}")" -v r="$(median "${relay_cpus[@]}")" \
	'BEGIN {printf "ratio: relay/broker cpu per event = %.2f\n", (b > 0 ? r / b : 0)}'
echo "ratio: broker/relay = $(median "${ratios[@]}")" \
	"(median of rounds: ${ratios[*]}; round 1 includes the broker's start)"
awk -v b="$(median "${broker_rates[@]}")" 'BEGIN {printf "ratio: broker/target(500k) = %.2f\n", b / 500000}'
