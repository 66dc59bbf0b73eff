#!/bin/bash
# Storm benchmark (not a test: it prints figures, asserts none).
#
# A dead spine that keeps reporting: 36 cables of switch "spine1" (one to
# each of 36 leaves), then TOTAL cable-down reports on them (link_down,
# port cycling 1..36) and as many link_up, from two publishers at once, into
# fabricbusd with StormControl=yes (root cause + flap control) against the
# reference: the same events into fabricbusd with StormControl=no. Each run
# prints the broker's peak RSS (VmHWM), its rate, and what the storm module
# made of it (/status "storm" and "flap": verdicts, root-cause events,
# flaps detected, summaries); the ratio line compares peak RSS and rate.
#
# Usage: tests/bench/bench_storm.sh                 (1M symptom events: 500k down + 500k up)
#        TOTAL=200000 tests/bench/bench_storm.sh
# Output: "name: value unit" lines and "ratio:" lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
TOTAL=${TOTAL:-1000000}
HALF=$((TOTAL / 2))

. "$here/release_build.sh"
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus

. "$here/bench_lib.sh"
bench_start

# The cabling: spine1 (0x100) port p <-> leaf<p> (0x200 + p) port 37, both ends.
topology() {
	/usr/bin/python3 - <<'EOF'
import json
for p in range(1, 37):
    print(json.dumps({"kind": "topology", "tech": "ib", "link_class": "isl", "switch": "spine1",
                      "switch_guid": "0x100", "port": p, "peer_guid": hex(0x200 + p), "peer_port": 37,
                      "peer_name": f"leaf{p}", "port_state": 4}))
    print(json.dumps({"kind": "topology", "tech": "ib", "link_class": "isl", "switch": f"leaf{p}",
                      "switch_guid": hex(0x200 + p), "port": 37, "peer_guid": "0x100", "peer_port": p,
                      "peer_name": "spine1", "port_state": 4}))
EOF
}

# run NAME STORM: one broker, the cabling, then the storm; prints figures.
run() {
	local name=$1 storm=$2 ap hp broker t0 t1 p1 p2
	ap=$(port); hp=$(port)
	"$fabricbusd" -o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$hp" \
		-o "JournalDir=$work/$name-journal" -o JournalSync=batch -o LogLevel=error \
		-o FabricName=bench -o "StormControl=$storm" 2>"$work/$name.log" & broker=$!
	pids+=($broker)
	wait_port "$ap"; wait_port "$hp"
	topology | "$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id ib-topo --quiet
	t0=$(now)
	"$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id ib-down --count "$HALF" --timeout 600 --quiet \
		--template '{"kind":"link_down","tech":"ib","link_class":"isl","switch":"spine1","switch_guid":"0x100","port_state":1}' &
	p1=$!
	"$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id ib-up --count "$HALF" --timeout 600 --quiet \
		--template '{"kind":"link_up","tech":"ib","link_class":"isl","switch":"spine1","switch_guid":"0x100","port_state":4}' &
	p2=$!
	wait "$p1"; wait "$p2"
	t1=$(now)
	sleep 11 # the root-cause window (up to 4 s) closes, a flap summary (10 s) is due
	curl -s "http://127.0.0.1:$hp/status" >"$work/$name.status.json"
	local rss_kb
	rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$broker/status")
	kill "$broker"; wait "$broker" || true
	RSS_MIB=$((rss_kb / 1024))
	RATE=$(echo "$t0 $t1" | awk -v n="$TOTAL" '{printf "%.0f", n / ($2 - $1)}')
	echo "${name}_peak_rss: $RSS_MIB MiB (VmHWM)"
	echo "${name}_events_per_s: $RATE events/s ($TOTAL symptom events, journaled and acked)"
	/usr/bin/python3 - "$work/$name.status.json" "$name" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["broker"]
name = sys.argv[2]
s, f = b.get("storm"), b.get("flap")
own = (s["emitted"] + s["recovered"] if s else 0) + (f["detected"] + f["summaries"] + f["stable"] if f else 0)
print(f"{name}_events: {b['events']['total']} in from agents (the storm and the cabling), "
      f"{own} of the broker's own out on top")
if s:
    last = s["last"] or {}
    print(f"{name}_root_cause: {s['reports']} cable-down reports, {s['verdicts']} verdicts, "
          f"{s['emitted']} root-cause events out, {s['open_incidents']} incident(s) open; last "
          f"{last.get('MessageId')} {last.get('Switch')} EventGroupId {last.get('EventGroupId')} "
          f"update {last.get('IncidentUpdate')}, {last.get('Dropped')} reports past the window's cap")
if f:
    print(f"{name}_flap: {f['transitions']} transitions, {f['detected']} FlapDetected, "
          f"{f['summaries']} summaries, {f['suppressed_ports']} ports suppressed")
EOF
}

echo "benchmark: $TOTAL symptom events on spine1's 36 cables (link_down + link_up), $(nproc) cores"
run reference no
ref_rss=$RSS_MIB; ref_rate=$RATE
run storm yes
echo "ratio: peak RSS storm/reference $(awk -v a="$RSS_MIB" -v b="$ref_rss" 'BEGIN {printf "%.2f", a / b}') ($RSS_MIB / $ref_rss MiB)"
echo "ratio: rate storm/reference $(awk -v a="$RATE" -v b="$ref_rate" 'BEGIN {printf "%.2f", a / b}')"
