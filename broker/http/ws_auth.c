/* ws_auth.c - credentials in, 401/403 out (see ws_auth.h). */
#include "ws_auth.h"

#include "fb_time.h"
#include "ws_http.h"

#include <stdio.h>
#include <string.h>

/* A header's value into buf, or "" when absent or longer than buf (a
 * longer one cannot be valid credentials: they are refused as absent
 * would be, which is a 401 all the same). */
static void copy_token(struct lws *wsi, enum lws_token_indexes t, char *buf, size_t sz)
{
	buf[0] = '\0';
	if (lws_hdr_total_length(wsi, t) >= (int)sz || lws_hdr_copy(wsi, buf, (int)sz, t) < 0)
		buf[0] = '\0';
}

int fb_ws_auth_check(struct fb_rf_auth_core *c, struct lws *wsi, enum fb_rf_priv need, int is_read,
		     struct fb_rf_caller *who)
{
	char authz[512], token[FB_RF_TOKEN_LEN + 8], peer[64], name[80];
	if (who)
		memset(who, 0, sizeof(*who));
	if (!fb_rf_auth_core_on(c))
		return FB_RF_AUTH_OK;
	copy_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, authz, sizeof(authz));
	/* X-Auth-Token is one of lws's known headers (not a custom one) */
	copy_token(wsi, WSI_TOKEN_X_AUTH_TOKEN, token, sizeof(token));
	if (!token[0] && lws_hdr_total_length(wsi, WSI_TOKEN_X_AUTH_TOKEN) > 0)
		strcpy(token, "-"); /* present but not a token of ours: 401, not anonymous */
	fb_ws_peer_name(wsi, name, sizeof(name)); /* as the Redfish routes see it */
	fb_rf_peer_ip(name, peer, sizeof(peer));
	int v = fb_rf_auth_core_check(c, authz, token, peer, need, is_read, (uint64_t)fb_time_ms(),
				      who);
	memset(authz, 0, sizeof(authz));
	/* An account whose password must change first (PasswordChangeRequired)
	 * may do nothing here: 403, as for a role without the privilege. */
	return v == FB_RF_AUTH_PW_CHANGE ? FB_RF_AUTH_FORBIDDEN : v;
}

int fb_ws_auth_read(struct fb_rf_auth_core *c, struct lws *wsi, int anonymous_ok)
{
	if (anonymous_ok && lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) <= 0 &&
	    lws_hdr_total_length(wsi, WSI_TOKEN_X_AUTH_TOKEN) <= 0)
		return FB_RF_AUTH_OK;
	/* is_read 0: RedfishAnonymousReads is for /redfish/v1 only */
	return fb_ws_auth_check(c, wsi, FB_RF_PRIV_LOGIN, 0, NULL);
}

#define TOKEN_ARG "access_token="

int fb_ws_auth_is_token_arg(const char *arg)
{
	return strncmp(arg, TOKEN_ARG, sizeof(TOKEN_ARG) - 1) == 0;
}

int fb_ws_auth_read_ws(struct fb_rf_auth_core *c, struct lws *wsi, int anonymous_ok)
{
	char arg[FB_RF_TOKEN_TEXT_MAX + sizeof(TOKEN_ARG) + 2];
	char authz[FB_RF_TOKEN_TEXT_MAX + 16], peer[64], name[80];
	if (!fb_rf_auth_core_on(c) || lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0 ||
	    lws_hdr_total_length(wsi, WSI_TOKEN_X_AUTH_TOKEN) > 0)
		return fb_ws_auth_read(c, wsi, anonymous_ok);
	for (int i = 0; i < 64; i++) {
		int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n <= 0)
			break;
		if (n >= (int)sizeof(arg) ||
		    lws_hdr_copy_fragment(wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, i) < 0 ||
		    !fb_ws_auth_is_token_arg(arg))
			continue;
		snprintf(authz, sizeof(authz), "Bearer %s", arg + sizeof(TOKEN_ARG) - 1);
		memset(arg, 0, sizeof(arg));
		fb_ws_peer_name(wsi, name, sizeof(name));
		fb_rf_peer_ip(name, peer, sizeof(peer));
		int v = fb_rf_auth_core_check(c, authz, NULL, peer, FB_RF_PRIV_LOGIN, 0,
					      (uint64_t)fb_time_ms(), NULL);
		memset(authz, 0, sizeof(authz));
		return v;
	}
	return fb_ws_auth_read(c, wsi, anonymous_ok);
}

void fb_ws_auth_cred(struct fb_rf_auth_core *c, struct lws *wsi, struct fb_rf_cred *out)
{
	char authz[FB_RF_TOKEN_TEXT_MAX + 16], token[FB_RF_TOKEN_LEN + 8];
	char arg[FB_RF_TOKEN_TEXT_MAX + sizeof(TOKEN_ARG) + 2];
	memset(out, 0, sizeof(*out));
	if (!fb_rf_auth_core_on(c))
		return;
	copy_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, authz, sizeof(authz));
	copy_token(wsi, WSI_TOKEN_X_AUTH_TOKEN, token, sizeof(token));
	for (int i = 0; !authz[0] && !token[0] && i < 64; i++) { /* ?access_token= */
		int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n <= 0)
			break;
		if (n < (int)sizeof(arg) &&
		    lws_hdr_copy_fragment(wsi, arg, sizeof(arg), WSI_TOKEN_HTTP_URI_ARGS, i) >= 0 &&
		    fb_ws_auth_is_token_arg(arg))
			snprintf(authz, sizeof(authz), "Bearer %s", arg + sizeof(TOKEN_ARG) - 1);
	}
	memset(arg, 0, sizeof(arg));
	fb_rf_cred_of(c, authz, token, (uint64_t)fb_time_ms(), out);
	memset(authz, 0, sizeof(authz));
}

#define CHALLENGE "Basic realm=\"" FB_WS_AUTH_REALM "\", charset=\"UTF-8\""

int fb_ws_auth_refuse(struct lws *wsi, int verdict, const char *body, size_t len)
{
	int forbidden = verdict == FB_RF_AUTH_FORBIDDEN;
	return fb_ws_http_reply_hdr(wsi, forbidden ? 403 : 401, "application/json", body, len,
				    WSI_TOKEN_HTTP_WWW_AUTHENTICATE, forbidden ? NULL : CHALLENGE);
}
