/* fuzz_event_scan.c - libFuzzer target for what the adapters' WebSocket
 * client reads from the broker (proto/client): the event scanner
 * (fb_event_scan_id, fb_event_scan_missed) that every message goes through,
 * and the wording of a close frame (fb_wsc_close_text). The input is one
 * message; the close text must stay a bounded, NUL-terminated string. */
#include "fb_event_scan.h"
#include "fb_ws_client.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t id = 7;
	int rc = fb_event_scan_id((const char *)data, size, &id);
	if (rc != 0 && rc != 1)
		__builtin_trap();
	struct fb_event_missed m;
	memset(&m, 0xa5, sizeof(m));
	rc = fb_event_scan_missed((const char *)data, size, &m);
	if (rc != 0 && rc != 1)
		__builtin_trap();
	if (rc == 1 && m.have_resume != 0 && m.have_resume != 1)
		__builtin_trap();
	char out[160];
	memset(out, 'x', sizeof(out));
	fb_wsc_close_text(data, size, out, sizeof(out));
	if (!memchr(out, '\0', sizeof(out)))
		__builtin_trap();
	char tiny[1];
	fb_wsc_close_text(data, size, tiny, sizeof(tiny));
	if (tiny[0] != '\0')
		__builtin_trap();
	return 0;
}
