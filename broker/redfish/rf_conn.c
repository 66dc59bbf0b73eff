/* rf_conn.c - one HTTP connection's Redfish request on the lws thread: the
 * fb_ws_http_module callbacks. At the headers it parses the request and
 * runs the checks that need no body (route, 404, 405, auth, 413, 415);
 * a refused request with a body is answered once that body has been read,
 * so that the connection stays usable. Then the handler; a request handed
 * to the loop waits on svc->waiting (by token) until fb_rf_conn_wake()
 * finds its call done, and is answered at the next writeable callback.
 */
#include "rf_conn.h"

#include "fb_err.h"
#include "fb_log.h"
#include "rf_service.h"

#include <libwebsockets.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define REPLY_TIMEOUT_S 30 /* the loop answers in one pass; this is a backstop */

enum conn_state {
	C_IDLE,
	C_BODY,    /* reading the body of an accepted request */
	C_DISCARD, /* reading the body of a refused one: rep holds the refusal */
	C_WAIT,    /* handed to the loop (on svc->waiting) */
	C_REPLY,   /* the loop answered: write at writeable */
	C_STREAM,  /* a handler took the connection over */
};

struct fb_rf_conn {
	enum conn_state state;
	struct fb_rf_req req;
	struct fb_rf_reply rep;
	struct fb_rf_ctx ctx;
	struct fb_rf_call *call;   /* C_WAIT/C_REPLY */
	uint64_t token;
	const struct fb_rf_stream_ops *stream;
	void *stream_st;
	struct lws *wsi;
	struct fb_rf_conn *prev, *next;
};

static int finish(struct lws *wsi, int rc)
{
	if (rc < 0)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static void unlink_waiting(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (svc->waiting == c)
		svc->waiting = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* Back to idle between requests of a keep-alive connection. */
static void reset(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	if (c->state == C_WAIT) {
		unlink_waiting(svc, c);
		c->call = NULL; /* the loop holds it; fb_rf_conn_wake frees it, unclaimed */
	}
	if (c->state == C_STREAM && c->stream->closed)
		c->stream->closed(c->stream_st);
	if (c->call)
		c->call->base.free(&c->call->base);
	fb_rf_req_free(&c->req);
	fb_rf_reply_free(&c->rep);
	struct lws *wsi = c->wsi;
	memset(c, 0, sizeof(*c));
	c->wsi = wsi;
}

void fb_rf_conn_closed(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	reset(svc, c);
	free(c);
}

static int send_reply(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	unsigned allow = c->ctx.route ? fb_rf_route_allow(c->ctx.route) : 0;
	if (!c->rep.allow)
		c->rep.allow = allow;
	if (c->rep.status >= 500 || c->rep.status == 401 || c->rep.status == 403)
		fb_log_debug("redfish %s: %s %s -> %u", c->req.peer, fb_rf_method_name(c->req.method),
			     c->req.path, c->rep.status);
	int rc = fb_rf_reply_write(&c->rep, c->wsi);
	reset(svc, c);
	return finish(c->wsi, rc);
}

/* Refuse now, or after the body when one is coming. */
static int refuse(struct fb_rf_service *svc, struct fb_rf_conn *c, enum fb_rf_msg m,
		  const char *const *args, int n)
{
	c->rep.head = c->req.method == FB_RF_HEAD;
	fb_rf_reply_error(&c->rep, m, args, n);
	if (c->req.has_length && c->req.length > 0 && m != FB_RF_PAYLOAD_TOO_LARGE) {
		c->state = C_DISCARD;
		return 0;
	}
	if (m == FB_RF_PAYLOAD_TOO_LARGE) { /* not worth reading: answer and close */
		fb_rf_reply_write(&c->rep, c->wsi);
		return -1;
	}
	return send_reply(svc, c);
}

static int call_handler(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	struct fb_rf_op op = fb_rf_route_op(c->ctx.route, c->req.method);
	c->rep.head = c->req.method == FB_RF_HEAD;
	int rc = op.fn(&c->ctx);
	if (rc == FB_RF_DEFERRED) {
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_HTTP_CONTENT, REPLY_TIMEOUT_S);
		return 0;
	}
	if (rc == FB_RF_STREAM)
		return 0;
	if (rc < 0)
		return -1;
	return send_reply(svc, c);
}

static int takes_body(enum fb_rf_method m)
{
	return m == FB_RF_POST || m == FB_RF_PATCH || m == FB_RF_PUT;
}

/* Route, 404, 405, auth: what needs no body. 0: go on. */
static int check_route(struct fb_rf_service *svc, struct fb_rf_conn *c, int *refused)
{
	struct fb_rf_ctx *x = &c->ctx;
	const struct fb_rf_route *r = fb_rf_route_find(fb_rf_routes, c->req.path, x);
	x->route = r;
	*refused = 1;
	if (!r || (r->exists && !r->exists(x))) {
		const char *args[] = { "Resource", c->req.path };
		x->route = NULL;
		return refuse(svc, c, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	}
	struct fb_rf_op op = fb_rf_route_op(r, c->req.method);
	if (!op.fn)
		return refuse(svc, c, FB_RF_OPERATION_NOT_ALLOWED, NULL, 0);
	const char *ov = fb_rf_req_header(&c->req, FB_RF_H_ODATA_VERSION);
	if (ov && strcmp(ov, "4.0") != 0)
		return refuse(svc, c, FB_RF_PRECONDITION_FAILED, NULL, 0);
	const char *dollar = fb_rf_route_bad_dollar(r, &c->req);
	if (dollar) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(dollar, "="), dollar);
		const char *args[] = { name };
		return refuse(svc, c, FB_RF_QUERY_NOT_IMPLEMENTED, args, 1);
	}
	int a = fb_rf_auth_check(svc->auth, &c->req, op.priv, &x->who);
	if (a == FB_RF_AUTH_NO_SESSION)
		return refuse(svc, c, FB_RF_NO_VALID_SESSION, NULL, 0);
	if (a == FB_RF_AUTH_PW_CHANGE) {
		char acct[128];
		snprintf(acct, sizeof(acct), "/redfish/v1/AccountService/Accounts/%s", x->who.user);
		const char *args[] = { acct };
		return refuse(svc, c, FB_RF_PASSWORD_CHANGE_REQUIRED, args, 1);
	}
	if (a != FB_RF_AUTH_OK)
		return refuse(svc, c, FB_RF_INSUFFICIENT_PRIVILEGE, NULL, 0);
	*refused = 0;
	return 0;
}

/* A body is coming: 413, 415, or read it. */
static int start_body(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	if (c->req.length > FB_RF_BODY_MAX)
		return refuse(svc, c, FB_RF_PAYLOAD_TOO_LARGE, NULL, 0);
	if (fb_rf_req_is_json(&c->req) != 1) {
		const char *args[] = { "Content-Type" };
		return refuse(svc, c, FB_RF_HEADER_INVALID, args, 1);
	}
	if (fb_buf_reserve(&c->req.body, (size_t)c->req.length))
		return refuse(svc, c, FB_RF_INTERNAL_ERROR, NULL, 0);
	c->state = C_BODY;
	return 0;
}

static int bad_request_line(struct fb_rf_service *svc, struct fb_rf_conn *c, int rc)
{
	if (rc == -ENOMEM)
		return refuse(svc, c, FB_RF_INTERNAL_ERROR, NULL, 0);
	const char *args[] = { "Resource", c->req.path[0] ? c->req.path : "?" };
	if (rc == FB_ETOOBIG && c->req.path[0]) {
		const char *q[] = { "query" };
		return refuse(svc, c, FB_RF_QUERY_PARAMETER_UNSUPPORTED, q, 1);
	}
	return refuse(svc, c, FB_RF_RESOURCE_NOT_FOUND, args, 2);
}

/* A connection's first Redfish request (TCP_NODELAY is set on every HTTP
 * connection when it is accepted: accept.c). */
static struct fb_rf_conn *new_conn(struct lws *wsi)
{
	(void)wsi;
	return calloc(1, sizeof(struct fb_rf_conn));
}

/* POST to a collection's Members is a POST to the collection (DSP0266). */
static void members_is_collection(struct fb_rf_req *r)
{
	static const char m[] = "/Members";
	size_t n = strlen(r->path);
	if (r->method == FB_RF_POST && n > sizeof(m) - 1 && strcmp(r->path + n - (sizeof(m) - 1), m) == 0)
		r->path[n - (sizeof(m) - 1)] = '\0';
}

int fb_rf_conn_http(struct fb_rf_service *svc, struct lws *wsi, struct fb_rf_conn **slot, const char *path)
{
	if (!*slot && !(*slot = new_conn(wsi)))
		return -1;
	struct fb_rf_conn *c = *slot;
	reset(svc, c);
	c->wsi = wsi;
	c->ctx = (struct fb_rf_ctx){ .svc = svc, .req = &c->req, .rep = &c->rep, .wsi = wsi, .conn = c };
	int rc = fb_rf_req_from_lws(&c->req, wsi, path);
	if (rc)
		return bad_request_line(svc, c, rc);
	if (c->req.method == FB_RF_METHODS)
		return refuse(svc, c, FB_RF_OPERATION_NOT_ALLOWED, NULL, 0);
	members_is_collection(&c->req);
	int refused;
	rc = check_route(svc, c, &refused);
	if (refused)
		return rc;
	if (takes_body(c->req.method) && c->req.has_length && c->req.length > 0)
		return start_body(svc, c);
	return call_handler(svc, c);
}

int fb_rf_conn_body(struct fb_rf_conn *c, const void *in, size_t len)
{
	if (c->state == C_DISCARD)
		return 0;
	if (c->state != C_BODY)
		return 1;
	if (c->req.body.len + len > c->req.length) {
		fb_rf_reply_error(&c->rep, FB_RF_MALFORMED_JSON, NULL, 0);
		c->state = C_DISCARD;
	} else if (fb_buf_put(&c->req.body, in, len)) {
		fb_rf_reply_error(&c->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
		c->state = C_DISCARD;
	}
	return 0;
}

int fb_rf_conn_body_done(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	if (c->state == C_DISCARD)
		return send_reply(svc, c);
	if (c->state != C_BODY)
		return 1;
	c->state = C_IDLE;
	return call_handler(svc, c);
}

int fb_rf_conn_writeable(struct fb_rf_service *svc, struct fb_rf_conn *c)
{
	if (c->state == C_STREAM)
		return c->stream->writeable(c->stream_st, c->wsi) < 0 ? -1 : 0;
	if (c->state != C_REPLY)
		return 1;
	struct fb_rf_call *call = c->call;
	c->call = NULL;
	c->rep.head = c->req.method == FB_RF_HEAD;
	call->answer(call, &c->req, &c->rep);
	call->base.free(&call->base);
	c->state = C_IDLE;
	return send_reply(svc, c);
}

void fb_rf_conn_wake(struct fb_rf_service *svc)
{
	struct fb_loop_call *lc;
	while (svc->loopq && (lc = fb_loopq_take_done(svc->loopq))) {
		struct fb_rf_conn *c = svc->waiting;
		while (c && c->token != lc->token)
			c = c->next;
		if (!c) {
			lc->free(lc); /* the client has gone */
			continue;
		}
		unlink_waiting(svc, c);
		c->state = C_REPLY; /* c->call is lc */
		lws_callback_on_writable(c->wsi);
	}
}

int fb_rf_defer(struct fb_rf_ctx *x, struct fb_rf_call *call)
{
	struct fb_rf_service *svc = x->svc;
	struct fb_rf_conn *c = x->conn;
	call->base.token = ++svc->next_token;
	int rc = svc->loopq ? fb_loopq_submit(svc->loopq, &call->base) : -ENOTSUP;
	if (rc) {
		call->base.free(&call->base);
		const char *args[] = { "1" };
		fb_rf_reply_error(x->rep, FB_RF_SERVICE_TEMPORARILY_UNAVAILABLE, args, 1);
		return 0;
	}
	c->state = C_WAIT;
	c->call = call;
	c->token = call->base.token;
	c->prev = NULL;
	c->next = svc->waiting;
	if (svc->waiting)
		svc->waiting->prev = c;
	svc->waiting = c;
	return FB_RF_DEFERRED;
}

int fb_rf_stream(struct fb_rf_ctx *x, const struct fb_rf_stream_ops *ops, void *st)
{
	struct fb_rf_conn *c = x->conn;
	c->state = C_STREAM;
	c->stream = ops;
	c->stream_st = st;
	return FB_RF_STREAM;
}
