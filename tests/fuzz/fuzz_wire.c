/* fuzz_wire.c - libFuzzer target for everything the broker decodes from an
 * agent socket: the input is treated as a byte stream of frames, exactly as
 * ingest.c walks it, and every body is handed to its parser. Any crash,
 * out-of-bounds read or leak is a bug. */
#include "fb_wire.h"

#include <stddef.h>
#include <stdint.h>

static void parse_body(uint8_t type, const uint8_t *body, size_t len)
{
	union {
		struct fb_hello hello;
		struct fb_hello_ack ack;
		struct fb_error_msg err;
		struct fb_event ev;
	} u;
	uint64_t v;
	switch (type) {
	case FB_FRAME_HELLO: (void)fb_wire_parse_hello(body, len, &u.hello); break;
	case FB_FRAME_HELLO_ACK: (void)fb_wire_parse_hello_ack(body, len, &u.ack); break;
	case FB_FRAME_ACK: (void)fb_wire_parse_ack(body, len, &v); break;
	case FB_FRAME_HEARTBEAT: (void)fb_wire_parse_heartbeat(body, len, &v); break;
	case FB_FRAME_ERROR: (void)fb_wire_parse_error(body, len, &u.err); break;
	case FB_FRAME_EVENTS: {
		struct fb_events_reader r;
		if (fb_events_open(&r, body, len) != 0)
			break;
		const uint8_t *raw;
		size_t raw_len;
		while (fb_events_next(&r, &u.ev, &raw, &raw_len) == 1) {
			/* What the journal would store must decode back. */
			struct fb_event again;
			if (fb_event_decode(raw, raw_len, &again) != 0)
				__builtin_trap();
		}
		break;
	}
	default: break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	while (size > 0) {
		struct fb_frame_hdr h;
		if (fb_frame_peek(data, size, 1u << 16, &h) != 0)
			break;
		size_t flen = FB_FRAME_HDR_LEN + (size_t)h.body_len;
		parse_body(h.type, data + FB_FRAME_HDR_LEN, h.body_len);
		data += flen;
		size -= flen;
	}
	return 0;
}
