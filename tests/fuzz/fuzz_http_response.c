/* fuzz_http_response.c - libFuzzer target for fb_http_parse_response, the
 * parser of every byte an HTTP server (the broker, or anything answering on
 * its port) sends to the Slurm adapter and the SPANK plugin.
 *
 * Besides crashes, out-of-bounds reads and leaks, it checks the parser's
 * promises: a complete response stays complete, with the same status and
 * body, when the peer closes or more bytes follow; "need more" never
 * happens at eof; a body never exceeds max_body and is NUL-terminated. */
#include "fb_http.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_body(const struct fb_http_resp *r, size_t max_body)
{
	if (r->status < 100 || r->status > 599 || !r->body.data || r->body.len > max_body ||
	    r->body.data[r->body.len] != '\0')
		__builtin_trap();
}

static void same(const struct fb_http_resp *a, const struct fb_http_resp *b)
{
	if (a->status != b->status || a->body.len != b->body.len ||
	    memcmp(a->body.data, b->body.data, a->body.len) != 0)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_http_resp r, at_eof, longer;
	char err[200];
	/* the first byte picks a small or a generous limit */
	size_t max_body = size && (data[0] & 1) ? 64 : 1u << 20;

	int rc = fb_http_parse_response(data, size, 0, max_body, &r, err, sizeof(err));
	int rc_eof = fb_http_parse_response(data, size, 1, max_body, &at_eof, err, sizeof(err));
	if (rc_eof == 0)
		__builtin_trap(); /* at eof the answer is final */
	if (rc_eof == 1)
		check_body(&at_eof, max_body);
	if (rc == 1) {
		check_body(&r, max_body);
		if (rc_eof != 1)
			__builtin_trap();
		same(&r, &at_eof);
		/* bytes after a complete response change nothing */
		uint8_t *more = malloc(size + 7);
		if (more) {
			memcpy(more, data, size);
			memcpy(more + size, "garbage", 7);
			if (fb_http_parse_response(more, size + 7, 0, max_body, &longer, err, sizeof(err)) != 1)
				__builtin_trap();
			same(&r, &longer);
			fb_http_resp_free(&longer);
			free(more);
		}
		fb_http_resp_free(&r);
	} else if (rc < 0 && rc_eof == 1) {
		__builtin_trap(); /* an error does not heal when the peer closes */
	}
	if (rc_eof == 1)
		fb_http_resp_free(&at_eof);
	return 0;
}
