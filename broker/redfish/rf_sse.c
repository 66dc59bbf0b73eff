/* rf_sse.c - the router's handler for the ServerSentEventUri (rf_sse.h):
 * open the stream in the fan-out, list it as an EventDestination in the
 * Subscriptions collection (rf_live.h, owned by the EventService), and take
 * it off that list when it ends. A DELETE of the destination reaches the
 * stream through fb_ws_sse_close_requested. */
#include "rf_sse.h"

#include "fb_log.h"
#include "rf_event_service.h"
#include "rf_live.h"
#include "rf_reply.h"
#include "rf_service.h"
#include "sse_stream.h"
#include "ws_server.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* One open stream, as the router holds it. */
struct sse_conn {
	struct fb_ws_sub *sub;   /* in the fan-out (ws_server.c) */
	struct lws *wsi;
	struct fb_rf_live *live; /* where it is listed, or NULL */
};

static int sse_writeable(void *st, struct lws *wsi)
{
	struct sse_conn *c = st;
	return fb_ws_sse_writeable(wsi, c->sub);
}

static void sse_closed(void *st)
{
	struct sse_conn *c = st;
	if (c->live && c->sub->live_id[0])
		fb_rf_live_remove(c->live, c->sub->live_id);
	fb_ws_sse_closed(c->wsi, c->sub);
	free(c);
}

static const struct fb_rf_stream_ops sse_ops = { sse_writeable, sse_closed };

/* Destination redfish-sse://<client ip:port>, and a Context made here (a
 * client cannot give one on a GET): unique, so tools can tell streams of
 * the same client apart. */
static void list_stream(struct fb_rf_ctx *x, struct sse_conn *c)
{
	struct fb_rf_events *ev = x->svc->events;
	if (!ev || !ev->live)
		return;
	char dest[96], context[128];
	snprintf(dest, sizeof(dest), "redfish-sse://%s", c->sub->peer);
	snprintf(context, sizeof(context), "fabricbus-sse-%llu-%s",
		 (unsigned long long)c->sub->wrote_ns, c->sub->peer);
	struct fb_rf_live_entry e = { .destination = dest, .context = context,
				      .filter = fb_rf_filter_text(c->sub->rf),
				      .close = fb_ws_sse_close_requested,
				      .arg = lws_context_user(lws_get_context(c->wsi)) };
	if (fb_rf_live_add(ev->live, &e, c->sub->live_id)) {
		c->sub->live_id[0] = '\0';
		fb_log_warn("sse %s: out of memory listing the stream in Subscriptions; it runs unlisted",
			    c->sub->peer);
		return;
	}
	c->live = ev->live;
}

static int refused(struct fb_rf_ctx *x, const struct fb_sse_refusal *no)
{
	struct fb_buf b = FB_BUF_INIT;
	json_t *doc = NULL;
	if (fb_sse_error_json(no, &b) == 0)
		doc = json_loadb((const char *)b.data, b.len, 0, NULL);
	fb_buf_free(&b);
	if (!doc) {
		fb_rf_reply_error(x->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
		return 0;
	}
	int rc = fb_rf_reply_json(x->rep, no->status, doc);
	json_decref(doc);
	return rc ? -1 : 0;
}

int fb_rf_sse_get(struct fb_rf_ctx *x)
{
	if (x->req->method == FB_RF_HEAD) { /* the head of a stream, without one */
		fb_rf_reply_status(x->rep, 200);
		return 0;
	}
	struct sse_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return -1;
	struct fb_sse_refusal no;
	void *st;
	int rc = fb_ws_sse_open(x->wsi, &no, &st);
	if (rc) {
		free(c);
		return rc < 0 ? -1 : refused(x, &no);
	}
	c->sub = st;
	c->wsi = x->wsi;
	list_stream(x, c);
	return fb_rf_stream(x, &sse_ops, c);
}
