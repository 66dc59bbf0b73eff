/* fb_http_parse.c - the HTTP/1.1 response parser of fb_http_parse.h: pure,
 * and fuzzed by tests/fuzz/fuzz_http_response.c.
 *
 * It re-reads the whole buffer on every call, so each call is stateless; to
 * keep that linear in practice it measures a chunked body first and copies
 * it only once the response is complete. Every byte from the peer is read
 * through struct fb_rd.
 */
#include "fb_http_parse.h"

#include "fb_err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define CHUNK_LINE_MAX 1024          /* chunk size plus extensions */
#define FRAMING_SLACK (64u * 1024)   /* chunk framing allowed beyond the data size */

/* Reader helpers on top of fb_buf.h's: the only places that look at the
 * reader's position directly. */

/* The next byte without consuming it, or -1 at the end. */
static int rd_peek(const struct fb_rd *r)
{
	return !r->err && fb_rd_left(r) ? r->p[r->off] : -1;
}

/* A reader over at most max of r's remaining bytes (r does not move). */
static void rd_window(const struct fb_rd *r, size_t max, struct fb_rd *w)
{
	size_t left = r->err ? 0 : fb_rd_left(r);
	fb_rd_init(w, left ? r->p + r->off : NULL, left > max ? max : left);
}

/* The next line (without CRLF or bare LF) if it ends within the reader's
 * bytes: 1 with *line and *n set and the line consumed, else 0. */
static int rd_line(struct fb_rd *r, const uint8_t **line, size_t *n)
{
	size_t left = r->err ? 0 : fb_rd_left(r);
	const uint8_t *lf = left ? memchr(r->p + r->off, '\n', left) : NULL;
	if (!lf)
		return 0;
	size_t len = (size_t)(lf - (r->p + r->off));
	*line = fb_rd_take(r, len + 1);
	*n = len && (*line)[len - 1] == '\r' ? len - 1 : len;
	return 1;
}

static int is_tchar(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* field-vchar / SP / HTAB / obs-text: everything but the other controls */
static int is_value_char(uint8_t c) { return c == '\t' || (c >= ' ' && c != 0x7f); }

static int is_ows(uint8_t c) { return c == ' ' || c == '\t'; }

static int token_is(const uint8_t *p, size_t n, const char *lit)
{
	return n == strlen(lit) && strncasecmp((const char *)p, lit, n) == 0;
}

static void trim(const uint8_t **p, size_t *n)
{
	while (*n && is_ows((*p)[0])) {
		(*p)++;
		(*n)--;
	}
	while (*n && is_ows((*p)[*n - 1]))
		(*n)--;
}

struct head {
	int status;
	int chunked, has_len;
	uint64_t clen;
};

/* "HTTP/1.x NNN[ reason]" */
static int parse_status_line(const uint8_t *line, size_t n, int *status)
{
	struct fb_rd r;
	fb_rd_init(&r, line, n);
	const uint8_t *proto = fb_rd_take(&r, 8);
	if (!proto || memcmp(proto, "HTTP/1.", 7) != 0 || proto[7] < '0' || proto[7] > '9' ||
	    fb_rd_u8(&r) != ' ')
		return -1;
	int code = 0;
	for (int i = 0; i < 3; i++) {
		uint8_t c = fb_rd_u8(&r);
		if (c < '0' || c > '9')
			return -1;
		code = code * 10 + (c - '0');
	}
	if (r.err || code < 100 || code > 599)
		return -1;
	if (fb_rd_left(&r) && fb_rd_u8(&r) != ' ')
		return -1;
	for (size_t left = fb_rd_left(&r); left; left--)
		if (!is_value_char(fb_rd_u8(&r)))
			return -1;
	*status = code;
	return r.err ? -1 : 0;
}

/* Content-Length: 1*DIGIT, or a list of identical values ("5, 5"). */
static int parse_content_length(const uint8_t *v, size_t n, uint64_t *out)
{
	struct fb_rd r;
	fb_rd_init(&r, v, n);
	for (int first = 1;; first = 0) {
		uint64_t x = 0;
		int digits = 0, c;
		while (is_ows((uint8_t)rd_peek(&r)))
			fb_rd_u8(&r);
		while ((c = rd_peek(&r)) >= '0' && c <= '9') {
			fb_rd_u8(&r);
			if (x > (UINT64_MAX - 9) / 10)
				return -1;
			x = x * 10 + (uint64_t)(c - '0');
			digits++;
		}
		while (is_ows((uint8_t)rd_peek(&r)))
			fb_rd_u8(&r);
		if (!digits || (!first && x != *out))
			return -1;
		*out = x;
		if (!fb_rd_left(&r))
			return r.err ? -1 : 0;
		if (fb_rd_u8(&r) != ',')
			return -1;
	}
}

static int header_field(struct head *h, const uint8_t *line, size_t n, char *err, size_t errsz)
{
	const uint8_t *colon = memchr(line, ':', n);
	if (is_ows(line[0]))
		return fb_err_set(err, errsz, FB_EMALFORMED, "obsolete header line folding");
	if (!colon || colon == line)
		return fb_err_set(err, errsz, FB_EMALFORMED, "malformed header line");
	size_t nlen = (size_t)(colon - line), vlen = n - nlen - 1;
	const uint8_t *v = colon + 1;
	for (size_t i = 0; i < nlen; i++)
		if (!is_tchar(line[i]))
			return fb_err_set(err, errsz, FB_EMALFORMED, "malformed header name");
	for (size_t i = 0; i < vlen; i++)
		if (!is_value_char(v[i]))
			return fb_err_set(err, errsz, FB_EMALFORMED, "control character in header %.*s",
					  (int)(nlen > 40 ? 40 : nlen), (const char *)line);
	trim(&v, &vlen);
	if (token_is(line, nlen, "Content-Length")) {
		uint64_t x = 0;
		if (parse_content_length(v, vlen, &x))
			return fb_err_set(err, errsz, FB_EMALFORMED,
					  "malformed or conflicting Content-Length");
		if (h->has_len && x != h->clen)
			return fb_err_set(err, errsz, FB_EMALFORMED,
					  "conflicting Content-Length (%llu and %llu)",
					  (unsigned long long)h->clen, (unsigned long long)x);
		h->clen = x;
		h->has_len = 1;
	} else if (token_is(line, nlen, "Transfer-Encoding")) {
		/* Only chunked, once: we decode nothing else (no gzip). */
		if (!token_is(v, vlen, "chunked") || h->chunked)
			return fb_err_set(err, errsz, FB_EMALFORMED, "unsupported Transfer-Encoding \"%.*s\"",
					  (int)(vlen > 40 ? 40 : vlen), (const char *)v);
		h->chunked = 1;
	}
	return 0;
}

/* Header lines up to the empty line. 1 done, 0 need more, <0 error.
 * trailer: only check the lines (a chunked trailer means nothing to us). */
static int header_lines(struct fb_rd *r, struct head *h, char *err, size_t errsz)
{
	const uint8_t *line;
	size_t n;
	while (rd_line(r, &line, &n)) {
		if (!n)
			return 1;
		int rc = header_field(h, line, n, err, errsz);
		if (rc)
			return rc;
	}
	return 0;
}

/* Status line and headers, skipping 1xx interim responses. r spans at most
 * FB_HTTP_MAX_HEADER bytes: a head that does not end in it is too big. */
static int parse_head(struct fb_rd *r, struct head *h, char *err, size_t errsz)
{
	for (;;) {
		const uint8_t *line;
		size_t n;
		memset(h, 0, sizeof(*h));
		if (!rd_line(r, &line, &n))
			return 0;
		if (parse_status_line(line, n, &h->status))
			return fb_err_set(err, errsz, FB_EMALFORMED, "bad status line \"%.*s\"",
					  (int)(n > 60 ? 60 : n), (const char *)line);
		int rc = header_lines(r, h, err, errsz);
		if (rc <= 0)
			return rc;
		if (h->status == 101)
			return fb_err_set(err, errsz, FB_EMALFORMED, "unexpected 101 Switching Protocols");
		if (h->status >= 200)
			return 1;
	}
}

/* Walk a chunked body. out NULL: only check it and count the data bytes in
 * *total; else append the data to out. 1 complete, 0 need more, <0 error. */
static int walk_chunked(struct fb_rd *r, int eof, size_t max_body, struct fb_buf *out,
			uint64_t *total, char *err, size_t errsz)
{
	uint64_t data = 0, framing = 0;
	for (;;) {
		const uint8_t *line;
		size_t n, start = r->off;
		struct fb_rd w;
		size_t left = fb_rd_left(r);
		rd_window(r, CHUNK_LINE_MAX + 2, &w);
		if (!rd_line(&w, &line, &n)) {
			if (left >= CHUNK_LINE_MAX + 2)
				return fb_err_set(err, errsz, FB_EMALFORMED,
						  "chunk size line longer than %u bytes",
						  CHUNK_LINE_MAX);
			goto more;
		}
		fb_rd_take(r, w.off);
		uint64_t size = 0;
		size_t i = 0;
		for (; i < n; i++) {
			uint8_t c = line[i];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
				: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (d < 0)
				break;
			if (size >> 60)
				return fb_err_set(err, errsz, FB_ETOOBIG, "chunk size overflows 64 bits");
			size = size << 4 | (uint64_t)d;
		}
		if (!i)
			return fb_err_set(err, errsz, FB_EMALFORMED, "bad chunk size line");
		while (i < n && is_ows(line[i]))
			i++;
		if (i < n && line[i] != ';')
			return fb_err_set(err, errsz, FB_EMALFORMED, "bad chunk size line");
		for (; i < n; i++)
			if (!is_value_char(line[i]))
				return fb_err_set(err, errsz, FB_EMALFORMED,
						  "control character in a chunk extension");
		framing += r->off - start;
		if (!size) {
			/* trailer section, bounded like a head */
			struct head t = { 0 };
			left = fb_rd_left(r);
			rd_window(r, FB_HTTP_MAX_HEADER, &w);
			int rc = header_lines(&w, &t, err, errsz);
			if (rc < 0)
				return rc;
			if (!rc) {
				if (left >= FB_HTTP_MAX_HEADER)
					return fb_err_set(err, errsz, FB_ETOOBIG,
							  "chunked trailer larger than %u bytes",
							  FB_HTTP_MAX_HEADER);
				goto more;
			}
			*total = data;
			return 1;
		}
		if (size > max_body - data)
			return fb_err_set(err, errsz, FB_ETOOBIG, "chunked body larger than %zu bytes",
					  max_body);
		/* Tiny chunks with long extensions must not cost unbounded memory. */
		if (framing > data + size + FRAMING_SLACK)
			return fb_err_set(err, errsz, FB_ETOOBIG,
					  "chunk framing (%llu bytes) out of proportion " "to the data",
					  (unsigned long long)framing);
		if (fb_rd_left(r) < size)
			goto more;
		const uint8_t *p = fb_rd_take(r, (size_t)size);
		if (out && fb_buf_put(out, p, (size_t)size))
			return fb_err_set(err, errsz, -ENOMEM, "out of memory for the response body");
		data += size;
		/* the CRLF (or bare LF) after the data */
		if (rd_peek(r) == '\r')
			fb_rd_u8(r);
		int c = rd_peek(r);
		if (c < 0)
			goto more;
		if (c != '\n')
			return fb_err_set(err, errsz, FB_EMALFORMED, "chunk data not followed by CRLF");
		fb_rd_u8(r);
		framing += 2;
	}
more:
	if (eof)
		return fb_err_set(err, errsz, FB_ETRUNC, "connection closed inside the chunked body (after "
				  "%llu bytes)", (unsigned long long)data);
	return 0;
}

static int set_body(struct fb_buf *b, const uint8_t *p, size_t n, char *err, size_t errsz)
{
	if (fb_buf_reserve(b, n + 1) || (n && fb_buf_put(b, p, n)))
		return fb_err_set(err, errsz, -ENOMEM, "out of memory for the response body");
	b->data[b->len] = '\0';
	return 0;
}

int fb_http_parse_response(const uint8_t *buf, size_t len, int eof, size_t max_body,
			   struct fb_http_resp *r, char *err, size_t errsz)
{
	struct head h;
	struct fb_rd rd;
	int rc;

	r->status = 0;
	r->body = (struct fb_buf)FB_BUF_INIT;
	if (err && errsz)
		err[0] = '\0';
	fb_rd_init(&rd, buf, len > FB_HTTP_MAX_HEADER ? FB_HTTP_MAX_HEADER : len);
	rc = parse_head(&rd, &h, err, errsz);
	if (rc < 0)
		return rc;
	if (!rc) {
		if (len >= FB_HTTP_MAX_HEADER)
			return fb_err_set(err, errsz, FB_ETOOBIG, "response header larger than %u bytes",
					  FB_HTTP_MAX_HEADER);
		if (eof)
			return fb_err_set(err, errsz, FB_ETRUNC,
					  len ? "connection closed inside the response "
					  "header" : "connection closed without a response");
		return 0;
	}
	size_t body_off = rd.off;
	fb_rd_init(&rd, buf, len);
	fb_rd_take(&rd, body_off);

	if (h.status == 204 || h.status == 304) {
		rc = set_body(&r->body, NULL, 0, err, errsz);
	} else if (h.chunked && h.has_len) {
		return fb_err_set(err, errsz, FB_EMALFORMED, "both Content-Length and Transfer-Encoding");
	} else if (h.chunked) {
		uint64_t total = 0;
		struct fb_rd again = rd;
		rc = walk_chunked(&rd, eof, max_body, NULL, &total, err, errsz);
		if (rc <= 0)
			return rc;
		rc = fb_buf_reserve(&r->body, (size_t)total + 1) ? -ENOMEM
		     : walk_chunked(&again, eof, max_body, &r->body, &total, err, errsz);
		if (rc == 1) {
			r->body.data[r->body.len] = '\0';
			rc = 0;
		} else {
			rc = rc < 0 ? rc : FB_EMALFORMED;
		}
	} else if (h.has_len) {
		if (h.clen > max_body)
			return fb_err_set(err, errsz, FB_ETOOBIG, "Content-Length %llu larger than %zu bytes",
					  (unsigned long long)h.clen, max_body);
		if (fb_rd_left(&rd) < h.clen) {
			if (eof)
				return fb_err_set(err, errsz, FB_ETRUNC,
						  "connection closed after %zu of %llu " "body bytes",
						  fb_rd_left(&rd), (unsigned long long)h.clen);
			return 0;
		}
		rc = set_body(&r->body, fb_rd_take(&rd, (size_t)h.clen), (size_t)h.clen, err, errsz);
	} else {
		/* delimited by the close */
		size_t n = fb_rd_left(&rd);
		if (n > max_body)
			return fb_err_set(err, errsz, FB_ETOOBIG, "response body larger than %zu bytes",
					  max_body);
		if (!eof)
			return 0;
		rc = set_body(&r->body, fb_rd_take(&rd, n), n, err, errsz);
	}
	if (rc < 0) {
		fb_buf_free(&r->body);
		return rc;
	}
	r->status = h.status;
	return 1;
}

void fb_http_resp_free(struct fb_http_resp *r)
{
	if (!r)
		return;
	fb_buf_free(&r->body);
	r->status = 0;
}
