#include "ofmf_push.h"

#include "fb_err.h"
#include "fb_hc.h"
#include "fb_log.h"
#include "ofmf_state.h"
#include "push.h"
#include "rf_sub.h"
#include "rf_sub_store.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A GET of the core is quick; a POST is not: the core answers ResourceCreated
 * only after crawling everything it links, one GET of us at a time. */
#define GET_TIMEOUT_MS 10000
#define POST_TIMEOUT_MS 300000

struct fb_ofmf_push {
	struct fb_push *push;
	struct fb_ofmf *ofmf;
	char context[FB_OFMF_CONTEXT_MAX]; /* what we last set */
	int setting;                       /* our own update is running */
};

struct call {
	struct fb_ofmf_push *a;
	struct fb_hc_xfer *x;
	fb_ofmf_http_done_fn done;
	void *arg;
};

static void hc_done(void *arg, const struct fb_hc_resp *r)
{
	struct call c = *(struct call *)arg;
	free(arg);
	int status = r->status ? (int)r->status : -ECONNRESET;
	if (!r->status)
		fb_log_debug("ofmf: no reply from the core: %s", r->error);
	c.done(c.arg, status, r->body, r->body_len);
}

static int http(void *ctx, const char *method, const char *url, const char *body,
		fb_ofmf_http_done_fn done, void *arg, void **req)
{
	struct fb_ofmf_push *a = ctx;
	struct call *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct call){ a, NULL, done, arg };
	struct fb_hc_req r = {
		.method = method, .url = url, .body = body, .body_len = body ? strlen(body) : 0,
		.timeout_ms = body ? POST_TIMEOUT_MS : GET_TIMEOUT_MS,
	};
	int rc = fb_hc_send(fb_push_hc(a->push), &r, hc_done, c, &c->x);
	if (rc) {
		free(c);
		return rc;
	}
	*req = c;
	return 0;
}

static void cancel(void *ctx, void *req)
{
	struct fb_ofmf_push *a = ctx;
	struct call *c = req;
	fb_hc_cancel(fb_push_hc(a->push), c->x);
	free(c);
}

/* Build a subscription from a JSON body (create, or PATCH of old). */
static int build(json_t *doc, enum fb_rf_mode mode, const struct fb_rf_sub *old,
		 struct fb_rf_sub *out)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	struct fb_rf_error e;
	memset(&e, 0, sizeof(e));
	int rc = fb_rf_sub_build_text(text, strlen(text), mode, old, out, &e);
	free(text);
	if (rc)
		fb_log_err("ofmf: the %s subscription was refused: %s %s (check OfmfCore)",
			   FB_OFMF_SUBSCRIPTION, e.key ? e.key : "error", e.n_args ? e.args[0] : "");
	return rc ? -EINVAL : 0;
}

/* Every event to the core, retried until the core takes it (it refuses
 * events about resources it does not hold yet by closing the connection). */
static int create(struct fb_ofmf_push *a, const char *destination, const char *context)
{
	struct fb_rf_sub s;
	json_t *doc = json_pack("{s:s,s:s,s:s,s:s}", "Destination", destination, "Protocol",
				"Redfish", "Context", context, "DeliveryRetryPolicy", "RetryForever");
	int rc = doc ? build(doc, FB_RF_SUB_CREATE, NULL, &s) : -ENOMEM;
	if (!rc) {
		rc = fb_push_create(a->push, &s, FB_OFMF_SUBSCRIPTION, NULL);
		fb_rf_sub_free(&s);
	}
	return rc;
}

static int set_subscription(void *ctx, const char *destination, const char *context, int deliver)
{
	struct fb_ofmf_push *a = ctx;
	snprintf(a->context, sizeof(a->context), "%s", context);
	a->setting = 1;
	struct fb_rf_sub *old = fb_rf_store_find(fb_push_store(a->push), FB_OFMF_SUBSCRIPTION);
	int rc = 0;
	if (old && strcmp(old->destination, destination) != 0) {
		/* OfmfCore changed: the old destination's cursor means nothing. */
		rc = fb_push_delete(a->push, FB_OFMF_SUBSCRIPTION);
		old = NULL;
	}
	if (!rc && !old) {
		rc = create(a, destination, context);
	} else if (!rc && strcmp(old->context, context) != 0) {
		struct fb_rf_sub s;
		json_t *doc = json_pack("{s:s}", "Context", context);
		rc = doc ? build(doc, FB_RF_SUB_PATCH, old, &s) : -ENOMEM;
		if (!rc) {
			rc = fb_push_update(a->push, &s);
			fb_rf_sub_free(&s);
		}
	}
	/* Held (suspended at its cursor) while the core does not know us:
	 * nothing is lost, it resumes where it stopped. */
	if (!rc)
		rc = fb_push_set_enabled(a->push, FB_OFMF_SUBSCRIPTION, deliver);
	a->setting = 0;
	return rc;
}

/* The push engine's news of SunfishServer: a Context we did not set is the
 * core's PATCH (inside our discovery POST); a failed delivery may mean the
 * core restarted and forgot us. */
static void watch(void *arg, enum fb_push_what what, const char *id, const struct fb_rf_sub *s,
		  const char *detail)
{
	struct fb_ofmf_push *a = arg;
	if (!a->ofmf || a->setting || strcmp(id, FB_OFMF_SUBSCRIPTION) != 0)
		return;
	if (what == FB_PUSH_UPDATED && s && s->context[0] && strcmp(s->context, a->context) != 0) {
		snprintf(a->context, sizeof(a->context), "%s", s->context);
		fb_ofmf_context_patched(a->ofmf, s->context);
	} else if (what == FB_PUSH_FAILED) {
		fb_log_debug("ofmf: a delivery to the core failed (%s)", detail ? detail : "");
		struct fb_push_pending pd;
		if (fb_push_pending(a->push, id, &pd))
			pd = (struct fb_push_pending){ 0, "", 0, 0, 0 };
		/* Reached and answered no (an error, or a close without a reply: the
		 * reference core's answer to an origin it does not hold), or down. */
		int refused = pd.status >= 400 || pd.no_reply;
		if (fb_ofmf_delivery_failed(a->ofmf, pd.event_id, pd.origin, refused))
			fb_push_drop(a->push, id, "the OFMF core refuses it");
	} else if (what == FB_PUSH_DELETED) {
		fb_log_warn("ofmf: the %s subscription was deleted by a client: events stop going to "
			    "the core until fabricbusd registers again (restart it)",
			    FB_OFMF_SUBSCRIPTION);
	}
}

int fb_ofmf_push_new(struct fb_push *p, struct fb_ofmf_io *io, struct fb_ofmf_push **out)
{
	struct fb_ofmf_push *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->push = p;
	int rc = fb_push_watch(p, watch, a);
	if (rc) {
		free(a);
		return rc;
	}
	*io = (struct fb_ofmf_io){ http, cancel, set_subscription, a };
	*out = a;
	return 0;
}

void fb_ofmf_push_attach(struct fb_ofmf_push *a, struct fb_ofmf *m) { a->ofmf = m; }

void fb_ofmf_push_free(struct fb_ofmf_push *a) { free(a); }
