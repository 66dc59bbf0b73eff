/* rf_req.h - one Redfish request as the router and the handlers see it:
 * method, normalized path, query arguments, the headers Redfish uses, and
 * the body (read whole, at most FB_RF_BODY_MAX bytes).
 *
 * fb_rf_req_from_lws() copies everything out of lws at LWS_CALLBACK_HTTP,
 * so a request handed to the loop (fb_rf_defer) or answered later no
 * longer needs the wsi's header table. The path and query helpers are pure
 * (unit-tested, fuzzed).
 */
#ifndef FB_RF_REQ_H
#define FB_RF_REQ_H

#include "fb_buf.h"

#include <stddef.h>

struct lws;

#define FB_RF_PATH_MAX 1024
#define FB_RF_BODY_MAX (64 * 1024) /* larger bodies: 413 PayloadTooLarge */
#define FB_RF_QUERY_MAX 16         /* arguments kept; more: 400 */

enum fb_rf_method {
	FB_RF_GET,
	FB_RF_HEAD,
	FB_RF_POST,
	FB_RF_PATCH,
	FB_RF_PUT,
	FB_RF_DELETE,
	FB_RF_METHODS, /* count; also "some other method" */
};
/* "GET" ... ; "?" for FB_RF_METHODS. */
const char *fb_rf_method_name(enum fb_rf_method m);

/* The headers kept (fb_rf_req_header). */
enum fb_rf_hdr {
	FB_RF_H_IF_MATCH,
	FB_RF_H_IF_NONE_MATCH,
	FB_RF_H_X_AUTH_TOKEN,
	FB_RF_H_AUTHORIZATION,
	FB_RF_H_LAST_EVENT_ID,
	FB_RF_H_CONTENT_TYPE,
	FB_RF_H_ACCEPT,
	FB_RF_H_ODATA_VERSION,
	FB_RF_H_HOST,
	FB_RF_HDRS,
};

struct fb_rf_req {
	enum fb_rf_method method;
	char path[FB_RF_PATH_MAX];  /* normalized (fb_rf_path_normalize) */
	char *hdr[FB_RF_HDRS];      /* malloc'd values, NULL when absent */
	char *query[FB_RF_QUERY_MAX]; /* "name=value", percent-decoded by lws */
	size_t n_query;
	int has_length;             /* Content-Length given */
	unsigned long long length;  /* its value */
	struct fb_buf body;         /* the body as read */
	char peer[64];              /* "ip:port" for logs */
};

/* Normalize an HTTP path: a run of leading slashes becomes one (the OFMF
 * core sends //redfish/v1/...), a trailing slash is dropped (but "/" stays),
 * "//" inside is collapsed. Refuses (FB_EMALFORMED) "." or ".." segments,
 * NUL or control bytes, and a path that does not start with '/';
 * FB_ETOOBIG if it does not fit. Returns the length. */
int fb_rf_path_normalize(const char *in, size_t inlen, char *out, size_t outsz);
/* The value of query argument name ("$filter"), or NULL. */
const char *fb_rf_req_query(const struct fb_rf_req *r, const char *name);
/* The header's value, or NULL. */
const char *fb_rf_req_header(const struct fb_rf_req *r, enum fb_rf_hdr h);
/* 1 if the request's Content-Type is application/json (parameters such as
 * "; charset=utf-8" allowed), 0 if another, -1 if absent. */
int fb_rf_req_is_json(const struct fb_rf_req *r);

/* Fill r (zeroed by the caller) from the request lws is parsing; path is
 * what LWS_CALLBACK_HTTP gave. 0, FB_EMALFORMED (bad path), FB_ETOOBIG
 * (path or query too long), -ENOMEM. */
int fb_rf_req_from_lws(struct fb_rf_req *r, struct lws *wsi, const char *path);
/* Set one header (copied), for tests and the fuzzer. 0 or -ENOMEM. */
int fb_rf_req_set_header(struct fb_rf_req *r, enum fb_rf_hdr h, const char *v);
void fb_rf_req_free(struct fb_rf_req *r);

#endif
