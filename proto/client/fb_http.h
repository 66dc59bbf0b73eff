/* fb_http.h - a small blocking HTTP/1.1 client for the broker's JSON
 * endpoints (GET /status, GET /fabric/map, POST /fabric/jobs, DELETE
 * /fabric/jobs/<id>).
 *
 * Depends on libc and proto/util only: no libevent, no libwebsockets, no
 * logging. The SPANK plugin links it from fbclient_plain (the uninstrumented
 * build in proto/client/meson.build) into a module that
 * slurmstepd loads, so it must not raise signals (sends use MSG_NOSIGNAL),
 * leak descriptors into tasks (SOCK_CLOEXEC) or keep global state.
 *
 * The response parser and struct fb_http_resp are in fb_http_parse.h.
 *
 * Threads: every call is independent; any thread may call at any time.
 */
#ifndef FB_HTTP_H
#define FB_HTTP_H

#include "fb_http_parse.h"

#include <stddef.h>
#include <stdint.h>

/* One request on a fresh connection ("Connection: close").
 *
 * host is a name or an address (an IPv6 address with or without brackets),
 * port the TCP port. path starts with '/' and is sent as given (the caller
 * percent-encodes). content_type may be NULL; body may be NULL when body_len
 * is 0. POST, PUT and PATCH always carry Content-Length (0 without a body).
 * HEAD is refused: its response has no body to parse.
 *
 * The whole exchange (connect, send, receive) is bounded by timeout_ms (> 0).
 * Name resolution is not: getaddrinfo(3) has no timeout, so give an address
 * where a stalled resolver must not hold the caller.
 *
 * A response body larger than max_body bytes is refused. *r is overwritten on
 * entry (not freed). Returns 0 with r filled, whatever the status code (a 404
 * is a response, not an error), or a negative error -- -errno for the socket
 * (-ECONNREFUSED, -ETIMEDOUT, ...), -EHOSTUNREACH when host does not resolve,
 * -EINVAL for bad arguments, FB_ETOOBIG / FB_EMALFORMED / FB_ETRUNC for a
 * response that is too large, malformed, or cut short -- with r left empty and
 * a one-line reason in err that names the peer, e.g.
 *   "127.0.0.1:8080: connection refused"
 *   "[::1]:7412: no complete response within 5000 ms (got 120 bytes)"
 * err may be NULL when errsz is 0. */
int fb_http_request(const char *host, uint16_t port, const char *method, const char *path,
		    const char *content_type, const void *body, size_t body_len,
		    int timeout_ms, size_t max_body, struct fb_http_resp *r, char *err, size_t errsz);

/* A transport other than plain TCP (TLS: fb_http_auth.h provides one, so
 * that this file needs libc only). start runs on the connected socket and
 * returns the connection's state or NULL with err set; send_all and recv
 * wait (poll) until deadline (fb_time_ms clock): recv returns bytes read,
 * 0 at the end of the stream, or -errno (-ETIMEDOUT); end frees the state
 * (the caller closes fd). */
struct fb_http_transport {
	void *(*start)(const struct fb_http_transport *t, int fd, const char *host, int64_t deadline,
		       char *err, size_t errsz);
	int (*send_all)(void *conn, const void *p, size_t n, int64_t deadline);
	long (*recv)(void *conn, void *p, size_t n, int64_t deadline);
	void (*end)(void *conn);
	void *arg;
};

/* What a client adds to every request: a bearer token ("Authorization:
 * Bearer <token>", NULL or "" for none) and a transport (NULL: plain TCP). */
struct fb_http_client {
	const char *token;
	const struct fb_http_transport *transport;
};

/* 0 when fd is ready for what (POLLIN/POLLOUT, or has an error to report),
 * -ETIMEDOUT once deadline (fb_time_ms clock) passes, or -errno. */
int fb_http_wait_fd(int fd, short what, int64_t deadline);

/* fb_http_request with a client's token and transport (cl may be NULL). */
int fb_http_request_as(const struct fb_http_client *cl, const char *host, uint16_t port,
		       const char *method, const char *path, const char *content_type,
		       const void *body, size_t body_len, int timeout_ms, size_t max_body,
		       struct fb_http_resp *r, char *err, size_t errsz);

/* "/fabric/map?nodes=<list>" into out (a hostlist, or one node name); 1, or 0
 * when it does not fit. The broker decodes the query once, '+' to a space:
 * everything but unreserved bytes and ',' (a sub-delimiter, and the list's
 * most common byte) is %XX. */
int fb_http_map_target(const char *list, char *out, size_t outsz);

#endif
