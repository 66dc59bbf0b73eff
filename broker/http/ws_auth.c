/* ws_auth.c - credentials in, 401/403 out (see ws_auth.h). */
#include "ws_auth.h"

#include "fb_time.h"
#include "ws_http.h"

#include <stdlib.h>
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
	if (!c || !c->enabled)
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
	return v;
}

int fb_ws_auth_challenge(struct lws *wsi, unsigned char **p, unsigned char *end)
{
	static const char v[] = "Basic realm=\"" FB_WS_AUTH_REALM "\", charset=\"UTF-8\"";
	return lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_WWW_AUTHENTICATE,
					    (const unsigned char *)v, (int)sizeof(v) - 1, p, end);
}

int fb_ws_auth_refuse(struct lws *wsi, int verdict, const char *body, size_t len)
{
	uint8_t hdr[LWS_PRE + 512];
	uint8_t *start = hdr + LWS_PRE, *p = start, *end = hdr + sizeof(hdr) - 1;
	unsigned code = verdict == FB_RF_AUTH_FORBIDDEN ? 403 : 401;
	if (lws_add_http_common_headers(wsi, code, "application/json", len, &p, end) ||
	    (code == 401 && fb_ws_auth_challenge(wsi, &p, end)) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
					 (const uint8_t *)"no-store", 8, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	uint8_t *buf = malloc(LWS_PRE + len + 1);
	if (!buf)
		return -1;
	memcpy(buf + LWS_PRE, body, len);
	int rc = lws_write(wsi, buf + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
	free(buf);
	return rc < 0 ? -1 : 0;
}
