/* ws_auth.h - Redfish accounts on the broker's HTTP routes: read a
 * request's credentials (Authorization: Basic or Bearer, X-Auth-Token) and peer
 * address for rf_auth_core's decision, and answer its refusals: 401 with
 * WWW-Authenticate (so a browser or curl --anyauth offers Basic), or 403.
 * Used by /fabric/map and /fabric/jobs (ws_fabric.c), /status, /metrics and /ws/events
 * (ws_server.c) and the Redfish routes. Lws thread only.
 */
#ifndef FB_WS_AUTH_H
#define FB_WS_AUTH_H

#include "rf_auth_core.h"
#include "rf_auth_reload.h"

#include <libwebsockets.h>

#include <stddef.h>

#define FB_WS_AUTH_REALM "fabricbus"

/* The verdict (enum fb_rf_auth_result) for this request needing `need`;
 * c may be NULL (no accounts: FB_RF_AUTH_OK). */
int fb_ws_auth_check(struct fb_rf_auth_core *c, struct lws *wsi, enum fb_rf_priv need, int is_read,
		     struct fb_rf_caller *who);
/* A read of one of the broker's own routes (/status, /fabric/map,
 * /ws/events, /metrics): any authenticated role passes (Login). With
 * anonymous_ok a request without credentials passes too (HttpAnonymousReads,
 * HttpPublicMetrics); bad credentials are a 401 all the same.
 * RedfishAnonymousReads does not open these. */
int fb_ws_auth_read(struct fb_rf_auth_core *c, struct lws *wsi, int anonymous_ok);
/* The same for the WebSocket upgrade of /ws/events, which also takes the
 * token as ?access_token=<token> (RFC 6750 2.3) when no header carries
 * credentials: a browser's WebSocket cannot set Authorization. */
int fb_ws_auth_read_ws(struct fb_rf_auth_core *c, struct lws *wsi, int anonymous_ok);
/* 1 when the query argument "name=value" is the access token (not a filter). */
int fb_ws_auth_is_token_arg(const char *arg);
/* What authenticated this (already admitted) request, kept by a stream
 * so that a reload can close it once that token or account is revoked
 * (rf_auth_reload.h). Kind FB_RF_CRED_NONE when anonymous or logins off. */
void fb_ws_auth_cred(struct fb_rf_auth_core *c, struct lws *wsi, struct fb_rf_cred *out);
/* Write a whole 401 (FB_RF_AUTH_NO_SESSION, with WWW-Authenticate) or 403
 * (FB_RF_AUTH_FORBIDDEN) reply with this JSON body. 0, or -1 (close). */
int fb_ws_auth_refuse(struct lws *wsi, int verdict, const char *body, size_t len);

#endif
