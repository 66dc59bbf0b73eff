/* rf_sub.c - EventDestination validation and JSON (rf_sub.h). */
#include "rf_sub.h"

#include "fb_err.h"
#include "fb_event.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ptype { T_STR, T_BOOL, T_UINT, T_STRLIST, T_ORIGINS, T_HEADERS, T_ENUM, T_ENUMLIST, T_STATUS };
#define M_CREATE (1u << FB_RF_SUB_CREATE)
#define M_PATCH (1u << FB_RF_SUB_PATCH)
#define M_LOAD (1u << FB_RF_SUB_LOAD)
#define M_CL (M_CREATE | M_LOAD)
#define M_ALL (M_CREATE | M_PATCH | M_LOAD)

static const char *const protocols[] = { "Redfish", "Kafka", NULL };
static const char *const sub_types[] = { "RedfishEvent", "OEM", NULL };
static const char *const formats[] = { "Event", NULL };
static const char *const policies[] = { "TerminateAfterRetries", "SuspendRetries", "RetryForever",
					"RetryForeverWithBackoff", NULL };
static const char *const severities[] = { "OK", "Warning", "Critical", NULL };
static const char *const event_types[] = { "StatusChange", "ResourceUpdated", "ResourceAdded",
					   "ResourceRemoved", "Alert", "MetricReport", "Other", NULL };
enum item { I_ANY, I_PREFIX, I_MSGID, I_TYPE };

struct prop {
	const char *name;
	enum ptype type;
	unsigned modes;
	const char *const *names; /* T_ENUM, T_ENUMLIST */
	enum item item;           /* T_STRLIST */
	size_t max;               /* T_STR length, T_UINT value */
};

static const struct prop props[] = {
	{ "Destination", T_STR, M_CL, NULL, I_ANY, FB_RF_DEST_MAX },
	{ "Context", T_STR, M_ALL, NULL, I_ANY, FB_RF_CONTEXT_MAX },
	{ "Protocol", T_ENUM, M_CL, protocols, I_ANY, 0 },
	{ "SubscriptionType", T_ENUM, M_CL, sub_types, I_ANY, 0 },
	{ "EventFormatType", T_ENUM, M_CL, formats, I_ANY, 0 },
	{ "RegistryPrefixes", T_STRLIST, M_CL, NULL, I_PREFIX, 0 },
	{ "ExcludeRegistryPrefixes", T_STRLIST, M_CL, NULL, I_PREFIX, 0 },
	{ "MessageIds", T_STRLIST, M_CL, NULL, I_MSGID, 0 },
	{ "ExcludeMessageIds", T_STRLIST, M_CL, NULL, I_MSGID, 0 },
	{ "ResourceTypes", T_STRLIST, M_CL, NULL, I_TYPE, 0 },
	{ "EventTypes", T_ENUMLIST, M_CL, event_types, I_ANY, 0 },
	{ "Severities", T_ENUMLIST, M_CL, severities, I_ANY, 0 },
	{ "OriginResources", T_ORIGINS, M_CL, NULL, I_ANY, 0 },
	{ "SubordinateResources", T_BOOL, M_CL, NULL, I_ANY, 0 },
	{ "IncludeOriginOfCondition", T_BOOL, M_CL, NULL, I_ANY, 0 },
	{ "HttpHeaders", T_HEADERS, M_ALL, NULL, I_ANY, 0 },
	{ "SendHeartbeat", T_BOOL, M_ALL, NULL, I_ANY, 0 },
	{ "HeartbeatIntervalMinutes", T_UINT, M_ALL, NULL, I_ANY, 65535 },
	{ "DeliveryRetryPolicy", T_ENUM, M_ALL, policies, I_ANY, 0 },
	{ "VerifyCertificate", T_BOOL, M_ALL, NULL, I_ANY, 0 },
	{ "Status", T_STATUS, M_PATCH | M_LOAD, NULL, I_ANY, 0 },
	{ "Id", T_STR, M_LOAD, NULL, I_ANY, FB_RF_SUB_ID_MAX - 1 },
};

/* Properties of the schema a client can never write. */
static const char *const read_only[] = {
	"Id", "Name", "Description", "Actions", "Oem", "Certificates", "ClientCertificates",
	"MetricReportDefinitions", "MetricReportDefinitions@odata.count", "OEMProtocol",
	"OEMSubscriptionType", "SNMP", "SyslogFilters", "BackupDestinations",
	"OriginResources@odata.count", "Status",
};

static int fail(struct fb_rf_error *e, int status, const char *key, const char *a0, const char *a1)
{
	e->status = status;
	e->key = key;
	e->n_args = 0;
	if (a0)
		snprintf(e->args[e->n_args++], sizeof(e->args[0]), "%s", a0);
	if (a1)
		snprintf(e->args[e->n_args++], sizeof(e->args[0]), "%s", a1);
	return FB_EMALFORMED;
}

/* The value as JSON text, for MessageArgs. */
static int fail_value(struct fb_rf_error *e, const char *key, json_t *v, const char *prop)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	int rc = fail(e, 400, key, s ? s : "?", prop);
	free(s);
	return rc;
}

static const struct prop *find_prop(const char *name)
{
	for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++)
		if (strcmp(props[i].name, name) == 0)
			return &props[i];
	return NULL;
}

static int is_read_only(const char *name)
{
	for (size_t i = 0; i < sizeof(read_only) / sizeof(read_only[0]); i++)
		if (strcmp(read_only[i], name) == 0)
			return 1;
	return 0;
}

static int enum_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static int item_ok(enum item kind, const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 128)
		return 0;
	for (const char *p = s; *p; p++) {
		int c = (unsigned char)*p;
		if (isalnum(c))
			continue;
		if (kind == I_MSGID && c == '.' && p != s && p[1] && p[-1] != '.')
			continue;
		if (kind == I_ANY && c > 0x20 && c < 0x7f)
			continue;
		return 0;
	}
	return kind != I_MSGID || strchr(s, '.'); /* at least Prefix.Key */
}

/* One member of a string list (T_STRLIST, T_ENUMLIST). */
static int check_string_item(const struct prop *p, json_t *it, struct fb_rf_error *e)
{
	if (!json_is_string(it))
		return fail_value(e, "PropertyValueTypeError", it, p->name);
	const char *s = json_string_value(it);
	if (p->type == T_ENUMLIST)
		return enum_index(p->names, s) < 0 ? fail(e, 400, "PropertyValueNotInList", s, p->name) : 0;
	return item_ok(p->item, s) ? 0 : fail_value(e, "PropertyValueFormatError", it, p->name);
}

/* One member of OriginResources: {"@odata.id": "/redfish/v1/..."}. */
static int check_origin_item(const struct prop *p, json_t *it, struct fb_rf_error *e)
{
	json_t *id = json_is_object(it) ? json_object_get(it, "@odata.id") : NULL;
	if (!id || !json_is_string(id) || json_object_size(it) != 1)
		return fail_value(e, "PropertyValueTypeError", it, p->name);
	const char *s = json_string_value(id);
	if (strncmp(s, "/redfish/v1", 11) != 0 || strlen(s) > 512 || strpbrk(s, " \t\r\n?#"))
		return fail_value(e, "PropertyValueFormatError", it, p->name);
	return 0;
}

/* A filter list: an array of at most FB_RF_LIST_MAX valid members. */
static int check_list(const struct prop *p, json_t *v, struct fb_rf_error *e)
{
	if (!json_is_array(v))
		return fail_value(e, "PropertyValueTypeError", v, p->name);
	if (json_array_size(v) > FB_RF_LIST_MAX)
		return fail_value(e, "PropertyValueOutOfRange", v, p->name);
	size_t i;
	json_t *it;
	json_array_foreach(v, i, it) {
		int rc = p->type == T_ORIGINS ? check_origin_item(p, it, e) : check_string_item(p, it, e);
		if (rc)
			return rc;
	}
	return 0;
}

static int header_name_ok(const char *s)
{
	if (!*s || strlen(s) > 128)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return 0;
	return 1;
}

static int check_headers(const struct prop *p, json_t *v, struct fb_rf_error *e)
{
	if (!json_is_array(v))
		return fail_value(e, "PropertyValueTypeError", v, p->name);
	size_t n = 0, i;
	json_t *it;
	json_array_foreach(v, i, it) {
		if (!json_is_object(it))
			return fail_value(e, "PropertyValueTypeError", it, p->name);
		const char *k;
		json_t *hv;
		json_object_foreach(it, k, hv) {
			if (!json_is_string(hv))
				return fail(e, 400, "PropertyValueTypeError", "(write-only)", p->name);
			const char *s = json_string_value(hv);
			if (!header_name_ok(k) || strlen(s) > 4096 || strpbrk(s, "\r\n"))
				return fail(e, 400, "PropertyValueFormatError", "(write-only)", p->name);
			if (++n > FB_RF_HEADERS_MAX)
				return fail(e, 400, "PropertyValueOutOfRange", "(write-only)", p->name);
		}
	}
	return 0;
}

static int check_status(const struct prop *p, json_t *v, struct fb_rf_error *e)
{
	if (!json_is_object(v))
		return fail_value(e, "PropertyValueTypeError", v, p->name);
	const char *k;
	json_t *sv;
	json_object_foreach(v, k, sv) {
		if (strcmp(k, "State") != 0)
			return fail(e, 400, "PropertyNotWritable", "Status/Health", NULL);
		if (!json_is_string(sv))
			return fail_value(e, "PropertyValueTypeError", sv, "Status/State");
		if (strcmp(json_string_value(sv), "Enabled") && strcmp(json_string_value(sv), "Disabled"))
			return fail_value(e, "PropertyValueNotInList", sv, "Status/State");
	}
	return 0;
}

static int check_value(const struct prop *p, json_t *v, struct fb_rf_error *e)
{
	switch (p->type) {
	case T_STR:
		if (!json_is_string(v))
			return fail_value(e, "PropertyValueTypeError", v, p->name);
		if (json_string_length(v) > p->max || strlen(json_string_value(v)) != json_string_length(v))
			return fail_value(e, "PropertyValueFormatError", v, p->name);
		return 0;
	case T_BOOL:
		return json_is_boolean(v) ? 0 : fail_value(e, "PropertyValueTypeError", v, p->name);
	case T_UINT:
		if (!json_is_integer(v))
			return fail_value(e, "PropertyValueTypeError", v, p->name);
		if (json_integer_value(v) < 1 || (size_t)json_integer_value(v) > p->max)
			return fail_value(e, "PropertyValueOutOfRange", v, p->name);
		return 0;
	case T_ENUM:
		if (!json_is_string(v))
			return fail_value(e, "PropertyValueTypeError", v, p->name);
		if (enum_index(p->names, json_string_value(v)) < 0)
			return fail(e, 400, "PropertyValueNotInList", json_string_value(v), p->name);
		return 0;
	case T_STRLIST:
	case T_ENUMLIST:
	case T_ORIGINS:
		return check_list(p, v, e);
	case T_HEADERS:
		return check_headers(p, v, e);
	case T_STATUS:
		return check_status(p, v, e);
	}
	return 0;
}

/* http(s)://host[:port][/path]: what a push can be sent to. */
static int uri_ok(const char *s)
{
	const char *h;
	if (strncmp(s, "http://", 7) == 0)
		h = s + 7;
	else if (strncmp(s, "https://", 8) == 0)
		h = s + 8;
	else
		return 0;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return 0;
	size_t hl = 0;
	if (*h == '[') {
		const char *end = strchr(h, ']');
		if (!end)
			return 0;
		hl = (size_t)(end - h) + 1;
	} else {
		hl = strcspn(h, ":/?#");
	}
	if (!hl || memchr(h, '@', hl))
		return 0;
	const char *r = h + hl;
	if (*r == ':') {
		char *end;
		long port = strtol(r + 1, &end, 10);
		if (end == r + 1 || port < 1 || port > 65535 || (*end && *end != '/' && *end != '?'))
			return 0;
	} else if (*r && *r != '/' && *r != '?') {
		return 0;
	}
	return 1;
}

static int topic_ok(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 249)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

static const char *str_or(json_t *doc, const char *key, const char *dflt)
{
	json_t *v = json_object_get(doc, key);
	return json_is_string(v) ? json_string_value(v) : dflt;
}

static int bool_or(json_t *doc, const char *key, int dflt)
{
	json_t *v = json_object_get(doc, key);
	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static int strv(json_t *doc, const char *key, int origins, struct fb_rf_strv *out)
{
	json_t *a = json_object_get(doc, key);
	size_t n = json_array_size(a);
	out->n = 0;
	out->v = NULL;
	if (!n)
		return 0;
	out->v = calloc(n, sizeof(char *));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_array_get(a, i);
		out->v[i] = json_string_value(origins ? json_object_get(it, "@odata.id") : it);
	}
	out->n = n;
	return 0;
}

/* Decode the views from a validated doc. */
static int decode(struct fb_rf_sub *s, struct fb_rf_error *e)
{
	json_t *d = s->doc;
	s->destination = str_or(d, "Destination", "");
	s->context = str_or(d, "Context", "");
	s->protocol = enum_index(protocols, str_or(d, "Protocol", "Redfish"));
	s->retry_policy = enum_index(policies, str_or(d, "DeliveryRetryPolicy", "RetryForever"));
	json_t *st = json_object_get(json_object_get(d, "Status"), "State");
	s->enabled = !json_is_string(st) || strcmp(json_string_value(st), "Disabled") != 0;
	s->send_heartbeat = bool_or(d, "SendHeartbeat", 0);
	json_t *hb = json_object_get(d, "HeartbeatIntervalMinutes");
	s->heartbeat_minutes = json_is_integer(hb) ? (unsigned)json_integer_value(hb) : 10;
	s->verify_certificate = bool_or(d, "VerifyCertificate", 1);
	s->include_origin = bool_or(d, "IncludeOriginOfCondition", 0);
	if (!s->destination[0])
		return fail(e, 400, "PropertyMissing", "Destination", NULL);
	if (s->protocol == FB_RF_PROTO_REDFISH && !uri_ok(s->destination))
		return fail(e, 400, "PropertyValueFormatError", s->destination, "Destination");
	if (s->protocol == FB_RF_PROTO_KAFKA && !topic_ok(s->context))
		return fail(e, 400, "PropertyValueFormatError", s->context, "Context");
	size_t i;
	json_t *h;
	json_array_foreach(json_object_get(d, "HttpHeaders"), i, h) {
		const char *k;
		json_t *v;
		json_object_foreach(h, k, v) {
			size_t len = strlen(k) + json_string_length(v) + 3;
			char *line = malloc(len);
			if (!line)
				return -ENOMEM;
			snprintf(line, len, "%s: %s", k, json_string_value(v));
			s->headers[s->n_headers++] = line;
		}
	}
	struct fb_rf_match *m = &s->match;
	if (strv(d, "RegistryPrefixes", 0, &m->prefixes) ||
	    strv(d, "ExcludeRegistryPrefixes", 0, &m->x_prefixes) || strv(d, "MessageIds", 0, &m->ids) ||
	    strv(d, "ExcludeMessageIds", 0, &m->x_ids) || strv(d, "OriginResources", 1, &m->origins) ||
	    strv(d, "ResourceTypes", 0, &m->types) || strv(d, "EventTypes", 0, &m->event_types))
		return -ENOMEM;
	m->subordinate = bool_or(d, "SubordinateResources", 0);
	json_t *sv;
	json_array_foreach(json_object_get(d, "Severities"), i, sv)
		m->sev_mask |= 1u << fb_severity_parse(json_string_value(sv));
	const char *id = str_or(d, "Id", "");
	snprintf(s->id, sizeof(s->id), "%s", id);
	return 0;
}

static int apply(json_t *doc, json_t *body, enum fb_rf_mode mode, struct fb_rf_error *e)
{
	const char *k;
	json_t *v;
	json_object_foreach(body, k, v) {
		if (k[0] == '@' && strncmp(k, "@odata.", 7) == 0)
			continue; /* annotations a client echoes back are not properties */
		const struct prop *p = find_prop(k);
		if (!p || !(p->modes & (1u << mode))) {
			if (p || is_read_only(k))
				return fail(e, 400, "PropertyNotWritable", k, NULL);
			return fail(e, 400, "PropertyUnknown", k, NULL);
		}
		if (json_is_null(v) && p->type != T_STATUS && strcmp(k, "Destination") != 0) {
			json_object_del(doc, k); /* nullable: back to the default */
			continue;
		}
		int rc = check_value(p, v, e);
		if (rc)
			return rc;
		if (json_object_set(doc, k, v))
			return -ENOMEM;
	}
	return 0;
}

int fb_rf_sub_build(json_t *body, enum fb_rf_mode mode, const struct fb_rf_sub *old,
		    struct fb_rf_sub *out, struct fb_rf_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!json_is_object(body))
		return fail(err, 400, "MalformedJSON", NULL, NULL);
	if (mode == FB_RF_SUB_PATCH && !old)
		return fail(err, 500, "InternalError", NULL, NULL);
	out->doc = mode == FB_RF_SUB_PATCH ? json_deep_copy(old->doc) : json_object();
	if (!out->doc)
		return fail(err, 500, "InternalError", NULL, NULL);
	int rc = apply(out->doc, body, mode, err);
	if (!rc && mode != FB_RF_SUB_PATCH && !json_object_get(out->doc, "Destination"))
		rc = fail(err, 400, "PropertyMissing", "Destination", NULL);
	if (!rc)
		rc = decode(out, err);
	if (rc == -ENOMEM)
		fail(err, 500, "InternalError", NULL, NULL);
	if (rc)
		fb_rf_sub_free(out);
	return rc;
}

int fb_rf_sub_build_text(const char *body, size_t len, enum fb_rf_mode mode,
			 const struct fb_rf_sub *old, struct fb_rf_sub *out, struct fb_rf_error *err)
{
	memset(out, 0, sizeof(*out));
	json_error_t je;
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return fail(err, 400, "MalformedJSON", NULL, NULL);
	int rc = fb_rf_sub_build(j, mode, old, out, err);
	json_decref(j);
	return rc;
}

void fb_rf_sub_free(struct fb_rf_sub *s)
{
	if (!s)
		return;
	fb_rf_match_free(&s->match);
	for (size_t i = 0; i < s->n_headers; i++)
		free(s->headers[i]);
	json_decref(s->doc);
	memset(s, 0, sizeof(*s));
}

int fb_rf_sub_set_id(struct fb_rf_sub *s, const char *id)
{
	if (json_object_set_new(s->doc, "Id", json_string(id)))
		return -ENOMEM;
	snprintf(s->id, sizeof(s->id), "%s", id);
	return 0;
}

int fb_rf_sub_set_enabled(struct fb_rf_sub *s, int enabled)
{
	json_t *st = json_pack("{s:s}", "State", enabled ? "Enabled" : "Disabled");
	if (!st || json_object_set_new(s->doc, "Status", st))
		return -ENOMEM;
	s->enabled = enabled;
	return 0;
}

const char *fb_rf_retry_policy_name(int policy)
{
	return policy >= 0 && policy < 4 ? policies[policy] : "RetryForever";
}

json_t *fb_rf_sub_render(const struct fb_rf_sub *s)
{
	json_t *r = json_deep_copy(s->doc);
	char path[sizeof(FB_RF_SUBS_PATH) + FB_RF_SUB_ID_MAX + 1], name[FB_RF_SUB_ID_MAX + 32];
	snprintf(path, sizeof(path), FB_RF_SUBS_PATH "/%s", s->id);
	snprintf(name, sizeof(name), "Event Subscription %s", s->id);
	if (!r || json_object_set_new(r, "@odata.id", json_string(path)) ||
	    json_object_set_new(r, "@odata.type", json_string(FB_RF_SUB_TYPE)) ||
	    json_object_set_new(r, "Name", json_string(name)) ||
	    json_object_set_new(r, "Protocol", json_string(protocols[s->protocol])) ||
	    json_object_set_new(r, "Context", json_string(s->context)) ||
	    json_object_set_new(r, "HttpHeaders", json_array()) ||
	    json_object_set_new(r, "DeliveryRetryPolicy",
				json_string(fb_rf_retry_policy_name(s->retry_policy))) ||
	    json_object_set_new(r, "SendHeartbeat", json_boolean(s->send_heartbeat)) ||
	    json_object_set_new(r, "HeartbeatIntervalMinutes", json_integer(s->heartbeat_minutes)) ||
	    json_object_set_new(r, "EventFormatType", json_string("Event")) ||
	    json_object_set_new(r, "Status", json_pack("{s:s,s:s}", "State",
						     s->enabled ? "Enabled" : "Disabled", "Health",
						     s->enabled ? "OK" : "Warning"))) {
		json_decref(r);
		return NULL;
	}
	/* Required by the schema. A Kafka subscription is not an HTTP POST
	 * (what RedfishEvent means): OEM, named by OEMSubscriptionType. */
	if (s->protocol == FB_RF_PROTO_KAFKA) {
		json_object_set_new(r, "SubscriptionType", json_string("OEM"));
		json_object_set_new(r, "OEMSubscriptionType", json_string("Kafka"));
	} else if (!json_object_get(r, "SubscriptionType")) {
		json_object_set_new(r, "SubscriptionType", json_string("RedfishEvent"));
	}
	if (s->protocol == FB_RF_PROTO_REDFISH)
		json_object_set_new(r, "VerifyCertificate", json_boolean(s->verify_certificate));
	json_t *o = json_object_get(r, "OriginResources");
	if (o)
		json_object_set_new(r, "OriginResources@odata.count", json_integer((json_int_t)json_array_size(o)));
	char act[sizeof(path) + 64];
	snprintf(act, sizeof(act), "%s/Actions/EventDestination.ResumeSubscription", path);
	json_object_set_new(r, "Actions",
			    json_pack("{s:{s:s}}", "#EventDestination.ResumeSubscription", "target", act));
	return r;
}
