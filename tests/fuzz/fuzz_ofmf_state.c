/* fuzz_ofmf_state.c - libFuzzer target for what fabricbusd reads in its OFMF
 * registration (broker/ofmf): the state file JournalDir/ofmf.state, and the
 * core's replies (its AggregationSources collection and one source) fed to
 * the state machine. Any crash, out-of-bounds read or leak is a bug, and so
 * is a broken promise: a file that parses formats back to bytes that parse
 * to the same state; a Context adopted from a reply is one the file can hold. */
#include "ofmf_reg.h"
#include "ofmf_state.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void state_file(const uint8_t *data, size_t size)
{
	struct fb_ofmf_state s, t;
	char err[256], buf[8192];
	if (fb_ofmf_state_parse((const char *)data, size, &s, err, sizeof(err)))
		return;
	int n = fb_ofmf_state_format(&s, buf, sizeof(buf));
	if (n < 0 || fb_ofmf_state_parse(buf, (size_t)n, &t, err, sizeof(err)))
		__builtin_trap();
	if (strcmp(s.core, t.core) || strcmp(s.connection_method, t.connection_method) ||
	    strcmp(s.base, t.base) || strcmp(s.context, t.context))
		__builtin_trap();
}

/* A 409, then data as the collection and as every member. */
static void replies(const uint8_t *data, size_t size)
{
	static const struct fb_ofmf_reg_opts o = {
		.base = "http://127.0.0.1:7412",
		.connection_method = "/redfish/v1/AggregationService/ConnectionMethods/x",
		.fabric = "/redfish/v1/Fabrics/IB", .check_ns = 10, .retry_min_ns = 1,
		.retry_max_ns = 8, .conflict_ns = 60, .context_wait_ns = 5, .queue_max = 4,
	};
	struct fb_ofmf_reg *r = fb_ofmf_reg_new(&o, NULL, 0);
	if (!r)
		return;
	struct fb_ofmf_action a;
	for (unsigned i = 0; i < 64; i++) {
		fb_ofmf_reg_next(r, 0, &a);
		if (a.kind == FB_OFMF_NONE)
			break;
		if (a.kind == FB_OFMF_SAVE && !fb_ofmf_state_value_ok(a.context, FB_OFMF_CONTEXT_MAX))
			__builtin_trap();
		if (a.kind == FB_OFMF_DISCOVER)
			fb_ofmf_reg_done(r, 0, 409, NULL, 0);
		else if (a.kind == FB_OFMF_LIST_SOURCES || a.kind == FB_OFMF_GET_SOURCE)
			fb_ofmf_reg_done(r, 0, 200, (const char *)data, size);
		else if (a.kind == FB_OFMF_ANNOUNCE)
			fb_ofmf_reg_done(r, 0, 200, "[]", 2);
	}
	fb_ofmf_reg_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	state_file(data, size);
	replies(data, size);
	return 0;
}
