/* fuzz_ws_filter.c - libFuzzer target for the WebSocket subscription query
 * (/ws/events?since=&prefix=&severity=&origin=): the bytes are split at '&'
 * into arguments as lws hands them to parse_query (broker/http/ws_server.c),
 * each one into fb_filter_arg (broker/filter.c); an accepted filter is then
 * matched and written back as JSON (/status). Any crash, sanitizer report
 * or leak is a bug, and so is a refusal without a reason or JSON that does
 * not parse. */
#include "fb_buf.h"
#include "filter.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_filter f;
	fb_filter_init(&f);
	char arg[FB_FILTER_ARG_MAX];
	size_t off = 0;
	for (int i = 0; i < 64 && off < size; i++) {
		const uint8_t *amp = memchr(data + off, '&', size - off);
		size_t n = (amp ? (size_t)(amp - data) : size) - off;
		if (n >= sizeof(arg))
			return 0; /* parse_query refuses these before fb_filter_arg */
		memcpy(arg, data + off, n);
		arg[n] = '\0';
		off += n + 1;
		const char *why = NULL;
		if (fb_filter_arg(&f, arg, &why) != 0) {
			if (!why || !why[0])
				__builtin_trap();
			return 0;
		}
	}
	(void)fb_filter_match(&f, "Fabric.1.0.LinkDown", 2, "/redfish/v1/Fabrics/IB/Switches/leaf1");
	(void)fb_filter_match(&f, "", 31, NULL);
	(void)fb_filter_match(&f, "ResourceEvent.1.0.ResourceCreated", 40, "/");
	struct fb_buf b = { 0 };
	if (fb_filter_json(&f, &b) == 0) {
		json_error_t je;
		json_t *j = json_loadb((const char *)b.data, b.len, 0, &je);
		if (!j)
			__builtin_trap();
		json_decref(j);
	}
	fb_buf_free(&b);
	return 0;
}
