/* rf_reply.h - a Redfish response under construction, and writing it.
 *
 * Handlers fill one struct fb_rf_reply (status, headers, body) and return;
 * the router writes it (fb_rf_reply_write) or, for a request handed to the
 * loop, the answer callback fills it later. Every reply carries
 * OData-Version: 4.0 and Cache-Control: no-store; JSON replies are
 * "application/json; charset=utf-8".
 *
 *   fb_rf_reply_resource()  a resource: adds @odata.etag, the ETag header,
 *                           Link: </redfish/v1/JsonSchemas/<Type>.json>;
 *                           rel=describedby (when that schema is served:
 *                           rf_files.h), answers 304 to a matching
 *                           If-None-Match; HEAD gets the headers only.
 *   fb_rf_reply_error()     a Redfish error (rf_error.h) with its status;
 *                           405 also carries Allow, 401 WWW-Authenticate.
 *   fb_rf_reply_status()    a bare status (204).
 */
#ifndef FB_RF_REPLY_H
#define FB_RF_REPLY_H

#include "fb_buf.h"
#include "rf_error.h"
#include "rf_etag.h"
#include "rf_req.h"

#include <jansson.h>

struct lws;

#define FB_RF_REPLY_HDRS 8

struct fb_rf_reply {
	unsigned status;            /* 0: nothing yet (the router answers 500) */
	const char *ctype;          /* static string; NULL: no body */
	struct fb_buf body;
	int head;                   /* HEAD: send the headers only */
	unsigned allow;             /* bit per enum fb_rf_method: the Allow header */
	char etag[FB_RF_ETAG_MAX];  /* "" or the ETag header */
	const char *hname[FB_RF_REPLY_HDRS]; /* extra headers: static names ("Location") */
	char *hval[FB_RF_REPLY_HDRS];        /* and malloc'd values */
	int n_hdrs;
};

#define FB_RF_ALLOW(m) (1u << (m))

void fb_rf_reply_free(struct fb_rf_reply *rep);
/* Add a header (value copied). 0, FB_EFULL, -ENOMEM. */
int fb_rf_reply_header(struct fb_rf_reply *rep, const char *name, const char *value);

/* Serve obj (borrowed) as a resource of type (the schema name, "Port"; NULL:
 * no Link header). Checks req's If-None-Match. 0 or -ENOMEM. */
int fb_rf_reply_resource(struct fb_rf_reply *rep, const struct fb_rf_req *req, json_t *obj,
			 const char *type);
/* The same for obj taken (freed here; NULL: out of memory when it was
 * made), as a handler returns it: 0, or -1 when nothing was served. */
int fb_rf_reply_resource_take(struct fb_rf_reply *rep, const struct fb_rf_req *req, json_t *obj,
			      const char *type);
/* The same for a body already serialized with its etag (served from a
 * snapshot: rf_tree.h). */
int fb_rf_reply_bytes(struct fb_rf_reply *rep, const struct fb_rf_req *req, const char *body,
		      size_t len, const char *etag, const char *type);
/* Any JSON document (borrowed), with status. 0 or -ENOMEM. */
int fb_rf_reply_json(struct fb_rf_reply *rep, unsigned status, json_t *doc);
/* One-message Redfish error with the message's status. Always "succeeds":
 * on ENOMEM the body is a fixed InternalError. */
void fb_rf_reply_error(struct fb_rf_reply *rep, enum fb_rf_msg m, const char *const *args, int nargs);
/* A prepared error document (fb_rf_error_add), status given; doc stolen. */
void fb_rf_reply_error_doc(struct fb_rf_reply *rep, unsigned status, json_t *doc);
/* Status only, no body (204, 304). */
void fb_rf_reply_status(struct fb_rf_reply *rep, unsigned status);

/* Before a write: If-Match. 1 if the request may change the resource whose
 * current tag is etag (no If-Match, or it lists etag or "*"), else 0 with
 * 412 PreconditionFailed in rep. */
int fb_rf_reply_if_match(struct fb_rf_reply *rep, const struct fb_rf_req *req, const char *etag);

/* Write it all to wsi (the status line, headers, body). 0 or -1 (close). */
int fb_rf_reply_write(struct fb_rf_reply *rep, struct lws *wsi);

#endif
