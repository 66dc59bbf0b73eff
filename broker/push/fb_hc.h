/* fb_hc.h - an asynchronous HTTP(S) client on the libevent loop: libcurl's
 * multi interface driven by libevent (curl_multi_socket_action, one event per
 * socket curl watches and one timer), so requests never block the loop and
 * connections are kept alive and reused between requests to the same host.
 *
 * Used by the push delivery (push.c) and by the OFMF agent for its own POSTs.
 * HTTPS verifies the peer and the host name against the system CAs or the
 * CA file given here; a request may turn verification off (a subscription's
 * VerifyCertificate=false). Only http and https URLs are followed, no
 * redirects.
 *
 * Threads: everything on the thread that runs the event base.
 */
#ifndef FB_HC_H
#define FB_HC_H

#include <event2/event.h>
#include <stddef.h>

struct fb_hc;
struct fb_hc_xfer;

struct fb_hc_opts {
	const char *ca_file;     /* PEM bundle for HTTPS, NULL or "": the system CAs */
	long connect_timeout_ms; /* 0: 5000 */
	long timeout_ms;         /* whole request, 0: 30000 */
	size_t max_body;         /* response bytes kept for the caller, 0: 1 MiB */
};

struct fb_hc_req {
	const char *method;  /* "POST", "GET", "PATCH", ... */
	const char *url;
	const char *const *headers; /* "Name: value" lines; Content-Type defaults to JSON */
	size_t n_headers;
	const void *body;    /* copied; NULL for none */
	size_t body_len;
	long timeout_ms;     /* 0: the client's */
	int no_verify;       /* 1: do not verify the HTTPS peer (VerifyCertificate=false) */
};

struct fb_hc_resp {
	long status;          /* HTTP status, 0 when no response came */
	int ok;               /* 2xx */
	const char *error;    /* why it failed ("" on any HTTP response) */
	int no_reply;         /* the server took the request and closed without a reply */
	const char *body;     /* NUL-terminated, maybe truncated at max_body */
	size_t body_len;
	const char *location; /* the Location header or "" */
	double seconds;       /* total time */
};

/* Called once per request, on the loop, unless it was cancelled. The
 * response lives only during the call. The callback may send or cancel
 * other requests but must not free the client. */
typedef void (*fb_hc_done_fn)(void *arg, const struct fb_hc_resp *r);

/* 0 and *out, or -ENOMEM / -EIO (libcurl could not start). */
int fb_hc_new(struct event_base *base, const struct fb_hc_opts *o, struct fb_hc **out);
/* Cancel everything in flight (no callbacks) and free. */
void fb_hc_free(struct fb_hc *hc);

/* Start a request. 0 (and *x when x is not NULL, valid until done is
 * called), or -ENOMEM / -EINVAL (a URL libcurl refuses). */
int fb_hc_send(struct fb_hc *hc, const struct fb_hc_req *r, fb_hc_done_fn done, void *arg,
	       struct fb_hc_xfer **x);
/* Stop a request in flight; its callback will not be called. */
void fb_hc_cancel(struct fb_hc *hc, struct fb_hc_xfer *x);
/* Requests in flight. */
size_t fb_hc_in_flight(const struct fb_hc *hc);

#endif
