/* rf_req.c - see rf_req.h. */
#include "rf_req.h"

#include "fb_err.h"
#include "ws_http.h"

#include <libwebsockets.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *fb_rf_method_name(enum fb_rf_method m)
{
	static const char *const names[] = { "GET", "HEAD", "POST", "PATCH", "PUT", "DELETE" };
	return m < FB_RF_METHODS ? names[m] : "?";
}

/* Copy one segment [s, s+n) after a '/', refusing "." and "..". */
static int put_segment(const char *s, size_t n, char *out, size_t outsz, size_t *len)
{
	if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return FB_EMALFORMED;
	if (*len + 1 + n >= outsz)
		return FB_ETOOBIG;
	out[(*len)++] = '/';
	memcpy(out + *len, s, n);
	*len += n;
	return 0;
}

int fb_rf_path_normalize(const char *in, size_t inlen, char *out, size_t outsz)
{
	if (!outsz)
		return FB_ETOOBIG;
	if (!inlen || in[0] != '/')
		return FB_EMALFORMED;
	for (size_t i = 0; i < inlen; i++)
		if ((unsigned char)in[i] < 0x20 || in[i] == 0x7f)
			return FB_EMALFORMED;
	size_t len = 0, i = 0;
	while (i < inlen) {
		while (i < inlen && in[i] == '/')
			i++;
		size_t n = 0;
		while (i + n < inlen && in[i + n] != '/')
			n++;
		if (n) {
			int rc = put_segment(in + i, n, out, outsz, &len);
			if (rc)
				return rc;
		}
		i += n;
	}
	if (!len)
		out[len++] = '/';
	if (len >= outsz)
		return FB_ETOOBIG;
	out[len] = '\0';
	return (int)len;
}

const char *fb_rf_req_query(const struct fb_rf_req *r, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < r->n_query; i++)
		if (strncmp(r->query[i], name, n) == 0 && (r->query[i][n] == '=' || !r->query[i][n]))
			return r->query[i][n] ? r->query[i] + n + 1 : "";
	return NULL;
}

const char *fb_rf_req_header(const struct fb_rf_req *r, enum fb_rf_hdr h)
{
	return h < FB_RF_HDRS ? r->hdr[h] : NULL;
}

int fb_rf_req_is_json(const struct fb_rf_req *r)
{
	static const char want[] = "application/json";
	const char *v = r->hdr[FB_RF_H_CONTENT_TYPE];
	if (!v)
		return -1;
	v += strspn(v, " \t");
	if (strncasecmp(v, want, sizeof(want) - 1) != 0)
		return 0;
	char c = v[sizeof(want) - 1];
	return c == '\0' || c == ';' || c == ' ' || c == '\t';
}

int fb_rf_req_set_header(struct fb_rf_req *r, enum fb_rf_hdr h, const char *v)
{
	char *c = strdup(v);
	if (!c)
		return -ENOMEM;
	free(r->hdr[h]);
	r->hdr[h] = c;
	return 0;
}

void fb_rf_req_free(struct fb_rf_req *r)
{
	for (int i = 0; i < FB_RF_HDRS; i++)
		free(r->hdr[i]);
	for (size_t i = 0; i < r->n_query; i++)
		free(r->query[i]);
	fb_buf_free(&r->body);
	memset(r, 0, sizeof(*r));
}

/* ---- from lws ---- */

static enum fb_rf_method lws_method(struct lws *wsi)
{
	static const struct {
		enum lws_token_indexes tok;
		enum fb_rf_method m;
	} map[] = {
		{ WSI_TOKEN_GET_URI, FB_RF_GET },	{ WSI_TOKEN_HEAD_URI, FB_RF_HEAD },
		{ WSI_TOKEN_POST_URI, FB_RF_POST },	{ WSI_TOKEN_PATCH_URI, FB_RF_PATCH },
		{ WSI_TOKEN_PUT_URI, FB_RF_PUT },	{ WSI_TOKEN_DELETE_URI, FB_RF_DELETE },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (lws_hdr_total_length(wsi, map[i].tok) > 0)
			return map[i].m;
	return FB_RF_METHODS;
}

static char *copy_token(struct lws *wsi, enum lws_token_indexes tok)
{
	int n = lws_hdr_total_length(wsi, tok);
	char *v = n > 0 ? malloc((size_t)n + 1) : NULL;
	if (v && lws_hdr_copy(wsi, v, n + 1, tok) < 0) {
		free(v);
		v = NULL;
	}
	return v;
}

/* name includes the ':' and is lower case, as lws stores unknown headers. */
static char *copy_custom(struct lws *wsi, const char *name)
{
	int nlen = (int)strlen(name);
	int n = lws_hdr_custom_length(wsi, name, nlen);
	char *v = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (v && lws_hdr_custom_copy(wsi, v, n + 1, name, nlen) < 0) {
		free(v);
		v = NULL;
	}
	return v;
}

static void copy_headers(struct fb_rf_req *r, struct lws *wsi)
{
	r->hdr[FB_RF_H_IF_MATCH] = copy_token(wsi, WSI_TOKEN_HTTP_IF_MATCH);
	r->hdr[FB_RF_H_IF_NONE_MATCH] = copy_token(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH);
	r->hdr[FB_RF_H_AUTHORIZATION] = copy_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION);
	r->hdr[FB_RF_H_CONTENT_TYPE] = copy_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE);
	r->hdr[FB_RF_H_ACCEPT] = copy_token(wsi, WSI_TOKEN_HTTP_ACCEPT);
	r->hdr[FB_RF_H_HOST] = copy_token(wsi, WSI_TOKEN_HOST);
	r->hdr[FB_RF_H_X_AUTH_TOKEN] = copy_token(wsi, WSI_TOKEN_X_AUTH_TOKEN);
	r->hdr[FB_RF_H_LAST_EVENT_ID] = copy_custom(wsi, "last-event-id:");
	r->hdr[FB_RF_H_ODATA_VERSION] = copy_custom(wsi, "odata-version:");
}

static int copy_query(struct fb_rf_req *r, struct lws *wsi)
{
	for (int i = 0;; i++) {
		int n = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, i);
		if (n <= 0)
			return 0;
		if (r->n_query == FB_RF_QUERY_MAX || n > 4096)
			return FB_ETOOBIG;
		char *a = malloc((size_t)n + 1);
		if (!a)
			return -ENOMEM;
		if (lws_hdr_copy_fragment(wsi, a, n + 1, WSI_TOKEN_HTTP_URI_ARGS, i) < 0) {
			free(a);
			return 0;
		}
		r->query[r->n_query++] = a;
	}
}

int fb_rf_req_from_lws(struct fb_rf_req *r, struct lws *wsi, const char *path)
{
	r->method = lws_method(wsi);
	fb_ws_peer_name(wsi, r->peer, sizeof(r->peer));
	copy_headers(r, wsi);
	r->has_length = fb_ws_http_content_length(wsi, &r->length) == 0;
	int rc = fb_rf_path_normalize(path, strlen(path), r->path, sizeof(r->path));
	if (rc < 0)
		return rc;
	return copy_query(r, wsi);
}
