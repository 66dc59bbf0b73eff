#include "ofmf.h"

#include "fb_err.h"
#include "fb_event.h"
#include "fb_log.h"
#include "fb_redfish.h"
#include "ofmf_reg.h"
#include "ofmf_state.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define S 1000000000ull

struct fb_ofmf {
	struct fb_ofmf_opts o;
	struct fb_ofmf_state st;   /* core, connection_method, base: fixed; context: saved */
	char listener[FB_OFMF_URL_MAX + 16]; /* <core>/EventListener */
	char fabric_path[FB_OFMF_URL_MAX];
	char state_path[4200];
	char fabric[64];
	struct fb_ofmf_reg *reg;
	struct event *timer;
	void *req;                 /* the request in flight (io handle) */
	uint64_t seq;              /* Ids of the events we post */
};

static void pump(struct fb_ofmf *m);

static void http_done(void *arg, int status, const char *body, size_t len)
{
	struct fb_ofmf *m = arg;
	m->req = NULL;
	fb_ofmf_reg_done(m->reg, fb_now_ns(), status, body, len);
	pump(m);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump(arg);
}

/* An Event as the reference core reads it (HANDSHAKE.md): it dispatches on
 * the last part of MessageId and crawls OriginOfCondition; the other members
 * make it a valid Event.v1_13_0 for anyone it forwards it to. */
static char *event_json(struct fb_ofmf *m, const char *key, const char *event_type,
			const char *origin, const char *context, json_t *args, const char *msg)
{
	char id[32], mid[96];
	snprintf(id, sizeof(id), "ofmf-%" PRIu64, ++m->seq);
	snprintf(mid, sizeof(mid), "ResourceEvent.1.4.%s", key);
	json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:{s:s}}", "EventType", event_type,
				"EventId", id, "MemberId", "0", "MessageId", mid, "MessageSeverity",
				"OK", "Severity", "OK", "Message", msg, "OriginOfCondition",
				"@odata.id", origin);
	if (rec && args)
		json_object_set(rec, "MessageArgs", args);
	json_t *doc = rec ? json_pack("{s:s,s:s,s:s,s:s,s:[o]}", "@odata.type",
				      "#Event.v1_13_0.Event", "Id", id, "Name", key, "Context",
				      context, "Events", rec)
			  : NULL;
	char *out = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return out;
}

static int request(struct fb_ofmf *m, const char *method, const char *url, char *body)
{
	int rc = m->o.io.http(m->o.io.ctx, method, url, body, http_done, m, &m->req);
	free(body);
	return rc;
}

static int start_action(struct fb_ofmf *m, const struct fb_ofmf_action *a)
{
	char url[FB_OFMF_URL_MAX * 2 + 16], msg[FB_OFMF_URL_MAX * 2 + 96];
	switch (a->kind) {
	case FB_OFMF_DISCOVER: {
		snprintf(msg, sizeof(msg),
			 "An aggregation source of connection method '%s' located at '%s' was discovered.",
			 m->st.connection_method, m->st.base);
		json_t *args = json_pack("[s,s]", "Redfish", m->st.base);
		char *body = event_json(m, "AggregationSourceDiscovered", "Other",
					m->st.connection_method, "", args, msg);
		json_decref(args);
		return body ? request(m, "POST", m->listener, body) : -ENOMEM;
	}
	case FB_OFMF_ANNOUNCE: {
		char *body = event_json(m, "ResourceCreated", "ResourceAdded", a->path, a->context, NULL,
					"The resource was created successfully.");
		return body ? request(m, "POST", m->listener, body) : -ENOMEM;
	}
	case FB_OFMF_GET_SOURCE:
	case FB_OFMF_LIST_SOURCES:
		snprintf(url, sizeof(url), "%s%s", m->st.core, a->path);
		return request(m, "GET", url, NULL);
	case FB_OFMF_SAVE: {
		snprintf(m->st.context, sizeof(m->st.context), "%s", a->context);
		const char *step = "write";
		int rc = fb_ofmf_state_save(m->state_path, &m->st, &step);
		if (rc)
			fb_log_warn("ofmf: cannot %s %s: %s (a restart will register again)", step,
				    m->state_path, strerror(-rc));
		return 0;
	}
	case FB_OFMF_SET_CONTEXT: {
		int rc = m->o.io.set_subscription(m->o.io.ctx, m->listener, a->context, a->deliver);
		if (rc)
			fb_log_warn("ofmf: cannot set the %s subscription's Context: %s",
				    FB_OFMF_SUBSCRIPTION, fb_strerror(rc));
		return 0;
	}
	case FB_OFMF_NONE: break;
	}
	return 0;
}

/* Take every action the machine has now, then sleep until it has more. */
static void pump(struct fb_ofmf *m)
{
	uint64_t now = fb_now_ns();
	struct fb_ofmf_action a;
	for (fb_ofmf_reg_next(m->reg, now, &a); a.kind != FB_OFMF_NONE;
	     fb_ofmf_reg_next(m->reg, now, &a)) {
		int rc = start_action(m, &a);
		if (rc && a.kind != FB_OFMF_SAVE && a.kind != FB_OFMF_SET_CONTEXT)
			fb_ofmf_reg_done(m->reg, now, rc, NULL, 0); /* as if no reply came */
	}
	uint64_t wake = fb_ofmf_reg_wake(m->reg);
	if (wake == UINT64_MAX) {
		evtimer_del(m->timer);
		return;
	}
	uint64_t d = wake > now ? wake - now : 0;
	struct timeval tv = { (time_t)(d / S), (suseconds_t)(d % S / 1000) };
	evtimer_add(m->timer, &tv);
}

static void load_state(struct fb_ofmf *m, char *saved, size_t savedsz)
{
	struct fb_ofmf_state old;
	char err[256];
	saved[0] = '\0';
	int rc = fb_ofmf_state_load(m->state_path, &old, err, sizeof(err));
	if (rc == -ENOENT)
		return;
	if (rc) {
		fb_log_warn("ofmf: ignoring %s: %s (registering afresh)", m->state_path,
			    rc == FB_EMALFORMED ? err : strerror(-rc));
		return;
	}
	if (strcmp(old.core, m->st.core) || strcmp(old.connection_method, m->st.connection_method) ||
	    strcmp(old.base, m->st.base)) {
		fb_log_info("ofmf: the saved Context %s was for core %s, ConnectionMethod %s, base %s: "
			    "not used", old.context, old.core, old.connection_method, old.base);
		return;
	}
	snprintf(saved, savedsz, "%s", old.context);
}

int fb_ofmf_start(const struct fb_ofmf_opts *o, struct fb_ofmf **out)
{
	struct fb_ofmf *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->o = *o;
	int bad = snprintf(m->st.core, sizeof(m->st.core), "%s", o->core) >= (int)sizeof(m->st.core) ||
		  snprintf(m->st.base, sizeof(m->st.base), "%s", o->base_url) >= (int)sizeof(m->st.base) ||
		  snprintf(m->st.connection_method, sizeof(m->st.connection_method),
			   "/redfish/v1/AggregationService/ConnectionMethods/%s",
			   o->cm_id) >= (int)sizeof(m->st.connection_method) ||
		  snprintf(m->state_path, sizeof(m->state_path), "%s", o->state_path) >=
			  (int)sizeof(m->state_path) ||
		  snprintf(m->fabric_path, sizeof(m->fabric_path), "/redfish/v1/Fabrics/%s", o->fabric) >=
			  (int)sizeof(m->fabric_path);
	snprintf(m->listener, sizeof(m->listener), "%s/EventListener", m->st.core);
	snprintf(m->fabric, sizeof(m->fabric), "%s", o->fabric);
	m->o.core = m->st.core;
	char saved[FB_OFMF_CONTEXT_MAX];
	if (!bad)
		load_state(m, saved, sizeof(saved));
	struct fb_ofmf_reg_opts ro = {
		.base = m->st.base, .connection_method = m->st.connection_method,
		.fabric = m->fabric_path, .check_ns = o->check_ms * MS, .retry_min_ns = 1 * S,
		.retry_max_ns = 30 * S, .conflict_ns = 60 * S,
		/* The PATCH is served on the loop before the core has its reply, so
		 * before our 200: a 200 without it means it was refused (auth). */
		.context_wait_ns = 1 * S,
		.queue_max = 4096,
		/* The Redfish tree is rebuilt every 100 ms: an origin announced at
		 * once would be a 404 to the core's GET. */
		.announce_delay_ns = 1 * S,
	};
	m->reg = bad ? NULL : fb_ofmf_reg_new(&ro, saved, fb_now_ns());
	m->timer = m->reg ? evtimer_new(o->base, timer_cb, m) : NULL;
	if (!m->timer) {
		fb_ofmf_stop(m);
		return bad ? -ENAMETOOLONG : -ENOMEM;
	}
	fb_log_info("ofmf: registering with the OFMF core %s as %s (ConnectionMethod %s)%s%s",
		    m->st.core, m->st.base, m->st.connection_method, saved[0] ? ", saved Context " : "",
		    saved);
	pump(m);
	*out = m;
	return 0;
}

void fb_ofmf_stop(struct fb_ofmf *m)
{
	if (!m)
		return;
	if (m->req)
		m->o.io.cancel(m->o.io.ctx, m->req);
	if (m->timer)
		event_free(m->timer);
	fb_ofmf_reg_free(m->reg);
	free(m);
}

int fb_ofmf_committed(void *arg, struct fb_batch *batch, uint64_t last_id)
{
	(void)last_id;
	struct fb_ofmf *m = arg;
	char origin[FB_REDFISH_ORIGIN_MAX];
	uint64_t now = fb_now_ns();
	struct fb_record rec;
	for (size_t i = 0; i < batch->n; i++)
		if (fb_redfish_origin(fb_batch_get(batch, i, &rec), m->fabric, origin, sizeof(origin)) > 0)
			fb_ofmf_reg_origin(m->reg, now, origin);
	pump(m);
	return 0;
}

void fb_ofmf_context_patched(struct fb_ofmf *m, const char *context)
{
	fb_ofmf_reg_context_patched(m->reg, fb_now_ns(), context);
	pump(m);
}

int fb_ofmf_delivery_failed(struct fb_ofmf *m, uint64_t event_id, const char *origin, int refused)
{
	int drop = fb_ofmf_reg_delivery_failed(m->reg, fb_now_ns(), event_id, origin, refused);
	pump(m);
	return drop;
}

const char *fb_ofmf_connection_method(const struct fb_ofmf *m) { return m->st.connection_method; }

const char *fb_ofmf_context(const struct fb_ofmf *m)
{
	return fb_ofmf_reg_state(m->reg) == FB_OFMF_ST_REGISTERED ? fb_ofmf_reg_context(m->reg) : "";
}

json_t *fb_ofmf_status(const struct fb_ofmf *m)
{
	struct fb_ofmf_reg_stats s;
	fb_ofmf_reg_get_stats(m->reg, &s);
	return json_pack("{s:b,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "enabled", 1,
			 "core", m->st.core, "connection_method", m->st.connection_method, "state",
			 fb_ofmf_reg_state_name(fb_ofmf_reg_state(m->reg)), "context",
			 fb_ofmf_context(m), "last_error", fb_ofmf_reg_last_error(m->reg),
			 "registrations", (json_int_t)s.registrations, "adoptions",
			 (json_int_t)s.adoptions, "resumed", (json_int_t)s.resumed, "core_forgot_us",
			 (json_int_t)s.forgotten, "conflicts", (json_int_t)s.conflicts, "announced",
			 (json_int_t)s.announced, "announce_dropped", (json_int_t)s.announce_dropped,
			 "undeliverable", (json_int_t)s.undeliverable);
}
