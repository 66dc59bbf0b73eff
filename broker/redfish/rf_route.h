/* rf_route.h - the Redfish route table and what a handler gets.
 *
 * A route is a path pattern and, per method, a handler and the privilege
 * it needs. Patterns: literal segments, "{}" for one segment (captured in
 * ctx->arg[]), and a final "/ **" (written without the space) for any rest, including none (in
 * ctx->rest). The first route that matches wins (rf_routes.c lists them,
 * most specific first). The router then:
 *   - 404 ResourceNotFound if no route matches, or route->exists says no;
 *   - 405 OperationNotAllowed + Allow if the method has no handler (HEAD
 *     uses GET's);
 *   - 412 if OData-Version is given and is not 4.0; 501 for a "$" query
 *     parameter the route does not take (rf_route.c, dollar_ok[]);
 *   - 401/403 from fb_rf_auth_check(route privilege for the method);
 *   - for POST/PATCH/PUT with a body: 413 past FB_RF_BODY_MAX, 415 if not
 *     application/json, then reads it whole;
 *   - calls the handler, which fills ctx->rep and returns 0, or hands the
 *     work to the loop (fb_rf_defer) or takes the connection over
 *     (fb_rf_stream), returning what those return.
 * Every reply gets the route's Allow.
 */
#ifndef FB_RF_ROUTE_H
#define FB_RF_ROUTE_H

#include "loopq.h"
#include "rf_auth.h"
#include "rf_reply.h"
#include "rf_req.h"

struct fb_rf_service;
struct fb_rf_conn;
struct lws;

#define FB_RF_ARGS_MAX 8

/* Handler results besides 0 (reply filled) and <0 (close the connection). */
#define FB_RF_DEFERRED 1 /* fb_rf_defer: answered when the loop is done */
#define FB_RF_STREAM 2   /* fb_rf_stream: the handler writes from now on */

struct fb_rf_ctx {
	struct fb_rf_service *svc;
	const struct fb_rf_req *req;  /* body read whole when the method takes one */
	struct fb_rf_reply *rep;
	const struct fb_rf_route *route;
	const char *arg[FB_RF_ARGS_MAX]; /* the "{}" segments, in order */
	size_t n_arg;
	const char *rest;                /* the "**" part without its '/', or "" */
	struct fb_rf_identity who;       /* from fb_rf_auth_check */
	struct lws *wsi;
	struct fb_rf_conn *conn;
	char argbuf[FB_RF_PATH_MAX];     /* holds arg[] and rest */
};

typedef int (*fb_rf_handler)(struct fb_rf_ctx *c);

struct fb_rf_op {
	fb_rf_handler fn;   /* NULL: 405 */
	enum fb_rf_priv priv;
};

struct fb_rf_route {
	const char *pattern;
	struct fb_rf_op op[FB_RF_METHODS];
	/* Optional, before the method check: 0 means "no such resource" (404). */
	int (*exists)(struct fb_rf_ctx *c);
	const char *owner; /* the module that implements it (docs, logs) */
};

/* The table (rf_routes.c), ended by a route with a NULL pattern. */
extern const struct fb_rf_route fb_rf_routes[];

/* A handed-over write: embed first in the module's own item. base.run runs
 * on the loop; answer then runs on the lws thread and fills rep (req is the
 * original request). base.free frees the whole item. */
struct fb_rf_call {
	struct fb_loop_call base;
	void (*answer)(struct fb_rf_call *c, const struct fb_rf_req *req, struct fb_rf_reply *rep);
};

/* Hand call to the loop; the request waits for it. Returns FB_RF_DEFERRED,
 * or 0 with a 503 in c->rep (queue full; call freed). */
int fb_rf_defer(struct fb_rf_ctx *c, struct fb_rf_call *call);

/* Take the connection over (SSE): from now on ops->writeable is called at
 * each LWS_CALLBACK_HTTP_WRITEABLE (ask for it with
 * lws_callback_on_writable(wsi)) and ops->closed once when it closes. The
 * handler writes the headers itself. Returns FB_RF_STREAM. */
struct fb_rf_stream_ops {
	int (*writeable)(void *st, struct lws *wsi); /* <0 closes */
	void (*closed)(void *st);
};
int fb_rf_stream(struct fb_rf_ctx *c, const struct fb_rf_stream_ops *ops, void *st);

/* Match path against pattern, filling c->arg/n_arg/rest. 1 if it matches. */
int fb_rf_route_match(const char *pattern, const char *path, struct fb_rf_ctx *c);
/* The first route of table matching path (c filled), or NULL. */
const struct fb_rf_route *fb_rf_route_find(const struct fb_rf_route *table, const char *path,
					   struct fb_rf_ctx *c);
/* The first "$" query argument of req the route does not take, or NULL. */
const char *fb_rf_route_bad_dollar(const struct fb_rf_route *r, const struct fb_rf_req *req);
/* The Allow mask of a route (HEAD whenever GET). */
unsigned fb_rf_route_allow(const struct fb_rf_route *r);
/* The op for method (HEAD falls back to GET); NULL fn if none. */
struct fb_rf_op fb_rf_route_op(const struct fb_rf_route *r, enum fb_rf_method m);

/* Handlers the table uses for other modules' prefixes until they exist:
 * 501 GeneralError naming the owner. */
int fb_rf_unimplemented(struct fb_rf_ctx *c);

#endif
