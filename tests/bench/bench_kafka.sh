#!/bin/bash
# Kafka producer benchmark (not a test: it prints figures, asserts none).
#
# Reference: kcat -P producing N Redfish Event lines (key = OriginOfCondition)
#   with the producer settings fabricbusd's Kafka sink uses (idempotence,
#   acks=all, linger.ms=5, batch.num.messages=10000, no compression), timed
#   until kcat exits (it flushes before exiting).
# fabricbus: 1 publisher -> fabricbusd (journal, Kafka sink, KafkaTopicMap
#   sending everything to one topic) -> Kafka, timed from publisher start
#   until the topic's end offsets add up to N.
# Both topics are created up front with the same partition count.
#
# The N events are fabricbusd's own: a first fabricbusd (no Kafka) gets
# `fabricbus publish --generate N` and `fabricbus tail --since 0 --count N`
# captures what it renders; the fabricbus run publishes the same --generate N.
#
# Usage: tests/bench/bench_kafka.sh              (builds ./build-release if needed,
#                                                 starts Kafka via tests/kafka/kafka.sh)
#        N=100000 PARTITIONS=4 tests/bench/bench_kafka.sh
#        FB_KAFKA_BOOTSTRAP=host:9092 tests/bench/bench_kafka.sh   (an existing Kafka)
# Output: "name: value unit" lines and a "ratio:" line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
N=${N:-500000}
PARTITIONS=${PARTITIONS:-4}
PY=/usr/bin/python3 # Debian's, with confluent_kafka (python3-confluent-kafka)

. "$here/release_build.sh" broker/fabricbusd broker/cli/fabricbus
fabricbusd=$build/broker/fabricbusd
fabricbus=$build/broker/cli/fabricbus
command -v kcat >/dev/null || { echo "bench_kafka: kcat not found (deploy/install-deps.sh)" >&2; exit 1; }

. "$here/bench_lib.sh"
bench_start
kafka_dir=""
cleanup() {
	[ -z "$kafka_dir" ] || "$src/tests/kafka/kafka.sh" kill "$kafka_dir" 2>/dev/null || true
	bench_cleanup
}
trap cleanup EXIT

if [ -n "${FB_KAFKA_BOOTSTRAP:-}" ]; then
	kafka=$FB_KAFKA_BOOTSTRAP
else
	kafka_dir=$work/kafka
	kp=$(port)
	"$src/tests/kafka/kafka.sh" start "$kafka_dir" "$kp" 2>"$work/kafka.sh.log" ||
		{ cat "$work/kafka.sh.log" >&2; exit 1; }
	kafka=127.0.0.1:$kp
fi
tag=$$.$(date +%s)
t_kcat=bench.kcat.$tag
t_fb=bench.fabricbus.$tag

# Create both topics with the same partitions (auto-creation would race the
# first produce and use the broker's num.partitions).
$PY - "$kafka" "$PARTITIONS" "$t_kcat" "$t_fb" <<'EOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
bs, parts, topics = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
a = AdminClient({"bootstrap.servers": bs})
for t, f in a.create_topics([NewTopic(t, parts, 1) for t in topics]).items():
    f.result(30)
EOF

# Sum of the topic's end offsets reaches $2: prints the wall-clock time it did.
wait_offsets() { # TOPIC N TIMEOUT_S
	$PY - "$kafka" "$@" <<'EOF'
import sys, time
from confluent_kafka import Consumer, TopicPartition
bs, topic, n, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
c = Consumer({"bootstrap.servers": bs, "group.id": "bench-watch", "enable.auto.commit": False})
parts = [TopicPartition(topic, p) for p in c.list_topics(topic, timeout=30).topics[topic].partitions]
deadline = time.time() + timeout
while True:
    total = sum(c.get_watermark_offsets(tp, timeout=10, cached=False)[1] for tp in parts)
    if total >= n:
        print("%.6f %d" % (time.time(), total)); break
    if time.time() > deadline:
        print("timeout %d" % total); sys.exit(1)
    time.sleep(0.02)
c.close()
EOF
}

echo "benchmark: $N events, $PARTITIONS partitions, Kafka $kafka, $(nproc) cores"

# The events: what fabricbusd renders for `publish --generate N`.
ap=$(port); hp=$(port)
"$fabricbusd" -o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$hp" \
	-o "JournalDir=$work/journal-gen" -o LogLevel=warn 2>"$work/broker-gen.log" & gen=$!; pids+=($gen)
wait_port "$ap"; wait_port "$hp"
"$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id bench1 --generate "$N" --timeout 600 --quiet
"$fabricbus" tail --http "127.0.0.1:$hp" --since 0 --count "$N" --timeout 600 --quiet >"$work/events.jsonl"
kill "$gen"; wait "$gen" 2>/dev/null || true
# key<TAB>value, the key being the OriginOfCondition path as fabricbusd keys it.
$PY - "$work/events.jsonl" >"$work/events.kv" <<'EOF'
import json, sys
out = sys.stdout
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    key = json.loads(line)["Events"][0].get("OriginOfCondition", {}).get("@odata.id", "")
    out.write(key + "\t" + line + "\n")
EOF
bytes=$(wc -c <"$work/events.jsonl")
echo "events_avg_size: $((bytes / N)) bytes"

# (a) Reference: kcat with the sink's producer settings, and the same four
# headers fabricbus puts on every message (fixed values of the same sizes:
# kcat cannot vary them per message), so that both send the same messages.
kcat_produce() { # TOPIC < key<TAB>value lines
	kcat -P -b "$kafka" -t "$1" -K '\t' -X enable.idempotence=true -X acks=all -X linger.ms=5 \
		-H fabricbus-event-id=1234567 -H fabricbus-severity=Warning \
		-H fabricbus-agent-id=bench1 -H fabricbus-broker=0123456789abcdef \
		-X batch.num.messages=10000 -X queue.buffering.max.messages=1000000 \
		-X queue.buffering.max.kbytes=1048576 -X compression.codec=none 2>"$work/kcat.err" ||
		{ cat "$work/kcat.err" >&2; exit 1; }
}
# Untimed warm-up: a fresh Kafka first loads its transaction coordinator (the
# idempotent producer id) and JITs its request path; neither run should pay that.
head -n 50000 "$work/events.kv" | kcat_produce "bench.warmup.$tag"
t0=$(now)
kcat_produce "$t_kcat" <"$work/events.kv"
t1=$(now)
kcat_rate=$(echo "$t0 $t1" | awk -v n="$N" '{printf "%.0f", n / ($2 - $1)}')
got=$(wait_offsets "$t_kcat" "$N" 60 | awk '{print $2}')
echo "kcat_events_per_s: $kcat_rate events/s"
echo "kcat_messages_in_topic: $got"

# (b) fabricbusd's Kafka sink, everything to one topic.
ap=$(port); hp=$(port)
"$fabricbusd" -o "AgentListen=127.0.0.1:$ap" -o "HttpListen=127.0.0.1:$hp" \
	-o "JournalDir=$work/journal" -o LogLevel=warn -o "KafkaBrokers=$kafka" \
	-o "KafkaTopicMap=*:$t_fb" 2>"$work/broker.log" & broker=$!; pids+=($broker)
wait_port "$ap"; wait_port "$hp"
wait_offsets "$t_fb" "$N" 900 >"$work/fb.done" & watcher=$!; pids+=($watcher)
sleep 1 # the watcher has its metadata
t0=$(now)
"$fabricbus" publish --broker "127.0.0.1:$ap" --agent-id bench1 --generate "$N" --timeout 900 --quiet
t_pub=$(now)
if ! wait "$watcher"; then
	echo "fabricbus_kafka: topic $t_fb did not reach $N messages: $(cat "$work/fb.done")" >&2
	tail -n 20 "$work/broker.log" >&2
	exit 1
fi
t1=$(awk '{print $1}' "$work/fb.done")
fb_rate=$(echo "$t0 $t1" | awk -v n="$N" '{printf "%.0f", n / ($2 - $1)}')
pub_rate=$(echo "$t0 $t_pub" | awk -v n="$N" '{printf "%.0f", n / ($2 - $1)}')
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$broker/status")
echo "fabricbus_kafka_events_per_s: $fb_rate events/s"
echo "fabricbus_publish_acked_per_s: $pub_rate events/s"
echo "fabricbus_messages_in_topic: $(awk '{print $2}' "$work/fb.done")"
echo "broker_peak_rss: $((rss_kb / 1024)) MiB"
sleep 1.2 # /status is a once-a-second snapshot
echo "broker_kafka_status: $(curl -s "http://127.0.0.1:$hp/status" | $PY -c 'import json,sys; j=json.load(sys.stdin); print(json.dumps(j.get("kafka") or j.get("broker", {}).get("kafka"), separators=(",",":")))' 2>/dev/null || echo '?')"
awk -v b="$fb_rate" -v r="$kcat_rate" 'BEGIN {printf "ratio: fabricbus/kcat = %.2f\n", b / r}'
