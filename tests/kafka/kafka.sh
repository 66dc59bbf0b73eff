#!/bin/bash
# A real Apache Kafka broker for the integration tests: KRaft, one node that
# is both broker and controller, on 127.0.0.1 only. Debian has no Kafka
# server package, so the jars come from Maven Central (tests/kafka/pom.xml).
#
#   kafka.sh fetch            jars into $FB_KAFKA_JARS (fast no-op when cached)
#   kafka.sh start DIR PORT   format DIR once, start, wait until it serves metadata
#   kafka.sh stop DIR         SIGTERM, SIGKILL after 20 s
#   kafka.sh kill DIR         SIGKILL now (an outage, not a shutdown)
#   kafka.sh jars             print the jar directory
#
# DIR holds server.properties, log4j.properties, data/ (the log dirs, kept
# across stop/start so a restart keeps every message), kafka.log and
# kafka.pid. The controller port is picked once per DIR and kept in
# DIR/controller.port. Environment: FB_KAFKA_JARS (jar dir, default
# ~/.cache/fabricbus-kafka/<version>), FB_KAFKA_HEAP (default 512m),
# FB_KAFKA_START_TIMEOUT (seconds, default 90).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pom="$here/pom.xml"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
jars=${FB_KAFKA_JARS:-${XDG_CACHE_HOME:-$HOME/.cache}/fabricbus-kafka/$version}
heap=${FB_KAFKA_HEAP:-512m}
start_timeout=${FB_KAFKA_START_TIMEOUT:-90}

die() { echo "kafka.sh: $*" >&2; exit 1; }

# The jar dir is complete only when its stamp names this exact pom, so an
# edited pom (another version) refetches instead of mixing jars.
fetch() {
	local stamp want
	want=$(sha256sum "$pom" | cut -d' ' -f1)
	stamp="$jars/.fetched"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return 0
	fi
	command -v mvn >/dev/null || die "mvn not found: run deploy/install-deps.sh"
	command -v java >/dev/null || die "java not found: run deploy/install-deps.sh"
	echo "kafka.sh: fetching Kafka $version jars into $jars (maven, cached in ~/.m2)" >&2
	rm -rf "$jars.tmp"
	mkdir -p "$jars.tmp"
	if ! mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$jars.tmp" \
		>"$jars.log" 2>&1; then
		cat "$jars.log" >&2
		die "maven could not fetch org.apache.kafka:kafka_2.13:$version (is Maven Central reachable?)"
	fi
	ls "$jars.tmp"/kafka_2.13-"$version".jar >/dev/null 2>&1 || die "maven fetched no kafka_2.13 jar"
	echo "$want" >"$jars.tmp/.fetched"
	rm -rf "$jars"
	mv "$jars.tmp" "$jars"
}

free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

port_is_free() {
	/usr/bin/python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",int(sys.argv[1])))' "$1" 2>/dev/null
}

# Alive = exists and is not a zombie waiting for a parent that never reaps.
alive() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

running_pid() { # prints the pid if DIR/kafka.pid names a live JVM
	local pid
	[ -f "$1/kafka.pid" ] || return 1
	pid=$(cat "$1/kafka.pid")
	[ -n "$pid" ] && alive "$pid" || return 1
	grep -q kafka.Kafka "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

# Kafka's Uuid: 16 random bytes, base64url without padding, not starting with '-'.
cluster_id() {
	/usr/bin/python3 -c '
import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"):
        print(s); break'
}

write_config() { # DIR PORT CPORT
	local dir=$1 port=$2 cport=$3
	cat >"$dir/server.properties" <<EOF
# Written by tests/kafka/kafka.sh: one KRaft node, broker and controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=4
auto.create.topics.enable=true
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
# After a SIGKILL the controller holds the old broker registration until its
# session expires; the default 9 s would make every outage restart that slow.
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=2500
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=2
log.cleaner.dedupe.buffer.size=16777216
log.retention.hours=168
EOF
	cat >"$dir/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
EOF
}

java_opts() {
	echo "-Xms${heap} -Xmx${heap} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true" \
		"-Dlog4j.configuration=file:$1/log4j.properties"
}

start() {
	local dir=$1 port=$2 cport pid t0 deadline
	[[ $port =~ ^[0-9]+$ ]] || die "start: PORT must be a number, got '$port'"
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if pid=$(running_pid "$dir"); then
		die "a Kafka is already running from $dir (pid $pid); run: kafka.sh stop $dir"
	fi
	fetch
	t0=$(date +%s%3N)
	# Keep the controller port across restarts when it is still free, so the
	# quorum address in the metadata log stays the same.
	cport=""
	if [ -f "$dir/controller.port" ]; then
		cport=$(cat "$dir/controller.port")
		port_is_free "$cport" || cport=""
	fi
	[ -n "$cport" ] && [ "$cport" != "$port" ] || cport=$(free_port)
	echo "$cport" >"$dir/controller.port"
	write_config "$dir" "$port" "$cport"
	if [ ! -f "$dir/data/meta.properties" ]; then
		# shellcheck disable=SC2046
		java $(java_opts "$dir") -cp "$jars/*" kafka.tools.StorageTool format \
			-t "$(cluster_id)" -c "$dir/server.properties" >>"$dir/kafka.log" 2>&1 ||
			die "formatting $dir/data failed; see $dir/kafka.log"
	fi
	echo "kafka.sh: starting Kafka $version on 127.0.0.1:$port (controller $cport), log $dir/kafka.log" >&2
	# exec in the subshell: $! is the JVM's own pid, which is what stop/kill signal.
	# shellcheck disable=SC2046
	(exec java $(java_opts "$dir") -cp "$jars/*" kafka.Kafka "$dir/server.properties" \
		</dev/null >>"$dir/kafka.log" 2>&1) &
	pid=$!
	echo "$pid" >"$dir/kafka.pid"
	# Ready = the broker answers a metadata request listing itself.
	deadline=$(($(date +%s) + start_timeout))
	while :; do
		if ! alive "$pid"; then
			tail -n 30 "$dir/kafka.log" >&2
			die "Kafka (pid $pid) exited during start-up; see $dir/kafka.log"
		fi
		if kcat -b "127.0.0.1:$port" -L -m 2 -t __fabricbus_ready 2>/dev/null | grep -q '1 brokers'; then
			break
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			kill -KILL "$pid" 2>/dev/null || true
			tail -n 30 "$dir/kafka.log" >&2
			die "Kafka on 127.0.0.1:$port not ready within ${start_timeout}s; killed; see $dir/kafka.log"
		fi
		sleep 0.2
	done
	t0=$(($(date +%s%3N) - t0))
	printf 'kafka.sh: ready on 127.0.0.1:%s (pid %s) after %d.%03ds\n' "$port" "$pid" \
		$((t0 / 1000)) $((t0 % 1000)) >&2
}

stop() { # DIR SIGNAL-FIRST
	local dir=$1 sig=$2 pid i
	pid=$(running_pid "$dir") || { rm -f "$dir/kafka.pid"; return 0; }
	kill "-$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do
		alive "$pid" || break
		sleep 0.1
	done
	if alive "$pid"; then
		echo "kafka.sh: Kafka pid $pid still up 20 s after SIG$sig; SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null || true
		while alive "$pid"; do sleep 0.1; done
	fi
	rm -f "$dir/kafka.pid"
}

case "${1:-}" in
fetch) fetch ;;
jars) fetch && echo "$jars" ;;
start) [ $# -eq 3 ] || die "usage: kafka.sh start DIR PORT"; start "$2" "$3" ;;
stop) [ $# -eq 2 ] || die "usage: kafka.sh stop DIR"; stop "$2" TERM ;;
kill) [ $# -eq 2 ] || die "usage: kafka.sh kill DIR"; stop "$2" KILL ;;
*) die "usage: kafka.sh fetch | jars | start DIR PORT | stop DIR | kill DIR" ;;
esac
