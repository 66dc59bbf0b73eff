/* fuzz_rf_filter.c - libFuzzer target for the SSE $filter (broker/redfish/
 * rf_filter.c), which parses a query string from any client that can open
 * a stream. Any crash, out-of-bounds read or leak is a bug, and so is a
 * broken promise: a refusal always says which Base message and gives a
 * "$filter: " sentence; an accepted filter evaluates (on a few events) and
 * gives its text back unchanged. */
#include "fb_err.h"
#include "rf_filter.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void check(const char *text, size_t len)
{
	struct fb_rf_filter *f;
	struct fb_rf_filter_err err;
	int rc = fb_rf_filter_compile(text, len, &f, &err);
	if (rc) {
		if (f || !err.message || strncmp(err.detail, "$filter: ", 9) != 0 ||
		    strlen(err.token) > 63)
			__builtin_trap();
		return;
	}
	if (strlen(fb_rf_filter_text(f)) != len || memcmp(fb_rf_filter_text(f), text, len) != 0)
		__builtin_trap();
	static const char *const ev[][3] = {
		{ "Fabric.1.0.PortFailed", "Alert", "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/3" },
		{ "ResourceEvent.1.4.ResourceCreated", "ResourceAdded", "/redfish/v1/Systems/n1" },
		{ "x", "", "" },
	};
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		struct fb_rf_attrs a;
		fb_rf_attrs_init(&a, ev[i][0], ev[i][1], ev[i][2]);
		int m = fb_rf_filter_match(f, &a);
		if (m != 0 && m != 1)
			__builtin_trap();
	}
	fb_rf_filter_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check((const char *)data, size);
	return 0;
}
