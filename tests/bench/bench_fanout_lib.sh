# Sourced by the fan-out benchmarks (bench_fanout.sh, bench_sse.sh) after
# bench_lib.sh: room for thousands of sockets, memory of a process, /status
# subscriber counts, a release fabricbusd on fresh ports, 4 publishers and
# the sinks. Needs $fabricbusd, $fabricbus, $work and $pids (bench_start).
ulimit -n 8192 2>/dev/null || true

hwm_mib() { awk '/VmHWM/ {printf "%d", $2 / 1024}' "/proc/$1/status"; }
subscribers() {
	curl -s "http://127.0.0.1:$1/status" |
		/usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["websocket"]["subscribers"]))' 2>/dev/null || echo 0
}
wait_subscribers() { # port count
	for _ in $(seq 600); do
		[ "$(subscribers "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "only $(subscribers "$1") of $2 subscribers connected" >&2; exit 1
}
start_broker() { # journal dir; sets BROKER AP HP
	AP=$(port); HP=$(port)
	"$fabricbusd" -o "AgentListen=127.0.0.1:$AP" -o "HttpListen=127.0.0.1:$HP" -o "JournalDir=$1" \
		-o LogLevel=warn -o WsMaxSubscribers=4096 2>>"$work/broker.log" & BROKER=$!; pids+=($BROKER)
	wait_port "$AP"; wait_port "$HP"
}
stop_broker() { kill -TERM "$BROKER"; wait "$BROKER" || true; }
publish() { # agent port, events (4 publishers)
	local pp=()
	for i in 1 2 3 4; do
		"$fabricbus" publish --broker "127.0.0.1:$1" --agent-id "fan$i" --generate $(($2 / 4)) \
			--timeout 900 --quiet & pp+=($!)
	done
	for p in "${pp[@]}"; do wait "$p"; done
}
start_sinks() { # sink port count events path... (one path per sink, cycled) -> SINKS
	local sink=$1 p=$2 n=$3 e=$4; shift 4
	local paths=("$@") i
	SINKS=()
	for ((i = 0; i < n; i++)); do
		"$sink" 127.0.0.1 "$p" "${paths[i % ${#paths[@]}]}" "$e" >/dev/null & SINKS+=($!); pids+=($!)
	done
}
# wait_sinks: 1 if any sink failed (each says why on stderr), after all ended.
wait_sinks() { local rc=0; for p in "${SINKS[@]}"; do wait "$p" || rc=1; done; return $rc; }
