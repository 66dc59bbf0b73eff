/* fuzz_event_json.c - libFuzzer target for `fabricbus publish`'s input: one
 * JSON line into an event (proto/fb_event_json.c fb_event_from_json), then
 * the event through the wire encoding and back, and out as JSON again. An
 * event the CLI would send must survive encode/decode unchanged. */
#include "fb_buf.h"
#include "fb_event.h"
#include "fb_event_json.h"
#include "fb_wire.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return 0;
	struct fb_event ev;
	memset(&ev, 0, sizeof(ev));
	char err[256];
	err[0] = '\0';
	int rc = fb_event_from_json(j, &ev, err, sizeof(err));
	json_decref(j);
	if (rc != 0) {
		if (!err[0] || !memchr(err, '\0', sizeof(err)))
			__builtin_trap();
		return 0;
	}
	/* As the CLI does (cli_publish_input.c): the session numbers events,
	 * and what fb_event_check refuses is never sent. */
	ev.seq = 1;
	const char *why = NULL;
	if (fb_event_check(&ev, &why) != 0)
		return 0;
	struct fb_buf a = { 0 }, b = { 0 };
	if (fb_event_encode(&a, &ev) == 0) {
		struct fb_event back;
		memset(&back, 0, sizeof(back));
		if (fb_event_decode(a.data, a.len, &back) != 0)
			__builtin_trap();
		memcpy(back.agent_id, ev.agent_id, sizeof(back.agent_id));
		if (fb_event_encode(&b, &back) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len))
			__builtin_trap();
	}
	fb_buf_free(&a);
	fb_buf_free(&b);
	json_t *out = fb_event_to_json(&ev);
	json_decref(out);
	return 0;
}
