# Sourced by the benchmarks: sets $build to a release build directory.
# Figures from a sanitizer build would measure ASan, so FB_BUILD (set by
# `meson test --benchmark`) is used only if it is a release build without
# sanitizers; otherwise ./build-release is set up and built. FB_BENCH_BUILD
# overrides both. Needs $src (the source root). Extra arguments are the ninja
# targets to build (default: all).
build=${FB_BENCH_BUILD:-}
if [ -z "$build" ]; then
	opts=${FB_BUILD:+$FB_BUILD/meson-info/intro-buildoptions.json}
	if [ -n "$opts" ] && ! grep -q '"name": "b_sanitize", "value": "address' "$opts" 2>/dev/null &&
		grep -q '"name": "buildtype", "value": "release"' "$opts" 2>/dev/null; then
		build=$FB_BUILD
	else
		build=$src/build-release
		[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release >/dev/null
		ninja -C "$build" "$@" >/dev/null
	fi
fi
