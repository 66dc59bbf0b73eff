/* rf_auth.h - who may do what: the one question the router asks.
 *
 * Every route declares, per method, the Redfish privilege it needs
 * (rf_route.h, enum fb_rf_priv in rf_auth_priv.h); before calling the
 * handler the router calls fb_rf_auth_check() with the request
 * (Authorization, X-Auth-Token) and that privilege. The answer decides 401
 * (NoValidSession, with WWW-Authenticate), 403 (InsufficientPrivilege) or
 * the handler; the identity found is handed to the handler in ctx->who.
 *
 * The decision itself is rf_auth_core.h (accounts file, roles, Basic,
 * X-Auth-Token sessions, failed-login limits); main.c loads it before
 * anything starts and shares it with /fabric/jobs (ws_auth.h). This file
 * adapts it to the router's request. Lws thread only (sessions live there).
 */
#ifndef FB_RF_AUTH_H
#define FB_RF_AUTH_H

#include "rf_auth_core.h"
#include "rf_auth_priv.h"
#include "rf_etag.h"
#include "rf_req.h"

#include <jansson.h>

/* The caller, as the check found it. */
struct fb_rf_identity {
	char user[64];       /* "" when anonymous */
	char role[32];       /* "Administrator", "Operator", "ReadOnly", "" */
	char session[64];    /* the session's Id when authenticated by X-Auth-Token */
	unsigned privs;      /* FB_RF_PRIV_BIT set of the role (0 when anonymous) */
	int pw_change;       /* PasswordChangeRequired: only its own account is reachable */
};

struct fb_rf_auth_opts {
	/* The loaded accounts, sessions and limits (main.c owns it; it outlives
	 * the service). NULL: no accounts, every request passes. */
	struct fb_rf_auth_core *core;
};

struct fb_rf_auth;

/* 0 or a negative error after logging why. */
int fb_rf_auth_new(const struct fb_rf_auth_opts *o, struct fb_rf_auth **out);
void fb_rf_auth_free(struct fb_rf_auth *a);
/* enum fb_rf_auth_result; fills who when OK. */
int fb_rf_auth_check(struct fb_rf_auth *a, const struct fb_rf_req *req, enum fb_rf_priv need,
		     struct fb_rf_identity *who);
/* The core, for the SessionService and AccountService handlers: NULL in
 * tests without one; core->enabled is 0 when no accounts are configured. */
struct fb_rf_auth_core *fb_rf_auth_core(struct fb_rf_auth *a);

/* The ETag fb_rf_reply_resource() would give obj (without its
 * "@odata.etag"), for If-Match on a PATCH or DELETE. 0 or -ENOMEM. */
int fb_rf_auth_etag(json_t *obj, char out[FB_RF_ETAG_MAX]);

#endif
