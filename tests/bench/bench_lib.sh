# Sourced by the benchmark scripts: skipping when a tool is missing, the
# publisher load, loopback ports, waiting for one, a clock, and a work
# directory.
# bench_start makes $work and sets the EXIT trap to bench_cleanup, which
# kills $pids and removes $work (a script with more to clean up calls
# bench_cleanup from its own trap).

# bench_require FILE...: exit 77 (skipped) unless every FILE is installed.
bench_require() {
	for f in "$@"; do
		[ -e "$f" ] || { echo "skipped: $f is not installed"; exit 77; }
	done
}
# bench_require_built FILE [WHY]: exit 77 unless the build made FILE.
bench_require_built() {
	[ -x "$1" ] || { echo "skipped: $1 not built${2:+ ($2)}"; exit 77; }
}
# bench_publishers: the publisher load, PUBLISHERS (4) of PER_PUBLISHER
# (500000) events each unless set, TOTAL in all.
bench_publishers() {
	PUBLISHERS=${PUBLISHERS:-4}
	PER_PUBLISHER=${PER_PUBLISHER:-500000}
	TOTAL=$((PUBLISHERS * PER_PUBLISHER))
}
# bench_exec_python SCRIPT: a Python benchmark against $build, with tests/lib.
bench_exec_python() {
	export FB_BUILD=$build FB_SRC=$src PYTHONPATH=$src/tests/lib
	exec /usr/bin/python3 "$1"
}
bench_start() {
	work=$(mktemp -d)
	pids=()
	trap bench_cleanup EXIT
}
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
# cpu_s PID: user + system CPU seconds the process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
