#!/bin/sh
# Install the Debian packages fabricbus builds and tests against.
# Idempotent: only what is missing is installed. Needs root (or sudo).
# ibsim-utils/opensm/infiniband-diags: the simulated IB fabric the
# fabricbus-agent-ib tests run against (tests/lib/ibsim.py); libopensm-dev
# for an OpenSM event plugin. libumad2sim0 (a dependency of ibsim-utils,
# named so the shim path is explicit) holds the LD_PRELOAD umad2sim shim.
# The Kafka tests also need a JRE and maven (tests/kafka/kafka.sh fetches the
# Kafka jars from Maven Central); those are installed only when `java` or
# `mvn` is missing, so a machine with its own JDK keeps it.
# slurmctld/slurmd/slurm-client/munge: the real Slurm cluster on loopback the
# Slurm adapter and SPANK plugin tests run against (tests/lib/slurm.py);
# libslurm-dev to build them.
set -eu
pkgs="build-essential meson ninja-build pkg-config clang
libevent-dev libwebsockets-dev libjansson-dev librdkafka-dev libsnmp-dev
libibumad-dev libibmad-dev libssl-dev
ibsim-utils libumad2sim0 opensm infiniband-diags libopensm-dev
python3-websockets python3-jsonschema curl gdb
kcat python3-confluent-kafka
slurmctld slurmd slurm-client libslurm-dev munge libmunge-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v java >/dev/null 2>&1 || missing="$missing default-jre-headless"
command -v mvn >/dev/null 2>&1 || missing="$missing maven"
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
