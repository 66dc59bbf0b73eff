/* fb_http_parse.h - the HTTP/1.1 response parser behind fb_http.h, separate
 * and pure (no I/O, no global state, libc and proto/util/fb_buf only) so that it
 * can be fuzzed (tests/fuzz/fuzz_http_response.c).
 */
#ifndef FB_HTTP_PARSE_H
#define FB_HTTP_PARSE_H

#include "fb_buf.h"

#include <stddef.h>
#include <stdint.h>

/* The largest header block accepted (status line, headers, and any 1xx
 * interim responses before them), and likewise for a chunked trailer. */
#define FB_HTTP_MAX_HEADER (64u * 1024)

struct fb_http_resp {
	int status;            /* HTTP status code, 200..599 */
	/* The decoded body (chunked coding removed), owned by the caller:
	 * release with fb_http_resp_free(). After a successful call data is
	 * never NULL and data[len] is a NUL (not counted in len), so a JSON body
	 * can be handed to a string parser as is. */
	struct fb_buf body;
};

/* Parse a complete response held in buf: everything received so far, from
 * the first byte of the response; eof says the peer has closed. Framing, per
 * RFC 9112: Content-Length, Transfer-Encoding: chunked, or the body runs to
 * the close; no body for 204 and 304; 1xx interim responses before the
 * final one are skipped. Lines may end in CRLF or a bare LF.
 *
 * Refused (negative, with err): a header block over FB_HTTP_MAX_HEADER, a bad
 * status line (not "HTTP/1.x NNN"), header line folding or a malformed header
 * line, conflicting or malformed Content-Length, both Content-Length and
 * Transfer-Encoding, a transfer coding other than chunked, malformed or
 * overflowing chunk sizes, chunk framing out of proportion to its data, a
 * body over max_body (FB_ETOOBIG), and bytes that end before the response
 * does when eof is set (FB_ETRUNC).
 *
 * Returns 1 with r filled (the caller owns r->body) when the response is
 * complete, 0 when more bytes are needed (only when eof is 0; r left empty),
 * or a negative error (r left empty). Bytes after the end of the response
 * are ignored. *r is overwritten on entry (not freed). err may be NULL when
 * errsz is 0. */
int fb_http_parse_response(const uint8_t *buf, size_t len, int eof, size_t max_body,
			   struct fb_http_resp *r, char *err, size_t errsz);

/* Free the body and zero r. Safe on a zeroed or already freed r. */
void fb_http_resp_free(struct fb_http_resp *r);

#endif
