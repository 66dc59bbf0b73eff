#!/bin/bash
# IB agent polling benchmark on a simulated fabric (ibsim + umad2sim; not a
# test: it prints figures, asserts none).
#
# (a) One full poll of one 36-port switch (leaf1 of fattree46.net: PortInfo of
#     36 ports, then PortCounters (+ PortCountersExtended) of 36 ports), timed by
#     `fabricbus-agent-ib --measure N --switches leaf1`, against the reference
#     in the same script and on the same switch: 36 x `smpquery portinfo <lid>
#     <port>` + 36 x `perfquery <lid> <port>`, one process per port as a script
#     would do it.
# (b) Switches per agent at a 1 s interval on fattree324.net (27 switches):
#     --measure over all switches (the full-fabric poll time), and the agent run
#     for real with --interval 1000 --log-level debug against a fabricbusd for
#     DURATION s, its logged poll and counters round times.
#
# Usage: tests/bench/bench_ib.sh                 (builds ./build-release if needed)
#        POLLS=500 REF_RUNS=5 DURATION=10 tests/bench/bench_ib.sh
# Output: "name: value unit" lines and "ratio:" lines. Exit 77 (skip) when
# ibsim, opensm or the umad2sim shim is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
POLLS=${POLLS:-200}            # (a) measured agent polls of leaf1
REF_RUNS=${REF_RUNS:-3}        # (a) runs of the 72-process reference (median kept)
FABRIC_POLLS=${FABRIC_POLLS:-20} # (b) measured full-fabric polls
DURATION=${DURATION:-10}       # (b) seconds of the live agent run
SWITCH=leaf1
topos=$src/tests/lib/topologies
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so

. "$here/bench_lib.sh"
bench_require /usr/bin/ibsim /usr/sbin/opensm /usr/sbin/smpquery /usr/sbin/perfquery "$UMAD2SIM"

. "$here/release_build.sh"
agent=$build/agents/ib/fabricbus-agent-ib
fabricbusd=$build/broker/fabricbusd

work=$(mktemp -d)
sock=fbbenchib$$
sim=
broker=
clients=()
# Stop order matters (notes/ibsim.md): clients, then ibsim. opensm runs only
# as `opensm -o`, so it is gone before ibsim stops.
stop_sim() {
	for p in "${clients[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${clients[@]}"; do wait "$p" 2>/dev/null || true; done
	clients=()
	if [ -n "$sim" ]; then
		kill "$sim" 2>/dev/null || true
		wait "$sim" 2>/dev/null || true
		sim=
	fi
}
cleanup() {
	stop_sim
	[ -z "$broker" ] || kill "$broker" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

now_ns() { date +%s%N; }

# start_sim TOPOLOGY: ibsim on a fresh socket name, then opensm -o (LIDs for PMA).
start_sim() {
	sock=fbbenchib$$_$((++simn))
	rm -f "$work/ctl"; mkfifo "$work/ctl"
	(cd "$work" && IBSIM_SOCKNAME=$sock exec /usr/bin/ibsim -s "$1" <>ctl >"$work/sim.out" 2>&1) &
	sim=$!
	for _ in $(seq 500); do
		grep -q "@$sock:ctl" /proc/net/unix && break
		sleep 0.01
	done
	grep -q "@$sock:ctl" /proc/net/unix || { echo "ibsim did not start" >&2; exit 1; }
	local t0=$(now_ns)
	(cd "$work" && client h1 /usr/sbin/opensm -o -f "$work/osm.log" >/dev/null 2>&1)
	echo "opensm_once_ms: $(( ($(now_ns) - t0) / 1000000 )) ms"
}
simn=0

# client HOST CMD...: run CMD attached at HOST (cwd: $work, for ./sys-<pid>).
client() {
	local host=$1; shift
	SIM_HOST=$host IBSIM_SOCKNAME=$sock LD_PRELOAD=$UMAD2SIM "$@"
}

# val NAME FILE: the value of a "name: value unit" line.
val() { awk -v n="$1:" '$1 == n {print $2; exit}' "$2"; }

echo "benchmark: IB polling on ibsim, $(nproc) cores"

# ---- (a) one 36-port switch -------------------------------------------------
start_sim "$topos/fattree46.net"
cd "$work"
lid=$(client h1 /usr/sbin/ibswitches 2>/dev/null | awk -v s="\"$SWITCH\"" '$0 ~ s {for (i = 1; i < NF; i++) if ($i == "lid") print $(i + 1)}')
nports=$(client h1 /usr/sbin/ibswitches 2>/dev/null | awk -v s="\"$SWITCH\"" '$0 ~ s {for (i = 1; i < NF; i++) if ($i == "ports") print $(i + 1)}')
[ -n "$lid" ] && [ -n "$nports" ] || { echo "no LID for $SWITCH (opensm -o failed?)" >&2; exit 1; }
echo "switch: $SWITCH lid $lid ports $nports (fattree46.net)"

client h1 "$agent" --measure "$POLLS" --switches "$SWITCH" --log-level warn >"$work/a.out"
sed 's/^/agent_/' "$work/a.out"
agent_ms=$(val poll_ms_median "$work/a.out")
agent_p99=$(val poll_ms_p99 "$work/a.out")
agent_pi_ms=$(val portinfo_ms_median "$work/a.out")
agent_ctr_ms=$(val counters_ms_median "$work/a.out")

# Reference: one process per port and query, REF_RUNS times; keep the median run.
smp_runs=(); perf_runs=(); ref_runs=()
for _ in $(seq "$REF_RUNS"); do
	t0=$(now_ns)
	for p in $(seq "$nports"); do client h1 /usr/sbin/smpquery portinfo "$lid" "$p" >/dev/null; done
	t1=$(now_ns)
	for p in $(seq "$nports"); do client h1 /usr/sbin/perfquery "$lid" "$p" >/dev/null; done
	t2=$(now_ns)
	smp_runs+=($(( (t1 - t0) / 1000 ))); perf_runs+=($(( (t2 - t1) / 1000 ))); ref_runs+=($(( (t2 - t0) / 1000 )))
done
median_us() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
smp_us=$(median_us "${smp_runs[@]}"); perf_us=$(median_us "${perf_runs[@]}"); ref_us=$(median_us "${ref_runs[@]}")
stop_sim
cd "$src"

awk -v s="$smp_us" -v p="$perf_us" -v r="$ref_us" -v n="$nports" -v runs="$REF_RUNS" 'BEGIN {
	printf "ref_runs: %d\n", runs
	printf "ref_smpquery_ms: %.1f ms (%d x smpquery portinfo)\n", s / 1000, n
	printf "ref_perfquery_ms: %.1f ms (%d x perfquery)\n", p / 1000, n
	printf "ref_poll_ms: %.1f ms\n", r / 1000
	printf "ref_per_port_ms: %.3f ms\n", r / 1000 / n
	printf "ref_per_smpquery_ms: %.3f ms\n", s / 1000 / n
	printf "ref_per_perfquery_ms: %.3f ms\n", p / 1000 / n
}'
awk -v a="$agent_ms" -v a99="$agent_p99" -v pi="$agent_pi_ms" -v c="$agent_ctr_ms" \
    -v s="$smp_us" -v p="$perf_us" -v r="$ref_us" -v n="$nports" 'BEGIN {
	printf "agent_per_port_ms: %.4f ms (PortInfo + PortCounters + PortCountersExtended)\n", a / n
	printf "agent_per_port_portinfo_ms: %.4f ms\n", pi / n
	printf "agent_per_port_counters_ms: %.4f ms\n", c / n
	printf "ratio: agent/reference poll time (median) = %.4f\n", a / (r / 1000)
	printf "ratio: agent/reference poll time (agent p99) = %.4f\n", a99 / (r / 1000)
	printf "ratio: agent/reference PortInfo part = %.4f\n", pi / (s / 1000)
	printf "ratio: agent/reference counters part = %.4f\n", c / (p / 1000)
	printf "ratio: reference/agent speedup = %.0f\n", (r / 1000) / a
}'

# ---- (b) fattree324: switches per agent at 1 s -------------------------------
start_sim "$topos/fattree324.net"
cd "$work"
client h1 "$agent" --measure "$FABRIC_POLLS" --log-level warn >"$work/b.out"
sed 's/^/fabric_/' "$work/b.out"
nsw=$(val switches "$work/b.out")
fab_ms=$(val poll_ms_median "$work/b.out")
fab_p99=$(val poll_ms_p99 "$work/b.out")

# Live: the agent as deployed, --interval 1000 (counters every 1000 ms too),
# reporting to a fabricbusd, for DURATION s; its debug log times every round.
ap=$(port)
"$fabricbusd" -o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$(port)" \
	-o "JournalDir=$work/journal" -o LogLevel=warn 2>"$work/broker.log" & broker=$!
SIM_HOST=h1 IBSIM_SOCKNAME=$sock LD_PRELOAD=$UMAD2SIM \
	"$agent" --broker "127.0.0.1:$ap" --interval 1000 --log-level debug 2>"$work/live.log" &
clients+=($!)
sleep "$DURATION"
stop_sim
kill "$broker" 2>/dev/null || true; wait "$broker" 2>/dev/null || true
cd "$src"
# "poll: N PortInfo answers in X ms" / "counters: N PerfMgt answers in X ms"
awk -v dur="$DURATION" '
	/ poll: [0-9]+ PortInfo answers in / { for (i = 1; i < NF; i++) if ($i == "in") { p[++np] = $(i + 1) } }
	/ counters: [0-9]+ PerfMgt answers in / { for (i = 1; i < NF; i++) if ($i == "in") { c[++nc] = $(i + 1) } }
	/took longer than its period/ { late++ }
	function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return n ? a[int((n + 1) / 2)] : 0
	}
	function mx(a, n,   i, m) { m = 0; for (i = 1; i <= n; i++) if (a[i] > m) m = a[i]; return m }
	END {
		printf "live_duration: %d s\n", dur
		printf "live_portinfo_rounds: %d\n", np
		printf "live_counters_rounds: %d (the first is the baseline at start)\n", nc
		printf "live_portinfo_ms_median: %.2f ms\n", med(p, np)
		printf "live_portinfo_ms_max: %.2f ms\n", mx(p, np)
		printf "live_counters_ms_median: %.2f ms\n", med(c, nc)
		printf "live_counters_ms_max: %.2f ms\n", mx(c, nc)
		printf "live_round_ms_median: %.2f ms (PortInfo + counters)\n", med(p, np) + med(c, nc)
		printf "live_late_rounds: %d (\"took longer than its period\" warnings)\n", late
	}' "$work/live.log" | tee "$work/live.out"
live_ms=$(val live_round_ms_median "$work/live.out")
awk -v n="$nsw" -v f="$fab_ms" -v f99="$fab_p99" -v l="$live_ms" 'BEGIN {
	printf "fabric_per_switch_ms: %.3f ms (measure median / %d switches)\n", f / n, n
	printf "max_switches_per_agent_at_1s: %d (= 1000 ms / per-switch poll ms, measure median)\n", int(1000 / (f / n))
	printf "max_switches_per_agent_at_1s_p99: %d (= 1000 ms / (p99 / %d))\n", int(1000 / (f99 / n)), n
	if (l > 0)
		printf "max_switches_per_agent_at_1s_live: %d (= 1000 ms / (live round / %d))\n", int(1000 / (l / n)), n
	printf "ratio: full-fabric poll/1 s interval = %.4f (%d switches, measure median)\n", f / 1000, n
	if (l > 0)
		printf "ratio: live round/1 s interval = %.4f (%d switches)\n", l / 1000, n
}'
