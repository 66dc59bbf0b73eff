#!/bin/bash
# The agent port with mutual TLS against plain TCP, on the same load (not a
# test: it prints figures, asserts none; docs/security.md quotes them).
#
#   N publishers (`fabricbus publish --generate`) -> fabricbusd (journal,
#   JournalSync=batch), once over plain TCP and once with AgentTls=required
#   and each publisher presenting its own client certificate; meanwhile a
#   probe agent (bench_mtls_probe.py) sends one event at a time and times it
#   until its ACK.
#
# Usage: tests/bench/bench_mtls.sh            (builds ./build-release if needed)
#        PUBLISHERS=4 PER_PUBLISHER=500000 tests/bench/bench_mtls.sh
# Output: "name: value unit" lines and "ratio:" lines (mTLS / plain; the
# target is >= 0.8 for events/s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
bench_publishers

. "$here/release_build.sh"
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus

bench_require /usr/bin/openssl
bench_start

# A CA, the broker's certificate for 127.0.0.1, one client certificate per agent.
pki=$work/pki
mkdir -p "$pki"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$pki/$1.key" 2>/dev/null; }
cert() { # name CN [SAN]
	key "$1"
	openssl req -new -key "$pki/$1.key" -out "$pki/$1.csr" -subj "/CN=$2" 2>/dev/null
	local ext=()
	[ -n "${3:-}" ] && { echo "subjectAltName=$3" >"$pki/$1.ext"; ext=(-extfile "$pki/$1.ext"); }
	openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
		-out "$pki/$1.pem" -days 2 "${ext[@]}" 2>/dev/null
}
key ca
openssl req -x509 -new -key "$pki/ca.key" -out "$pki/ca.pem" -days 2 -subj "/CN=bench CA" 2>/dev/null
cert broker fabricbusd IP:127.0.0.1
for i in $(seq "$PUBLISHERS"); do cert "bench$i" "bench$i"; done
cert probe probe@bench

# run MODE: one broker, the publishers and the probe; sets RATE, P50, P99.
run() {
	local mode=$1 ap hp broker t0 t1 pp=() tls=() probe_tls=()
	ap=$(port); hp=$(port)
	local conf=(-o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$hp"
		-o "JournalDir=$work/journal-$mode" -o JournalSync=batch -o LogLevel=warn)
	if [ "$mode" = mtls ]; then
		conf+=(-o AgentTls=required -o "AgentTlsCert=$pki/broker.pem" -o "AgentTlsKey=$pki/broker.key"
			-o "AgentTlsCa=$pki/ca.pem")
		probe_tls=("$pki/ca.pem" "$pki/probe.pem" "$pki/probe.key")
	fi
	"$fabricbusd" "${conf[@]}" 2>"$work/broker-$mode.log" & broker=$!; pids+=($broker)
	wait_port "$ap"; wait_port "$hp"
	t0=$(now)
	for i in $(seq "$PUBLISHERS"); do
		tls=()
		[ "$mode" = mtls ] && tls=(--tls-ca "$pki/ca.pem" --tls-cert "$pki/bench$i.pem" --tls-key "$pki/bench$i.key")
		"$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id "bench$i" --generate "$PER_PUBLISHER" \
			--timeout 600 --quiet "${tls[@]}" &
		pp+=($!)
	done
	sleep 0.5
	FB_BUILD=$build FB_SRC=$src PYTHONPATH=$src/tests/lib /usr/bin/python3 "$here/bench_mtls_probe.py" \
		"127.0.0.1:$ap" "${PROBE_SECONDS:-3}" "${probe_tls[@]}" >"$work/probe-$mode.out"
	for p in "${pp[@]}"; do wait "$p"; done
	t1=$(now)
	RATE=$(echo "$t0 $t1" | awk -v n="$TOTAL" '{printf "%.0f", n / ($2 - $1)}')
	P50=$(awk '/probe_ms_p50/ {print $2}' "$work/probe-$mode.out")
	P99=$(awk '/probe_ms_p99/ {print $2}' "$work/probe-$mode.out")
	N=$(awk '/probe_samples/ {print $2}' "$work/probe-$mode.out")
	kill "$broker"; wait "$broker" || true
}

echo "benchmark: $PUBLISHERS publishers x $PER_PUBLISHER events = $TOTAL events, $(nproc) cores," \
	"JournalSync=batch, probe every 2 ms"
run plain
plain_rate=$RATE plain_p50=$P50 plain_p99=$P99
echo "plain_events_per_s: $plain_rate events/s"
echo "plain_probe_ack_ms: p50 $plain_p50 p99 $plain_p99 ($N samples)"
run mtls
echo "mtls_events_per_s: $RATE events/s"
echo "mtls_probe_ack_ms: p50 $P50 p99 $P99 ($N samples)"
awk -v m="$RATE" -v p="$plain_rate" -v m99="$P99" -v p99="$plain_p99" 'BEGIN {
	printf "ratio: mtls/plain events per second = %.3f (target >= 0.8)\n", m / p
	printf "ratio: mtls/plain probe p99 ack latency = %.3f\n", m99 / p99 }'
