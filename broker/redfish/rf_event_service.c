/* rf_event_service.c - the EventService routes (rf_event_service.h). */
#include "rf_event_service.h"

#include "fb_err.h"
#include "fb_event.h"
#include "fb_log.h"
#include "kafka_topics.h"
#include "push.h"
#include "rf_live.h"
#include "rf_reply.h"
#include "rf_route.h"
#include "rf_service.h"
#include "rf_sub.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ES_PATH "/redfish/v1/EventService"
#define TEST_ACTION "EventService.SubmitTestEvent"
#define KSUB "KafkaSubscription" /* Ids of the config lines */

enum op { OP_ES_GET, OP_ES_PATCH, OP_TEST, OP_COLL, OP_CREATE, OP_GET, OP_PATCH, OP_DELETE, OP_RESUME };

struct call {
	struct fb_rf_call rf; /* first */
	struct fb_rf_events *ev;
	enum op op;
	char id[FB_RF_SUB_ID_MAX];
	json_t *body;            /* parsed body (PATCH, test event, EventService PATCH) */
	struct fb_rf_sub sub;    /* built on the lws thread (POST) */
	char if_match[256];
	int has_if_match;
	/* results, set on the loop */
	unsigned status;         /* 200, 201, 204; 0 with an error below */
	json_t *doc;             /* the body to send */
	struct fb_rf_error err;  /* err.key set: a Base error */
	enum fb_rf_msg msg;      /* or this message (when err.key is NULL and status is 0) */
	char arg[2][192];
	int n_arg;
};

struct fb_rf_events *fb_rf_events_new(struct fb_push *push)
{
	struct fb_rf_events *ev = calloc(1, sizeof(*ev));
	if (!ev || !(ev->live = fb_rf_live_new())) {
		free(ev);
		return NULL;
	}
	ev->push = push;
	snprintf(ev->sse_uri, sizeof(ev->sse_uri), ES_PATH "/SSE");
	return ev;
}

void fb_rf_events_free(struct fb_rf_events *ev)
{
	if (!ev)
		return;
	fb_rf_live_free(ev->live);
	free(ev);
}

/* ---- answers (lws thread) ---- */

static const struct {
	const char *key;
	enum fb_rf_msg msg;
} keys[] = {
	{ "MalformedJSON", FB_RF_MALFORMED_JSON },
	{ "PropertyUnknown", FB_RF_PROPERTY_UNKNOWN },
	{ "PropertyNotWritable", FB_RF_PROPERTY_NOT_WRITABLE },
	{ "PropertyValueTypeError", FB_RF_PROPERTY_VALUE_TYPE_ERROR },
	{ "PropertyValueNotInList", FB_RF_PROPERTY_VALUE_NOT_IN_LIST },
	{ "PropertyValueFormatError", FB_RF_PROPERTY_VALUE_FORMAT_ERROR },
	{ "PropertyValueOutOfRange", FB_RF_PROPERTY_VALUE_OUT_OF_RANGE },
	{ "PropertyMissing", FB_RF_PROPERTY_MISSING },
	{ "ActionParameterMissing", FB_RF_ACTION_PARAMETER_MISSING },
	{ "ActionParameterUnknown", FB_RF_ACTION_PARAMETER_UNKNOWN },
	{ "ActionParameterValueError", FB_RF_ACTION_PARAMETER_VALUE_ERROR },
};

static void reply_sub_error(struct fb_rf_reply *rep, const struct fb_rf_error *e)
{
	enum fb_rf_msg m = FB_RF_INTERNAL_ERROR;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].key, e->key) == 0)
			m = keys[i].msg;
	const char *args[2] = { e->args[0], e->args[1] };
	fb_rf_reply_error(rep, m, args, (int)e->n_args);
}

static void answer(struct fb_rf_call *rc, const struct fb_rf_req *req, struct fb_rf_reply *rep)
{
	struct call *k = (struct call *)rc;
	if (k->err.key) {
		reply_sub_error(rep, &k->err);
		return;
	}
	if (!k->status) {
		const char *args[2] = { k->arg[0], k->arg[1] };
		fb_rf_reply_error(rep, k->msg, args, k->n_arg);
		return;
	}
	if (k->status == 204) {
		fb_rf_reply_status(rep, 204);
		return;
	}
	if (k->status == 201) {
		json_t *id = json_object_get(k->doc, "@odata.id");
		if (fb_rf_reply_header(rep, "Location", json_string_value(id)) ||
		    fb_rf_reply_resource(rep, req, k->doc, "EventDestination"))
			fb_rf_reply_error(rep, FB_RF_INTERNAL_ERROR, NULL, 0);
		rep->status = 201;
		return;
	}
	const char *type = k->op == OP_ES_GET || k->op == OP_ES_PATCH ? "EventService"
			   : k->op == OP_COLL				? "EventDestinationCollection"
									: "EventDestination";
	if (fb_rf_reply_resource(rep, req, k->doc, type))
		fb_rf_reply_error(rep, FB_RF_INTERNAL_ERROR, NULL, 0);
}

static void call_free(struct fb_loop_call *lc)
{
	struct call *k = (struct call *)lc;
	json_decref(k->body);
	json_decref(k->doc);
	fb_rf_sub_free(&k->sub);
	free(k);
}

static void fail(struct call *k, enum fb_rf_msg m, const char *a0, const char *a1)
{
	k->status = 0;
	k->msg = m;
	k->n_arg = 0;
	if (a0)
		snprintf(k->arg[k->n_arg++], sizeof(k->arg[0]), "%s", a0);
	if (a1)
		snprintf(k->arg[k->n_arg++], sizeof(k->arg[0]), "%s", a1);
}

static void not_found(struct call *k)
{
	fail(k, FB_RF_RESOURCE_NOT_FOUND, "EventDestination", k->id);
}

/* ---- the loop side ---- */

static json_t *service_doc(struct fb_rf_events *ev)
{
	unsigned attempts;
	uint64_t interval;
	fb_push_get_retry(ev->push, &attempts, &interval);
	json_t *d = json_pack(
		"{s:s,s:s,s:s,s:s,s:b,s:{s:s,s:s},s:i,s:I,s:[s],s:[s,s,s,s,s,s],s:[s,s,s,s,s,s,s,s],"
		"s:[s,s,s],s:b,s:b,s:b,s:b,s:b,s:b,s:s,s:{s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:b},"
		"s:{s:s},s:{s:{s:s}}}",
		"@odata.id", ES_PATH, "@odata.type", "#EventService.v1_12_0.EventService", "Id",
		"EventService", "Name", "Event Service", "ServiceEnabled", 1, "Status", "State", "Enabled",
		"Health", "OK", "DeliveryRetryAttempts", (int)attempts, "DeliveryRetryIntervalSeconds",
		(json_int_t)((interval + 999) / 1000), "EventFormatTypes", "Event", "RegistryPrefixes",
		"Fabric", "NetworkDevice", "ResourceEvent", "HeartbeatEvent", "Fabricbus", "Base",
		"ResourceTypes", "Fabric", "Switch", "Port", "PortMetrics", "Endpoint", "ComputerSystem",
		"NetworkInterface", "ConnectionMethod", "Severities", "OK", "Warning", "Critical",
		"SubordinateResourcesSupported", 1, "OriginResourcesSupported", 1, "ExcludeMessageId", 1,
		"ExcludeRegistryPrefix", 1, "IncludeOriginOfConditionSupported", 1,
		"SSEIncludeOriginOfConditionSupported", 0, "ServerSentEventUri", ev->sse_uri,
		"SSEFilterPropertiesSupported", "EventFormatType", 1, "EventType", 1, "MessageId", 1,
		"MetricReportDefinition", 0, "OriginResource", 1, "RegistryPrefix", 1, "ResourceType", 1,
		"SubordinateResources", 1, "Subscriptions", "@odata.id", ES_PATH "/Subscriptions",
		"Actions", "#" TEST_ACTION, "target", ES_PATH "/Actions/" TEST_ACTION);
	return d;
}

static void es_patch(struct call *k)
{
	unsigned attempts;
	uint64_t interval;
	fb_push_get_retry(k->ev->push, &attempts, &interval);
	const char *key;
	json_t *v;
	json_object_foreach(k->body, key, v) {
		if (strncmp(key, "@odata.", 7) == 0)
			continue;
		int a = strcmp(key, "DeliveryRetryAttempts") == 0;
		int i = strcmp(key, "DeliveryRetryIntervalSeconds") == 0;
		if (!a && !i) {
			static const char *const known[] = { "ServiceEnabled", "Id", "Name",
							     "ServerSentEventUri", "Subscriptions",
							     "Status", "EventFormatTypes", "Actions" };
			int ro = 0;
			for (size_t j = 0; j < sizeof(known) / sizeof(known[0]); j++)
				ro |= strcmp(known[j], key) == 0;
			fail(k, ro ? FB_RF_PROPERTY_NOT_WRITABLE : FB_RF_PROPERTY_UNKNOWN, key, NULL);
			return;
		}
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		if (!json_is_integer(v)) {
			fail(k, FB_RF_PROPERTY_VALUE_TYPE_ERROR, s ? s : "?", key);
		} else if (json_integer_value(v) < (a ? 0 : 1) ||
			   json_integer_value(v) > (a ? 1000 : 86400)) {
			fail(k, FB_RF_PROPERTY_VALUE_OUT_OF_RANGE, s ? s : "?", key);
		} else {
			if (a)
				attempts = (unsigned)json_integer_value(v);
			else
				interval = (uint64_t)json_integer_value(v) * 1000;
			free(s);
			continue;
		}
		free(s);
		return;
	}
	fb_push_set_retry(k->ev->push, attempts, interval);
	k->doc = service_doc(k->ev);
	k->status = k->doc ? 200 : 0;
}

static void collection(struct call *k)
{
	const struct fb_rf_store *st = fb_push_store(k->ev->push);
	struct fb_buf live = FB_BUF_INIT;
	int nl = fb_rf_live_members(k->ev->live, 1, &live);
	json_t *members = nl > 0 ? json_loadb((const char *)live.data, live.len, 0, NULL) : NULL;
	fb_buf_free(&live);
	/* "[...]" around the live members' list. */
	if (nl > 0 && !members) {
		struct fb_buf b = FB_BUF_INIT;
		fb_buf_puts(&b, "[");
		fb_rf_live_members(k->ev->live, 1, &b);
		fb_buf_puts(&b, "]");
		members = json_loadb((const char *)b.data, b.len, 0, NULL);
		fb_buf_free(&b);
	}
	if (!members)
		members = json_array();
	for (size_t i = 0; members && i < st->n; i++)
		json_array_append_new(members, json_pack("{s:s+}", "@odata.id",
							  FB_RF_SUBS_PATH "/", st->v[i]->id));
	for (unsigned i = 0; members && i < k->ev->n_ksubs; i++) {
		char id[48];
		snprintf(id, sizeof(id), KSUB "%u", i + 1);
		json_array_append_new(members, json_pack("{s:s+}", "@odata.id", FB_RF_SUBS_PATH "/", id));
	}
	k->doc = members ? json_pack("{s:s,s:s,s:s,s:I,s:o}", "@odata.id", FB_RF_SUBS_PATH,
				     "@odata.type",
				     "#EventDestinationCollection.EventDestinationCollection", "Name",
				     "Event Subscriptions", "Members@odata.count",
				     (json_int_t)json_array_size(members), "Members", members)
			 : NULL;
	k->status = k->doc ? 200 : 0;
	if (!k->doc)
		fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
}

static void create(struct call *k)
{
	struct fb_rf_sub *stored;
	int rc = fb_push_create(k->ev->push, &k->sub, NULL, &stored);
	if (rc == -ENOSPC) {
		fail(k, FB_RF_EVENT_SUBSCRIPTION_LIMIT, NULL, NULL);
		return;
	}
	if (rc) {
		fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
		return;
	}
	k->doc = fb_push_render(k->ev->push, stored);
	k->status = k->doc ? 201 : 0;
}

/* 1 if If-Match allows changing s (no header, or it names s's etag). */
static int if_match_ok(struct call *k, struct fb_rf_sub *s)
{
	if (!k->has_if_match)
		return 1;
	json_t *r = fb_push_render(k->ev->push, s);
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
	if (!text)
		return 1;
	char etag[FB_RF_ETAG_MAX];
	fb_rf_etag(text, strlen(text), etag);
	free(text);
	if (fb_rf_etag_listed(k->if_match, etag))
		return 1;
	fail(k, FB_RF_PRECONDITION_FAILED, NULL, NULL);
	return 0;
}

static void member(struct call *k)
{
	struct fb_rf_sub *s = fb_rf_store_find(fb_push_store(k->ev->push), k->id);
	if (!s) {
		not_found(k);
		return;
	}
	if ((k->op == OP_PATCH || k->op == OP_DELETE) && !if_match_ok(k, s))
		return;
	int rc = 0;
	if (k->op == OP_PATCH) {
		struct fb_rf_sub n;
		rc = fb_rf_sub_build(k->body, FB_RF_SUB_PATCH, s, &n, &k->err);
		if (rc) {
			if (!k->err.key)
				fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
			return;
		}
		rc = fb_push_update(k->ev->push, &n);
		fb_rf_sub_free(&n);
	} else if (k->op == OP_DELETE) {
		rc = fb_push_delete(k->ev->push, k->id);
		k->status = 204;
		if (!rc)
			return;
	} else if (k->op == OP_RESUME) {
		rc = fb_push_set_enabled(k->ev->push, k->id, 1);
		k->status = 204;
		if (!rc)
			return;
	}
	if (rc) {
		fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
		return;
	}
	k->doc = fb_push_render(k->ev->push, fb_rf_store_find(fb_push_store(k->ev->push), k->id));
	k->status = k->doc ? 200 : 0;
	if (!k->doc)
		fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
}

/* SubmitTestEvent's parameters -> one Events[] record. */
static void test_event(struct call *k)
{
	static const char *const strs[] = { "EventId", "EventTimestamp", "Message", "MessageId",
					    "OriginOfCondition", "Severity", "MessageSeverity",
					    "EventType" };
	json_t *rec = json_object();
	const char *key;
	json_t *v;
	json_object_foreach(k->body, key, v) {
		if (strncmp(key, "@odata.", 7) == 0)
			continue;
		int known = 0;
		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
			known |= strcmp(strs[i], key) == 0;
		int args = strcmp(key, "MessageArgs") == 0, group = strcmp(key, "EventGroupId") == 0;
		if (!known && !args && !group) {
			fail(k, FB_RF_ACTION_PARAMETER_UNKNOWN, TEST_ACTION, key);
			goto out;
		}
		int ok = known ? json_is_string(v) : group ? json_is_integer(v) : json_is_array(v);
		for (size_t i = 0; ok && args && i < json_array_size(v); i++)
			ok = json_is_string(json_array_get(v, i));
		if (ok && strcmp(key, "MessageId") == 0) {
			const char *id = json_string_value(v);
			ok = strchr(id, '.') && strlen(id) < 256;
		}
		if (ok && (strcmp(key, "Severity") == 0 || strcmp(key, "MessageSeverity") == 0))
			ok = fb_severity_parse(json_string_value(v)) >= 0;
		if (ok && strcmp(key, "OriginOfCondition") == 0)
			ok = strncmp(json_string_value(v), "/redfish/v1", 11) == 0;
		if (!ok) {
			fail(k, FB_RF_ACTION_PARAMETER_VALUE_ERROR, key, TEST_ACTION);
			goto out;
		}
		if (strcmp(key, "OriginOfCondition") == 0)
			json_object_set_new(rec, key, json_pack("{s:O}", "@odata.id", v));
		else if (strcmp(key, "Severity") != 0)
			json_object_set(rec, key, v);
	}
	if (!json_object_get(rec, "MessageId")) {
		fail(k, FB_RF_ACTION_PARAMETER_MISSING, TEST_ACTION, "MessageId");
		goto out;
	}
	json_t *sev = json_object_get(k->body, "Severity");
	if (sev && !json_object_get(rec, "MessageSeverity"))
		json_object_set(rec, "MessageSeverity", sev);
	if (!json_object_get(rec, "EventType"))
		json_object_set_new(rec, "EventType", json_string("Other"));
	if (!json_object_get(rec, "EventId"))
		json_object_set_new(rec, "EventId", json_string("test"));
	json_object_set_new(rec, "MemberId", json_string("0"));
	int n = fb_push_submit(k->ev->push, rec);
	if (n < 0)
		fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
	else
		k->status = 204;
out:
	json_decref(rec);
}

static void run(struct fb_loop_call *lc)
{
	struct call *k = (struct call *)lc;
	switch (k->op) {
	case OP_ES_GET:
		k->doc = service_doc(k->ev);
		k->status = k->doc ? 200 : 0;
		if (!k->doc)
			fail(k, FB_RF_INTERNAL_ERROR, NULL, NULL);
		break;
	case OP_ES_PATCH:
		es_patch(k);
		break;
	case OP_TEST:
		test_event(k);
		break;
	case OP_COLL:
		collection(k);
		break;
	case OP_CREATE:
		create(k);
		break;
	default:
		member(k);
		break;
	}
}

/* ---- handlers (lws thread) ---- */

static struct call *call_new(struct fb_rf_ctx *c, enum op op)
{
	struct call *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->rf.base.run = run;
	k->rf.base.free = call_free;
	k->rf.answer = answer;
	k->ev = c->svc->events;
	k->op = op;
	if (c->n_arg)
		snprintf(k->id, sizeof(k->id), "%s", c->arg[0]);
	const char *im = fb_rf_req_header(c->req, FB_RF_H_IF_MATCH);
	if (im) {
		k->has_if_match = 1;
		snprintf(k->if_match, sizeof(k->if_match), "%s", im);
	}
	return k;
}

static int defer(struct fb_rf_ctx *c, enum op op, json_t *body)
{
	if (!c->svc->events) {
		json_decref(body);
		return fb_rf_unimplemented(c);
	}
	struct call *k = call_new(c, op);
	if (!k) {
		json_decref(body);
		return -1;
	}
	k->body = body;
	return fb_rf_defer(c, &k->rf);
}

/* The body as a JSON object, or a 400 in c->rep (returns NULL). */
static json_t *body_object(struct fb_rf_ctx *c)
{
	const struct fb_buf *b = &c->req->body;
	json_t *j = json_loadb(b->data ? (const char *)b->data : "", b->len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		fb_rf_reply_error(c->rep, FB_RF_MALFORMED_JSON, NULL, 0);
		return NULL;
	}
	return j;
}

int fb_rf_event_service_get(struct fb_rf_ctx *c)
{
	if (c->rest && *c->rest) {
		const char *args[2] = { "EventService", c->req->path };
		fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
		return 0;
	}
	return defer(c, OP_ES_GET, NULL);
}

int fb_rf_event_service_patch(struct fb_rf_ctx *c)
{
	if (c->rest && *c->rest) {
		const char *args[2] = { "EventService", c->req->path };
		fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
		return 0;
	}
	json_t *b = body_object(c);
	return b ? defer(c, OP_ES_PATCH, b) : 0;
}

int fb_rf_submit_test_event(struct fb_rf_ctx *c)
{
	json_t *b = body_object(c);
	return b ? defer(c, OP_TEST, b) : 0;
}

int fb_rf_subs_get(struct fb_rf_ctx *c) { return defer(c, OP_COLL, NULL); }

int fb_rf_subs_post(struct fb_rf_ctx *c)
{
	if (!c->svc->events)
		return fb_rf_unimplemented(c);
	struct call *k = call_new(c, OP_CREATE);
	if (!k)
		return -1;
	const struct fb_buf *b = &c->req->body;
	if (fb_rf_sub_build_text(b->data ? (const char *)b->data : "", b->len, FB_RF_SUB_CREATE, NULL,
				 &k->sub, &k->err)) {
		reply_sub_error(c->rep, &k->err);
		call_free(&k->rf.base);
		return 0;
	}
	return fb_rf_defer(c, &k->rf);
}

static int is_live(const char *id) { return strncmp(id, "SSE-", 4) == 0; }


/* The index of a "KafkaSubscription<n>" id (n from 1), or -1. */
static int ksub_index(const struct fb_rf_events *ev, const char *id)
{
	if (!ev || strncmp(id, KSUB, sizeof(KSUB) - 1) != 0)
		return -1;
	char *end;
	long n = strtol(id + sizeof(KSUB) - 1, &end, 10);
	return *end || n < 1 || n > (long)ev->n_ksubs ? -1 : (int)n - 1;
}

/* A KafkaSubscription config line as a read-only EventDestination: its
 * filter in Redfish terms where it has them (severity= -> Severities,
 * origin= -> OriginResources + SubordinateResources, a "Registry." prefix ->
 * RegistryPrefixes) and as written in Description. */
static json_t *ksub_doc(const struct fb_rf_events *ev, int i)
{
	const struct fb_kafka_sub *k = &ev->ksubs[i];
	char id[48], path[160], desc[FB_KAFKA_TOPIC_MAX + FB_FILTER_ARG_MAX + 80];
	snprintf(id, sizeof(id), KSUB "%d", i + 1);
	snprintf(path, sizeof(path), FB_RF_SUBS_PATH "/%s", id);
	snprintf(desc, sizeof(desc), "From the configuration (read-only): KafkaSubscription=%s%s%s",
		 k->topic, k->text[0] ? "?" : "", k->text);
	json_t *d = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s+,s:s,s:s,s:s,s:s,s:[],s:{s:s,s:s}}",
			      "@odata.id", path, "@odata.type", FB_RF_SUB_TYPE, "Id", id, "Name",
			      "Kafka subscription", "Description", desc, "Destination", "kafka://",
			      ev->kafka_brokers, "Protocol", "Kafka", "SubscriptionType", "OEM",
			      "OEMSubscriptionType", "Kafka", "Context", k->topic, "HttpHeaders",
			      "Status", "State", "Enabled", "Health", "OK");
	if (!d)
		return NULL;
	const struct fb_filter *f = &k->filter;
	if (f->sev_mask) {
		json_t *a = json_array();
		for (unsigned s = 0; s < FB_SEV__END; s++)
			if (f->sev_mask & (1u << s))
				json_array_append_new(a, json_string(fb_severity_name(s)));
		json_object_set_new(d, "Severities", a);
	}
	if (f->origin[0]) {
		json_object_set_new(d, "OriginResources", json_pack("[{s:s}]", "@odata.id", f->origin));
		json_object_set_new(d, "SubordinateResources", json_true());
	}
	json_t *rp = json_array();
	for (unsigned p = 0; p < f->n_prefix; p++) {
		size_t n = strlen(f->prefix[p]);
		if (n > 1 && f->prefix[p][n - 1] == '.' && !memchr(f->prefix[p], '.', n - 1))
			json_array_append_new(rp, json_stringn(f->prefix[p], n - 1));
	}
	if (json_array_size(rp) && json_array_size(rp) == f->n_prefix)
		json_object_set_new(d, "RegistryPrefixes", rp);
	else
		json_decref(rp);
	return d;
}

static int live_missing(struct fb_rf_ctx *c)
{
	const char *args[2] = { "EventDestination", c->arg[0] };
	fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	return 0;
}

/* GET, PATCH and DELETE of a config line, on the lws thread (immutable). */
static int ksub_request(struct fb_rf_ctx *c, int i)
{
	if (c->req->method == FB_RF_GET || c->req->method == FB_RF_HEAD) {
		json_t *d = ksub_doc(c->svc->events, i);
		int rc = d ? fb_rf_reply_resource(c->rep, c->req, d, "EventDestination") : -1;
		json_decref(d);
		return rc ? -1 : 0;
	}
	if (c->req->method == FB_RF_DELETE) {
		fb_rf_reply_error(c->rep, FB_RF_RESOURCE_CANNOT_BE_DELETED, NULL, 0);
		return 0;
	}
	const char *args[1] = { "KafkaSubscription (configuration)" };
	fb_rf_reply_error(c->rep, FB_RF_PROPERTY_NOT_WRITABLE, args, 1);
	return 0;
}

int fb_rf_sub_get(struct fb_rf_ctx *c)
{
	int ki = ksub_index(c->svc->events, c->arg[0]);
	if (ki >= 0)
		return ksub_request(c, ki);
	if (c->svc->events && is_live(c->arg[0])) {
		struct fb_buf b = FB_BUF_INIT;
		int rc = fb_rf_live_member_json(c->svc->events->live, c->arg[0], &b);
		json_t *j = rc ? NULL : json_loadb((const char *)b.data, b.len, 0, NULL);
		fb_buf_free(&b);
		if (!j)
			return live_missing(c);
		rc = fb_rf_reply_resource(c->rep, c->req, j, "EventDestination");
		json_decref(j);
		return rc ? -1 : 0;
	}
	return defer(c, OP_GET, NULL);
}

int fb_rf_sub_patch(struct fb_rf_ctx *c)
{
	int ki = ksub_index(c->svc->events, c->arg[0]);
	if (ki >= 0)
		return ksub_request(c, ki);
	if (c->svc->events && is_live(c->arg[0])) {
		if (!fb_rf_live_has(c->svc->events->live, c->arg[0]))
			return live_missing(c);
		const char *args[1] = { "Context" };
		fb_rf_reply_error(c->rep, FB_RF_PROPERTY_NOT_WRITABLE, args, 1);
		return 0;
	}
	json_t *b = body_object(c);
	return b ? defer(c, OP_PATCH, b) : 0;
}

int fb_rf_sub_delete(struct fb_rf_ctx *c)
{
	int ki = ksub_index(c->svc->events, c->arg[0]);
	if (ki >= 0)
		return ksub_request(c, ki);
	if (c->svc->events && is_live(c->arg[0])) {
		if (fb_rf_live_close(c->svc->events->live, c->arg[0]))
			return live_missing(c);
		fb_rf_reply_status(c->rep, 204);
		return 0;
	}
	return defer(c, OP_DELETE, NULL);
}

int fb_rf_sub_resume(struct fb_rf_ctx *c)
{
	if (c->svc->events && is_live(c->arg[0])) {
		fb_rf_reply_status(c->rep, 204);
		return fb_rf_live_has(c->svc->events->live, c->arg[0]) ? 0 : live_missing(c);
	}
	return defer(c, OP_RESUME, NULL);
}
