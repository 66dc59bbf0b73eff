/* rf_reply.c - see rf_reply.h. */
#include "rf_reply.h"

#include "fb_err.h"
#include "rf_files.h"

#include <libwebsockets.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_CTYPE "application/json; charset=utf-8"
#define HDR_BUF 4096

void fb_rf_reply_free(struct fb_rf_reply *rep)
{
	fb_buf_free(&rep->body);
	for (int i = 0; i < rep->n_hdrs; i++)
		free(rep->hval[i]);
	memset(rep, 0, sizeof(*rep));
}

int fb_rf_reply_header(struct fb_rf_reply *rep, const char *name, const char *value)
{
	if (rep->n_hdrs == FB_RF_REPLY_HDRS)
		return FB_EFULL;
	char *v = strdup(value);
	if (!v)
		return -ENOMEM;
	rep->hname[rep->n_hdrs] = name;
	rep->hval[rep->n_hdrs++] = v;
	return 0;
}

static int link_header(struct fb_rf_reply *rep, const char *type)
{
	if (!fb_rf_schema_served(type))
		return 0;
	char v[160];
	snprintf(v, sizeof(v), "</redfish/v1/JsonSchemas/%s.json>; rel=describedby", type);
	return fb_rf_reply_header(rep, "Link", v);
}

int fb_rf_reply_bytes(struct fb_rf_reply *rep, const struct fb_rf_req *req, const char *body,
		      size_t len, const char *etag, const char *type)
{
	fb_buf_reset(&rep->body);
	snprintf(rep->etag, sizeof(rep->etag), "%s", etag ? etag : "");
	rep->head = req->method == FB_RF_HEAD;
	if (etag && fb_rf_etag_listed(fb_rf_req_header(req, FB_RF_H_IF_NONE_MATCH), etag)) {
		rep->status = 304;
		rep->ctype = NULL;
		return 0;
	}
	rep->status = 200;
	rep->ctype = JSON_CTYPE;
	int rc = link_header(rep, type);
	return rc == -ENOMEM ? rc : fb_buf_put(&rep->body, body, len);
}

int fb_rf_reply_resource(struct fb_rf_reply *rep, const struct fb_rf_req *req, json_t *obj,
			 const char *type)
{
	json_object_del(obj, "@odata.etag");
	char *plain = json_dumps(obj, JSON_COMPACT);
	if (!plain)
		return -ENOMEM;
	char etag[FB_RF_ETAG_MAX];
	fb_rf_etag(plain, strlen(plain), etag);
	free(plain);
	if (json_object_set_new(obj, "@odata.etag", json_string(etag)))
		return -ENOMEM;
	char *s = json_dumps(obj, JSON_COMPACT);
	if (!s)
		return -ENOMEM;
	int rc = fb_rf_reply_bytes(rep, req, s, strlen(s), etag, type);
	free(s);
	return rc;
}

int fb_rf_reply_resource_take(struct fb_rf_reply *rep, const struct fb_rf_req *req, json_t *obj,
			      const char *type)
{
	if (!obj)
		return -1;
	int rc = fb_rf_reply_resource(rep, req, obj, type);
	json_decref(obj);
	return rc ? -1 : 0;
}

int fb_rf_reply_json(struct fb_rf_reply *rep, unsigned status, json_t *doc)
{
	char *s = json_dumps(doc, JSON_COMPACT);
	if (!s)
		return -ENOMEM;
	fb_buf_reset(&rep->body);
	int rc = fb_buf_puts(&rep->body, s);
	free(s);
	rep->status = status;
	rep->ctype = JSON_CTYPE;
	return rc;
}

void fb_rf_reply_error_doc(struct fb_rf_reply *rep, unsigned status, json_t *doc)
{
	static const char oom[] = "{\"error\":{\"code\":\"Base.1.22.InternalError\",\"message\":"
				  "\"The request failed due to an internal service error.  The service "
				  "is still operational.\",\"@Message.ExtendedInfo\":[]}}";
	int head = rep->head;
	rep->head = 0; /* HEAD errors still say why in the status; the body is cut at write */
	if (!doc || fb_rf_reply_json(rep, status, doc)) {
		fb_buf_reset(&rep->body);
		fb_buf_puts(&rep->body, oom);
		rep->status = doc ? status : 500;
		rep->ctype = JSON_CTYPE;
	}
	rep->head = head;
	rep->etag[0] = '\0';
	json_decref(doc);
}

void fb_rf_reply_error(struct fb_rf_reply *rep, enum fb_rf_msg m, const char *const *args, int nargs)
{
	json_t *doc = NULL;
	fb_rf_error_add(&doc, m, args, nargs);
	fb_rf_reply_error_doc(rep, fb_rf_msg_status(m), doc);
	if (m == FB_RF_NO_VALID_SESSION)
		fb_rf_reply_header(rep, "WWW-Authenticate", "Basic realm=\"fabricbus\"");
}

void fb_rf_reply_status(struct fb_rf_reply *rep, unsigned status)
{
	fb_buf_reset(&rep->body);
	rep->status = status;
	rep->ctype = NULL;
}

/* "GET, HEAD, PATCH". */
static void allow_value(unsigned allow, char *out, size_t outsz)
{
	size_t n = 0;
	out[0] = '\0';
	for (int m = 0; m < FB_RF_METHODS; m++)
		if (allow & FB_RF_ALLOW(m))
			n += (size_t)snprintf(out + n, n < outsz ? outsz - n : 0, "%s%s", n ? ", " : "",
					      fb_rf_method_name((enum fb_rf_method)m));
}

static int add_hdr(struct lws *wsi, const char *name, const char *val, uint8_t **p, uint8_t *end)
{
	char n[64];
	snprintf(n, sizeof(n), "%s:", name);
	return lws_add_http_header_by_name(wsi, (const uint8_t *)n, (const uint8_t *)val,
					   (int)strlen(val), p, end);
}

static int write_headers(struct fb_rf_reply *rep, struct lws *wsi, uint8_t *start, uint8_t **p,
			 uint8_t *end)
{
	char allow[64];
	size_t len = rep->ctype ? rep->body.len : 0;
	if (lws_add_http_common_headers(wsi, rep->status, rep->ctype, len, p, end) ||
	    add_hdr(wsi, "OData-Version", "4.0", p, end) ||
	    add_hdr(wsi, "Cache-Control", "no-store", p, end))
		return -1;
	if (rep->etag[0] && add_hdr(wsi, "ETag", rep->etag, p, end))
		return -1;
	allow_value(rep->allow, allow, sizeof(allow));
	if (allow[0] && add_hdr(wsi, "Allow", allow, p, end))
		return -1;
	for (int i = 0; i < rep->n_hdrs; i++)
		if (add_hdr(wsi, rep->hname[i], rep->hval[i], p, end))
			return -1;
	return lws_finalize_write_http_header(wsi, start, p, end) ? -1 : 0;
}

int fb_rf_reply_write(struct fb_rf_reply *rep, struct lws *wsi)
{
	uint8_t hdr[LWS_PRE + HDR_BUF];
	uint8_t *start = hdr + LWS_PRE, *p = start, *end = hdr + sizeof(hdr) - 1;
	if (!rep->status)
		fb_rf_reply_error(rep, FB_RF_INTERNAL_ERROR, NULL, 0);
	if (write_headers(rep, wsi, start, &p, end))
		return -1;
	size_t len = rep->ctype ? rep->body.len : 0;
	if (!len || rep->head)
		return 0;
	uint8_t *buf = malloc(LWS_PRE + len);
	if (!buf)
		return -1;
	memcpy(buf + LWS_PRE, rep->body.data, len);
	int rc = lws_write(wsi, buf + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
	free(buf);
	return rc < 0 ? -1 : 0;
}

int fb_rf_reply_if_match(struct fb_rf_reply *rep, const struct fb_rf_req *req, const char *etag)
{
	const char *h = fb_rf_req_header(req, FB_RF_H_IF_MATCH);
	if (!h || fb_rf_etag_listed(h, etag))
		return 1;
	fb_rf_reply_error(rep, FB_RF_PRECONDITION_FAILED, NULL, 0);
	return 0;
}
