/* fuzz_redfish_parse.c - libFuzzer target for fb_redfish_parse, which adapters
 * run on whatever arrives over WebSocket, SSE or Kafka. Beyond "no crash,
 * no out-of-bounds read, no leak": a document that parses must render and
 * parse back to the very same document, so the parser can never accept an
 * event the renderer would turn into something else. */
#include "fb_buf.h"
#include "fb_redfish.h"
#include "fb_redfish_parse.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static int reparse(const struct fb_buf *b, struct fb_event *ev, struct fb_redfish_parsed *out)
{
	char err[256];
	return fb_redfish_parse((const char *)b->data, b->len, ev, out, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_event ev, ev2;
	struct fb_redfish_parsed out, out2;
	char err[256];
	if (fb_redfish_parse((const char *)data, size, &ev, &out, err, sizeof(err)) != 0) {
		if (!memchr(err, 0, sizeof(err)) || !err[0] || strchr(err, '\n'))
			__builtin_trap(); /* a refusal always says why, on one line */
		return 0;
	}
	struct fb_buf first = FB_BUF_INIT, second = FB_BUF_INIT;
	int rc = out.missed ? fb_redfish_render_missed(&first, out.missed_count, out.resume_since)
			    : fb_redfish_render(&first, &ev, out.event_id, "IB");
	if (rc != 0 || reparse(&first, &ev2, &out2) != 0 || out2.missed != out.missed)
		__builtin_trap();
	rc = out.missed ? fb_redfish_render_missed(&second, out2.missed_count, out2.resume_since)
			: fb_redfish_render(&second, &ev2, out2.event_id, "IB");
	if (rc != 0 || second.len != first.len || memcmp(second.data, first.data, first.len) != 0)
		__builtin_trap();
	fb_buf_free(&first);
	fb_buf_free(&second);
	return 0;
}
