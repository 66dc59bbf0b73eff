/* fb_event_json.c - the JSON form of an event (docs/event-model.md).
 *
 * One table names every field, its type and where it lives in struct
 * fb_event; parsing and printing both walk it, so the two directions cannot
 * drift apart. Parsing is strict: unknown keys, wrong types and strings that
 * do not fit their fixed field are refused with a message naming the field,
 * because this is what an operator types into `fabricbus publish`.
 */
#include "fb_event_json.h"

#include "fb_json.h"
#include "fb_redfish.h"
#include "fb_text.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum ftype {
	F_STR,       /* char[size] */
	F_U8,        /* uint8_t, 0..255 */
	F_U16,
	F_U32,
	F_U64,       /* integer, or a decimal string above INT64_MAX */
	F_GUID,      /* uint64_t: "0x..." hex string or integer */
	F_KIND,      /* uint8_t enums by name */
	F_SEV,
	F_CLASS,
	F_TECH,
	F_TIMESTAMP, /* ISO 8601 string into ts_ns */
	F_COUNTERS,
	F_JOBS,      /* array of decimal strings into "123,124" */
};

struct field {
	const char *name;
	uint8_t type;
	size_t off;
	size_t size;
};

#define EV(type, member) type, offsetof(struct fb_event, member), sizeof(((struct fb_event *)0)->member)

static const struct field fields[] = {
	{ "agent_id", EV(F_STR, agent_id) },
	{ "seq", EV(F_U64, seq) },
	{ "ts_ns", EV(F_U64, ts_ns) },
	{ "timestamp", EV(F_TIMESTAMP, ts_ns) },
	{ "kind", EV(F_KIND, kind) },
	{ "severity", EV(F_SEV, severity) },
	{ "link_class", EV(F_CLASS, link_class) },
	{ "tech", EV(F_TECH, tech) },
	{ "port_state", EV(F_U8, port_state) },
	{ "phys_state", EV(F_U8, phys_state) },
	{ "fabric", EV(F_STR, subj.fabric) },
	{ "switch", EV(F_STR, subj.switch_name) },
	{ "switch_guid", EV(F_GUID, subj.switch_guid) },
	{ "port", EV(F_U16, subj.port) },
	{ "port_guid", EV(F_GUID, subj.port_guid) },
	{ "lid", EV(F_U16, subj.lid) },
	{ "node", EV(F_STR, subj.node) },
	{ "device", EV(F_STR, subj.device) },
	{ "addr", EV(F_STR, subj.addr) },
	{ "ifindex", EV(F_U32, subj.ifindex) },
	{ "peer_guid", EV(F_GUID, subj.peer_guid) },
	{ "peer_port", EV(F_U16, subj.peer_port) },
	{ "peer_name", EV(F_STR, subj.peer_name) },
	{ "counters", EV(F_COUNTERS, counters) },
	{ "text", EV(F_STR, text) },
	{ "jobs", EV(F_JOBS, jobs) },
};

#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* ---- scalars ------------------------------------------------------------ */

static int get_guid(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v))
		return fb_json_get_uint(v, UINT64_MAX, 0, out);
	if (!json_is_string(v))
		return -1;
	return fb_text_parse_guid(json_string_value(v), json_string_length(v), out);
}

/* ---- jobs --------------------------------------------------------------- */

static json_t *jobs_json(const char *jobs)
{
	json_t *a = json_array();
	const char *p = jobs;
	while (a && *p) {
		size_t n = strcspn(p, ",");
		if (json_array_append_new(a, json_stringn(p, n))) {
			json_decref(a);
			return NULL;
		}
		p += n + (p[n] == ',');
	}
	return a;
}

/* ---- fields ------------------------------------------------------------- */

/* Enum fields by name; "ib" and "eth" are accepted for typing convenience. */
static int parse_enum(unsigned type, const char *s)
{
	switch (type) {
	case F_KIND: return fb_kind_parse(s);
	case F_SEV: return fb_severity_parse(s);
	case F_CLASS: return fb_link_class_parse(s);
	case F_TECH:
		if (strcasecmp(s, "ib") == 0)
			return FB_TECH_IB;
		if (strcasecmp(s, "eth") == 0)
			return FB_TECH_ETH;
		return fb_tech_parse(s);
	}
	return -1;
}

static const char *enum_choices(unsigned type)
{
	switch (type) {
	case F_KIND: return "a kind name such as link_down (see docs/event-model.md)";
	case F_SEV: return "OK, Warning or Critical";
	case F_CLASS: return "unknown, host, isl, node or uplink";
	case F_TECH: return "unknown, infiniband (ib) or ethernet (eth)";
	}
	return "?";
}

static int parse_field(const struct field *f, const json_t *v, struct fb_event *ev, char *err,
		       size_t errsz)
{
	uint8_t *dst = (uint8_t *)ev + f->off;
	uint64_t x;
	switch (f->type) {
	case F_STR:
		switch (fb_json_get_str(v, (char *)dst, f->size)) {
		case 0:
			return 0;
		case FB_JSON_ETYPE:
			return fb_json_fail(err, errsz, "%s: must be a string", f->name);
		case FB_JSON_EVALUE:
			return fb_json_fail(err, errsz, "%s: contains a NUL character", f->name);
		default:
			return fb_json_fail(err, errsz, "%s: longer than %zu bytes", f->name, f->size - 1);
		}
	case F_U8:
	case F_U16:
	case F_U32:
		if (fb_json_get_uint_field(v, dst, f->size))
			return fb_json_fail(err, errsz, "%s: must be an integer 0..%" PRIu64, f->name,
					    fb_json_uint_max(f->size));
		return 0;
	case F_U64:
		if (fb_json_get_uint(v, UINT64_MAX, 1, &x))
			return fb_json_fail(err, errsz, "%s: must be a non-negative integer", f->name);
		*(uint64_t *)(void *)dst = x;
		return 0;
	case F_GUID:
		if (get_guid(v, &x))
			return fb_json_fail(err, errsz,
					    "%s: must be a \"0x...\" string of 1 to 16 hex digits or a non-negative integer",
					    f->name);
		*(uint64_t *)(void *)dst = x;
		return 0;
	case F_KIND:
	case F_SEV:
	case F_CLASS:
	case F_TECH: {
		if (!json_is_string(v))
			return fb_json_fail(err, errsz, "%s: must be a string: %s", f->name,
					    enum_choices(f->type));
		int e = parse_enum(f->type, json_string_value(v));
		if (e < 0 || (f->type == F_KIND && e == 0))
			return fb_json_fail(err, errsz, "%s: unknown value '%s', expected %s", f->name,
					    json_string_value(v), enum_choices(f->type));
		*dst = (uint8_t)e;
		return 0;
	}
	case F_TIMESTAMP:
		if (!json_is_string(v) || fb_text_parse_time(json_string_value(v), &ev->ts_ns))
			return fb_json_fail(err, errsz,
					    "%s: must be an RFC 3339 string such as \"2026-11-22T09:52:21.123456Z\", at or after 1970",
					    f->name);
		return 0;
	case F_COUNTERS:
		return fb_json_parse_counters(v, ev, "counters", err, errsz);
	case F_JOBS:
		return fb_json_parse_jobs(v, ev, "jobs", err, errsz);
	}
	return fb_json_fail(err, errsz, "%s: unsupported", f->name);
}

static const struct field *find_field(const char *name)
{
	for (size_t i = 0; i < N_FIELDS; i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

int fb_event_from_json(const json_t *obj, struct fb_event *ev, char *err, size_t errsz)
{
	memset(ev, 0, sizeof(*ev));
	if (err && errsz)
		err[0] = '\0';
	if (!json_is_object(obj))
		return fb_json_fail(err, errsz, "event: must be a JSON object");
	int has_sev = 0, has_ts_ns = 0, has_stamp = 0;
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		const struct field *f = find_field(key);
		if (!f)
			return fb_json_fail(err, errsz, "unknown field '%s'", key);
		int rc = parse_field(f, v, ev, err, errsz);
		if (rc)
			return rc;
		has_sev |= f->type == F_SEV;
		has_ts_ns |= f->off == offsetof(struct fb_event, ts_ns) && f->type == F_U64;
		has_stamp |= f->type == F_TIMESTAMP;
	}
	if (!ev->kind)
		return fb_json_fail(err, errsz, "kind: required");
	if (has_ts_ns && has_stamp)
		return fb_json_fail(err, errsz, "timestamp: give ts_ns or timestamp, not both");
	if (!has_ts_ns && !has_stamp)
		ev->ts_ns = fb_now_ns();
	if (!has_sev) { /* the registry's severity for what this event becomes */
		struct fb_redfish_class cls;
		ev->severity = FB_SEV_OK;
		fb_redfish_classify(ev, &cls);
		ev->severity = cls.severity;
	}
	return 0;
}

/* ---- printing ----------------------------------------------------------- */

static json_t *uint_json(uint64_t v)
{
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	char tmp[24];
	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	return json_string(tmp);
}

static json_t *enum_json(unsigned type, unsigned v)
{
	const char *name = type == F_KIND ? fb_kind_name(v)
		: type == F_SEV ? fb_severity_name(v)
		: type == F_CLASS ? fb_link_class_name(v) : fb_tech_name(v);
	return name ? json_string(name) : json_integer(v); /* refused on the way back */
}

static json_t *counters_json(const struct fb_event *ev)
{
	json_t *o = json_object();
	unsigned n = ev->n_counters < FB_COUNTERS_MAX ? ev->n_counters : FB_COUNTERS_MAX;
	for (unsigned i = 0; o && i < n; i++) {
		const char *name = fb_counter_name(ev->counters[i].id);
		char tmp[32];
		if (!name) {
			snprintf(tmp, sizeof(tmp), "counter_%u", (unsigned)ev->counters[i].id);
			name = tmp;
		}
		if (json_object_set_new(o, name, uint_json(ev->counters[i].value))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* The field's JSON value, or NULL when it is empty/zero (omitted). Kind and
 * severity are always printed. */
static json_t *field_json(const struct field *f, const struct fb_event *ev)
{
	const uint8_t *src = (const uint8_t *)ev + f->off;
	uint64_t x = 0;
	switch (f->type) {
	case F_STR:
		if (!src[0] || !memchr(src, 0, f->size))
			return NULL;
		return json_string((const char *)src);
	case F_U8: x = *src; break;
	case F_U16: x = *(const uint16_t *)(const void *)src; break;
	case F_U32: x = *(const uint32_t *)(const void *)src; break;
	case F_U64: x = *(const uint64_t *)(const void *)src; break;
	case F_GUID: {
		x = *(const uint64_t *)(const void *)src;
		if (!x)
			return NULL;
		char tmp[24];
		snprintf(tmp, sizeof(tmp), "0x%016" PRIx64, x);
		return json_string(tmp);
	}
	case F_KIND:
	case F_SEV:
		return enum_json(f->type, *src);
	case F_CLASS:
	case F_TECH:
		return *src ? enum_json(f->type, *src) : NULL;
	case F_TIMESTAMP:
		return NULL; /* ts_ns carries it */
	case F_COUNTERS:
		return ev->n_counters ? counters_json(ev) : NULL;
	case F_JOBS:
		return src[0] && memchr(src, 0, f->size) ? jobs_json((const char *)src) : NULL;
	}
	return x ? uint_json(x) : NULL;
}

json_t *fb_event_to_json(const struct fb_event *ev)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	for (size_t i = 0; i < N_FIELDS; i++) {
		json_t *v = field_json(&fields[i], ev);
		if (v && json_object_set_new(o, fields[i].name, v)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
