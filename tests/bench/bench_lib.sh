# Sourced by the benchmark scripts: loopback ports, waiting for one, a clock.
# bench_cleanup (call it from the script's EXIT trap) kills $pids and
# removes $work.
work=$(mktemp -d)
pids=()
bench_cleanup() {
	for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null || true; done
	rm -rf "$work"
}
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
	for _ in $(seq 300); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	echo "port $1 never opened" >&2; exit 1
}
now() { date +%s.%N; }
