/* fb_metrics_http.c - GET /metrics over libevent's evhttp: see
 * fb_metrics_http.h. */
#include "fb_metrics_http.h"

#include "fb_addr.h"
#include "fb_buf.h"
#include "fb_err.h"
#include "fb_metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct fb_metrics_http {
	struct evhttp *http;
	struct fb_metrics *r;
	void (*collect)(void *arg);
	void *collect_arg;
	char bound[INET6_ADDRSTRLEN + 8]; /* "[IPV6]:PORT" or "IPV4:PORT" */
};

/* The address fd is bound to, as the operator would give it to --metrics:
 * ":19180" means 127.0.0.1, and a host name is what it resolved to. */
static void bound_addr(evutil_socket_t fd, const char *host, int port, char *out, size_t outsz)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
		const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&ss;
		const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
		if (ss.ss_family == AF_INET6 && inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof(ip))) {
			snprintf(out, outsz, "[%s]:%u", ip, ntohs(a6->sin6_port));
			return;
		}
		if (ss.ss_family == AF_INET && inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof(ip))) {
			snprintf(out, outsz, "%s:%u", ip, ntohs(a4->sin_port));
			return;
		}
	}
	snprintf(out, outsz, strchr(host, ':') ? "[%.*s]:%d" : "%.*s:%d", INET6_ADDRSTRLEN, host,
		 port);
}

const char *fb_metrics_http_addr(const struct fb_metrics_http *h)
{
	return h->bound;
}

void fb_metrics_http_set_collect(struct fb_metrics_http *h, void (*collect)(void *arg), void *arg)
{
	h->collect = collect;
	h->collect_arg = arg;
}

static void reply(struct evhttp_request *req, int code, const char *reason, const char *type,
		  const void *body, size_t len)
{
	struct evbuffer *out = evbuffer_new();
	if (!out) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", type);
	evbuffer_add(out, body, len);
	evhttp_send_reply(req, code, reason, out);
	evbuffer_free(out);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct fb_metrics_http *h = arg;
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	if (!path || strcmp(path, "/metrics") != 0) {
		static const char msg[] = "not found: this port serves GET /metrics only\n";
		reply(req, 404, "Not Found", "text/plain", msg, sizeof(msg) - 1);
		return;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		static const char msg[] = "method not allowed: GET /metrics\n";
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		reply(req, 405, "Method Not Allowed", "text/plain", msg, sizeof(msg) - 1);
		return;
	}
	if (h->collect)
		h->collect(h->collect_arg);
	struct fb_buf b = FB_BUF_INIT;
	if (fb_metrics_render(h->r, &b) != 0)
		evhttp_send_error(req, 500, "out of memory");
	else
		reply(req, 200, "OK", FB_METRICS_CONTENT_TYPE, b.data, b.len);
	fb_buf_free(&b);
}

int fb_metrics_http_start(struct event_base *base, const char *addr, struct fb_metrics *r,
			  struct fb_metrics_http **out, char *err, size_t errsz)
{
	char host[256];
	int port;
	if (fb_addr_parse(addr, "127.0.0.1", host, sizeof(host), &port) != 0)
		return fb_err_set(err, errsz, FB_EMALFORMED,
				  "bad metrics address '%s': want HOST:PORT, [IPV6]:PORT or :PORT", addr);
	struct fb_metrics_http *h = calloc(1, sizeof(*h));
	if (!h || !(h->http = evhttp_new(base))) {
		free(h);
		return fb_err_set(err, errsz, -ENOMEM, "out of memory setting up the metrics listener");
	}
	h->r = r;
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
						    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
	evhttp_set_gencb(h->http, on_request, h);
	/* A scraper sends a small GET and waits for one reply: bound what an
	 * idle or odd client can hold on the daemon's loop. */
	evhttp_set_timeout(h->http, 10);
	evhttp_set_max_headers_size(h->http, 8192);
	evhttp_set_max_body_size(h->http, 0);
	struct evhttp_bound_socket *sock = evhttp_bind_socket_with_handle(h->http, host,
									  (ev_uint16_t)port);
	if (!sock) {
		int e = errno;
		evhttp_free(h->http);
		free(h);
		return fb_err_set(err, errsz, -EIO,
				  "cannot listen for /metrics on %s: %s; free the port or pick "
				  "another with --metrics",
				  addr, e ? strerror(e) : "bind failed");
	}
	bound_addr(evhttp_bound_socket_get_fd(sock), host, port, h->bound, sizeof(h->bound));
	*out = h;
	return 0;
}

void fb_metrics_http_free(struct fb_metrics_http *h)
{
	if (!h)
		return;
	evhttp_free(h->http);
	free(h);
}
