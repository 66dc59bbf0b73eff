#!/bin/sh
# Install the Debian packages fabricbus builds and tests against.
# Idempotent: only what is missing is installed. Needs root (or sudo).
set -eu
pkgs="build-essential meson ninja-build pkg-config clang
libevent-dev libwebsockets-dev libjansson-dev librdkafka-dev libsnmp-dev
libibumad-dev libibmad-dev libssl-dev
python3-websockets python3-jsonschema curl"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
