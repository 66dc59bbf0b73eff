/* rf_auth.h - who may do what: the one question the router asks.
 *
 * Every route declares, per method, the Redfish privilege it needs
 * (rf_route.h); before calling the handler the router calls
 * fb_rf_auth_check() with the request (Authorization, X-Auth-Token) and
 * that privilege. The answer decides 401 (NoValidSession, with
 * WWW-Authenticate), 403 (InsufficientPrivilege) or the handler; the
 * identity found is handed to the handler in ctx->who.
 *
 * OWNED BY rf-auth (broker/redfish/rf_auth*, rf_account*, rf_session*):
 * rf-tree wrote this interface and a stub that allows everything; rf-auth
 * replaces rf_auth.c (accounts file, roles, Basic, sessions) and may extend
 * this header. Lws thread only (sessions live there).
 */
#ifndef FB_RF_AUTH_H
#define FB_RF_AUTH_H

#include "rf_req.h"

/* The Redfish privileges (Privileges.v1 PrivilegeType) a route can need. */
enum fb_rf_priv {
	FB_RF_PRIV_NONE,                 /* public: the service root, POST Sessions */
	FB_RF_PRIV_LOGIN,                /* any authenticated user: reads */
	FB_RF_PRIV_CONFIGURE_COMPONENTS, /* writes to fabric state, subscriptions */
	FB_RF_PRIV_CONFIGURE_MANAGER,    /* the service's own settings */
	FB_RF_PRIV_CONFIGURE_USERS,      /* accounts */
	FB_RF_PRIV_CONFIGURE_SELF,       /* one's own password, session */
	FB_RF_PRIVS,
};
/* "Login", "ConfigureComponents", ... */
const char *fb_rf_priv_name(enum fb_rf_priv p);

/* The caller, as the check found it. */
struct fb_rf_identity {
	char user[64];       /* "" when anonymous */
	char role[32];       /* "Administrator", "Operator", "ReadOnly", "" */
	char session[64];    /* the session's Id when authenticated by X-Auth-Token */
};

enum fb_rf_auth_result {
	FB_RF_AUTH_OK = 0,
	FB_RF_AUTH_NO_SESSION = 1, /* 401: no or bad credentials */
	FB_RF_AUTH_FORBIDDEN = 2,  /* 403: known, but lacks the privilege */
};

struct fb_rf_auth_opts {
	const char *accounts_file; /* NULL or "": none */
	const char *state_dir;
	int anonymous_read;        /* site opted in to unauthenticated GETs */
};

struct fb_rf_auth;

/* 0 or a negative error after logging why. */
int fb_rf_auth_new(const struct fb_rf_auth_opts *o, struct fb_rf_auth **out);
void fb_rf_auth_free(struct fb_rf_auth *a);
/* enum fb_rf_auth_result; fills who when OK. */
int fb_rf_auth_check(struct fb_rf_auth *a, const struct fb_rf_req *req, enum fb_rf_priv need,
		     struct fb_rf_identity *who);

#endif
