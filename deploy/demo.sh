#!/bin/bash
# fabricbus demo on a fresh machine: install, build, start fabricbusd on its
# embedded defaults (in ./demo), feed it a stream of fabric events, and show
# them as Redfish Events. Ctrl-C stops everything.
#   agents: 127.0.0.1:7411   WebSocket: ws://127.0.0.1:7412/ws/events   status: http://127.0.0.1:7412/status
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
deploy/install-deps.sh
[ -f build-release/build.ninja ] || meson setup build-release --buildtype=release >/dev/null
ninja -C build-release >/dev/null
bin=$src/build-release/broker
mkdir -p demo
cd demo
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; echo; echo "demo stopped (journal kept in $src/demo)"' EXIT
"$bin/fabricbusd" 2>>fabricbusd.log & pids+=($!)
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/7412) 2>/dev/null && break; sleep 0.1; done
echo "fabricbusd running (log: demo/fabricbusd.log). Events as Redfish JSON follow; try in another shell:"
echo "  $bin/cli/fabricbus status"
echo "  $bin/cli/fabricbus tail --severity Critical"
"$bin/cli/fabricbus" tail & pids+=($!)

# A small simulated fabric: hosts on leaf switches, ISLs to spines.
publish() { "$bin/cli/fabricbus" publish --agent-id demo-ib-agent --quiet "$1" || true; }
i=0
while true; do
	leaf=$((i % 4 + 1)); port=$((i % 18 + 1)); node=$(printf "node%03d" $(((leaf - 1) * 18 + port)))
	case $((i % 6)) in
	0) publish "{\"kind\":\"link_down\",\"link_class\":\"host\",\"tech\":\"infiniband\",\"switch\":\"leaf$leaf\",\"port\":$port,\"node\":\"$node\"}" ;;
	1) publish "{\"kind\":\"link_up\",\"link_class\":\"host\",\"tech\":\"infiniband\",\"switch\":\"leaf$leaf\",\"port\":$port,\"node\":\"$node\"}" ;;
	2) publish "{\"kind\":\"congestion\",\"link_class\":\"isl\",\"switch\":\"leaf$leaf\",\"port\":$((19 + i % 2)),\"counters\":{\"congestion_ppm\":$((150000 + i * 977 % 300000)),\"threshold\":100000,\"interval_ms\":1000}}" ;;
	3) publish "{\"kind\":\"counter_threshold\",\"link_class\":\"isl\",\"switch\":\"spine$((i % 2 + 1))\",\"port\":$leaf,\"counters\":{\"symbol_error\":$((i * 7 % 50 + 10)),\"rate_per_s\":12,\"threshold\":10}}" ;;
	4) publish "{\"kind\":\"link_down\",\"link_class\":\"isl\",\"switch\":\"spine$((i % 2 + 1))\",\"port\":$leaf,\"severity\":\"Critical\"}" ;;
	5) publish "{\"kind\":\"link_up\",\"link_class\":\"isl\",\"switch\":\"spine$((i % 2 + 1))\",\"port\":$leaf}" ;;
	esac
	i=$((i + 1))
	sleep 1
done
