#!/bin/bash
# Per-event instructions of the broker's hot loops (not a test: it prints
# figures, asserts none): decoding an event off the wire and rendering it
# into the fan-out ring, for the benchmark's generated event and a full
# link_down, under callgrind (instruction counts are repeatable on a loaded
# machine). Two runs of different lengths, so start-up cancels out.
#
# Then the Redfish renderer alone, timed (best of five) on three mixes
# against memcpy of the same bytes in the same run: the copy limit.
#
# Usage: tests/bench/bench_render.sh          (builds ./build-release if needed)
# Output: "render_<event>: N instructions/event" and "decode_<event>: ..." lines,
# then "render_<mix>: N ns/event, memcpy of the same bytes N ns/event, ratio R" lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
. "$here/release_build.sh"
. "$here/bench_lib.sh"
bench_require /usr/bin/valgrind
bin=$build/tests/bench/bench_render
bench_require_built "$bin"
ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 |
	awk '/Collected :/ {print $4}'; }
for what in push decode; do
	for ev in generated link_down; do
		a=$(ir "$what" "$ev" 20000); b=$(ir "$what" "$ev" 120000)
		name=$([ "$what" = push ] && echo render || echo decode)
		echo "${name}_$ev: $(((b - a) / 100000)) instructions/event"
	done
done
for mix in generated fabric corpus; do
	"$bin" time "$mix" 300000
done
