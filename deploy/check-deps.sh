#!/bin/sh
# Check that every file the build, the demo and the tests reach into is here,
# and name the Debian package that brings it when one is not. Called at the end
# of deploy/install-deps.sh, so a fresh machine fails at once with the package
# to install rather than deep in a link step or a test's timeout.
# Usage: deploy/check-deps.sh   (exit 0: all present; 1: the list of misses)
set -u
miss=0
need() { # need PACKAGE PATTERN...: one existing file matching any pattern
	pkg=$1; shift
	for pat in "$@"; do
		for f in $pat; do
			[ -e "$f" ] && return 0
		done
	done
	echo "check-deps: missing $* (Debian package $pkg)" >&2
	miss=1
}
need libclang-rt-14-dev '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.asan_static-x86_64.a'
need libclang-rt-14-dev '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
need clang /usr/bin/clang
need llvm-14 /usr/bin/llvm-symbolizer
need meson /usr/bin/meson
need ninja-build /usr/bin/ninja
need libumad2sim0 /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
need ibsim-utils /usr/bin/ibsim
need opensm /usr/sbin/opensm
need infiniband-diags /usr/sbin/smpquery
need libopensm-dev '/usr/include/infiniband/opensm/osm_event_plugin.h'
need slurmctld /usr/sbin/slurmctld
need slurmd /usr/sbin/slurmd
need slurm-client /usr/bin/scontrol
need libslurm-dev /usr/include/slurm/slurm.h
need munge /usr/sbin/munged
# fabricbus-pmix (adapters/pmix): libpmix to build it, Slurm's mpi/pmix plugin
# for the srun --mpi=pmix tests, Open MPI on the same libpmix.
need libpmix-dev /usr/lib/x86_64-linux-gnu/pmix2/include/pmix.h
need slurm-wlm-basic-plugins /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so
need openmpi-bin /usr/bin/mpirun
need libopenmpi-dev /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h
need kcat /usr/bin/kcat
need python3-websockets '/usr/lib/python3/dist-packages/websockets/__init__.py'
need python3-confluent-kafka '/usr/lib/python3/dist-packages/confluent_kafka/__init__.py'
need python3-jsonschema '/usr/lib/python3/dist-packages/jsonschema/__init__.py'
need default-jre-headless "$(command -v java 2>/dev/null || echo /usr/bin/java)"
need maven "$(command -v mvn 2>/dev/null || echo /usr/bin/mvn)"
# fabricbus-agent-snmp: built with libsnmp-dev, tested against snmpd and
# snmptrap (tests/lib/snmp.py), benchmarked against snmptrapd.
need libsnmp-dev /usr/include/net-snmp/net-snmp-config.h
need snmpd /usr/sbin/snmpd
need snmp /usr/bin/snmptrap
need snmptrapd /usr/sbin/snmptrapd
# test_metrics parses /metrics; test_install verifies units and renders man pages.
need python3-prometheus-client '/usr/lib/python3/dist-packages/prometheus_client/parser.py'
need systemd /usr/bin/systemd-analyze
need groff-base /usr/bin/groff
need man-db /usr/bin/man
# Redfish push and the OFMF agent: libcurl (OpenSSL flavour) for fb_hc.
need libcurl4-openssl-dev /usr/include/x86_64-linux-gnu/curl/curl.h /usr/include/curl/curl.h
need libcurl4-openssl-dev /usr/lib/x86_64-linux-gnu/pkgconfig/libcurl.pc
# Redfish accounts: crypt(3) (yescrypt, SHA-512) and SHA-256 for session tokens.
need libcrypt-dev /usr/include/crypt.h
need libssl-dev /usr/include/openssl/evp.h
need procps /usr/bin/pgrep
need iproute2 /usr/sbin/ip /usr/bin/ip /bin/ip
need util-linux /usr/bin/prlimit
# TLS on the agent port (broker/agent_tls.c, proto/client/fb_tls_client.c);
# test_mtls and bench_mtls.sh make their certificates with the openssl command.
need libevent-dev /usr/include/event2/bufferevent_ssl.h
need libssl-dev /usr/include/openssl/ssl.h
need openssl /usr/bin/openssl
# The live page's browser tests: Debian's Chromium, driven by playwright-core
# (npm ci in tests/browser, done by install-deps.sh).
need chromium /usr/bin/chromium
need nodejs /usr/bin/node
need "npm (npm ci in tests/browser)" "$(cd "$(dirname "$0")/.." && pwd)/tests/browser/node_modules/playwright-core/package.json"
if [ "$miss" -ne 0 ]; then
	echo "check-deps: run deploy/install-deps.sh as root (or install the packages above)" >&2
	exit 1
fi
echo "check-deps: every build and test dependency is present"
