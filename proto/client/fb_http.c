/* fb_http.c - one blocking HTTP/1.1 request (fb_http.h) over a fresh
 * non-blocking socket, every wait bounded by one deadline; the response goes
 * through fb_http_parse_response() as it arrives.
 */
#include "fb_http.h"

#include "fb_err.h"
#include "fb_time.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef FB_VERSION
#define FB_VERSION "unknown"
#endif

#define RECV_STEP (64u * 1024)
#define PATH_MAX_LEN 8192

/* strerror with a lower-case first letter, to sit after "peer: " */
static const char *errtext(int e, char *buf, size_t n)
{
	snprintf(buf, n, "%s", strerror(e));
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

int fb_http_wait_fd(int fd, short what, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - fb_time_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = what };
		int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* A connected non-blocking socket, or a negative error with err set. */
static int dial(const char *host, uint16_t port, const char *peer, int64_t deadline, int timeout_ms,
		char *err, size_t errsz)
{
	char name[256], ps[8], eb[96];
	size_t hl = strlen(host);
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']')
		snprintf(name, sizeof(name), "%.*s", (int)(hl - 2), host + 1);
	else
		snprintf(name, sizeof(name), "%s", host);
	snprintf(ps, sizeof(ps), "%u", (unsigned)port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	int g = getaddrinfo(name, ps, &hints, &res);
	if (g) {
		int rc = g == EAI_SYSTEM ? -errno : g == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
		return fb_err_set(err, errsz, rc ? rc : -EHOSTUNREACH, "%s: cannot resolve \"%s\": %s", peer,
				  name, g == EAI_SYSTEM ? errtext(errno, eb, sizeof(eb)) : gai_strerror(g));
	}
	int fd = -1, rc = -ECONNREFUSED;
	for (struct addrinfo *ai = res; ai && rc != -ETIMEDOUT; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		rc = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : -errno;
		if (rc == -EINPROGRESS || rc == -EINTR) {
			rc = fb_http_wait_fd(fd, POLLOUT, deadline);
			int e = 0;
			socklen_t l = sizeof(e);
			if (!rc)
				rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l) ? -errno : -e;
		}
		if (!rc)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		return fd;
	if (rc == -ETIMEDOUT)
		return fb_err_set(err, errsz, rc, "%s: connect timed out after %d ms", peer, timeout_ms);
	return fb_err_set(err, errsz, rc, "%s: %s", peer, errtext(-rc, eb, sizeof(eb)));
}

static int send_all(int fd, const uint8_t *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			int rc = fb_http_wait_fd(fd, POLLOUT, deadline);
			if (rc)
				return rc;
			continue;
		}
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One connection: the socket, and the transport's state when not plain. */
struct conn {
	int fd;
	const struct fb_http_transport *t;
	void *tc;
};

static int conn_send(struct conn *c, const uint8_t *p, size_t n, int64_t deadline)
{
	return c->t ? c->t->send_all(c->tc, p, n, deadline) : send_all(c->fd, p, n, deadline);
}

/* Bytes read (>0), 0 at eof, -errno; -EAGAIN: nothing yet, wait again. */
static long conn_recv(struct conn *c, void *p, size_t n, int64_t deadline)
{
	if (c->t)
		return c->t->recv(c->tc, p, n, deadline);
	int rc = fb_http_wait_fd(c->fd, POLLIN, deadline);
	if (rc)
		return rc;
	ssize_t got = recv(c->fd, p, n, 0);
	if (got < 0)
		return errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
	return (long)got;
}

/* Receive and parse until the response is complete. */
static int receive(struct conn *c, const char *peer, const char *what, int64_t deadline,
		   int timeout_ms, size_t max_body, struct fb_http_resp *r, char *err, size_t errsz)
{
	struct fb_buf in = FB_BUF_INIT;
	char perr[160], eb[96];
	int rc;
	for (;;) {
		if (fb_buf_reserve(&in, RECV_STEP)) {
			rc = fb_err_set(err, errsz, -ENOMEM, "%s: out of memory reading the response", peer);
			break;
		}
		long n = conn_recv(c, in.data + in.len, in.cap - in.len, deadline);
		if (n == -EAGAIN)
			continue;
		if (n == -ETIMEDOUT) {
			rc = fb_err_set(err, errsz, -ETIMEDOUT,
					"%s: no complete response to %s within %d ms (got %zu "
					"bytes)", peer, what, timeout_ms, in.len);
			break;
		}
		if (n < 0) {
			rc = fb_err_set(err, errsz, (int)n, "%s: reading the response to %s: %s", peer,
					what, errtext((int)-n, eb, sizeof(eb)));
			break;
		}
		in.len += (size_t)n;
		rc = fb_http_parse_response(in.data, in.len, n == 0, max_body, r, perr, sizeof(perr));
		if (rc == 1) {
			rc = 0;
			break;
		}
		if (rc < 0 || n == 0) { /* the parser never wants more after eof */
			rc = fb_err_set(err, errsz, rc < 0 ? rc : FB_ETRUNC,
					"%s: bad response to %s: %s", peer, what, perr);
			break;
		}
	}
	fb_buf_free(&in);
	return rc;
}

static int valid_text(const char *s, size_t max, int allow_space)
{
	size_t n = 0;
	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f || (!allow_space && s[n] == ' '))
			return 0;
	return n > 0 && n <= max;
}

int fb_http_request(const char *host, uint16_t port, const char *method, const char *path,
		    const char *content_type, const void *body, size_t body_len,
		    int timeout_ms, size_t max_body, struct fb_http_resp *r, char *err, size_t errsz)
{
	return fb_http_request_as(NULL, host, port, method, path, content_type, body, body_len,
				  timeout_ms, max_body, r, err, errsz);
}

int fb_http_request_as(const struct fb_http_client *cl, const char *host, uint16_t port,
		       const char *method, const char *path, const char *content_type,
		       const void *body, size_t body_len, int timeout_ms, size_t max_body,
		       struct fb_http_resp *r, char *err, size_t errsz)
{
	const char *token = cl && cl->token && cl->token[0] ? cl->token : NULL;
	char peer[300], what[80];
	r->status = 0;
	r->body = (struct fb_buf)FB_BUF_INIT;
	if (err && errsz)
		err[0] = '\0';
	if (!host || !valid_text(host, 255, 0))
		return fb_err_set(err, errsz, -EINVAL, "bad HTTP host \"%s\"", host ? host : "(null)");
	snprintf(peer, sizeof(peer), strchr(host, ':') && host[0] != '[' ? "[%s]:%u" : "%s:%u", host,
		 (unsigned)port);
	/* methods are upper-case tokens (GET, POST, DELETE, ...) */
	int is_token = method && *method;
	for (const char *m = method; is_token && *m; m++)
		is_token = *m >= 'A' && *m <= 'Z' && m - method < 16;
	if (!is_token || strcmp(method, "HEAD") == 0)
		return fb_err_set(err, errsz, -EINVAL, "%s: bad HTTP method \"%s\"", peer,
				  method ? method : "(null)");
	if (!path || path[0] != '/' || !valid_text(path, PATH_MAX_LEN, 0))
		return fb_err_set(err, errsz, -EINVAL, "%s: bad HTTP path (must start with '/', no spaces "
				  "or control characters)", peer);
	if ((content_type && !valid_text(content_type, 255, 1)) || (!body && body_len) || !port ||
	    timeout_ms <= 0 || (token && !valid_text(token, 1024, 0)))
		return fb_err_set(err, errsz, -EINVAL, "%s: bad request arguments for %s %s", peer,
				  method, path);
	snprintf(what, sizeof(what), "%s %.60s", method, path);

	int64_t deadline = fb_time_ms() + timeout_ms;
	int fd = dial(host, port, peer, deadline, timeout_ms, err, errsz);
	if (fd < 0)
		return fd;
	struct conn c = { .fd = fd, .t = cl ? cl->transport : NULL };
	if (c.t && !(c.tc = c.t->start(c.t, fd, host, deadline, err, errsz))) {
		close(fd);
		return err && errsz && err[0] ? -EPROTO : fb_err_set(err, errsz, -EPROTO, "%s: TLS failed", peer);
	}

	struct fb_buf req = FB_BUF_INIT;
	int with_len = body || !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH");
	int rc = fb_buf_printf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: fabricbus/%s\r\n"
			       "Accept: application/json\r\nConnection: close\r\n",
			       method, path, peer, FB_VERSION);
	if (!rc && content_type)
		rc = fb_buf_printf(&req, "Content-Type: %s\r\n", content_type);
	if (!rc && token)
		rc = fb_buf_printf(&req, "Authorization: Bearer %s\r\n", token);
	if (!rc && with_len)
		rc = fb_buf_printf(&req, "Content-Length: %zu\r\n", body_len);
	if (!rc)
		rc = fb_buf_puts(&req, "\r\n");
	if (!rc && body_len)
		rc = fb_buf_put(&req, body, body_len);
	if (rc) {
		fb_buf_free(&req);
		if (c.t)
			c.t->end(c.tc);
		close(fd);
		return fb_err_set(err, errsz, -ENOMEM, "%s: out of memory building %s", peer, what);
	}
	int src = conn_send(&c, req.data, req.len, deadline);
	if (token && req.data)
		memset(req.data, 0, req.len); /* it holds the token */
	fb_buf_free(&req);
	if (src == -ETIMEDOUT) {
		if (c.t)
			c.t->end(c.tc);
		close(fd);
		return fb_err_set(err, errsz, src, "%s: sending %s timed out after %d ms", peer, what,
				  timeout_ms);
	}
	/* A server may answer (413, 503) and close before reading all we sent:
	 * take its answer if there is one, else report the send error. */
	rc = receive(&c, peer, what, deadline, timeout_ms, max_body, r, err, errsz);
	if (c.t)
		c.t->end(c.tc);
	close(fd);
	if (rc && src) {
		char eb[96];
		rc = fb_err_set(err, errsz, src, "%s: sending %s: %s", peer, what,
				errtext(-src, eb, sizeof(eb)));
	}
	return rc;
}

int fb_http_map_target(const char *list, char *out, size_t outsz)
{
	static const char hex[] = "0123456789ABCDEF";
	int n = snprintf(out, outsz, "/fabric/map?nodes=");
	if (n < 0 || (size_t)n >= outsz)
		return 0;
	size_t j = (size_t)n;
	for (const unsigned char *p = (const unsigned char *)list; *p; p++) {
		int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || strchr("-._~,", *p);
		if (j + 4 > outsz)
			return 0;
		if (plain) {
			out[j++] = (char)*p;
		} else {
			out[j++] = '%';
			out[j++] = hex[*p >> 4];
			out[j++] = hex[*p & 15];
		}
	}
	out[j] = '\0';
	return 1;
}
