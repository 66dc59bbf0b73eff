#!/bin/sh
# Install everything, build under ASan/UBSan with clang (so the libFuzzer
# targets build too), and run every test suite: unit, integration, fuzz.
# Usage: tests/run-all.sh [meson test args...]   e.g. --suite unit
set -eu
cd "$(dirname "$0")/.."
deploy/install-deps.sh
# The Kafka jars for test_kafka (Maven Central, cached in ~/.m2 and
# ~/.cache/fabricbus-kafka): fetched here, not inside a test's timeout.
tests/kafka/kafka.sh fetch
# The OFMF core's venv for test_ofmf (PyPI, cached in ~/.cache/fabricbus-ofmf);
# a no-op when the core (../shared/ofmf or FB_OFMF_CORE) is not there.
/usr/bin/python3 tests/lib/ofmf.py fetch
build=${FB_TEST_BUILD:-build-asan}
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Dbuildtype=debug -Db_sanitize=address,undefined \
		-Db_lundef=false -Dfuzz=true
fi
ninja -C "$build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
status=0
meson test -C "$build" --print-errorlogs --num-processes 1 "$@" || status=$?
# One plain closing line for any reader: counts from meson's own log.
/usr/bin/python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r == "SKIP": skip += 1
    else: bad += 1
print(f"tests: {ok} passed, {bad} failed, {skip} skipped")
PY
exit $status
