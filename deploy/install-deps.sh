#!/bin/sh
# Install the Debian packages fabricbus builds, tests and demos against, on a
# bare Debian 12 machine. Idempotent: only what is missing is installed.
# Needs root (or sudo). After installing, deploy/check-deps.sh checks one file
# from each package the build and the tests reach into, and fails naming the
# package, so a fresh machine fails here and not deep in a link step.
#
# Why each group:
# - clang + libclang-rt-14-dev: the ASan/UBSan and libFuzzer runtimes; clang
#   only *recommends* compiler-rt, and this script installs without
#   recommends, so it is named explicitly (without it the first ASan link
#   fails: cannot find libclang_rt.asan_static-x86_64.a). llvm-14 brings
#   llvm-symbolizer for readable sanitizer stacks.
# - ibsim-utils/opensm/infiniband-diags: the simulated IB fabric the
#   fabricbus-agent-ib tests run against (tests/lib/ibsim.py); libopensm-dev
#   for the OpenSM event plugin. libumad2sim0 (a dependency of ibsim-utils,
#   named so the shim path is explicit) holds the LD_PRELOAD umad2sim shim.
# - Kafka tests need a JRE and maven (tests/kafka/kafka.sh fetches the Kafka
#   jars from Maven Central); installed only when `java` or `mvn` is missing,
#   so a machine with its own JDK keeps it.
# - slurmctld/slurmd/slurm-client/munge: the real Slurm cluster on loopback
#   the Slurm adapter and SPANK plugin tests run against (tests/lib/slurm.py);
#   libslurm-dev to build them.
# - snmpd/snmp/snmptrapd: the real SNMP peers of fabricbus-agent-snmp's
#   tests (tests/lib/snmp.py runs snmpd as a switch stand-in in a network
#   namespace; test_snmp sends snmptrap v1/v2c/v3 with good and bad keys) and
#   the reference receiver of tests/bench/bench_snmp.sh (snmptrapd);
#   libsnmp-dev builds the agent.
# - libpmix-dev: OpenPMIx 4.2 for fabricbus-pmix, its SPANK delivery plugin and
#   the example app (adapters/pmix); openmpi-bin + libopenmpi-dev: Open MPI on
#   the same libpmix, so a site's MPI programs run the same handlers
#   (docs/pmix.md). Slurm's mpi/pmix plugin comes with slurm-wlm-basic-plugins.
# - python3-prometheus-client: tests/integration/test_metrics.py parses every
#   daemon's GET /metrics with its reference text-format parser. systemd
#   (systemd-analyze verify of deploy/systemd units), groff-base and man-db
#   (the man pages rendered with -ww / --warnings): tests/integration/test_install.py.
# - libssl-dev (with libevent-dev's libevent_openssl): TLS with client
#   certificates on the agent port; openssl: the command test_mtls and
#   bench_mtls.sh make their certificates with (docs/security.md).
# - libcurl4-openssl-dev: the HTTP(S) client of Redfish push delivery and of
#   the OFMF agent (broker/push/fb_hc.c: libcurl's multi interface on the
#   libevent loop; the OpenSSL flavour, as the broker's other TLS is OpenSSL).
# - libcrypt-dev (libxcrypt): crypt(3) with yescrypt and SHA-512 for the
#   Redfish accounts file (fabricbus passwd, fabricbusd's logins); libssl-dev
#   also gives the SHA-256 that keeps session tokens only as digests.
# - chromium + nodejs (with npm): the live page's browser tests
#   (tests/integration/test_browser.py, tests/bench/bench_page.sh) drive
#   Debian's headless Chromium with playwright-core from npm, pinned in
#   tests/browser/package-lock.json and installed below by `npm ci` into
#   tests/browser/node_modules (never `playwright install`: it downloads a
#   browser build of its own). npm comes with NodeSource's nodejs; Debian's
#   nodejs needs the npm package, installed only when `npm` is missing.
# - procps (pgrep/ps), iproute2 (ip netns), util-linux (unshare, prlimit):
#   used by the test helpers; present on most images, named so a minimal one
#   works too.
set -eu
pkgs="build-essential meson ninja-build pkg-config
clang libclang-rt-14-dev llvm-14
libevent-dev libwebsockets-dev libjansson-dev librdkafka-dev libsnmp-dev libcurl4-openssl-dev
libibumad-dev libibmad-dev libssl-dev libcrypt-dev openssl
ibsim-utils libumad2sim0 opensm infiniband-diags libopensm-dev
python3 python3-websockets python3-jsonschema python3-prometheus-client curl gdb
systemd groff-base man-db
kcat python3-confluent-kafka
slurmctld slurmd slurm-client libslurm-dev munge libmunge-dev
snmpd snmp snmptrapd
libpmix-dev openmpi-bin libopenmpi-dev
chromium nodejs
procps iproute2 util-linux"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
command -v java >/dev/null 2>&1 || missing="$missing default-jre-headless"
command -v mvn >/dev/null 2>&1 || missing="$missing maven"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
else
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "install-deps: installing$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# playwright-core for the browser tests, exactly as locked (npm ci), into
# tests/browser/node_modules; again only when the lock changed since (the
# copy kept beside the modules says which lock they came from).
browser=$(cd "$(dirname "$0")/../tests/browser" && pwd)
if ! cmp -s "$browser/package-lock.json" "$browser/node_modules/.fabricbus-lock" 2>/dev/null; then
	echo "install-deps: npm ci in $browser"
	(cd "$browser" && npm ci --no-audit --no-fund --ignore-scripts >/dev/null &&
		cp package-lock.json node_modules/.fabricbus-lock)
fi
exec "$(dirname "$0")/check-deps.sh"
