/* rf_sse.c - the router's handler for the ServerSentEventUri (rf_sse.h):
 * open the stream in the fan-out, list it as an EventDestination in the
 * Subscriptions collection (rf_live.h, owned by the EventService), and take
 * it off that list when it ends. A DELETE of the destination reaches the
 * stream through fb_ws_sse_close_requested. */
#include "rf_sse.h"

#include "fb_log.h"
#include "rf_error.h"
#include "rf_event_service.h"
#include "rf_live.h"
#include "rf_reply.h"
#include "rf_service.h"
#include "sse_stream.h"
#include "ws_server.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The Base message of a refusal (the Base registry table is rf_error.c's),
 * with the sentence that says what was expected as error.message. */
static int refused(struct fb_rf_ctx *x, const struct fb_sse_refusal *no)
{
	static const struct {
		const char *key;
		enum fb_rf_msg msg;
	} msgs[] = {
		{ "QueryParameterValueFormatError", FB_RF_QUERY_PARAMETER_VALUE_FORMAT_ERROR },
		{ "QueryParameterValueTypeError", FB_RF_QUERY_PARAMETER_VALUE_TYPE_ERROR },
		{ "EventSubscriptionLimitExceeded", FB_RF_EVENT_SUBSCRIPTION_LIMIT },
	};
	enum fb_rf_msg m = FB_RF_INTERNAL_ERROR;
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
		if (strcmp(msgs[i].key, no->message) == 0)
			m = msgs[i].msg;
	const char *args[] = { no->arg1, no->arg2 };
	json_t *doc = NULL;
	if (fb_rf_error_add(&doc, m, args, no->arg1 ? 2 : 0)) {
		fb_rf_reply_error(x->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
		return 0;
	}
	if (no->detail[0])
		json_object_set_new(json_object_get(doc, "error"), "message", json_string(no->detail));
	fb_rf_reply_error_doc(x->rep, no->status, doc);
	return 0;
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
