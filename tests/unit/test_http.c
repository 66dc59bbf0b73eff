/* test_http.c - fb_http: the response parser on complete, partial, chunked,
 * close-delimited and hostile input, and real requests against a real
 * fabricbusd and against small in-test servers that misbehave on purpose.
 *
 * Built from fb_http.c, fb_http_parse.c and proto/util alone
 * (tests/meson.build): if this links, fb_http needs nothing but libc and
 * proto/util, as the SPANK plugin requires. */
#include "fb_err.h"
#include "fb_http.h"
#include "fb_test.h"
#include "fb_test_broker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BODY (1u << 20)

static int parse(const char *s, int eof, size_t max_body, struct fb_http_resp *r, char *err)
{
	return fb_http_parse_response((const uint8_t *)s, strlen(s), eof, max_body, r, err, 200);
}

/* Every proper prefix needs more bytes (or is truncated at eof); the whole
 * is complete with the expected status and body. */
static int prefixes_behave(const char *s, int status, const char *body)
{
	struct fb_http_resp r;
	char err[200];
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		int rc = fb_http_parse_response((const uint8_t *)s, i, 0, MAX_BODY, &r, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "  prefix %zu of %zu: %d (%s)\n", i, n, rc, err);
			return 0;
		}
		rc = fb_http_parse_response((const uint8_t *)s, i, 1, MAX_BODY, &r, err, sizeof(err));
		if (rc != FB_ETRUNC) {
			fprintf(stderr, "  prefix %zu of %zu at eof: %d (%s)\n", i, n, rc, err);
			if (rc == 1)
				fb_http_resp_free(&r);
			return 0;
		}
	}
	int rc = fb_http_parse_response((const uint8_t *)s, n, 0, MAX_BODY, &r, err, sizeof(err));
	int ok = rc == 1 && r.status == status && r.body.len == strlen(body) &&
		 memcmp(r.body.data, body, r.body.len) == 0 && r.body.data[r.body.len] == '\0';
	if (rc == 1)
		fb_http_resp_free(&r);
	return ok;
}

/* ---- the parser --------------------------------------------------------- */

static void http_parse_content_length_response_is_complete(void)
{
	struct fb_http_resp r;
	char err[200];
	const char *s = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
			"\r\n{\"ok\":true}";
	CHECK_EQ(parse(s, 0, MAX_BODY, &r, err), 1);
	CHECK_EQ(r.status, 200);
	CHECK_STR((const char *)r.body.data, "{\"ok\":true}");
	fb_http_resp_free(&r);
	CHECK(r.body.data == NULL);
	/* bytes past Content-Length are not part of the body */
	CHECK_EQ(parse("HTTP/1.0 404 Not Found\r\ncontent-length: 2\r\n\r\nnoEXTRA", 1, MAX_BODY, &r, err), 1);
	CHECK_EQ(r.status, 404);
	CHECK_STR((const char *)r.body.data, "no");
	fb_http_resp_free(&r);
}

static void http_parse_partial_input_needs_more_until_complete(void)
{
	CHECK(prefixes_behave("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, "hello"));
	CHECK(prefixes_behave("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
			      "5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\n\r\n", 201, "hello!"));
	CHECK(prefixes_behave("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, ""));
}

static void http_parse_chunked_with_extensions_and_trailer(void)
{
	struct fb_http_resp r;
	char err[200];
	const char *s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
			"5;name=\"v\"\r\nhello\r\n6 ; x\r\n world\r\na\r\n0123456789\r\n0\r\n"
			"X-Trailer: yes\r\n\r\n";
	CHECK_EQ(parse(s, 0, MAX_BODY, &r, err), 1);
	CHECK_STR((const char *)r.body.data, "hello world0123456789");
	CHECK_EQ(r.body.len, 21);
	fb_http_resp_free(&r);
	/* the decoded size is what max_body limits */
	CHECK_EQ(parse(s, 0, 21, &r, err), 1);
	fb_http_resp_free(&r);
	CHECK_EQ(parse(s, 0, 20, &r, err), FB_ETOOBIG);
	CHECK(strstr(err, "larger than 20"));
}

static void http_parse_close_delimited_body_ends_at_eof(void)
{
	struct fb_http_resp r;
	char err[200];
	const char *s = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close";
	CHECK_EQ(parse(s, 0, MAX_BODY, &r, err), 0);
	CHECK_EQ(parse(s, 1, MAX_BODY, &r, err), 1);
	CHECK_STR((const char *)r.body.data, "until the close");
	fb_http_resp_free(&r);
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\n\r\n", 1, MAX_BODY, &r, err), 1);
	CHECK_EQ(r.body.len, 0);
	CHECK(r.body.data && r.body.data[0] == '\0');
	fb_http_resp_free(&r);
	CHECK_EQ(parse(s, 0, 10, &r, err), FB_ETOOBIG);
	CHECK_EQ(parse("", 1, MAX_BODY, &r, err), FB_ETRUNC);
	CHECK(strstr(err, "without a response"));
}

static void http_parse_skips_interim_and_bodyless_statuses(void)
{
	struct fb_http_resp r;
	char err[200];
	CHECK_EQ(parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX: y\r\n\r\n"
		       "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", 0, MAX_BODY, &r, err), 1);
	CHECK_EQ(r.status, 201);
	CHECK_STR((const char *)r.body.data, "ok");
	fb_http_resp_free(&r);
	CHECK_EQ(parse("HTTP/1.1 100 Continue\r\n\r\n", 0, MAX_BODY, &r, err), 0);
	CHECK_EQ(parse("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", 0, MAX_BODY, &r, err), 1);
	CHECK_EQ(r.status, 204);
	CHECK_EQ(r.body.len, 0);
	fb_http_resp_free(&r);
	CHECK_EQ(parse("HTTP/1.1 304 Not Modified\r\n\r\n", 0, MAX_BODY, &r, err), 1);
	fb_http_resp_free(&r);
	CHECK_EQ(parse("HTTP/1.1 101 Switching Protocols\r\n\r\n", 0, MAX_BODY, &r, err), FB_EMALFORMED);
}

static void http_parse_accepts_bare_lf_line_ends(void)
{
	struct fb_http_resp r;
	char err[200];
	CHECK_EQ(parse("HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", 0, MAX_BODY, &r, err), 1);
	CHECK_STR((const char *)r.body.data, "abc");
	fb_http_resp_free(&r);
	CHECK_EQ(parse("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n", 0, MAX_BODY, &r,
		       err), 1);
	CHECK_STR((const char *)r.body.data, "abc");
	fb_http_resp_free(&r);
}

static void http_parse_refuses_header_block_over_64k(void)
{
	struct fb_http_resp r;
	char err[200];
	size_t n = FB_HTTP_MAX_HEADER + 100;
	char *s = malloc(n + 1);
	CHECK(s);
	memset(s, 'a', n);
	memcpy(s, "HTTP/1.1 200 OK\r\nX-Big: ", 24);
	s[n] = '\0';
	/* refused as soon as 64 KiB arrived without the end of the head */
	int rc = parse(s, 0, MAX_BODY, &r, err);
	free(s);
	CHECK_EQ(rc, FB_ETOOBIG);
	CHECK(strstr(err, "header larger than 65536"));
	/* a head that ends just inside the limit is fine */
	const char *start = "HTTP/1.1 200 OK\r\nX-Big: ", *end = "\r\nContent-Length: 0\r\n\r\n";
	n = FB_HTTP_MAX_HEADER;
	s = malloc(n + 1);
	CHECK(s);
	memset(s, 'b', n);
	memcpy(s, start, strlen(start));
	memcpy(s + n - strlen(end), end, strlen(end));
	s[n] = '\0';
	rc = parse(s, 0, MAX_BODY, &r, err);
	free(s);
	CHECK_EQ(rc, 1);
	fb_http_resp_free(&r);
}

static void http_parse_refuses_bad_status_lines(void)
{
	static const char *const bad[] = {
		"HTTP/2 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 099 Low",
		"HTTP/1.1 600 High", "ICY 200 OK", "http/1.1 200 OK", "HTTP/1.1  200 OK",
		"HTTP/1.1 200OK", "HTTP/1.x 200 OK", "HTTP/1.1 2x0 OK", "HTTP/1.1 200 O\x01K", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char s[200], err[200];
		struct fb_http_resp r;
		snprintf(s, sizeof(s), "%s\r\nContent-Length: 0\r\n\r\n", bad[i]);
		int rc = parse(s, 0, MAX_BODY, &r, err);
		if (rc != FB_EMALFORMED)
			fprintf(stderr, "  status line \"%s\": %d\n", bad[i], rc);
		CHECK_EQ(rc, FB_EMALFORMED);
		CHECK(strstr(err, "bad status line"));
	}
}

static void http_parse_refuses_conflicting_or_bad_content_length(void)
{
	static const char *const bad[] = {
		"Content-Length: 5\r\nContent-Length: 6", "Content-Length: 5, 6", "Content-Length: -1",
		"Content-Length: 1e3", "Content-Length:", "Content-Length: 0x10",
		"Content-Length: 99999999999999999999", "Content-Length: 5,",
		"Content-Length: 5\r\nTransfer-Encoding: chunked", "Transfer-Encoding: gzip",
		"Transfer-Encoding: gzip, chunked", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
		"X-Folded: a\r\n  b", "Bad Name: x", ": empty", "NoColon", "X-Nul: a\x7f",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char s[300], err[200];
		struct fb_http_resp r;
		snprintf(s, sizeof(s), "HTTP/1.1 200 OK\r\n%s\r\n\r\n12345", bad[i]);
		int rc = parse(s, 1, MAX_BODY, &r, err);
		if (rc != FB_EMALFORMED)
			fprintf(stderr, "  header \"%s\": %d\n", bad[i], rc);
		CHECK_EQ(rc, FB_EMALFORMED);
	}
	struct fb_http_resp r;
	char err[200];
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n12345", 0,
		       MAX_BODY, &r, err), 1);
	fb_http_resp_free(&r);
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length:  5 , 5 \r\n\r\n12345", 0, MAX_BODY, &r, err), 1);
	fb_http_resp_free(&r);
	/* too large is refused before the body arrives */
	CHECK_EQ(parse("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", 0, 99, &r, err), FB_ETOOBIG);
	CHECK(strstr(err, "Content-Length 100"));
}

static void http_parse_refuses_bad_and_overflowing_chunks(void)
{
	static const struct { const char *body; int rc; } cases[] = {
		{ "FFFFFFFFFFFFFFFFF\r\n", FB_ETOOBIG },     /* 17 hex digits: over 64 bits */
		{ "10000000000000000\r\n", FB_ETOOBIG },
		{ "FFFFFFFFFFFFFFFF\r\n", FB_ETOOBIG },      /* fits, but over max_body */
		{ "zz\r\n", FB_EMALFORMED },
		{ "\r\n", FB_EMALFORMED },
		{ "5x\r\nhello\r\n0\r\n\r\n", FB_EMALFORMED },
		{ "5\r\nhelloXX0\r\n\r\n", FB_EMALFORMED },  /* no CRLF after the data */
		{ "5\r\nhello\rX", FB_EMALFORMED },
		{ "3;a\x01\r\nabc\r\n0\r\n\r\n", FB_EMALFORMED },
		{ "0\r\nBad Trailer\r\n\r\n", FB_EMALFORMED },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char s[300], err[200];
		struct fb_http_resp r;
		snprintf(s, sizeof(s), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%s", cases[i].body);
		int rc = parse(s, 0, MAX_BODY, &r, err);
		if (rc != cases[i].rc)
			fprintf(stderr, "  chunked body %zu: %d (%s)\n", i, rc, err);
		CHECK_EQ(rc, cases[i].rc);
	}
	/* a chunk line that never ends */
	char s[3000], err[200];
	struct fb_http_resp r;
	int n = snprintf(s, sizeof(s), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;");
	memset(s + n, 'e', sizeof(s) - (size_t)n - 1);
	s[sizeof(s) - 1] = '\0';
	CHECK_EQ(parse(s, 0, MAX_BODY, &r, err), FB_EMALFORMED);
	CHECK(strstr(err, "longer than"));
}

static void http_parse_refuses_chunk_framing_out_of_proportion(void)
{
	/* one-byte chunks with 1000-byte extensions: 1 MB of framing for 1 KB */
	struct fb_buf b = FB_BUF_INIT;
	struct fb_http_resp r;
	char err[200];
	char ext[1001];
	memset(ext, 'x', 1000);
	ext[1000] = '\0';
	CHECK(fb_buf_puts(&b, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") == 0);
	for (int i = 0; i < 1000; i++)
		CHECK(fb_buf_printf(&b, "1;%s\r\nz\r\n", ext) == 0);
	int rc = fb_http_parse_response(b.data, b.len, 0, MAX_BODY, &r, err, sizeof(err));
	fb_buf_free(&b);
	CHECK_EQ(rc, FB_ETOOBIG);
	CHECK(strstr(err, "framing"));
}

/* ---- requests against in-test servers ----------------------------------- */

struct fake {
	int lfd;
	uint16_t port;
	const char *reply;       /* sent after the request head (and body) arrived */
	int never_accept;
	char req[4096];
	size_t req_len;
	pthread_t th;
};

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	/* read the head, then Content-Length more bytes */
	for (;;) {
		ssize_t n = recv(fd, f->req + f->req_len, sizeof(f->req) - 1 - f->req_len, 0);
		if (n <= 0)
			break;
		f->req_len += (size_t)n;
		f->req[f->req_len] = '\0';
		char *eoh = strstr(f->req, "\r\n\r\n");
		if (!eoh)
			continue;
		char *cl = strstr(f->req, "Content-Length: ");
		size_t want = (size_t)(eoh + 4 - f->req) + (cl ? strtoul(cl + 16, NULL, 10) : 0);
		if (f->req_len >= want)
			break;
	}
	if (f->reply && send(fd, f->reply, strlen(f->reply), MSG_NOSIGNAL) < 0)
		perror("fake server send");
	close(fd);
	return NULL;
}

static int fake_start(struct fake *f, const char *reply, int never_accept)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	memset(f, 0, sizeof(*f));
	f->reply = reply;
	f->never_accept = never_accept;
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(f->lfd, (struct sockaddr *)&a, &l) || listen(f->lfd, 4))
		return -1;
	f->port = ntohs(a.sin_port);
	return never_accept ? 0 : pthread_create(&f->th, NULL, fake_main, f);
}

static void fake_stop(struct fake *f)
{
	if (!f->never_accept)
		pthread_join(f->th, NULL);
	close(f->lfd);
}

static void http_post_sends_method_headers_and_body_and_reads_chunked_reply(void)
{
	struct fake f;
	struct fb_http_resp r;
	char err[256];
	const char *body = "{\"job\":\"42\",\"nodes\":[\"n1\",\"n2\"]}";
	CHECK(fake_start(&f, "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
			     "4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n", 0) == 0);
	int rc = fb_http_request("127.0.0.1", f.port, "POST", "/fabric/jobs", "application/json",
				 body, strlen(body), 5000, MAX_BODY, &r, err, sizeof(err));
	fake_stop(&f);
	if (rc)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(r.status, 201);
	CHECK_STR((const char *)r.body.data, "{\"a\":1}");
	fb_http_resp_free(&r);
	char host[64], len[64];
	snprintf(host, sizeof(host), "\r\nHost: 127.0.0.1:%u\r\n", f.port);
	snprintf(len, sizeof(len), "\r\nContent-Length: %zu\r\n", strlen(body));
	CHECK(strncmp(f.req, "POST /fabric/jobs HTTP/1.1\r\n", 28) == 0);
	CHECK(strstr(f.req, host));
	CHECK(strstr(f.req, len));
	CHECK(strstr(f.req, "\r\nContent-Type: application/json\r\n"));
	CHECK(strstr(f.req, "\r\nConnection: close\r\n"));
	CHECK(f.req_len > strlen(body) && strcmp(f.req + f.req_len - strlen(body), body) == 0);
}

static void http_delete_without_body_sends_no_content_length(void)
{
	struct fake f;
	struct fb_http_resp r;
	char err[256];
	CHECK(fake_start(&f, "HTTP/1.1 204 No Content\r\n\r\n", 0) == 0);
	int rc = fb_http_request("localhost", f.port, "DELETE", "/fabric/jobs/42", NULL, NULL, 0,
				 5000, MAX_BODY, &r, err, sizeof(err));
	fake_stop(&f);
	CHECK_EQ(rc, 0);
	CHECK_EQ(r.status, 204);
	fb_http_resp_free(&r);
	CHECK(strncmp(f.req, "DELETE /fabric/jobs/42 HTTP/1.1\r\n", 33) == 0);
	CHECK(!strstr(f.req, "Content-Length"));
	CHECK(!strstr(f.req, "Content-Type"));
}

static void http_response_cut_short_is_truncation_naming_peer(void)
{
	struct fake f;
	struct fb_http_resp r;
	char err[256], peer[64];
	CHECK(fake_start(&f, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 0) == 0);
	int rc = fb_http_request("127.0.0.1", f.port, "GET", "/fabric/map", NULL, NULL, 0, 5000,
				 MAX_BODY, &r, err, sizeof(err));
	fake_stop(&f);
	CHECK_EQ(rc, FB_ETRUNC);
	snprintf(peer, sizeof(peer), "127.0.0.1:%u: bad response to GET /fabric/map", f.port);
	CHECK(strstr(err, peer));
	CHECK(strstr(err, "3 of 10"));
	CHECK(r.body.data == NULL);
}

static void http_silent_server_times_out_within_timeout(void)
{
	struct fake f;
	struct fb_http_resp r;
	char err[256], peer[64];
	CHECK(fake_start(&f, NULL, 1) == 0); /* listens, never accepts: connect still succeeds */
	int64_t t0 = fb_time_ms();
	int rc = fb_http_request("127.0.0.1", f.port, "GET", "/status", NULL, NULL, 0, 300, MAX_BODY,
				 &r, err, sizeof(err));
	int64_t dt = fb_time_ms() - t0;
	fake_stop(&f);
	CHECK_EQ(rc, -ETIMEDOUT);
	CHECK(dt >= 290 && dt < 3000);
	snprintf(peer, sizeof(peer), "127.0.0.1:%u: no complete response", f.port);
	CHECK(strstr(err, peer));
}

static void http_refuses_bad_arguments(void)
{
	struct fb_http_resp r;
	char err[256];
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "HEAD", "/", NULL, NULL, 0, 100, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "GET", "status", NULL, NULL, 0, 100, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "GET", "/a b", NULL, NULL, 0, 100, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "GET", "/a\r\nX: y", NULL, NULL, 0, 100, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "G T", "/", NULL, NULL, 0, 100, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "GET", "/", NULL, NULL, 0, 0, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("127.0.0.1", 1, "POST", "/", NULL, NULL, 5, 100, 1, &r, err, sizeof(err)), -EINVAL);
	CHECK_EQ(fb_http_request("", 1, "GET", "/", NULL, NULL, 0, 100, 1, &r, err, sizeof(err)), -EINVAL);
}

/* ---- requests against a real fabricbusd --------------------------------- */

static struct fbt_broker broker;
static int broker_up;

static void http_get_status_from_real_broker_is_200_json(void)
{
	struct fb_http_resp r;
	char err[256];
	CHECK(broker_up);
	int rc = fb_http_request("127.0.0.1", broker.http_port, "GET", "/status", NULL, NULL, 0, 5000,
				 MAX_BODY, &r, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  %s\n", err);
	CHECK_EQ(rc, 0);
	CHECK_EQ(r.status, 200);
	CHECK(r.body.len > 2 && r.body.data[0] == '{');
	CHECK(strstr((const char *)r.body.data, "\"broker\":"));
	CHECK(strstr((const char *)r.body.data, "\"head_id\":"));
	fb_http_resp_free(&r);
}

static void http_unknown_path_on_real_broker_is_404(void)
{
	struct fb_http_resp r;
	char err[256];
	CHECK(broker_up);
	int rc = fb_http_request("127.0.0.1", broker.http_port, "GET", "/no/such/thing", NULL, NULL, 0,
				 5000, MAX_BODY, &r, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK_EQ(r.status, 404);
	CHECK(strstr((const char *)r.body.data, "not found"));
	fb_http_resp_free(&r);
}

static void http_real_response_over_max_body_is_refused(void)
{
	struct fb_http_resp r;
	char err[256], peer[64];
	CHECK(broker_up);
	int rc = fb_http_request("127.0.0.1", broker.http_port, "GET", "/status", NULL, NULL, 0, 5000,
				 16, &r, err, sizeof(err));
	CHECK_EQ(rc, FB_ETOOBIG);
	snprintf(peer, sizeof(peer), "127.0.0.1:%u: bad response to GET /status", broker.http_port);
	CHECK(strstr(err, peer));
}

static void http_refused_port_error_names_peer(void)
{
	struct fb_http_resp r;
	char err[256], want[64];
	uint16_t port = fbt_free_port();
	int rc = fb_http_request("127.0.0.1", port, "GET", "/status", NULL, NULL, 0, 2000, MAX_BODY, &r,
				 err, sizeof(err));
	CHECK_EQ(rc, -ECONNREFUSED);
	snprintf(want, sizeof(want), "127.0.0.1:%u: connection refused", port);
	CHECK_STR(err, want);
	/* IPv6 peers are named with brackets */
	rc = fb_http_request("::1", port, "GET", "/status", NULL, NULL, 0, 2000, MAX_BODY, &r, err,
			     sizeof(err));
	CHECK(rc < 0);
	snprintf(want, sizeof(want), "[::1]:%u: ", port);
	CHECK(strncmp(err, want, strlen(want)) == 0);
}

int main(void)
{
	RUN(http_parse_content_length_response_is_complete);
	RUN(http_parse_partial_input_needs_more_until_complete);
	RUN(http_parse_chunked_with_extensions_and_trailer);
	RUN(http_parse_close_delimited_body_ends_at_eof);
	RUN(http_parse_skips_interim_and_bodyless_statuses);
	RUN(http_parse_accepts_bare_lf_line_ends);
	RUN(http_parse_refuses_header_block_over_64k);
	RUN(http_parse_refuses_bad_status_lines);
	RUN(http_parse_refuses_conflicting_or_bad_content_length);
	RUN(http_parse_refuses_bad_and_overflowing_chunks);
	RUN(http_parse_refuses_chunk_framing_out_of_proportion);
	RUN(http_post_sends_method_headers_and_body_and_reads_chunked_reply);
	RUN(http_delete_without_body_sends_no_content_length);
	RUN(http_response_cut_short_is_truncation_naming_peer);
	RUN(http_silent_server_times_out_within_timeout);
	RUN(http_refuses_bad_arguments);

	broker_up = fbt_broker_init(&broker) == 0 && fbt_broker_start(&broker) == 0;
	RUN(http_get_status_from_real_broker_is_200_json);
	RUN(http_unknown_path_on_real_broker_is_404);
	RUN(http_real_response_over_max_body_is_refused);
	RUN(http_refused_port_error_names_peer);
	/* keep the work directory (and its log) when the broker misbehaved */
	if (!broker_up) {
		fbt_broker_kill9(&broker);
	} else if (fbt_broker_stop(&broker) != 0) {
		fprintf(stderr, "FAIL fabricbusd exited non-zero; see %s/fabricbusd.log\n", broker.dir);
		fb_test_failed++;
	} else {
		fbt_broker_cleanup(&broker);
	}
	return TEST_DONE();
}
