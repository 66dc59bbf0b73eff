/* rf_sse.c - the router's handler for the ServerSentEventUri (rf_sse.h). */
#include "rf_sse.h"

#include "rf_reply.h"
#include "sse_stream.h"
#include "ws_server.h"

#include <jansson.h>

static int sse_writeable(void *st, struct lws *wsi) { return fb_ws_sse_writeable(wsi, st); }

/* The router's stream ops get no wsi at close; the stream keeps its own. */
static void sse_closed(void *st)
{
	struct fb_ws_sub *s = st;
	if (s->wsi)
		fb_ws_sse_closed(s->wsi, s);
}

static const struct fb_rf_stream_ops sse_ops = { sse_writeable, sse_closed };

int fb_rf_sse_get(struct fb_rf_ctx *c)
{
	if (c->req->method == FB_RF_HEAD) { /* the head of a stream, without one */
		fb_rf_reply_status(c->rep, 200);
		return 0;
	}
	struct fb_sse_refusal no;
	void *st;
	int rc = fb_ws_sse_open(c->wsi, &no, &st);
	if (rc < 0)
		return -1;
	if (rc == 0)
		return fb_rf_stream(c, &sse_ops, st);
	struct fb_buf b = FB_BUF_INIT;
	json_t *doc = NULL;
	if (fb_sse_error_json(&no, &b) == 0)
		doc = json_loadb((const char *)b.data, b.len, 0, NULL);
	fb_buf_free(&b);
	if (!doc) {
		fb_rf_reply_error(c->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
		return 0;
	}
	rc = fb_rf_reply_json(c->rep, no.status, doc);
	json_decref(doc);
	return rc ? -1 : 0;
}
